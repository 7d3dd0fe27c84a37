package verify

import (
	"slices"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
)

// withoutObjects is rs without the named chains, sets and counters and
// without the rules whose text contains any of drop.
func withoutObjects(rs *rules.Ruleset, drop ...string) *rules.Ruleset {
	out := rules.Clone(rs)
	gone := func(s string) bool {
		return slices.ContainsFunc(drop, func(d string) bool { return strings.Contains(s, d) })
	}
	for ti := range out.Tables {
		t := &out.Tables[ti]
		t.Chains = slices.DeleteFunc(t.Chains, func(c rules.Chain) bool { return slices.Contains(drop, c.Name) })
		for ci := range t.Chains {
			t.Chains[ci].Rules = slices.DeleteFunc(t.Chains[ci].Rules, func(r rules.Rule) bool { return gone(r.Text) })
		}
		t.Sets = slices.DeleteFunc(t.Sets, func(s rules.Set) bool { return slices.Contains(drop, s.Name) })
		t.Counters = slices.DeleteFunc(t.Counters, func(c string) bool { return slices.Contains(drop, c) })
	}
	return out
}

// A 1.38 nftables node passes with kube-proxy's localhost NodePort
// objects and fails, naming each, without them; a 1.37 node (and a minor
// newer than every known one) is not required to have them.
func TestLocalhostNodePorts138(t *testing.T) {
	both := []rules.Family{rules.IPv4, rules.IPv6}
	healthy := skeleton(t, backend.NFTables, minor(38), 3)
	var objects []string
	for _, p := range []string{"tcp", "udp", "sctp"} {
		objects = append(objects, expected.LocalhostNodePortRejectChain(p), expected.LocalhostNodePortRejectedCounter(p))
	}
	objects = append(objects, expected.LocalhostNodePortRejectMap)
	bare := withoutObjects(healthy, objects...)
	// With a loopback address in --nodeport-addresses kube-proxy proxies
	// TCP localhost NodePorts itself: no TCP chain or counter.
	proxiedTCP := withoutObjects(healthy, expected.LocalhostNodePortRejectChain("tcp"), expected.LocalhostNodePortRejectedCounter("tcp"))

	judge := func(live *rules.Ruleset, kubeMinor int) *Result {
		return run(t, Options{Expect: backend.NFTables, Kubernetes: minor(kubeMinor), Families: both, Reader: newFake(t, live)})
	}
	if res := judge(healthy, 38); !res.OK {
		t.Errorf("healthy 1.38 nftables node fails: %+v", res.Findings)
	}
	if res := judge(proxiedTCP, 38); !res.OK {
		t.Errorf("1.38 node proxying TCP localhost NodePorts fails: %+v", res.Findings)
	}
	res := judge(bare, 38)
	if res.OK {
		t.Fatalf("1.38 node without its localhost NodePort objects passes")
	}
	var text strings.Builder
	if err := WriteText(&text, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"localhost-nodeport-reject-udp", "localhost-nodeport-reject-sctp",
		"lacks set(s)/map(s): localhost-nodeport-reject-ports",
		"lacks named counter(s): localhost-nodeport-rejected-udp, localhost-nodeport-rejected-sctp",
		`nodeport-endpoints-check has no rule with "vmap @localhost-nodeport-reject-ports"`,
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("verify of a bare 1.38 node does not say %q:\n%s", want, text.String())
		}
	}
	for _, f := range res.Findings {
		if !strings.Contains(f.Fix, "feature-gates=KubeProxyNFTablesLocalhostNodePorts=false") {
			t.Errorf("the fix for %s does not name the feature gate that leaves the objects out: %q", f.Message, f.Fix)
		}
	}
	for _, fam := range both {
		for _, kind := range []string{KindMissingChain, KindMissingSet, KindMissingCounter, KindMissingDispatch} {
			if !slices.ContainsFunc(res.Findings, func(f Finding) bool { return f.Kind == kind && f.Family == fam }) {
				t.Errorf("no %s finding for %s: %+v", kind, fam, res.Findings)
			}
		}
	}
	if res := judge(bare, 37); !res.OK {
		t.Errorf("a 1.37 node is required to have 1.38's objects: %+v", res.Findings)
	}
	res = judge(bare, 39)
	if !res.OK || !strings.Contains(strings.Join(res.Notes, "\n"), "v1.39 is newer than every minor this verify knows") {
		t.Errorf("a minor newer than every known one is judged by more than the invariants: ok=%v notes %q findings %+v", res.OK, res.Notes, res.Findings)
	}
}
