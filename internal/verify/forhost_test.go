package verify

import (
	"errors"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeproxy"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// rke2Host is an RKE2 server (tarball install) whose config moves
// kube-proxy's metrics server and picks Calico, with IPv6 on.
func rke2Host(t *testing.T) *testhost.Host {
	return dualStack(t).RKE2Unit("tarball", "server").
		RKE2Config("config.yaml", "cni: calico\nkube-proxy-arg:\n  - metrics-bind-address=127.0.0.3:10300\n")
}

// ForHost reads everything verify needs from the host: the plan, RKE2's
// config (kube-proxy's endpoint, the CNI), the node's families, and reads
// the rules with verify's own bounds.
func TestForHostReadsTheHost(t *testing.T) {
	h := withPlan(t, rke2Host(t), plan.Plan{Decision: plan.Decision{Backend: backend.NFTables}, Kubernetes: "v1.34"})
	opts, unknown, err := ForHost(Host{Root: h.Root()})
	if err != nil || unknown != nil {
		t.Fatalf("ForHost = %+v, %v", unknown, err)
	}
	if opts.Expect != backend.NFTables || opts.ExpectSource != hostfs.PlanFile || opts.Kubernetes.Minor != 34 || len(opts.Families) != 2 {
		t.Errorf("expectation %s from %q, Kubernetes %+v, families %v: want the plan's nftables and v1.34, dual-stack",
			opts.Expect, opts.ExpectSource, opts.Kubernetes, opts.Families)
	}
	if opts.ProxyModeURL != "http://127.0.0.3:10300/proxyMode" || !strings.Contains(opts.ProxyModeSource, "metrics-bind-address=127.0.0.3:10300") {
		t.Errorf("proxy mode %q from %q: want where RKE2's kube-proxy-arg puts it", opts.ProxyModeURL, opts.ProxyModeSource)
	}
	if opts.CNI == nil || opts.CNI.Primary != cni.Calico || opts.NFTTables == nil {
		t.Errorf("CNI %+v, table lister set %v: want RKE2's cni: calico and the nftables table list", opts.CNI, opts.NFTTables != nil)
	}
	sys, ok := opts.Reader.(*netfilter.System)
	if !ok || !sys.Shallow || sys.SkipChain == nil || !sys.SkipChain("KUBE-SVC-ABCDEFGHIJKLMNOP") || sys.Root != h.Root() {
		t.Errorf("reader %#v: want verify's shallow reader of the root, skipping per-Service chains", opts.Reader)
	}
	if opts.Wait != 0 || opts.Poll != 0 || opts.Progress != nil {
		t.Errorf("ForHost set the run's schedule (wait %s, poll %s): that is the caller's", opts.Wait, opts.Poll)
	}
}

// What the caller gives wins: the claim over the plan, its endpoint over
// RKE2's (URL "" skips the check and says nothing), its reader.
func TestForHostCallerOverrides(t *testing.T) {
	h := withPlan(t, rke2Host(t), plan.Plan{Decision: plan.Decision{Backend: backend.NFTables}})
	fake := newFake(t)
	opts, _, err := ForHost(Host{Root: h.Root(), Claim: Claim{Backend: "iptables-legacy"}, ProxyMode: &kubeproxy.Endpoint{}, Reader: fake})
	if err != nil {
		t.Fatal(err)
	}
	if opts.Expect != backend.IptablesLegacy || opts.ExpectSource != "--expect" || opts.ProxyModeURL != "" || opts.ProxyModeSource != "" || opts.Reader != fake {
		t.Errorf("options %+v: want --expect's backend, no proxy-mode check, the given reader", opts)
	}
}

// A CNI file that cannot be read is a warning naming it; nothing fails.
func TestForHostWarnsOfUnreadableCNIFiles(t *testing.T) {
	h := withPlan(t, rke2Host(t), plan.Plan{Decision: plan.Decision{Backend: backend.IptablesNFT}})
	h.FIFO("/var/lib/rancher/rke2/server/manifests/rke2-calico-config.yaml")
	var warned []string
	opts, _, err := ForHost(Host{Root: h.Root(), Warn: func(u string) { warned = append(warned, u) }})
	if err != nil || opts.Expect != backend.IptablesNFT {
		t.Fatalf("ForHost: %s, %v", opts.Expect, err)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "rke2-calico-config.yaml") {
		t.Errorf("warnings %q: want one naming the unreadable manifest", warned)
	}
}

// No plan is "cannot tell"; a plan that turned the tool off is nothing to
// verify; a claim that does not parse is a *FlagError.
func TestForHostWithoutAnExpectation(t *testing.T) {
	if _, unknown, err := ForHost(Host{Root: rke2Host(t).Root()}); err != nil || unknown == nil || unknown.Verdict != VerdictUnknown {
		t.Errorf("no plan: %+v, %v; want a cannot-tell result", unknown, err)
	}
	off := withPlan(t, rke2Host(t), plan.Plan{Decision: plan.Decision{Disabled: true}})
	if opts, unknown, err := ForHost(Host{Root: off.Root()}); err != nil || unknown != nil || opts.Expect != "" {
		t.Errorf("backend: off: %s, %+v, %v; want no expectation and no result", opts.Expect, unknown, err)
	}
	var bad *FlagError
	if _, _, err := ForHost(Host{Root: off.Root(), Claim: Claim{Backend: "modern"}}); !errors.As(err, &bad) || bad.Flag != "--expect" {
		t.Errorf("--expect modern: %v; want a *FlagError for --expect", err)
	}
}

// On k3s, kube-proxy's metrics address is in k3s's config: verify asks
// kube-proxy where k3s's kube-proxy-arg puts it, not RKE2's default.
func TestForHostReadsK3sKubeProxyEndpoint(t *testing.T) {
	h := dualStack(t).K3sUnit("k3s", "server").
		K3sConfig("config.yaml", "kube-proxy-arg:\n  - metrics-bind-address=127.0.0.4:10400\n")
	h = withPlan(t, h, plan.Plan{Decision: plan.Decision{Backend: backend.IptablesNFT}, Kubernetes: "v1.34"})
	opts, _, err := ForHost(Host{Root: h.Root()})
	if err != nil {
		t.Fatal(err)
	}
	if opts.ProxyModeURL != "http://127.0.0.4:10400/proxyMode" {
		t.Errorf("proxy mode %q from %q: want where k3s's kube-proxy-arg puts it", opts.ProxyModeURL, opts.ProxyModeSource)
	}
}
