package prove

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeproxy"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/proof"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/apiserver"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// TestNodeConditionInNetns runs watch on real nftables against a real
// kube-apiserver with the node's own kubelet credentials, laid out as
// RKE2's agent keeps them: the condition says False with check's words and
// the annotations name what was proven; an unchanged verdict is not
// written again within the rate limit; a flushed kube-proxy table turns
// it True at once and reloading it False again; with the API server gone
// watch goes on verifying and says so once, and the verdict reached while
// it was gone arrives when a new server starts on the same data; a run
// that leaves no result turns it Unknown.
func TestNodeConditionInNetns(t *testing.T) {
	if !nstest.InNetns(t) {
		return
	}
	h, api, c, j := clusterNode(t, "config", "/etc/rancher/rke2/config.yaml", "node-name: Node-A\n")

	old := clusterOptions
	t.Cleanup(func() { clusterOptions = old })
	clusterOptions = proof.PublishOptions{MinInterval: time.Hour, MaxBackoff: time.Second}
	stop := onHostInBackground(c, Schedule{Poll: 50 * time.Millisecond, Quiet: 20 * time.Millisecond, Grace: time.Hour, Full: 200 * time.Millisecond})
	defer stop()

	const ct = proof.ConditionType
	// A write is two patches: wait for the second, the annotations.
	status := func(want string) func(apiserver.Node) bool {
		backend := map[string]string{"True": "none", "False": "nftables"}[want]
		return func(n apiserver.Node) bool {
			c, ok := n.Condition(ct)
			return ok && c.Status == want && n.Annotations[proof.AnnotationVerifiedBackend] == backend
		}
	}
	n := api.WaitNode(t, "node-a", ct+"=False", time.Minute, status("False"))
	cond, _ := n.Condition(ct)
	if cond.Reason != proof.ReasonVerified || cond.Message != "kube-proxy's rules complete in nftables, none stranded" {
		t.Errorf("condition %+v: want reason %s and check's message", cond, proof.ReasonVerified)
	}
	want := map[string]string{
		proof.AnnotationVerifiedBackend: "nftables",
		proof.AnnotationMode:            "nftables",
		proof.AnnotationDecisionSource:  "config",
		proof.AnnotationVersion:         "dev",
	}
	for k, v := range want {
		if n.Annotations[k] != v {
			t.Errorf("annotation %s = %q, want %q (all: %v)", k, n.Annotations[k], v, n.Annotations)
		}
	}
	proven, err := time.Parse(time.RFC3339, n.Annotations[proof.AnnotationVerifiedAt])
	if err != nil || time.Since(proven) > time.Minute {
		t.Errorf("annotation %s = %q: want the last proof's time (%v)", proof.AnnotationVerifiedAt, n.Annotations[proof.AnnotationVerifiedAt], err)
	}

	// Rate limit: watch verifies every 200ms with the same verdict; the
	// Node is not written again (its resourceVersion stays).
	time.Sleep(2 * time.Second)
	if again := api.Node("node-a"); again.ResourceVersion != n.ResourceVersion {
		t.Errorf("the Node was written again within the rate limit with the same verdict: resourceVersion %s -> %s", n.ResourceVersion, again.ResourceVersion)
	}

	// Drift: a changed verdict is written at once.
	kubeProxyTable(t, "flush")
	n = api.WaitNode(t, "node-a", ct+"=True", 30*time.Second, status("True"))
	cond, _ = n.Condition(ct)
	// watch under a fixture root polls (no netlink events there), so it
	// knows no writer, and the condition says so.
	if cond.Reason != proof.ReasonWrong || !strings.Contains(cond.Message, "finding(s) (writer unknown), first [") {
		t.Errorf("condition %+v: want reason %s and check's message", cond, proof.ReasonWrong)
	}
	eventually(t, h.Root(), hostfs.StatusFile, `"writer_unknown": "polling: no nftables change events"`)
	if n.Annotations[proof.AnnotationVerifiedBackend] != "none" {
		t.Errorf("verified-backend %q while the rules are wrong, want none", n.Annotations[proof.AnnotationVerifiedBackend])
	}
	wrongSince := cond.LastTransitionTime

	// Recovery.
	kubeProxyTable(t, "delete")
	loadKubeProxy(t, 3)
	n = api.WaitNode(t, "node-a", ct+"=False again", 30*time.Second, status("False"))
	if cond, _ = n.Condition(ct); cond.LastTransitionTime < wrongSince {
		t.Errorf("lastTransitionTime %s, before the drift's %s", cond.LastTransitionTime, wrongSince)
	}

	// The API server goes away: watch goes on, one journal line says so.
	api.Stop()
	kubeProxyTable(t, "flush")
	j.waitFor(t, "a note that the Node cannot be written", 30*time.Second, hasLine("cannot publish the Node condition "+ct))
	eventually(t, h.Root(), "/run/rke2-proxy-backend/status.json", `"verdict": "failed"`)
	api.Restart()
	api.WaitNode(t, "node-a", ct+"=True after the outage", time.Minute, status("True"))
	j.waitFor(t, "a note that it works again", 10*time.Second, hasLine("published the Node condition "+ct+" on node node-a again"))

	// A run that leaves no result (a plan verify cannot read) invalidates
	// the status, and the condition with it.
	writePlan(t, h.Root(), plan.Plan{Kubernetes: "not-a-version", Decision: plan.Decision{Backend: backend.NFTables, ProxyMode: "nftables", Source: "config"}})
	n = api.WaitNode(t, "node-a", ct+"=Unknown", 30*time.Second, func(n apiserver.Node) bool { c, ok := n.Condition(ct); return ok && c.Status == "Unknown" })
	if cond, _ = n.Condition(ct); cond.Reason != proof.ReasonCannotTell || !strings.HasPrefix(cond.Message, "cannot tell: the last verify run left no result") {
		t.Errorf("condition %+v after a run without a result: want reason %s and check's words", cond, proof.ReasonCannotTell)
	}
	if err := stop(); err != nil {
		t.Fatalf("OnHost: %v", err)
	}
}

// clusterNode brings the netns's loopback up (the API server listens on
// 127.0.0.1), starts a real API server holding Node node-a, and makes a
// host h node-a: file holding content (what names the node), a /textfile
// dir, an nftables plan decided by source, node-a's credentials where
// RKE2's agent keeps them, kube-proxy's rules loaded. c is a verify
// command that publishes node-a's condition, its progress kept in j.
func clusterNode(t *testing.T, source, file, content string) (h *testhost.Host, api *apiserver.Server, c *Command, j *journal) {
	t.Helper()
	h = testhost.New(t).File(file, content)
	run(t, nstest.Tool(t, "ip"), "link", "set", "lo", "up")
	api = apiserver.Start(t)
	api.RegisterNode("node-a")
	h.Mkdir("/textfile")
	writePlan(t, h.Root(), plan.Plan{Decision: plan.Decision{Backend: backend.NFTables, ProxyMode: "nftables", Source: source}})
	api.InstallRKE2Agent(h.Dir(), "node-a")
	loadKubeProxy(t, 3)
	j = &journal{}
	c = &Command{Host: verify.Host{Root: h.Root(), ProxyMode: &kubeproxy.Endpoint{}}, TextfileDir: "/textfile", NodeCondition: true, Progress: j.log}
	return h, api, c, j
}

// kubeProxyTable runs `nft verb table ip kube-proxy`: how these tests
// break (flush, delete) the rules watch and verify judge.
func kubeProxyTable(t *testing.T, verb string) {
	t.Helper()
	run(t, nstest.Tool(t, "nft"), verb, "table", "ip", "kube-proxy")
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// TestVerifyOnceInNetns: the verify command (Once) writes the condition
// when no watch runs, leaves it to a watch that beats, and with the API
// server gone returns its result within onceBudget with a note.
func TestVerifyOnceInNetns(t *testing.T) {
	if !nstest.InNetns(t) {
		return
	}
	h, api, c, j := clusterNode(t, "auto", "/proc/sys/kernel/hostname", "Node-A\n")
	const ct = proof.ConditionType

	// No node-name in RKE2's config: the hostname, lower-cased, names it.
	if res, err := c.Once(context.Background()); err != nil || res.Verdict != verify.VerdictOK {
		t.Fatalf("Once: %+v, %v", res, err)
	}
	n := api.Node("node-a")
	if cond, ok := n.Condition(ct); !ok || cond.Status != "False" || n.Annotations[proof.AnnotationDecisionSource] != "auto" {
		t.Fatalf("after verify with no watch running: %+v", n)
	}

	// A watch that beats publishes itself: verify leaves the Node alone.
	if err := Beat(h.Root(), time.Now()); err != nil {
		t.Fatal(err)
	}
	kubeProxyTable(t, "flush")
	if res, _ := c.Once(context.Background()); res == nil || res.Verdict != verify.VerdictFailed {
		t.Fatalf("Once on flushed rules: %+v", res)
	}
	if again := api.Node("node-a"); again.ResourceVersion != n.ResourceVersion {
		t.Errorf("verify wrote the Node while a watch beats (resourceVersion %s -> %s)", n.ResourceVersion, again.ResourceVersion)
	}

	// The API server gone: verify's result stands, a note says why the
	// Node was not written, and it costs at most onceBudget.
	api.Stop()
	if err := h.Root().Touch(hostfs.WatchHeartbeat, time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if res, err := c.Once(context.Background()); err != nil || res.Verdict != verify.VerdictFailed {
		t.Fatalf("Once with the API server gone: %+v, %v", res, err)
	}
	if took := time.Since(start); took > onceBudget+5*time.Second {
		t.Errorf("verify took %s with the API server gone, over onceBudget %s", took, onceBudget)
	}
	j.waitFor(t, "a note", time.Second, hasLine("note: the Node condition "+ct+" was not written"))
}
