package events

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

const testQuiet = 200 * time.Millisecond

func subscribe(t *testing.T) (*Subscription, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s, err := Subscribe(ctx, Options{Quiet: testQuiet, MaxDelay: 5 * time.Second})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if !s.Filtered {
		t.Error("the NEWGEN socket filter did not attach")
	}
	return s, cancel
}

// next waits up to limit for a change; ok is false when none came.
func next(s *Subscription, limit time.Duration) (Change, bool) {
	select {
	case c, open := <-s.C:
		return c, open
	case <-time.After(limit):
		return Change{}, false
	}
}

func run(t *testing.T, script string) {
	t.Helper()
	if out, err := exec.Command("sh", "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
}

// Every committed change in the namespace arrives, nftables and
// iptables-nft alike; reads do not; a burst of commits is one delivery
// after the quiet period.
func TestChangesArriveDebouncedInNetns(t *testing.T) {
	if !nstest.InNetns(t) {
		return
	}
	nstest.Tool(t, "nft")
	nstest.Tool(t, "iptables-nft")
	s, cancel := subscribe(t)
	defer cancel()

	if c, ok := next(s, 3*testQuiet); ok {
		t.Fatalf("a change with nothing changed: %+v", c)
	}
	run(t, "nft add table ip kube-proxy")
	c, ok := next(s, 10*testQuiet)
	if !ok || c.Commits != 1 || c.Generation == 0 || c.Overrun {
		t.Fatalf("after one nft commit: %+v (delivered %v), want one commit with its generation", c, ok)
	}
	gen := c.Generation

	// Reads (nft list, iptables-nft-save, our own dumps) commit nothing.
	run(t, "nft list ruleset >/dev/null; iptables-nft-save >/dev/null")
	if c, ok := next(s, 3*testQuiet); ok {
		t.Fatalf("a read was announced as a change: %+v", c)
	}

	// Five commits in quick succession (five processes: on a loaded
	// machine one may start after the quiet period): all five arrive,
	// merged into fewer deliveries, the last past the first generation.
	run(t, "for i in 1 2 3 4 5; do iptables-nft -w 5 -t nat -A OUTPUT -j ACCEPT; done")
	commits, deliveries := 0, 0
	for {
		c, ok := next(s, 10*testQuiet)
		if !ok {
			break
		}
		commits, deliveries = commits+c.Commits, deliveries+1
		if c.Generation <= gen {
			t.Errorf("generation %d after %d", c.Generation, gen)
		}
	}
	if commits != 5 || deliveries == 0 || deliveries >= 5 {
		t.Fatalf("five iptables-nft commits arrived as %d commit(s) in %d deliveries; want 5 in fewer than 5", commits, deliveries)
	}

	cancel()
	if _, open := <-s.C; open {
		t.Fatal("C still open after the context ended")
	}
	if err := s.Err(); err != nil {
		t.Errorf("Err after a clean end: %v", err)
	}
}

// One transaction writing thousands of rules (a kube-proxy sync) is one
// commit, without an overrun: the socket filter keeps the per-rule
// notifications out of the socket's buffer.
func TestLargeTransactionIsOneCommitInNetns(t *testing.T) {
	if !nstest.InNetns(t) {
		return
	}
	nstest.Tool(t, "nft")
	s, cancel := subscribe(t)
	defer cancel()
	var b strings.Builder
	b.WriteString("add table ip kube-proxy\nadd chain ip kube-proxy services\n")
	for i := range 20000 {
		fmt.Fprintf(&b, "add rule ip kube-proxy services ip daddr 10.%d.%d.%d tcp dport 80 accept\n", i>>16&255, i>>8&255, i&255)
	}
	cmd := exec.Command("nft", "-f", "-")
	cmd.Stdin = strings.NewReader(b.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nft -f: %v\n%s", err, out)
	}
	c, ok := next(s, 10*time.Second)
	if !ok || c.Commits != 1 || c.Overrun {
		t.Fatalf("after one 20,000-rule transaction: %+v (delivered %v), want exactly one commit and no overrun", c, ok)
	}
}

// writerOf finds pid among c's writers.
func writerOf(c Change, pid int) (Writer, bool) {
	for _, w := range c.Writers {
		if w.PID == uint32(pid) {
			return w, true
		}
	}
	return Writer{}, false
}

// start runs argv with an open stdin (so an interactive nft lives until
// the test closes it) and returns it started.
func start(t *testing.T, cmd *exec.Cmd) io.WriteCloser {
	t.Helper()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", cmd.Args, err)
	}
	return in
}

// Each commit names its process as the kernel saw it: nft and
// iptables-nft run here with known pids; a process that exited before its
// change was read is named, and said exited (or its origin, when reading
// it won the race); one in a throwaway cgroup named like a unit is told
// by that unit.
func TestWritersNamedInNetns(t *testing.T) {
	if !nstest.InNetns(t) {
		return
	}
	nstest.Tool(t, "nft")
	nstest.Tool(t, "iptables-nft")
	s, cancel := subscribe(t)
	defer cancel()

	for _, tc := range []struct {
		argv []string
		comm string
	}{
		{[]string{"nft", "add", "table", "ip", "writer-test"}, "nft"},
		{[]string{"iptables-nft", "-w", "5", "-t", "filter", "-A", "OUTPUT", "-j", "ACCEPT"}, "iptables-nft"},
	} {
		cmd := exec.Command(tc.argv[0], tc.argv[1:]...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", tc.argv, err, out)
		}
		c, ok := next(s, 10*testQuiet)
		w, found := writerOf(c, cmd.Process.Pid)
		if !ok || !found || w.Comm != tc.comm || w.Commits != 1 {
			t.Fatalf("after %s (pid %d): %+v (delivered %v), want it named with comm %q", tc.argv, cmd.Process.Pid, c, ok, tc.comm)
		}
		t.Logf("%s: %+v", tc.comm, w)
		// This test runs in no unit or pod, so: exited, or nothing found.
		if w.Origin != (Origin{Exited: true}) && w.Origin != (Origin{}) {
			t.Errorf("%s: origin %+v, want exited or none", tc.comm, w.Origin)
		}
	}

	// A writer alive when its change is read, in throwaway cgroups named
	// as a systemd unit and as a pod's container (both cgroup drivers'
	// spellings): the unit, or the pod and container, is found.
	uid := fmt.Sprintf("0f3c5a4e-8b1d-4c2a-9e7f-%012d", os.Getpid())
	cid := "4f1e2d3c"
	unit := fmt.Sprintf("rke2pb-test-%d.service", os.Getpid())
	for i, tc := range []struct {
		path string
		want Origin
	}{
		{unit, Origin{Unit: unit}},
		{fmt.Sprintf("rke2pb-test-%d/kubepods/burstable/pod%s/%s", os.Getpid(), uid, cid), Origin{PodUID: uid, Container: cid}},
		{fmt.Sprintf("rke2pb-test-%d.slice/kubepods-burstable-pod%s.slice/cri-containerd-%s.scope", os.Getpid(), strings.ReplaceAll(uid, "-", "_"), cid),
			Origin{PodUID: uid, Container: cid}},
	} {
		c, pid := commitIn(t, s, filepath.Join(cgroup2(t), tc.path), fmt.Sprintf("add table ip cgroup-test-%d", i))
		if w, found := writerOf(c, pid); !found || w.Comm != "nft" || w.Origin != tc.want {
			t.Errorf("after nft -i in %s (pid %d): %+v, want nft in %+v", tc.path, pid, c, tc.want)
		}
	}
}

// commitIn runs nft -i in a throwaway cgroup at dir (made with its parents
// and removed after), commits script while it is alive, and returns the
// change and nft's pid.
func commitIn(t *testing.T, s *Subscription, dir, script string) (Change, int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	top := filepath.Join(cgroup2(t), strings.Split(strings.TrimPrefix(dir, cgroup2(t)+"/"), "/")[0])
	defer removeCgroups(t, top)
	fd, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	cmd := exec.Command("nft", "-i")
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: int(fd.Fd())}
	in := start(t, cmd)
	if _, err := io.WriteString(in, script+"\n"); err != nil {
		t.Fatal(err)
	}
	c, ok := next(s, 10*testQuiet)
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("nft -i: %v", err)
	}
	if !ok {
		t.Fatalf("no change after %q in %s", script, dir)
	}
	return c, cmd.Process.Pid
}

// removeCgroups removes the empty cgroup tree at top, deepest first
// (rmdir is how a cgroup is removed; os.RemoveAll would try its files).
func removeCgroups(t *testing.T, top string) {
	var dirs []string
	filepath.WalkDir(top, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := unix.Rmdir(dirs[i]); err != nil {
			t.Errorf("remove the test cgroup %s: %v", dirs[i], err)
		}
	}
}

// A burst of 100 processes, each committing once, is delivered with at
// most MaxWriters of them named, the last one among them, and the rest
// counted.
func TestWriterBurstBoundedInNetns(t *testing.T) {
	if !nstest.InNetns(t) {
		return
	}
	nstest.Tool(t, "nft")
	s, cancel := subscribe(t)
	defer cancel()
	const burst = 100
	var last int
	for i := range burst {
		cmd := exec.Command("nft", "add", "table", "ip", fmt.Sprintf("burst-%d", i))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("nft: %v\n%s", err, out)
		}
		last = cmd.Process.Pid
	}
	commits, named, others := 0, 0, 0
	var final Change
	for {
		c, ok := next(s, 10*testQuiet)
		if !ok {
			break
		}
		if len(c.Writers) > MaxWriters {
			t.Fatalf("%d writers in one change, more than %d", len(c.Writers), MaxWriters)
		}
		commits, named, others, final = commits+c.Commits, named+len(c.Writers), others+c.OtherWriters, c
	}
	if commits != burst || named+others != burst {
		t.Fatalf("%d commits, %d writers named and %d counted; want %d and %d", commits, named, others, burst, burst)
	}
	if w, ok := writerOf(final, last); !ok || w.Comm != "nft" {
		t.Errorf("the last writer (pid %d) is not in the last change: %+v", last, final.Writers)
	}
}

// cgroup2 is where the unified cgroup hierarchy is mounted: /sys/fs/cgroup
// on a v2 host, /sys/fs/cgroup/unified on a hybrid one.
func cgroup2(t *testing.T) string {
	t.Helper()
	for _, dir := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		var st unix.Statfs_t
		if unix.Statfs(dir, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC {
			return dir
		}
	}
	testhost.Unmet(t, "no cgroup v2 hierarchy at /sys/fs/cgroup or /sys/fs/cgroup/unified")
	return ""
}
