package hostfs_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/faultinject"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// The test binary doubles as a writer: with envWrite set to "OP ROOT" it
// runs one hostfs operation on ROOT/etc/f and prints its outcome.
const envWrite = "HOSTFS_TEST_WRITE"

func TestMain(m *testing.M) {
	if op, dir, ok := strings.Cut(os.Getenv(envWrite), " "); ok {
		os.Exit(writer(op, hostfs.New(dir)))
	}
	os.Exit(m.Run())
}

func writer(op string, r hostfs.Root) int {
	var changed bool
	var err error
	switch op {
	case "write":
		changed, err = r.WriteFileAtomic("/etc/f", []byte("new\n"), 0o644)
	case "write-as":
		changed, err = r.WriteFileAtomicAs("/etc/f", []byte("new\n"), 0o640, hostfs.Owner{UID: 4321, GID: 4321})
	case "advance":
		changed, err = r.AdvanceFileAtomic("/etc/f", []byte("new\n"), 0o644)
	case "remove":
		err = r.RemoveFile("/etc/f")
	}
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("changed:", changed)
	return 0
}

type traced struct {
	t    *testing.T
	root string
}

func newTraced(t *testing.T, content string) traced {
	if !faultinject.Supported {
		testhost.Unmet(t, "the fault-injection tracer runs on linux/amd64 only")
	}
	root := t.TempDir()
	if content != "" {
		put(t, filepath.Join(root, "etc/f"), content)
	}
	return traced{t, root}
}

func (tr traced) run(op string, fault *faultinject.Fault) *faultinject.Result {
	tr.t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), envWrite+"="+op+" "+tr.root)
	res, err := faultinject.Trace(cmd, []string{tr.root}, fault, time.Minute)
	if err != nil {
		tr.t.Fatal(err)
	}
	return res
}

// dirSync is the fault at the sync of etc/ in a clean run of op.
func (tr traced) dirSync(op string, errno syscall.Errno) *faultinject.Fault {
	tr.t.Helper()
	for _, c := range tr.run(op, nil).Calls {
		if c.Class == "fsync" && c.Path == filepath.Join(tr.root, "etc") {
			return &faultinject.Fault{Class: c.Class, N: c.N, Errno: errno}
		}
	}
	tr.t.Fatalf("%s never syncs its directory", op)
	return nil
}

func (tr traced) reset(content string) {
	put(tr.t, filepath.Join(tr.root, "etc/f"), content)
}

// No success for a write that may not survive a power cut: an I/O error
// from the directory's sync after the rename fails the write (issue 31
// item 10: it was dropped, and apply said "changed"), while EINVAL, the
// answer of filesystems that do not sync directories, does not. A file
// that already holds the bytes is synced too, so a rename an earlier run
// could not make durable is not "unchanged" and done.
func TestWriteFileAtomicFailsOnADirectorySyncError(t *testing.T) {
	tr := newTraced(t, "old\n")
	eio := tr.dirSync("write", syscall.EIO)
	tr.reset("old\n")
	if res := tr.run("write", eio); res.Exit != 1 || !strings.Contains(res.Stdout, "may not survive a power cut: sync directory") {
		t.Errorf("EIO at the directory's sync: %s", res)
	}
	tr.reset("old\n")
	if res := tr.run("write", &faultinject.Fault{Class: eio.Class, N: eio.N, Errno: syscall.EINVAL}); res.Exit != 0 || res.Stdout != "changed: true\n" {
		t.Errorf("EINVAL at the directory's sync: %s", res)
	}
	// The bytes are there now: the unchanged path syncs file and directory.
	unchanged := tr.run("write", nil)
	if unchanged.Stdout != "changed: false\n" || len(unchanged.Calls) != 2 {
		t.Fatalf("unchanged: %v %s", unchanged.Calls, unchanged)
	}
	for _, c := range unchanged.Calls {
		if res := tr.run("write", &faultinject.Fault{Class: c.Class, N: c.N, Errno: syscall.EIO}); res.Exit != 1 {
			t.Errorf("EIO at %s of an unchanged file: %s", c, res)
		}
	}
}

// AdvanceFileAtomic syncs the new bytes before the rename, as
// WriteFileAtomic does, and never the directory: a power cut leaves the
// old file or the whole new one. A failed sync of the bytes fails it and
// leaves the old file.
func TestAdvanceFileAtomicSyncsTheBytesNotTheDirectory(t *testing.T) {
	tr := newTraced(t, "old\n")
	res := tr.run("advance", nil)
	var classes []string
	for _, c := range res.Calls {
		classes = append(classes, c.Class)
	}
	if res.Stdout != "changed: true\n" || strings.Join(classes, " ") != "open chmod write fsync rename" {
		t.Errorf("advance: calls %q\n%s", classes, res)
	}
	if data, _ := os.ReadFile(filepath.Join(tr.root, "etc/f")); string(data) != "new\n" {
		t.Errorf("etc/f holds %q", data)
	}
	tr.reset("old\n")
	if res := tr.run("advance", &faultinject.Fault{Class: "fsync", N: 1, Errno: syscall.EIO}); res.Exit != 1 {
		t.Errorf("EIO at the bytes' sync: %s", res)
	}
	if data, _ := os.ReadFile(filepath.Join(tr.root, "etc/f")); string(data) != "old\n" {
		t.Errorf("after a failed sync etc/f holds %q", data)
	}
	// Unchanged: the bytes are synced, the directory is not.
	tr.run("advance", nil)
	if res := tr.run("advance", nil); res.Stdout != "changed: false\n" || len(res.Calls) != 1 || res.Calls[0].Class != "fsync" {
		t.Errorf("unchanged: %v %s", res.Calls, res)
	}
}

// A removal is durable too: its directory's sync error fails it.
func TestRemoveFileFailsOnADirectorySyncError(t *testing.T) {
	tr := newTraced(t, "old\n")
	eio := tr.dirSync("remove", syscall.EIO)
	tr.reset("old\n")
	if res := tr.run("remove", eio); res.Exit != 1 || !strings.Contains(res.Stdout, "may come back after a power cut") {
		t.Errorf("EIO at the directory's sync after the unlink: %s", res)
	}
	// os.Remove tries unlink, then rmdir: two calls, no sync.
	if res := tr.run("remove", nil); res.Exit != 0 || len(res.Calls) != 2 || res.Calls[1].Class != "unlink" {
		t.Errorf("removing a file that is not there: %v %s", res.Calls, res)
	}
}

// The owner is set on the temp file before it is synced and renamed: the
// file never exists with root's owner, whatever the moment of a kill.
func TestWriteFileAtomicAsOwnsTheTempBeforeTheRename(t *testing.T) {
	if os.Geteuid() != 0 {
		testhost.Unmet(t, "needs root to give a file another owner")
	}
	tr := newTraced(t, "old\n")
	res := tr.run("write-as", nil)
	if res.Exit != 0 {
		t.Fatal(res)
	}
	var order []string
	for _, c := range res.Calls {
		order = append(order, c.Class)
	}
	if got := strings.Join(order, " "); got != "open chmod chown write fsync rename fsync" {
		t.Errorf("calls: %s", got)
	}
	fi, err := os.Stat(filepath.Join(tr.root, "etc/f"))
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 4321 || st.Gid != 4321 || fi.Mode().Perm() != 0o640 {
		t.Errorf("owner %d:%d mode %v", st.Uid, st.Gid, fi.Mode())
	}
	// The same bytes with another owner are rewritten.
	if err := os.Chown(filepath.Join(tr.root, "etc/f"), 0, 0); err != nil {
		t.Fatal(err)
	}
	if res := tr.run("write-as", nil); res.Stdout != "changed: true\n" {
		t.Errorf("same bytes, root's owner: %s", res)
	}
	if res := tr.run("write-as", nil); res.Stdout != "changed: false\n" {
		t.Errorf("same bytes, same owner: %s", res)
	}
}

func put(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
