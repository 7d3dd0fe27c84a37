package census

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
)

const podUID = "0f3c5a4e-8b1d-4c2a-9e7f-123456789abc"

func byPID(c *Census, pid int) *Namespace {
	for i := range c.Namespaces {
		if c.Namespaces[i].PID == pid {
			return &c.Namespaces[i]
		}
	}
	return nil
}

// Three namespaces beside the test's own: one whose pod holds a legacy
// rule, one with an iptables-nft rule using xt matches (nft_compat), one
// clean. The census names the legacy one (with its pod) and no other, and
// calls the node not legacy-free; without the legacy one it is free.
func TestCensusNetns(t *testing.T) {
	if !nstest.Setup(t, "", "unshare", "iptables-legacy", "iptables-nft") {
		return
	}
	// The host (the test's namespace) holds 300 iptables-nft chains with a
	// commented rule each: enough for the parallel dump's extra sockets.
	restore := "*filter\n"
	for i := range 300 {
		restore += fmt.Sprintf(":C%d - [0:0]\n-A C%d -m comment --comment c%d -j ACCEPT\n", i, i, i)
	}
	nstest.Feed(t, restore+"COMMIT\n", "iptables-nft-restore")
	legacyPID := nstest.Sleeper(t, "iptables-legacy -w -t nat -N POD-SNAT\niptables-legacy -w -t nat -A POSTROUTING -j POD-SNAT -m comment --comment pod")
	nstest.InPod(t, legacyPID, podUID, "4f1e2d")
	compatPID := nstest.Sleeper(t, "iptables-nft -A INPUT -m conntrack --ctstate INVALID -m comment --comment x -j DROP")
	cleanPID := nstest.Sleeper(t, "true")
	mine := func(pids ...int) func(int) bool { return func(p int) bool { return slices.Contains(pids, p) } }

	c, err := Take(context.Background(), Options{PIDs: mine(legacyPID, compatPID, cleanPID)})
	if err != nil {
		t.Fatal(err)
	}
	if c.LegacyFree || c.Verdict != No || len(c.Namespaces) != 4 || len(c.HeldBackBy) != 1 {
		t.Fatalf("census: free %v verdict %s, %d namespaces, held back by %+v; want no, 4, the legacy pod\n%+v", c.LegacyFree, c.Verdict, len(c.Namespaces), c.HeldBackBy, c)
	}
	held := c.HeldBackBy[0]
	if held.PID != legacyPID || held.PodUID != podUID || held.Container != "4f1e2d" || !slices.Equal(held.Tables, []string{"ipv4 nat"}) {
		t.Errorf("held back by %+v, want pid %d, pod %s container 4f1e2d, ipv4 nat", held, legacyPID, podUID)
	}
	if want := "pod " + podUID; !strings.Contains(c.Reason, want) {
		t.Errorf("reason %q does not name %q", c.Reason, want)
	}
	if n := byPID(c, legacyPID); n == nil || n.Legacy[0].Rules != 1 || n.Legacy[0].UserChains != 1 || !slices.Equal(n.Legacy[0].Writers, []string{"unknown"}) {
		t.Errorf("legacy namespace %+v: want 1 rule, 1 user chain, writer unknown", n)
	}
	n := byPID(c, compatPID)
	if n == nil || len(n.Legacy) != 0 || len(n.NFTCompat) != 1 {
		t.Fatalf("nft_compat namespace %+v: want one table using nft_compat and no legacy", n)
	}
	if ct := n.NFTCompat[0]; ct.Family != "ip" || ct.Table != "filter" || ct.Rules != 1 || !slices.Equal(ct.Matches, []string{"comment", "conntrack"}) {
		t.Errorf("nft_compat table %+v: want ip filter, 1 rule, matches comment and conntrack", ct)
	}
	if n := byPID(c, cleanPID); n == nil || len(n.Legacy) != 0 || len(n.NFTCompat) != 0 || n.Error != "" {
		t.Errorf("clean namespace %+v: want nothing", n)
	}
	if h := c.Namespaces[0]; !h.Host || len(h.Legacy) != 0 || len(h.NFTCompat) != 1 || h.NFTCompat[0].Rules != 300 || len(h.NFTCompat[0].Chains) != 300 || !slices.Equal(h.NFTCompat[0].Matches, []string{"comment"}) {
		t.Errorf("host namespace %+v: want first, no legacy, 300 commented rules in 300 chains of ip filter", h)
	}

	if c.NFTCompat != 2 {
		t.Errorf("%d namespaces with nft_compat rules, want the host and one pod", c.NFTCompat)
	}
	free, err := Take(context.Background(), Options{PIDs: mine(compatPID, cleanPID)})
	if err != nil {
		t.Fatal(err)
	}
	if !free.LegacyFree || free.Verdict != Yes || len(free.HeldBackBy) != 0 || free.NFTCompat != 2 {
		t.Errorf("without the legacy pod: free %v verdict %s (%s), held back by %+v; want yes", free.LegacyFree, free.Verdict, free.Reason, free.HeldBackBy)
	}

	bounded, err := Take(context.Background(), Options{PIDs: mine(legacyPID, compatPID, cleanPID), MaxNamespaces: 1})
	if err != nil {
		t.Fatal(err)
	}
	if bounded.NotVisited != 2 || len(bounded.Namespaces) != 2 {
		t.Errorf("at most 1 namespace: %d not visited, %d read; want 2 and 2 (the host and one)", bounded.NotVisited, len(bounded.Namespaces))
	}
}

// BenchmarkCensus100 is a census of a node with 100 pod namespaces, one in
// ten holding a legacy rule and one in ten an nft_compat rule (the host's
// is the benchmark's own, empty): its time and allocations per op are
// those of 100 namespaces.
func BenchmarkCensus100(b *testing.B) {
	if !nstest.Setup(b, "", "unshare", "iptables-legacy", "iptables-nft") {
		return
	}
	var pids []int
	for i := range 100 {
		script := "true"
		switch i % 10 {
		case 0:
			script = "iptables-legacy -w -t nat -A POSTROUTING -j MASQUERADE -m comment --comment pod"
		case 1:
			script = "iptables-nft -A INPUT -m comment --comment pod -j ACCEPT"
		}
		pids = append(pids, nstest.Sleeper(b, script))
	}
	mine := func(p int) bool { return slices.Contains(pids, p) }
	for b.Loop() {
		c, err := Take(context.Background(), Options{PIDs: mine})
		if err != nil || len(c.Namespaces) != 101 || len(c.HeldBackBy) != 10 || c.NFTCompat != 10 {
			b.Fatalf("census: %v; %d namespaces, %d held back, %d nft_compat; want 101, 10, 10", err, len(c.Namespaces), len(c.HeldBackBy), c.NFTCompat)
		}
	}
}

// A process that exits between the walk and the visit is no error: its
// namespace is entered through another of its processes, or, when none
// is left, counted as gone.
func TestCensusExitedNetns(t *testing.T) {
	if !nstest.Setup(t, "", "unshare", "nsenter", "iptables-legacy") {
		return
	}
	first := nstest.Sleeper(t, "iptables-legacy -w -A INPUT -j ACCEPT")
	second := exec.Command("nsenter", "-t", fmt.Sprint(first), "-n", "sleep", "600")
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = second.Process.Kill(); _ = second.Wait() })
	self, err := nsInode("/proc/thread-self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	var found []nsProcs
	deadline := time.Now().Add(5 * time.Second)
	for len(found) != 1 || len(found[0].pids) != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the walk found %+v, want one namespace with pids %d and %d", found, first, second.Process.Pid)
		}
		time.Sleep(10 * time.Millisecond) // until nsenter has entered and exec'd
		found, err = namespaces("/proc", self, func(p int) bool { return p == first || p == second.Process.Pid })
		if err != nil {
			t.Fatal(err)
		}
	}
	kill := func(pid int) {
		t.Helper()
		p, _ := os.FindProcess(pid)
		_ = p.Kill()
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err != nil || strings.Contains(string(b), ") Z ") {
				return // gone, or a zombie, whose ns link no longer opens
			}
		}
		t.Fatalf("pid %d did not exit", pid)
	}
	kill(first)
	n := visit(context.Background(), "/proc", found[0])
	if n.Exited || n.Error != "" || n.PID != second.Process.Pid || len(n.Legacy) != 1 {
		t.Errorf("first process gone: %+v; want entered through pid %d, one legacy table", n, second.Process.Pid)
	}
	kill(second.Process.Pid)
	if n := visit(context.Background(), "/proc", found[0]); !n.Exited || n.Error != "" {
		t.Errorf("every process gone: %+v; want exited, no error", n)
	}
}
