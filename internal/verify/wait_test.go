package verify

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ownership"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
)

// fakeClock is verify's clock in the wait tests: Sleep advances it, and a
// read's cost advances it, so what a wait does depends on the durations the
// test names and not on how busy the machine is.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.advance(d)
	return nil
}

// on sets opts to read time from c.
func (c *fakeClock) on(opts Options) Options {
	opts.Now, opts.Sleep = c.Now, c.Sleep
	return opts
}

// stampedReader is the Fake with a change stamp and a read cost (on the
// fake clock), counting the reads of one backend.
type stampedReader struct {
	*netfilter.Fake
	clock *fakeClock
	watch backend.Backend
	cost  time.Duration
	stamp func() string
	reads atomic.Int32
}

func (r *stampedReader) Read(ctx context.Context, b backend.Backend) (*rules.Ruleset, error) {
	if b == r.watch {
		r.reads.Add(1)
		r.clock.advance(r.cost)
	}
	return r.Fake.Read(ctx, b)
}

func (r *stampedReader) Stamp(context.Context, backend.Backend) (string, error) {
	return r.stamp(), nil
}

// While the stamp stays put, waiting reads the backend once.
func TestWaitReadsOnlyWhenTheStampMoves(t *testing.T) {
	var gen atomic.Int32
	clock := newFakeClock()
	r := &stampedReader{Fake: newFake(t), clock: clock, watch: backend.IptablesNFT, stamp: func() string { return fmt.Sprint(gen.Load()) }}
	res := run(t, clock.on(Options{Expect: backend.IptablesNFT, Reader: r, Wait: 300 * time.Millisecond, Poll: 5 * time.Millisecond}))
	if n := r.reads.Load(); n != 1 || res.Synced {
		t.Errorf("%d reads with an unchanged stamp (synced %v), want 1", n, res.Synced)
	}

	r.reads.Store(0)
	polls := 0
	res = run(t, Options{Expect: backend.IptablesNFT, Reader: r, Wait: time.Hour, Poll: time.Millisecond, Now: clock.Now,
		Sleep: func(ctx context.Context, d time.Duration) error {
			if polls++; polls == 20 {
				r.Fake.Set(skeleton(t, backend.IptablesNFT, expected.Newest, 0))
				gen.Add(1)
			}
			return clock.Sleep(ctx, d)
		}})
	if n := r.reads.Load(); n != 2 || !res.Synced || !res.OK {
		t.Errorf("%d reads (synced %v, findings %q), want 2: the first and the one after the stamp moved", n, res.Synced, kinds(res))
	}
}

// Reads are spaced in proportion to their cost, and none starts that could
// not end by the deadline.
func TestWaitBacksOffAndKeepsTheDeadline(t *testing.T) {
	var n atomic.Int32
	always := func() string { return fmt.Sprint(n.Add(1)) } // changes every time
	clock := newFakeClock()
	r := &stampedReader{Fake: newFake(t), clock: clock, watch: backend.IptablesNFT, cost: 4 * time.Millisecond, stamp: always}
	run(t, clock.on(Options{Expect: backend.IptablesNFT, Reader: r, Wait: 500 * time.Millisecond, Poll: time.Millisecond}))
	// A read of 4 ms and 25x its cost after it: one read every 104 ms, at
	// 0, 104, 208, 312 and 416 ms; reading at every poll would be ~100.
	if got := r.reads.Load(); got != 5 {
		t.Errorf("%d reads of 4 ms in a 500 ms wait, want 5 (one per %dx its cost)", got, readCostFactor+1)
	}

	// The stamp says read again, the cost says not yet: the first read ends
	// at 150 ms and the wait ends at 200 ms without a second one.
	r = &stampedReader{Fake: newFake(t), clock: clock, watch: backend.IptablesNFT, cost: 150 * time.Millisecond, stamp: always}
	res := run(t, clock.on(Options{Expect: backend.IptablesNFT, Reader: r, Wait: 200 * time.Millisecond, Poll: time.Millisecond}))
	if got := r.reads.Load(); got != 1 || res.Duration > 200*time.Millisecond || res.Synced {
		t.Errorf("%d reads of 150 ms, done after %s with a 200 ms wait; want 1 read and no overshoot", got, res.Duration)
	}

	// A read of 10 ms may start again at 260 ms, but would end after the
	// 265 ms deadline: verify stops there, early, and says so.
	r = &stampedReader{Fake: newFake(t), clock: clock, watch: backend.IptablesNFT, cost: 10 * time.Millisecond, stamp: always}
	res = run(t, clock.on(Options{Expect: backend.IptablesNFT, Reader: r, Wait: 265 * time.Millisecond, Poll: time.Millisecond}))
	if got := r.reads.Load(); got != 1 || res.Duration != 260*time.Millisecond || !strings.Contains(strings.Join(res.Notes, "\n"), "stopped waiting for kube-proxy's first sync in iptables-nft") {
		t.Errorf("%d reads of 10 ms, done after %s with a 265 ms wait, notes %q; want 1 read, a stop at 260 ms and a note", got, res.Duration, res.Notes)
	}
}

// A waiting verify says what it still lacks, at most once per interval.
func TestWaitLogsProgress(t *testing.T) {
	var lines []string
	clock := newFakeClock()
	res := run(t, clock.on(Options{Expect: backend.NFTables, Reader: newFake(t), Wait: 300 * time.Millisecond, Poll: 5 * time.Millisecond,
		ProgressEvery: 100 * time.Millisecond, Progress: func(l string) { lines = append(lines, l) }}))
	if res.Synced {
		t.Fatal("synced with nothing live")
	}
	// At 100 and 200 ms; at 300 ms the wait is over.
	if len(lines) != 2 {
		t.Fatalf("%d progress lines in 300 ms at one per 100 ms, want 2: %q", len(lines), lines)
	}
	for _, l := range lines {
		if !strings.Contains(l, "still waiting for kube-proxy's first sync in nftables") || !strings.Contains(l, "table kube-proxy is absent") {
			t.Errorf("progress line %q does not say what is missing", l)
		}
	}
}

// The stranded finding counts each list it shortens on its own.
func TestStrandedFindingCounts(t *testing.T) {
	o := &ownership.Owned{Rules: 48}
	for i := range 24 {
		c := ownership.ChainRef{Family: rules.IPv4, Table: "nat", Chain: fmt.Sprintf("KUBE-SVC-%02d", i)}
		o.Chains = append(o.Chains, c)
		o.Jumps = append(o.Jumps, ownership.JumpRef{ChainRef: ownership.ChainRef{Family: rules.IPv4, Table: "nat", Chain: "PREROUTING"}, Rule: rules.Rule{Jump: c.Chain}})
	}
	f := strandedFindings(backend.IptablesNFT, BackendState{Backend: backend.IptablesLegacy, Owned: o})
	if len(f) != 1 {
		t.Fatalf("findings %+v", f)
	}
	m := f[0].Message
	for _, want := range []string{"48 kube-proxy rule(s)", "24 chain(s): ipv4 nat KUBE-SVC-00,", "KUBE-SVC-07 and 16 more;", "24 jump(s) into them: ", "to KUBE-SVC-07 and 16 more"} {
		if !strings.Contains(m, want) {
			t.Errorf("message lacks %q:\n%s", want, m)
		}
	}
}

// After a one-boot override from the kernel command line, kubelet's hints
// in the host alternative's backend warn; otherwise they fail.
func TestHintsWarnDuringOneBootOverride(t *testing.T) {
	nft := skeleton(t, backend.IptablesNFT, expected.Newest, 0)
	hint := &rules.Ruleset{Backend: backend.IptablesLegacy, Tables: []rules.Table{{Family: rules.IPv4, Name: "mangle",
		Chains: []rules.Chain{{Name: "KUBE-IPTABLES-HINT"}}}}}
	res := run(t, Options{Expect: backend.IptablesNFT, Reader: newFake(t, nft, hint), OneBootOverride: true})
	if !res.OK || res.Verdict != VerdictOK || len(res.Warnings) != 1 || res.Warnings[0].Kind != KindKubeletHint {
		t.Errorf("one-boot override: ok=%v verdict %s warnings %+v findings %q", res.OK, res.Verdict, res.Warnings, kinds(res))
	}
	res = run(t, Options{Expect: backend.IptablesNFT, Reader: newFake(t, nft, hint)})
	if res.OK || kinds(res) != "kubelet-hint@iptables-legacy" {
		t.Errorf("no override: ok=%v findings %q", res.OK, kinds(res))
	}
}

// "Cannot tell" is its own verdict: no expectation, or the expected
// backend unreadable; a read error next to a real problem still fails.
func TestVerdictCannotTell(t *testing.T) {
	if r := CannotTell("no plan", "run apply"); r.Verdict != VerdictUnknown || r.OK || len(r.Findings) != 1 {
		t.Errorf("CannotTell = %+v", r)
	}
	fake := newFake(t)
	fake.SetError(backend.IptablesLegacy, &netfilter.PermissionError{Backend: backend.IptablesLegacy, Err: fmt.Errorf("EPERM")})
	if r := run(t, Options{Expect: backend.IptablesLegacy, Reader: fake}); r.Verdict != VerdictUnknown {
		t.Errorf("unreadable expected backend: verdict %s findings %q", r.Verdict, kinds(r))
	}
	fake.Set(skeleton(t, backend.IptablesNFT, expected.Newest, 0))
	if r := run(t, Options{Expect: backend.IptablesLegacy, Reader: fake}); r.Verdict != VerdictFailed {
		t.Errorf("unreadable expected backend and rules stranded: verdict %s findings %q", r.Verdict, kinds(r))
	}
}
