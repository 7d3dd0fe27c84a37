package proof

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/census"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/apiserver"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// A census on a node of a real kube-apiserver (Node authorizer,
// NodeRestriction): two pods bound to node-a (a third on node-b), each
// with a process in its own network namespace and in the pod's cgroup,
// one holding a legacy rule. With node-a's kubelet credentials, one
// request of the node's pod list names both (text, JSON, the verdict's
// reason); with credentials that cannot list
// (a node's name outside system:nodes: 403) or none, or another node's
// (which list that node's pods), the UIDs stay, the
// verdict is the same and the reason is said.
func TestCensusNamesPodsNetns(t *testing.T) {
	if !nstest.Setup(t, "ip link set lo up", "unshare", "ip", "iptables-legacy") {
		return
	}
	api := apiserver.Start(t)
	api.RegisterNode("node-a")
	api.RegisterNode("node-b")
	uid := api.CreatePod("istio-demo", "legacy-sidecar", "node-a", nil)
	cleanUID := api.CreatePod("kube-system", "clean", "node-a", nil)
	api.CreatePod("istio-demo", "elsewhere", "node-b", nil)

	legacyPID := nstest.Sleeper(t, "iptables-legacy -w -t nat -A POSTROUTING -j MASQUERADE -m comment --comment pod")
	nstest.InPod(t, legacyPID, uid, "4f1e2d")
	cleanPID := nstest.Sleeper(t, "true")
	nstest.InPod(t, cleanPID, cleanUID, "9c8b7a")
	take := func() *census.Census {
		t.Helper()
		c, err := census.Take(context.Background(), census.Options{PIDs: func(p int) bool { return p == legacyPID || p == cleanPID }})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	host := func(install func(dir string)) hostfs.Root {
		h := testhost.New(t).File("/etc/rancher/rke2/config.yaml", "node-name: node-a\n")
		if install != nil {
			install(h.Dir())
		}
		return h.Root()
	}

	c := take()
	if n := NamePods(context.Background(), host(func(d string) { api.InstallRKE2Agent(d, "node-a") }), distro.RKE2, c); n != 1 {
		t.Errorf("%d requests to name the pods, want 1", n)
	}
	if !c.PodNames || c.PodNamesReason != "" {
		t.Errorf("pod_names %v (%s), want true", c.PodNames, c.PodNamesReason)
	}
	if len(c.HeldBackBy) != 1 || c.HeldBackBy[0].PodNamespace != "istio-demo" || c.HeldBackBy[0].PodName != "legacy-sidecar" || c.HeldBackBy[0].PodUID != uid {
		t.Errorf("held back by %+v, want pod istio-demo/legacy-sidecar %s", c.HeldBackBy, uid)
	}
	want := "pod istio-demo/legacy-sidecar (uid " + uid + ", pid "
	if !strings.Contains(c.Reason, want) || !strings.Contains(c.Text(), want) {
		t.Errorf("reason %q or text does not say %q:\n%s", c.Reason, want, c.Text())
	}
	if text := c.Text(); !strings.Contains(text, "pod kube-system/clean (uid "+cleanUID) || strings.Contains(text, "UID only") {
		t.Errorf("text does not name the clean pod, or says UIDs only:\n%s", text)
	}
	js, _ := json.Marshal(c)
	for _, w := range []string{`"pod_names":true`, `"pod_namespace":"istio-demo","pod_name":"legacy-sidecar"`, `"pod_namespace":"kube-system","pod_name":"clean"`} {
		if !strings.Contains(string(js), w) {
			t.Errorf("JSON lacks %s:\n%s", w, js)
		}
	}
	if v := LegacyFreeValue(c); v != "no; namespaces=1; pods="+uid {
		t.Errorf("annotation %q: the Node keeps naming pods by UID", v)
	}

	// One pod a page: the list is read to its end, one request a page.
	podPage = 1
	c = take()
	n := NamePods(context.Background(), host(func(d string) { api.InstallRKE2Agent(d, "node-a") }), distro.RKE2, c)
	podPage = 250
	if n != 2 || !c.PodNames || len(c.HeldBackBy) != 1 || c.HeldBackBy[0].PodName != "legacy-sidecar" {
		t.Errorf("a page a pod: %d requests, pod_names %v (%s), held back by %+v; want 2, both pods named", n, c.PodNames, c.PodNamesReason, c.HeldBackBy)
	}

	for _, cs := range []struct {
		name    string
		install func(dir string)
		reason  string
		reads   int
	}{
		{"another node's", func(d string) { api.InstallRKE2Agent(d, "node-b") }, "2 of the pod UIDs read are not among the 1 pods of node node-b's pod list", 1},
		{"not in system:nodes", func(d string) { api.InstallRKE2AgentAs(d, "node-a", "system:node:node-a") }, "403", 1},
		{"no credentials", nil, "the kubelet's credentials", 0},
	} {
		c := take()
		n := NamePods(context.Background(), host(cs.install), distro.RKE2, c)
		if n != cs.reads || c.PodNames || !strings.Contains(c.PodNamesReason, cs.reason) {
			t.Errorf("%s: %d requests, pod_names %v (%q); want %d, false, a reason with %q", cs.name, n, c.PodNames, c.PodNamesReason, cs.reads, cs.reason)
		}
		if c.Verdict != census.No || len(c.HeldBackBy) != 1 || c.HeldBackBy[0].PodUID != uid || c.HeldBackBy[0].PodName != "" {
			t.Errorf("%s: verdict %s, held back by %+v; want no, the pod by UID", cs.name, c.Verdict, c.HeldBackBy)
		}
		if text := c.Text(); !strings.Contains(text, "pod "+uid+" (pid") || !strings.Contains(text, "Pods are named by UID only: "+c.PodNamesReason) {
			t.Errorf("%s: text does not keep the UID and say why:\n%s", cs.name, text)
		}
		if !slices.ContainsFunc(c.Namespaces, func(n census.Namespace) bool { return n.PodUID == cleanUID && n.PodName == "" }) {
			t.Errorf("%s: the clean pod lost its UID or was named", cs.name)
		}
	}
}
