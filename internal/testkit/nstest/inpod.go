package nstest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// InPod moves pid into a cgroup named as the kubelet's cgroupfs driver
// names pod podUID's container, under a cgroup of this test process's own
// in the unified hierarchy, and takes it out again when the test ends: a
// pod's process as the census finds it from /proc/PID/cgroup.
func InPod(t testing.TB, pid int, podUID, container string) {
	t.Helper()
	mount := "/sys/fs/cgroup"
	if _, err := os.Stat("/sys/fs/cgroup/unified/cgroup.procs"); err == nil {
		mount = "/sys/fs/cgroup/unified" // a hybrid host
	}
	if _, err := os.Stat(filepath.Join(mount, "cgroup.procs")); err != nil {
		testhost.Unmet(t, "needs a cgroup v2 hierarchy to place a process as a pod's: %v", err)
	}
	top := filepath.Join(mount, fmt.Sprintf("rke2-proxy-backend-census-test-%d-%d", os.Getpid(), pid))
	dir := filepath.Join(top, "kubepods/besteffort/pod"+podUID, container)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		testhost.Unmet(t, "cannot make a cgroup: %v", err)
	}
	t.Cleanup(func() {
		_ = os.WriteFile(filepath.Join(mount, "cgroup.procs"), []byte(fmt.Sprint(pid)), 0)
		for d := dir; strings.HasPrefix(d, top); d = filepath.Dir(d) {
			_ = os.Remove(d)
		}
	})
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(fmt.Sprint(pid)), 0); err != nil {
		t.Fatalf("moving %d into %s: %v", pid, dir, err)
	}
}
