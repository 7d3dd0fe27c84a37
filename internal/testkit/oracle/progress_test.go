package oracle

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer the reporter's goroutine and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// A build says what it builds and where it is among make oracle's, then
// at every interval how long it has run and how many packages it compiled,
// then how it ended: a newcomer's cold build is never minutes of silence.
// The command prints what go build -v prints (a download line, package
// paths, a compiler error's lines), paced so that beats fall between.
func TestRunReportedBeatsWhileBuilding(t *testing.T) {
	script := `echo "go: downloading k8s.io/api v0.37.0" >&2; echo k8s.io/apimachinery/pkg/util/sets >&2; sleep 0.4
echo k8s.io/kubernetes/pkg/proxy/nftables >&2; echo "# k8s.io/x" >&2; echo "x.go:1:2: undefined: y" >&2; sleep 0.4`
	var out syncBuffer
	log, err := runReported(exec.Command("sh", "-c", script), "kube-proxy oracle v1.36 (3/6)", &out, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	got := out.String()
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if want := "oracle: building kube-proxy oracle v1.36 (3/6) (go build, cold: minutes on 2 cores)..."; lines[0] != want {
		t.Errorf("first line %q, want %q", lines[0], want)
	}
	beat := regexp.MustCompile(`^oracle: still building kube-proxy oracle v1\.36 \(3/6\): [0-9.]+m?s so far, [12] packages compiled, last k8s\.io/\S+$`)
	beats := 0
	for _, l := range lines[1 : len(lines)-1] {
		if !beat.MatchString(l) {
			t.Errorf("not a heartbeat: %q", l)
		}
		beats++
	}
	if beats < 3 {
		t.Errorf("%d heartbeats in 0.8s at 100ms, want at least 3:\n%s", beats, got)
	}
	if last := lines[len(lines)-1]; !regexp.MustCompile(`^oracle: built kube-proxy oracle v1\.36 \(3/6\) after \d+s, 2 packages compiled$`).MatchString(last) {
		t.Errorf("last line %q", last)
	}
	if !strings.Contains(string(log), "x.go:1:2: undefined: y") {
		t.Errorf("the build's own output is lost: %q", log)
	}
}

func TestRunReportedSaysAFailure(t *testing.T) {
	var out syncBuffer
	if _, err := runReported(exec.Command("sh", "-c", "exit 1"), "test kube-apiserver v1.37 (6/6)", &out, time.Hour); err == nil {
		t.Fatal("a failed build reported no error")
	}
	if !strings.Contains(out.String(), "oracle: failed to build test kube-apiserver v1.37 (6/6) after 0s, 0 packages compiled\n") {
		t.Errorf("output: %q", out.String())
	}
}

// While another process builds (the cache is shared by worktrees), the
// waiting one says whose build it waits for, and keeps saying so.
func TestLockSaysWhileItWaits(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	holder, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(holder.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(350*time.Millisecond, func() { holder.Close() })
	var out syncBuffer
	unlock, err := lock(path, "kube-proxy oracle v1.34 (1/6)", &out, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	got := out.String()
	if !strings.HasPrefix(got, "oracle: waiting for another process's build of kube-proxy oracle v1.34 (1/6) (it holds "+path+")...\n") {
		t.Errorf("output: %q", got)
	}
	if n := strings.Count(got, "oracle: still waiting for another process's build of kube-proxy oracle v1.34 (1/6): "); n < 2 {
		t.Errorf("%d beats while waiting 350ms at 100ms:\n%s", n, got)
	}

	out = syncBuffer{}
	unlock, err = lock(path, "free", &out, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if out.String() != "" {
		t.Errorf("a free lock said %q", out.String())
	}
}
