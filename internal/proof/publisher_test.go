package proof

import (
	"context"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/apiserver"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// TestPublisherAgainstAPIServer writes with the kubelet credentials RKE2's
// agent keeps, against a real kube-apiserver with NodeRestriction: a
// state is written at once,
// the same state again not within MinInterval, a changed one at once; and
// a publisher started later (watch restarted) keeps lastTransitionTime.
func TestPublisherAgainstAPIServer(t *testing.T) {
	api := apiserver.Start(t)
	api.RegisterNode("node-a")
	h := testhost.New(t).File("/etc/rancher/rke2/config.yaml", "node-name: NODE-A\n")
	api.InstallRKE2Agent(h.Dir(), "node-a")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := NewPublisher(h.Root(), PublishOptions{MinInterval: time.Hour, Log: func(l string) { t.Log(l) }})
	go p.Run(ctx)
	bad := State{Verdict: Verdict{Status: Problem, Message: "1 finding(s)"}, At: time.Now(), Mode: "nftables", Source: "auto", Version: "v9"}
	p.Offer(bad)
	// A write is two patches: wait for the second, the annotations.
	status := func(want, backend string) func(apiserver.Node) bool {
		return func(n apiserver.Node) bool {
			c, ok := n.Condition(ConditionType)
			return ok && c.Status == want && n.Annotations[AnnotationVerifiedBackend] == backend
		}
	}
	n := api.WaitNode(t, "node-a", "the condition True", 30*time.Second, status("True", "none"))
	c, _ := n.Condition(ConditionType)
	if c.Reason != ReasonWrong || c.Message != "1 finding(s)" || n.Annotations[AnnotationVerifiedBackend] != "none" || n.Annotations[AnnotationVerifiedAt] != "" {
		t.Errorf("after a problem: %+v %v", c, n.Annotations)
	}
	bad.At = bad.At.Add(time.Second)
	p.Offer(bad)
	time.Sleep(time.Second)
	if again := api.Node("node-a"); again.ResourceVersion != n.ResourceVersion {
		t.Errorf("the same verdict was written again within MinInterval (resourceVersion %s -> %s)", n.ResourceVersion, again.ResourceVersion)
	}
	good := State{Verdict: Verdict{Status: OK, Message: "ok"}, Proven: true, Backend: "nftables", At: time.Now(), Mode: "nftables", Source: "auto", Version: "v9"}
	p.Offer(good)
	n = api.WaitNode(t, "node-a", "the condition False", 10*time.Second, status("False", "nftables"))
	c, _ = n.Condition(ConditionType)
	if n.Annotations[AnnotationVerifiedBackend] != "nftables" || n.Annotations[AnnotationVerifiedAt] != stamp(good.At) {
		t.Errorf("after a proof: %v", n.Annotations)
	}
	// The publisher records the heartbeat once its write returns, which
	// may be just after the Node shows it.
	hb, _ := time.Parse(time.RFC3339, c.LastHeartbeatTime)
	for end := time.Now().Add(5 * time.Second); !p.Heartbeat().Truncate(time.Second).Equal(hb) && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	if !p.Heartbeat().Truncate(time.Second).Equal(hb) {
		t.Errorf("Heartbeat() %v, the Node holds %s", p.Heartbeat(), c.LastHeartbeatTime)
	}
	if got := n.Annotations[AnnotationStaleAfter]; got != "24h0m0s" {
		t.Errorf("%s = %q from a publisher with no refresh period, want 24h0m0s", AnnotationStaleAfter, got)
	}
	cancel()

	// A new publisher (watch restarted) with the same status keeps the
	// transition time it finds on the Node.
	time.Sleep(1100 * time.Millisecond) // a later second: a reset would show
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	p = NewPublisher(h.Root(), PublishOptions{Refresh: 10 * time.Minute})
	go p.Run(ctx)
	good.At = time.Now()
	p.Offer(good)
	n = api.WaitNode(t, "node-a", "a fresh heartbeat", 10*time.Second, func(n apiserver.Node) bool {
		cond, _ := n.Condition(ConditionType)
		return cond.LastHeartbeatTime == stamp(good.At)
	})
	if again, _ := n.Condition(ConditionType); again.LastTransitionTime != c.LastTransitionTime {
		t.Errorf("lastTransitionTime %s after a restart with the same status, want %s kept", again.LastTransitionTime, c.LastTransitionTime)
	}
	// The annotations are the write's second patch: wait for them too.
	n = api.WaitNode(t, "node-a", "the stale-after", 10*time.Second, func(n apiserver.Node) bool { return n.Annotations[AnnotationStaleAfter] != "24h0m0s" })
	if got := n.Annotations[AnnotationStaleAfter]; got != "30m0s" {
		t.Errorf("%s = %q from watch's publisher renewing every 10m, want 30m0s", AnnotationStaleAfter, got)
	}
	cancel()

	// A fresh publisher (WriteOnce, a restarted watch) whose first run
	// proves nothing leaves the Node's last proof as it was.
	proof := n.Annotations[AnnotationVerifiedAt]
	bad.At = time.Now()
	if err := WriteOnce(context.Background(), h.Root(), distro.RKE2, bad, func(l string) { t.Log(l) }); err != nil {
		t.Fatalf("WriteOnce: %v", err)
	}
	n = api.Node("node-a")
	if c, _ := n.Condition(ConditionType); c.Status != "True" || n.Annotations[AnnotationVerifiedBackend] != "none" {
		t.Errorf("WriteOnce of a problem: %+v %v", c, n.Annotations)
	}
	if got := n.Annotations[AnnotationVerifiedAt]; proof == "" || got != proof {
		t.Errorf("%s is %q after a fresh publisher's unproven run, want the last proof %q kept", AnnotationVerifiedAt, got, proof)
	}
}

// A Node's stale-after is three renewals, at most a day, and a day for a
// publisher that writes once (verify without watch).
func TestStaleAfter(t *testing.T) {
	for _, c := range []struct{ refresh, min, want time.Duration }{
		{0, 0, 24 * time.Hour}, {10 * time.Minute, time.Minute, 30 * time.Minute},
		{30 * time.Second, time.Minute, 3 * time.Minute}, {12 * time.Hour, time.Minute, 24 * time.Hour},
	} {
		if got := (PublishOptions{Refresh: c.refresh, MinInterval: c.min}).StaleAfter(); got != c.want {
			t.Errorf("refresh %s, min interval %s: %s, want %s", c.refresh, c.min, got, c.want)
		}
	}
}

// The schedule: a change is due at once, the same facts only after
// MinInterval, anything after a failure when the backoff ends.
func TestDue(t *testing.T) {
	p := NewPublisher(testhost.New(t).Root(), PublishOptions{MinInterval: time.Minute})
	s := State{Verdict: Verdict{Status: OK, Message: "ok"}, At: time.Now()}
	if !p.due(s, time.Time{}).IsZero() {
		t.Error("the first state is not due at once")
	}
	p.written, p.writtenAt = &s, time.Now()
	later := s
	later.At = s.At.Add(time.Second)
	if got := p.due(later, time.Time{}); !got.Equal(p.writtenAt.Add(time.Minute)) {
		t.Errorf("the same facts due at %v, want MinInterval after the write", got)
	}
	changed := later
	changed.Verdict.Status = Problem
	if !p.due(changed, time.Time{}).IsZero() {
		t.Error("a changed verdict is not due at once")
	}
	retry := time.Now().Add(5 * time.Second)
	p.failing = true
	if got := p.due(changed, retry); !got.Equal(retry) {
		t.Errorf("after a failure due at %v, want the backoff's end", got)
	}
}
