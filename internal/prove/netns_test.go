package prove

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/events"
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
	runInBackground(t, context.Background(), loopConfig{
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
		if strings.HasPrefix(l, "drift: ") && !strings.Contains(l, "(writer unknown (polling: no nftables change events))") {
			t.Errorf("drift line found by polling does not say its writer is unknown: %s", l)
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

// runs records when each verify started.
type runs struct {
	mu sync.Mutex
	at []time.Time
}

func (r *runs) add() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.at = append(r.at, time.Now())
}

func (r *runs) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.at)
}

func (r *runs) since(t time.Time) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range r.at {
		if a.After(t) {
			return a, true
		}
	}
	return time.Time{}, false
}

// With nf_tables events, watch polls nothing for nftables (Poll is an
// hour here): an idle namespace gets no re-verify, and a rule added in it
// wakes watch once the debounce's quiet period has passed.
func TestEventsWakeWatchInNetns(t *testing.T) {
	if !nstest.InNetns(t) {
		return
	}
	nstest.Tool(t, "nft")
	loadKubeProxy(t, 50)
	reader := verify.NewReader(hostfs.New("/")) // the production reader
	const quiet = 300 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub, err := events.Subscribe(ctx, events.Options{Quiet: quiet, MaxDelay: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var r runs
	var j journal
	runInBackground(t, ctx, loopConfig{
		Stamp:       func(context.Context) string { t.Error("Stamp polled while events are open"); return "" },
		Wake:        sub.C,
		WakeErr:     sub.Err,
		PolledStamp: func(ctx context.Context) string { return LegacyStamp(ctx, reader) },
		Verify: func(ctx context.Context, _ bool) (*verify.Result, error) {
			r.add()
			return verify.Run(ctx, verify.Options{Expect: backend.NFTables, Reader: reader})
		},
		Publish: j.publish,
		Log:     j.log,
		Poll:    time.Hour,
		Quiet:   quiet,
		Grace:   time.Hour,
		Full:    time.Hour,
	})
	j.waitFor(t, "the first verify", 10*time.Second, func(_, p []string) bool { return len(p) == 1 })
	if j.published[0] != verify.VerdictOK {
		t.Fatalf("first verify %s; lines %v", j.published[0], j.lines)
	}

	// Idle: verify's own reads commit nothing, so nothing wakes watch.
	time.Sleep(10 * quiet)
	if n := r.count(); n != 1 {
		t.Fatalf("%d verify runs on an idle namespace, want only the first", n)
	}

	added := time.Now()
	nstest.Sh(t, "nft add rule ip kube-proxy services ip daddr 10.99.0.1 tcp dport 80 accept")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if at, ok := r.since(added); ok {
			if d := at.Sub(added); d < quiet {
				t.Errorf("verify ran %s after the change, inside the %s quiet period", d, quiet)
			}
			t.Logf("woken %s after the rule was added (quiet %s)", at.Sub(added).Round(time.Millisecond), quiet)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the added rule did not wake watch within 10s; lines %v", j.lines)
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(5 * quiet)
	if n := r.count(); n != 2 {
		t.Errorf("%d verify runs after one change, want 2", n)
	}
}

// With events, drift names the process that broke the rules: here an nft
// of known pid flushing kube-proxy's table, which exits at once (so it is
// told exited, or by its origin when reading it won the race).
func TestDriftNamesItsWriterInNetns(t *testing.T) {
	if !nstest.InNetns(t) {
		return
	}
	nstest.Tool(t, "nft")
	loadKubeProxy(t, 50)
	reader := verify.NewReader(hostfs.New("/"))
	const quiet = 200 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub, err := events.Subscribe(ctx, events.Options{Quiet: quiet, MaxDelay: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var j journal
	var mu sync.Mutex
	var stored *events.Writer // what status.json would get while drifting
	runInBackground(t, ctx, loopConfig{
		Stamp:       func(context.Context) string { return "" },
		Wake:        sub.C,
		WakeErr:     sub.Err,
		PolledStamp: func(ctx context.Context) string { return LegacyStamp(ctx, reader) },
		Verify: func(ctx context.Context, _ bool) (*verify.Result, error) {
			return verify.Run(ctx, verify.Options{Expect: backend.NFTables, Reader: reader})
		},
		Publish: func(res *verify.Result, drifting bool, n int) error {
			if drifting {
				mu.Lock()
				stored = res.Writer
				mu.Unlock()
			}
			return j.publish(res, drifting, n)
		},
		Log:   j.log,
		Poll:  100 * time.Millisecond, // the grace is confirmed at a poll
		Quiet: quiet,
		Grace: time.Second,
		Full:  time.Hour,
	})
	j.waitFor(t, "a passing first verify", 10*time.Second, func(_, p []string) bool { return len(p) == 1 && p[0] == verify.VerdictOK })
	cmd := exec.Command("nft", "flush", "table", "ip", "kube-proxy")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nft flush: %v\n%s", err, out)
	}
	by := fmt.Sprintf("(changed by %d (nft, ", cmd.Process.Pid)
	j.waitFor(t, "the suspicion line naming nft", 10*time.Second, func(lines, _ []string) bool {
		return slices.ContainsFunc(lines, func(l string) bool {
			return strings.HasPrefix(l, "kube-proxy's rules look wrong "+by)
		})
	})
	j.waitFor(t, "the drift line naming nft", 10*time.Second, func(lines, _ []string) bool {
		return slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "drift: ") && strings.Contains(l, by) })
	})
	mu.Lock()
	defer mu.Unlock()
	if stored == nil || stored.PID != uint32(cmd.Process.Pid) || stored.Comm != "nft" {
		t.Errorf("the drifting result stored writer %+v, want pid %d (nft)", stored, cmd.Process.Pid)
	}
	j.mu.Lock()
	t.Logf("journal:\n%s", strings.Join(j.lines, "\n"))
	j.mu.Unlock()
}

// When the events stop, watch says so and polls every backend's stamp:
// a stamp move then runs verify as before.
func TestWakeClosedFallsBackToPolling(t *testing.T) {
	wake := make(chan events.Change)
	var stamp sync.Map
	stamp.Store("v", "gen 1")
	var r runs
	var j journal
	runInBackground(t, context.Background(), loopConfig{
		Stamp:       func(context.Context) string { v, _ := stamp.Load("v"); return v.(string) },
		Wake:        wake,
		WakeErr:     func() error { return errTest },
		PolledStamp: func(context.Context) string { return "" },
		Verify: func(context.Context, bool) (*verify.Result, error) {
			r.add()
			return &verify.Result{Verdict: verify.VerdictOK, OK: true}, nil
		},
		Publish: j.publish,
		Log:     j.log,
		Poll:    20 * time.Millisecond,
		Quiet:   50 * time.Millisecond,
		Grace:   time.Hour,
		Full:    time.Hour,
	})
	j.waitFor(t, "the first verify", 5*time.Second, func(_, p []string) bool { return len(p) == 1 })
	close(wake)
	j.waitFor(t, "the fallback line", 5*time.Second, hasLine("nftables change events stopped (netlink: test); polling every backend's stamp"))
	j.waitFor(t, "the verify after the fallback", 5*time.Second, func(_, p []string) bool { return len(p) == 2 })
	moved := time.Now()
	stamp.Store("v", "gen 2")
	j.waitFor(t, "a verify for the polled stamp move", 5*time.Second, func(_, p []string) bool { return len(p) == 3 })
	if at, _ := r.since(moved); at.Sub(moved) < 50*time.Millisecond {
		t.Errorf("verify ran %s after the stamp moved, inside the quiet period", at.Sub(moved))
	}
}

type testError string

func (e testError) Error() string { return string(e) }

const errTest = testError("netlink: test")

// While nf_tables is not loaded watch polls every backend's stamp and does
// not join the nftables group, which would load it: it asks again only
// when the stamps move (nothing else says the module appeared), and once
// it is loaded it subscribes and wakes on events as usual.
func TestSubscribesOnceNFTablesIsLoaded(t *testing.T) {
	var loaded atomic.Bool
	var asked atomic.Int32
	wake := make(chan events.Change, 1)
	var j journal
	runInBackground(t, context.Background(), loopConfig{
		Stamp: func(context.Context) string {
			if loaded.Load() {
				return "nftables=gen 1\n"
			}
			return "nftables=nf_tables not loaded\n"
		},
		PolledStamp: func(context.Context) string { return "" },
		Subscribe: func(context.Context) (*events.Subscription, error) {
			asked.Add(1)
			if !loaded.Load() {
				return nil, nil
			}
			return &events.Subscription{C: wake}, nil
		},
		Verify: func(context.Context, bool) (*verify.Result, error) {
			return &verify.Result{Verdict: verify.VerdictOK, OK: true}, nil
		},
		Publish: j.publish,
		Log:     j.log,
		Poll:    10 * time.Millisecond,
		Quiet:   20 * time.Millisecond,
		Grace:   time.Hour,
		Full:    time.Hour,
	})
	j.waitFor(t, "the first verify", 5*time.Second, func(_, p []string) bool { return len(p) == 1 })
	time.Sleep(200 * time.Millisecond) // twenty polls with the stamps still
	if n := asked.Load(); n != 0 {
		t.Fatalf("asked to subscribe %d times while the stamps stood still", n)
	}
	loaded.Store(true)
	j.waitFor(t, "the subscription", 5*time.Second, hasLine("nf_tables is loaded now: nftables and iptables-nft changes by netlink events"))
	if n := asked.Load(); n != 1 {
		t.Errorf("asked to subscribe %d times, want once (when the stamps moved)", n)
	}
	j.waitFor(t, "the verify after subscribing", 5*time.Second, func(_, p []string) bool { return len(p) == 2 })
	wake <- events.Change{Generation: 2, Commits: 1}
	j.waitFor(t, "a verify woken by an event", 5*time.Second, func(_, p []string) bool { return len(p) == 3 })
}
