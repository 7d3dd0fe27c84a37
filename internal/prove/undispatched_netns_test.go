package prove

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/events"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// TestUndispatchedServiceTurnsWatchRedInNetns: one service-ips element
// deleted behind kube-proxy's back wakes watch (an nf_tables change event)
// and, past the grace, is drift that names the Service's chain, and the
// node's published state is failed: verify's undispatched-service finding
// takes watch's existing path.
func TestUndispatchedServiceTurnsWatchRedInNetns(t *testing.T) {
	if !nstest.InNetns(t) {
		return
	}
	nstest.Tool(t, "nft")
	loadKubeProxy(t, 20)
	full, err := netfilter.NewSystem(hostfs.New("/")).Read(context.Background(), backend.NFTables)
	if err != nil {
		t.Fatal(err)
	}
	var key, chain string
	if s := full.Table(rules.IPv4, "kube-proxy").Set("service-ips"); s != nil && len(s.Elements) > 0 {
		e := s.Elements[0]
		key, _, _ = strings.Cut(e, " : ")
		chain = rules.ElementJump(e)
	}
	if chain == "" {
		t.Fatal("the rendered kube-proxy rules have no service-ips element going to a chain")
	}
	reader := verify.NewReader(hostfs.New("/"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub, err := events.Subscribe(ctx, events.Options{Quiet: 100 * time.Millisecond, MaxDelay: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var j journal
	runInBackground(t, ctx, loopConfig{
		Wake:        sub.C,
		WakeErr:     sub.Err,
		PolledStamp: func(ctx context.Context) string { return LegacyStamp(ctx, reader) },
		Verify: func(ctx context.Context, _ bool) (*verify.Result, error) {
			return verify.Run(ctx, verify.Options{Expect: backend.NFTables, Reader: reader})
		},
		Publish: j.publish,
		Log:     j.log,
		Poll:    100 * time.Millisecond, // the legacy stamps' poll, which also ends the grace
		Quiet:   100 * time.Millisecond,
		Grace:   time.Second,
		Full:    time.Hour,
	})
	j.waitFor(t, "a passing first verify", 10*time.Second, func(_, p []string) bool { return len(p) == 1 && p[0] == verify.VerdictOK })

	nstest.Sh(t, "nft delete element ip kube-proxy service-ips '{ "+key+" }'")
	j.waitFor(t, "drift naming "+chain, 10*time.Second, func(lines, _ []string) bool {
		for _, l := range lines {
			if strings.HasPrefix(l, "drift: ") && strings.Contains(l, chain) && strings.Contains(l, "not dispatched") {
				return true
			}
		}
		return false
	})
	j.mu.Lock()
	defer j.mu.Unlock()
	if last := j.published[len(j.published)-1]; !strings.HasPrefix(last, verify.VerdictFailed) {
		t.Errorf("published state after the deletion %s, want failed", last)
	}
	t.Logf("journal:\n%s", strings.Join(j.lines, "\n"))
}
