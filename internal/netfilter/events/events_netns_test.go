package events

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
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
