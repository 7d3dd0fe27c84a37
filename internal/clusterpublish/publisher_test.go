package clusterpublish

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/nodecheck"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/apiserver"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// TestPublisherAgainstAPIServer writes with the kubelet credentials RKE2's
// agent keeps, against a real kube-apiserver with NodeRestriction: the
// node is named as RKE2 names it (node-name, lower-cased), or as its
// certificate says when the config disagrees; a state is written at once,
// the same state again not within MinInterval, a changed one at once; and
// a publisher started later (watch restarted) keeps lastTransitionTime.
func TestPublisherAgainstAPIServer(t *testing.T) {
	api := apiserver.Start(t)
	api.RegisterNode("node-a")
	h := testhost.New(t).File("/etc/rancher/rke2/config.yaml", "node-name: NODE-A\n")
	api.InstallRKE2Agent(h.Dir(), "node-a")
	target, err := Locate(h.Root(), distro.RKE2)
	if err != nil || target.Node != "node-a" || len(target.Notes) != 0 {
		t.Fatalf("Locate: %+v, %v: want node-a (node-name lower-cased), no notes", target, err)
	}
	other := testhost.New(t).File("/etc/rancher/rke2/config.yaml", "node-name: elsewhere\n")
	api.InstallRKE2Agent(other.Dir(), "node-a")
	if target, err := Locate(other.Root(), distro.RKE2); err != nil || target.Node != "node-a" || len(target.Notes) != 1 || !strings.Contains(target.Notes[0], `is for node "node-a"`) {
		t.Errorf("Locate with a certificate for another name: %+v, %v: want node-a and a note", target, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := New(h.Root(), Options{MinInterval: time.Hour, Log: func(l string) { t.Log(l) }})
	go p.Run(ctx)
	bad := State{Verdict: nodecheck.Verdict{Status: nodecheck.Problem, Message: "1 finding(s)"}, At: time.Now(), Mode: "nftables", Source: "auto", Version: "v9"}
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
	good := State{Verdict: nodecheck.Verdict{Status: nodecheck.OK, Message: "ok"}, Proven: true, Backend: "nftables", At: time.Now(), Mode: "nftables", Source: "auto", Version: "v9"}
	p.Offer(good)
	n = api.WaitNode(t, "node-a", "the condition False", 10*time.Second, status("False", "nftables"))
	c, _ = n.Condition(ConditionType)
	if n.Annotations[AnnotationVerifiedBackend] != "nftables" || n.Annotations[AnnotationVerifiedAt] != stamp(good.At) {
		t.Errorf("after a proof: %v", n.Annotations)
	}
	if hb, _ := time.Parse(time.RFC3339, c.LastHeartbeatTime); !p.Heartbeat().Truncate(time.Second).Equal(hb) {
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
	p = New(h.Root(), Options{Refresh: 10 * time.Minute})
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
		if got := (Options{Refresh: c.refresh, MinInterval: c.min}).StaleAfter(); got != c.want {
			t.Errorf("refresh %s, min interval %s: %s, want %s", c.refresh, c.min, got, c.want)
		}
	}
}

// The schedule: a change is due at once, the same facts only after
// MinInterval, anything after a failure when the backoff ends.
func TestDue(t *testing.T) {
	p := New(testhost.New(t).Root(), Options{MinInterval: time.Minute})
	s := State{Verdict: nodecheck.Verdict{Status: nodecheck.OK, Message: "ok"}, At: time.Now()}
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
	changed.Verdict.Status = nodecheck.Problem
	if !p.due(changed, time.Time{}).IsZero() {
		t.Error("a changed verdict is not due at once")
	}
	retry := time.Now().Add(5 * time.Second)
	p.failing = true
	if got := p.due(changed, retry); !got.Equal(retry) {
		t.Errorf("after a failure due at %v, want the backoff's end", got)
	}
}

// On k3s the node's name is in k3s's config and the kubelet's credentials
// under k3s's data-dir (/var/lib/rancher/k3s/agent), not RKE2's: Locate of
// distro.K3s finds them there and names the node as k3s's config does.
func TestLocateK3s(t *testing.T) {
	api := apiserver.Start(t)
	api.RegisterNode("node-k")
	h := testhost.New(t).File("/etc/rancher/k3s/config.yaml", "node-name: Node-K\n")
	// The kit writes RKE2's agent layout; move it where k3s's agent keeps it.
	api.InstallRKE2Agent(h.Dir(), "node-k")
	rke2Dir, k3sDir := filepath.Join(h.Dir(), "var/lib/rancher/rke2"), filepath.Join(h.Dir(), "var/lib/rancher/k3s")
	if err := os.Rename(rke2Dir, k3sDir); err != nil {
		t.Fatal(err)
	}
	kc := filepath.Join(k3sDir, KubeletKubeconfig)
	b, err := os.ReadFile(kc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kc, []byte(strings.ReplaceAll(string(b), "/var/lib/rancher/rke2/", "/var/lib/rancher/k3s/")), 0o600); err != nil {
		t.Fatal(err)
	}
	target, err := Locate(h.Root(), distro.K3s)
	if err != nil || target.Node != "node-k" || len(target.Notes) != 0 {
		t.Fatalf("Locate on k3s: %+v, %v: want node-k from k3s's config and credentials under /var/lib/rancher/k3s/agent", target, err)
	}
	if want := h.Root().Path("/var/lib/rancher/k3s/" + KubeletKubeconfig); target.Creds.File != want {
		t.Errorf("credentials read from %s, want %s", target.Creds.File, want)
	}
}
