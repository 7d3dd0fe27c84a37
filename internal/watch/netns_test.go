package watch

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/expectedtest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// loadKubeProxy loads kube-proxy's rendered nftables footprint, both
// families, as kube-proxy's own sync would.
func loadKubeProxy(t *testing.T, services int) {
	t.Helper()
	expectedtest.Load(t, expected.Options{Backend: backend.NFTables, Services: services})
}

// runInBackground runs Run(ctx, cfg) until the test ends, then cancels it
// and fails t if Run returned an error.
func runInBackground(t *testing.T, ctx context.Context, cfg Config) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

// journal collects the watcher's lines and published states.
type journal struct {
	mu        sync.Mutex
	lines     []string
	published []string // verdict, plus "+drift" while drifting
}

func (j *journal) log(line string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.lines = append(j.lines, line)
}

func (j *journal) publish(res *verify.Result, drifting bool, _ int) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := res.Verdict
	if drifting {
		s += "+drift"
	}
	j.published = append(j.published, s)
	return nil
}

// waitFor polls until cond holds on the journal, or fails after limit.
func (j *journal) waitFor(t *testing.T, what string, limit time.Duration, cond func(lines, published []string) bool) time.Time {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		j.mu.Lock()
		ok := cond(j.lines, j.published)
		j.mu.Unlock()
		if ok {
			return time.Now()
		}
		time.Sleep(20 * time.Millisecond)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	t.Fatalf("no %s within %s; lines:\n%s\npublished: %v", what, limit, strings.Join(j.lines, "\n"), j.published)
	return time.Time{}
}

func hasLine(prefix string) func(lines, _ []string) bool {
	return func(lines, _ []string) bool {
		for _, l := range lines {
			if strings.HasPrefix(l, prefix) {
				return true
			}
		}
		return false
	}
}

// TestDriftAndRecoveryInNetns runs the watcher on real nftables: a first
// verify before kube-proxy synced is retried when the rules appear (no
// drift), a flushed kube-proxy table becomes drift only after the grace,
// and reloading it is reported as recovery.
func TestDriftAndRecoveryInNetns(t *testing.T) {
	if !nstest.InNetns(t) {
		return
	}
	nstest.Tool(t, "nft")
	reader := verify.NewReader(hostfs.New("/"))
	const grace = 3 * time.Second
	var j journal
	runInBackground(t, context.Background(), Config{
		Stamp: func(ctx context.Context) string { return Stamps(ctx, reader) },
		Verify: func(ctx context.Context, _ bool) (*verify.Result, error) {
			return verify.Run(ctx, verify.Options{Expect: backend.NFTables, Reader: reader})
		},
		Publish: j.publish,
		Log:     j.log,
		Poll:    50 * time.Millisecond,
		Quiet:   150 * time.Millisecond,
		Grace:   grace,
		Full:    time.Hour,
	})

	// RKE2 up, kube-proxy not synced yet: the first verify fails ...
	j.waitFor(t, "first verify", 10*time.Second, func(_, p []string) bool { return len(p) == 1 })
	if j.published[0] != verify.VerdictFailed {
		t.Fatalf("first verify on an empty namespace = %s, want failed", j.published[0])
	}
	// ... and is retried when kube-proxy's rules appear, within the grace.
	loadKubeProxy(t, 100)
	j.waitFor(t, "a passing re-verify", 10*time.Second, func(_, p []string) bool { return p[len(p)-1] == verify.VerdictOK })

	flushed := time.Now()
	nstest.Sh(t, "nft flush table ip kube-proxy")
	j.waitFor(t, "the suspicion line", 10*time.Second, hasLine("kube-proxy's rules look wrong"))
	drift := j.waitFor(t, "the drift line", 10*time.Second, hasLine("drift: "))
	if d := drift.Sub(flushed); d < grace {
		t.Errorf("drift reported %s after the flush, before the %s grace", d, grace)
	}
	j.mu.Lock()
	for _, l := range j.lines {
		if strings.HasPrefix(l, "drift: ") && !strings.Contains(l, "fix: ") {
			t.Errorf("drift line without a fix: %s", l)
		}
	}
	j.mu.Unlock()

	nstest.Sh(t, "nft delete table ip kube-proxy")
	loadKubeProxy(t, 100)
	j.waitFor(t, "the recovery line", 10*time.Second, hasLine("recovered: "))
	j.mu.Lock()
	last := j.published[len(j.published)-1]
	j.mu.Unlock()
	if last != verify.VerdictOK {
		t.Errorf("last published state %s, want ok", last)
	}
	j.mu.Lock()
	t.Logf("journal:\n%s", strings.Join(j.lines, "\n"))
	j.mu.Unlock()
}

// TestStampsMoveInNetns checks that Stamps moves for a change in either
// family of backends, legacy included (it has no events, only the tables'
// counts and sizes), and stays put when nothing changed.
func TestStampsMoveInNetns(t *testing.T) {
	if !nstest.InNetns(t) {
		return
	}
	nstest.Tool(t, "nft")
	nstest.Tool(t, "iptables-legacy")
	reader := netfilter.NewSystem(hostfs.New("/"))
	ctx := context.Background()
	nstest.Sh(t, "iptables-legacy -w 5 -t filter -N KUBE-SERVICES")
	before := Stamps(ctx, reader)
	if again := Stamps(ctx, reader); again != before {
		t.Fatalf("stamp moved with no change:\n%s\n%s", before, again)
	}
	nstest.Sh(t, "iptables-legacy -w 5 -t filter -A KUBE-SERVICES -j ACCEPT")
	afterLegacy := Stamps(ctx, reader)
	if afterLegacy == before {
		t.Fatalf("stamp did not move when a legacy rule was added:\n%s", before)
	}
	nstest.Sh(t, "nft add table ip kube-proxy")
	if afterNFT := Stamps(ctx, reader); afterNFT == afterLegacy {
		t.Fatalf("stamp did not move when an nftables table was added:\n%s", afterLegacy)
	}
}
