package prove

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/events"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// A run's cause: its writers, last first, bounded; or why none is known.
func TestCause(t *testing.T) {
	kp := events.Writer{PID: 99, Comm: "kube-proxy", Origin: events.Origin{PodUID: "0f3c5a4e-8b1d-4c2a-9e7f-123456789abc", Container: "4f1e"}, Commits: 3}
	nft := events.Writer{PID: 1234, Comm: "nft", Origin: events.Origin{Exited: true}, Commits: 1}
	svc := events.Writer{PID: 7, Comm: "firewalld", Origin: events.Origin{Unit: "firewalld.service"}, Commits: 1}
	for _, tc := range []struct {
		name string
		c    Cause
		want string
	}{
		{"writers", causeOf(events.Change{Commits: 4, Writers: []events.Writer{kp, nft}, OtherWriters: 2}, true),
			"changed by 1234 (nft, exited), 99 (kube-proxy, pod 0f3c5a4e-8b1d-4c2a-9e7f-123456789abc container 4f1e) and 2 more"},
		{"a unit", causeOf(events.Change{Commits: 1, Writers: []events.Writer{svc}}, true), "changed by 7 (firewalld, unit firewalld.service)"},
		{"legacy", causeOf(events.Change{Commits: 1, Writers: []events.Writer{nft}}, true).forBackend(backend.IptablesLegacy),
			"writer unknown (iptables-legacy sends no change events)"},
		{"polling", causeOf(events.Change{}, false), "writer unknown (polling: no nftables change events)"},
		{"overrun", causeOf(events.Change{Overrun: true}, true), "writer unknown (the kernel dropped change events)"},
		{"no commit", causeOf(events.Change{}, true), "writer unknown (no nf_tables commit before the run that found it)"},
	} {
		if got := tc.c.String(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// A drifting legacy backend names no writer, whatever nf_tables commits
// came before: legacy x_tables sends no events, so they are not its cause.
func TestLegacyDriftNamesNoWriter(t *testing.T) {
	wake := make(chan events.Change, 1)
	var verdicts atomic.Int32
	var j journal
	var mu sync.Mutex
	var stored *verify.Result
	runInBackground(t, context.Background(), loopConfig{
		Stamp:       func(context.Context) string { return "" },
		Wake:        wake,
		PolledStamp: func(context.Context) string { return "" },
		Verify: func(context.Context, bool) (*verify.Result, error) {
			if verdicts.Add(1) == 1 {
				return &verify.Result{Verdict: verify.VerdictOK, OK: true, Expect: backend.IptablesLegacy}, nil
			}
			return &verify.Result{Verdict: verify.VerdictFailed, Expect: backend.IptablesLegacy,
				Findings: []verify.Finding{{Message: "KUBE-SERVICES is gone", Fix: "restart kube-proxy"}}}, nil
		},
		Publish: func(res *verify.Result, drifting bool, n int) error {
			mu.Lock()
			stored = res
			mu.Unlock()
			return j.publish(res, drifting, n)
		},
		Log:   j.log,
		Poll:  20 * time.Millisecond,
		Quiet: 20 * time.Millisecond,
		Grace: 0,
		Full:  time.Hour,
	})
	j.waitFor(t, "the first verify", 5*time.Second, func(_, p []string) bool { return len(p) == 1 })
	wake <- events.Change{Commits: 1, Writers: []events.Writer{{PID: 4242, Comm: "nft", Commits: 1}}}
	j.waitFor(t, "the legacy drift line", 5*time.Second, func(lines, _ []string) bool {
		return slices.ContainsFunc(lines, func(l string) bool {
			return strings.HasPrefix(l, "drift: ") && strings.Contains(l, "(writer unknown (iptables-legacy sends no change events))")
		})
	})
	mu.Lock()
	defer mu.Unlock()
	if stored.Writer != nil || stored.WriterUnknown != UnknownLegacy {
		t.Errorf("stored writer %+v, unknown %q; want none, %q", stored.Writer, stored.WriterUnknown, UnknownLegacy)
	}
}
