package verify

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ownership"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
)

// stampedReader is the Fake with a change stamp and a read cost, counting
// the reads of one backend.
type stampedReader struct {
	*netfilter.Fake
	watch backend.Backend
	cost  time.Duration
	stamp func() string
	reads atomic.Int32
}

func (r *stampedReader) Read(ctx context.Context, b backend.Backend) (*rules.Ruleset, error) {
	if b == r.watch {
		r.reads.Add(1)
		time.Sleep(r.cost)
	}
	return r.Fake.Read(ctx, b)
}

func (r *stampedReader) Stamp(context.Context, backend.Backend) (string, error) {
	return r.stamp(), nil
}

// While the stamp stays put, waiting reads the backend once.
func TestWaitReadsOnlyWhenTheStampMoves(t *testing.T) {
	var gen atomic.Int32
	r := &stampedReader{Fake: netfilter.NewFake(), watch: backend.IptablesNFT, stamp: func() string { return fmt.Sprint(gen.Load()) }}
	res := run(t, Options{Expect: backend.IptablesNFT, Reader: r, Wait: 300 * time.Millisecond, Poll: 5 * time.Millisecond})
	if n := r.reads.Load(); n != 1 || res.Synced {
		t.Errorf("%d reads with an unchanged stamp (synced %v), want 1", n, res.Synced)
	}

	r.reads.Store(0)
	polls := 0
	res = run(t, Options{Expect: backend.IptablesNFT, Reader: r, Wait: time.Hour, Poll: time.Millisecond,
		Sleep: func(context.Context, time.Duration) error {
			if polls++; polls == 20 {
				r.Fake.Set(skeleton(t, backend.IptablesNFT, expected.Newest, 0))
				gen.Add(1)
			}
			return nil
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
	r := &stampedReader{Fake: netfilter.NewFake(), watch: backend.IptablesNFT, cost: 4 * time.Millisecond, stamp: always}
	res := run(t, Options{Expect: backend.IptablesNFT, Reader: r, Wait: 500 * time.Millisecond, Poll: time.Millisecond})
	// 500 ms / (26 x 4 ms) is under 5 reads; reading at every poll is ~100.
	if got := r.reads.Load(); got > 6 {
		t.Errorf("%d reads of 4 ms in a 500 ms wait, want at most 6 (one per %dx its cost)", got, readCostFactor)
	}

	r = &stampedReader{Fake: netfilter.NewFake(), watch: backend.IptablesNFT, cost: 150 * time.Millisecond, stamp: always}
	start := time.Now()
	res = run(t, Options{Expect: backend.IptablesNFT, Reader: r, Wait: 200 * time.Millisecond, Poll: time.Millisecond})
	took := time.Since(start)
	if got := r.reads.Load(); got != 1 || took > 200*time.Millisecond+100*time.Millisecond || res.Synced {
		t.Errorf("%d reads of 150 ms, done after %s with a 200 ms wait; want 1 read and no overshoot", got, took)
	}
}

// A waiting verify says what it still lacks, at most once per interval.
func TestWaitLogsProgress(t *testing.T) {
	var lines []string
	res := run(t, Options{Expect: backend.NFTables, Reader: netfilter.NewFake(), Wait: 300 * time.Millisecond, Poll: 5 * time.Millisecond,
		ProgressEvery: 100 * time.Millisecond, Progress: func(l string) { lines = append(lines, l) }})
	if res.Synced {
		t.Fatal("synced with nothing live")
	}
	if len(lines) < 1 || len(lines) > 3 {
		t.Fatalf("%d progress lines in 300 ms at one per 100 ms, want 1-3: %q", len(lines), lines)
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
	res := run(t, Options{Expect: backend.IptablesNFT, Reader: netfilter.NewFake(nft, hint), OneBootOverride: true})
	if !res.OK || res.Verdict != VerdictOK || len(res.Warnings) != 1 || res.Warnings[0].Kind != KindKubeletHint {
		t.Errorf("one-boot override: ok=%v verdict %s warnings %+v findings %q", res.OK, res.Verdict, res.Warnings, kinds(res))
	}
	res = run(t, Options{Expect: backend.IptablesNFT, Reader: netfilter.NewFake(nft, hint)})
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
	fake := netfilter.NewFake()
	fake.SetError(backend.IptablesLegacy, &netfilter.PermissionError{Backend: backend.IptablesLegacy, Err: fmt.Errorf("EPERM")})
	if r := run(t, Options{Expect: backend.IptablesLegacy, Reader: fake}); r.Verdict != VerdictUnknown {
		t.Errorf("unreadable expected backend: verdict %s findings %q", r.Verdict, kinds(r))
	}
	fake.Set(skeleton(t, backend.IptablesNFT, expected.Newest, 0))
	if r := run(t, Options{Expect: backend.IptablesLegacy, Reader: fake}); r.Verdict != VerdictFailed {
		t.Errorf("unreadable expected backend and rules stranded: verdict %s findings %q", r.Verdict, kinds(r))
	}
}
