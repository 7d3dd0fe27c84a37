package faultinject

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cli"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// The test binary doubles as the traced program: with envHelper set it
// writes DIR/a (create, write, fsync, close), renames it to DIR/b, then
// unlinks DIR/b, starting a few goroutines first so the runtime has
// threads of its own, and prints "done".
const envHelper = "FAULTINJECT_TEST_HELPER"

// cliName is the CLI's name: run under it (a link, cliLink), the test
// binary is the real command line.
const cliName = "rke2-proxy-backend"

func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == cliName {
		os.Exit(cli.Main(os.Args, os.Stdout, os.Stderr))
	}
	if dir := os.Getenv(envHelper); dir != "" {
		os.Exit(helper(dir))
	}
	os.Exit(m.Run())
}

func helper(dir string) int {
	stop := make(chan struct{})
	defer close(stop)
	for i := 0; i < 4; i++ {
		go func() {
			for {
				select {
				case <-stop:
					return
				default:
					time.Sleep(time.Millisecond)
				}
			}
		}()
	}
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	// With FAULTINJECT_TEST_GO_ON set, a failed step does not stop the
	// ones after it (for the sticky fault's test).
	goOn := os.Getenv("FAULTINJECT_TEST_GO_ON") != ""
	var f *os.File
	failed := false
	for _, step := range []func() error{
		func() (err error) { f, err = os.Create(a); return err },
		func() error { _, err := f.Write([]byte("data")); return err },
		func() error { return f.Sync() },
		func() error { return f.Close() },
		func() error { return os.Rename(a, b) },
		func() error { return os.Remove(b) },
	} {
		if err := step(); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			failed = true
			if !goOn {
				break
			}
		}
	}
	if failed {
		return 1
	}
	os.Stdout.WriteString("done\n")
	return 0
}

func traced(t *testing.T, fault *Fault) (*Result, string) {
	t.Helper()
	if !Supported {
		testhost.Unmet(t, "the fault-injection tracer runs on linux/amd64 only")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), envHelper+"="+dir)
	res, err := Trace(cmd, []string{dir}, fault, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return res, dir
}

// A clean run lists exactly the helper's calls on its directory, in
// order, and none of the runtime's or the output's.
func TestTraceListsTheCallsOnPathsOfInterest(t *testing.T) {
	res, dir := traced(t, nil)
	if res.Exit != 0 || res.Stdout != "done\n" {
		t.Fatalf("clean run: %s", res)
	}
	var got []string
	for _, c := range res.Calls {
		got = append(got, c.Class+" "+strings.TrimPrefix(c.Path, dir))
	}
	want := []string{"open /a", "write /a", "fsync /a", "rename /b", "unlink /b"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("calls: %q\nwant %q", got, want)
	}
	if res.Calls[3].Old != filepath.Join(dir, "a") {
		t.Errorf("rename's old name: %q", res.Calls[3].Old)
	}
}

// An injected errno reaches the program as the call's error, and the
// call does not happen; a kill ends the program before the call runs.
func TestTraceInjects(t *testing.T) {
	res, dir := traced(t, &Fault{Class: "fsync", N: 1, Errno: syscall.EIO})
	if res.Exit != 1 || !strings.Contains(res.Stderr, "input/output error") || res.Injected == nil || res.Injected.Path != filepath.Join(dir, "a") {
		t.Errorf("EIO at the fsync: injected %v, %s", res.Injected, res)
	}
	res, dir = traced(t, &Fault{Class: "rename", N: 1, Errno: syscall.ENOSPC})
	if res.Exit != 1 || !strings.Contains(res.Stderr, "no space left") {
		t.Errorf("ENOSPC at the rename: %s", res)
	}
	if _, err := os.Stat(filepath.Join(dir, "a")); err != nil {
		t.Errorf("the failed rename happened anyway: %v", err)
	}
	res, dir = traced(t, &Fault{Class: "rename", N: 1, Kill: true})
	if !res.Killed() || res.Stdout != "" {
		t.Errorf("kill at the rename: %s", res)
	}
	if _, err := os.Stat(filepath.Join(dir, "b")); err == nil {
		t.Error("the rename the kill came before happened")
	}
	res, _ = traced(t, &Fault{Class: "unlink", N: 2, Kill: true})
	if res.Exit != 0 || res.Injected != nil {
		t.Errorf("a fault at a call never made: injected %v, %s", res.Injected, res)
	}
}

// The loop: one errno in turn and a kill per call, every errno with all.
func TestFaults(t *testing.T) {
	calls := []Call{{Class: "write", N: 1}, {Class: "fsync", N: 1}}
	got := Faults(calls, false)
	want := []string{"ENOSPC at write #1", "SIGKILL at write #1", "EIO at fsync #1", "SIGKILL at fsync #1"}
	if len(got) != len(want) {
		t.Fatalf("%v", got)
	}
	for i := range want {
		if got[i].String() != want[i] {
			t.Errorf("fault %d: %s, want %s", i, got[i], want[i])
		}
	}
	if n := len(Faults(calls, true)); n != 8 {
		t.Errorf("every errno: %d faults, want 8", n)
	}
}

// A sticky fault fails the call and every later one.
func TestTraceStickyFault(t *testing.T) {
	t.Setenv("FAULTINJECT_TEST_GO_ON", "1")
	res, _ := traced(t, &Fault{Class: "fsync", N: 1, Errno: syscall.EROFS, Sticky: true})
	if res.Exit != 1 || strings.Count(res.Stderr, "read-only file system") != 3 {
		t.Errorf("EROFS from the fsync: fsync, rename and unlink fail: %s", res)
	}
	res, _ = traced(t, &Fault{Class: "fsync", N: 1, Errno: syscall.EROFS})
	if res.Exit != 1 || strings.Count(res.Stderr, "read-only file system") != 1 {
		t.Errorf("EROFS at the fsync only: %s", res)
	}
}
