package proof

import (
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ruleload"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// kubeletChains is kubelet's startup with tool (iptables-nft,
// ip6tables-legacy, ...): its canary in mangle, nat and filter, its hint in
// mangle (pkg/kubelet/kubelet_network_linux.go).
func kubeletChains(tool string) string {
	return "for t in mangle nat filter; do " + tool + " -w -t $t -N KUBE-KUBELET-CANARY; done; " + tool + " -w -t mangle -N KUBE-IPTABLES-HINT; "
}

// loadKubeProxy loads kube-proxy's rendered footprint into b, both
// families, without kubelet's chains (the render holds them): the test
// says where kubelet wrote its own.
func loadKubeProxy(t *testing.T, b backend.Backend) {
	t.Helper()
	rs := withoutHints(skeleton(t, b, 2))
	for _, fam := range []rules.Family{rules.IPv4, rules.IPv6} {
		if err := ruleload.Load(b, rs, fam); err != nil {
			t.Fatal(err)
		}
	}
}

// Each case of iptables-wrappers' order (nft mangle v4, nft mangle v6,
// legacy v4, legacy v6, else nft), laid with the real iptables tools in
// a throwaway network namespace and read by verify's production reader,
// then said as the node says it: the annotation and the alert's series.
// The cases put the hint where a wrong order or a wrong reader picks the
// other flavour: legacy before nft, or IPv4 of both before IPv6, picks
// legacy in "nft v6 and legacy v4" and the stale-hint case; a reader of
// IPv4 alone misses "legacy v6 only" too ("nft v6 only" cannot tell, nft
// being the default); one that counts a canary outside nft's mangle picks
// nft in "nft canary outside mangle", and one that reads legacy's mangle
// alone (DetectMode reads every legacy table) picks nft in "legacy canary
// in nat and filter only".
func TestReadiness138OnLiveRulesInNetns(t *testing.T) {
	nft, legacy := backend.IptablesNFT, backend.IptablesLegacy
	for _, c := range []struct {
		name    string
		applied backend.Backend
		kube    bool // load kube-proxy's rules into applied
		script  string
		pick    backend.Backend
	}{
		{"nft v4 only", legacy, false, "iptables-nft -w -t mangle -N KUBE-IPTABLES-HINT", nft},
		{"nft v6 only", legacy, false, "ip6tables-nft -w -t mangle -N KUBE-KUBELET-CANARY", nft},
		{"legacy v4 only", nft, false, "iptables-legacy -w -t mangle -N KUBE-IPTABLES-HINT", legacy},
		{"legacy v6 only", nft, false, "ip6tables-legacy -w -t mangle -N KUBE-KUBELET-CANARY", legacy},
		{"nft v6 and legacy v4: nft first", legacy, false,
			"iptables-legacy -w -t mangle -N KUBE-IPTABLES-HINT; ip6tables-nft -w -t mangle -N KUBE-IPTABLES-HINT", nft},
		{"nft canary outside mangle, legacy v4: legacy", nft, false,
			"iptables-nft -w -t nat -N KUBE-KUBELET-CANARY; iptables-nft -w -t filter -N KUBE-KUBELET-CANARY; iptables-legacy -w -t mangle -N KUBE-IPTABLES-HINT", legacy},
		{"legacy canary in nat and filter only: legacy", nft, false,
			"iptables-legacy -w -t nat -N KUBE-KUBELET-CANARY; iptables-legacy -w -t filter -N KUBE-KUBELET-CANARY", legacy},
		{"none: nft by default", legacy, false, "", nft},
		{"plan wants legacy, kubelet writes nft", legacy, true, kubeletChains("iptables-nft") + kubeletChains("ip6tables-nft"), nft},
		{"plan wants nft, kubelet writes legacy", nft, true, kubeletChains("iptables-legacy") + kubeletChains("ip6tables-legacy"), legacy},
		{"legacy node with a stale nft hint from before a switch", legacy, true,
			kubeletChains("iptables-legacy") + kubeletChains("ip6tables-legacy") + "iptables-nft -w -t mangle -N KUBE-IPTABLES-HINT", nft},
		{"plan wants legacy, kubelet writes legacy", legacy, true, kubeletChains("iptables-legacy") + kubeletChains("ip6tables-legacy"), legacy},
		{"plan wants nft, kubelet writes nft", nft, true, kubeletChains("iptables-nft") + kubeletChains("ip6tables-nft"), nft},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !nstest.Setup(t, "", "iptables-nft", "ip6tables-nft", "iptables-legacy", "ip6tables-legacy") {
				return
			}
			if c.kube {
				loadKubeProxy(t, c.applied)
			}
			if c.script != "" {
				nstest.Sh(t, c.script)
			}
			res := judged(t, verify.Options{Expect: c.applied, Reader: verify.NewReader(hostfs.New("/"))})
			k := Readiness138Of(res)
			moves := c.pick != c.applied
			if !k.Known || k.WouldPick != c.pick || k.Moves != moves {
				var b strings.Builder
				verify.WriteText(&b, res)
				t.Fatalf("readiness %+v, want would-pick %s, moves %v\n%s", k, c.pick, moves, b.String())
			}
			word := map[bool]string{true: "moves", false: "stays"}[moves]
			if want := "would-pick=" + string(c.pick) + "; applied=" + string(c.applied) + "; " + word; k.Value() != want {
				t.Errorf("annotation %q, want %q", k.Value(), want)
			}
			series := `rke2_proxy_backend_k8s138_would_move{would_pick="` + string(c.pick) + `",applied="` + string(c.applied) + `"} ` + map[bool]string{true: "1", false: "0"}[moves]
			if m := string(Metrics(res, time.Unix(1, 0))); !strings.Contains(m, series+"\n") {
				t.Errorf("metrics lack %s", series)
			}
		})
	}
}
