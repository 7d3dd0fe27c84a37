package proof

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ownership"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// withHint is rs plus kubelet's KUBE-IPTABLES-HINT chain in its IPv4
// mangle table, as kubelet writes it.
func withHint(rs *rules.Ruleset) *rules.Ruleset {
	for i, t := range rs.Tables {
		if t.Family == rules.IPv4 && t.Name == "mangle" {
			rs.Tables[i].Chains = append(rs.Tables[i].Chains, rules.Chain{Name: "KUBE-IPTABLES-HINT"})
			return rs
		}
	}
	rs.Tables = append(rs.Tables, rules.Table{Family: rules.IPv4, Name: "mangle", Chains: []rules.Chain{{Name: "KUBE-IPTABLES-HINT"}}})
	return rs
}

// withoutHints is rs without kubelet's hint and canary chains (the
// rendered iptables skeleton holds them, as kubelet writes them first).
func withoutHints(rs *rules.Ruleset) *rules.Ruleset {
	for i := range rs.Tables {
		rs.Tables[i].Chains = slices.DeleteFunc(rs.Tables[i].Chains, func(c rules.Chain) bool { return ownership.IsKubeletHintChain(c.Name) })
	}
	return rs
}

// hintOnly is a flavour holding kubelet's hint chain and nothing else.
func hintOnly(b backend.Backend) *rules.Ruleset {
	return withHint(&rules.Ruleset{Backend: b})
}

// Each case is verify's own reading of the rules (the production read
// options), then what the node publishes of it: the annotation's value
// and the textfile series the 1.38 alert fires on.
func TestReadiness138(t *testing.T) {
	for _, c := range []struct {
		name   string
		expect backend.Backend
		live   func(t *testing.T) []*rules.Ruleset
		value  string
		series string
	}{
		{"hint in legacy only, nft applied", backend.IptablesNFT, func(t *testing.T) []*rules.Ruleset {
			return []*rules.Ruleset{withoutHints(skeleton(t, backend.IptablesNFT, 1)), hintOnly(backend.IptablesLegacy)}
		}, "would-pick=iptables-legacy; applied=iptables-nft; moves",
			`rke2_proxy_backend_k8s138_would_move{would_pick="iptables-legacy",applied="iptables-nft"} 1`},
		{"hint in nft, legacy applied", backend.IptablesLegacy, func(t *testing.T) []*rules.Ruleset {
			return []*rules.Ruleset{skeleton(t, backend.IptablesLegacy, 1), hintOnly(backend.IptablesNFT)}
		}, "would-pick=iptables-nft; applied=iptables-legacy; moves",
			`rke2_proxy_backend_k8s138_would_move{would_pick="iptables-nft",applied="iptables-legacy"} 1`},
		{"hint where applied", backend.IptablesLegacy, func(t *testing.T) []*rules.Ruleset {
			return []*rules.Ruleset{skeleton(t, backend.IptablesLegacy, 1)}
		}, "would-pick=iptables-legacy; applied=iptables-legacy; stays",
			`rke2_proxy_backend_k8s138_would_move{would_pick="iptables-legacy",applied="iptables-legacy"} 0`},
		{"no hint anywhere: nft by default", backend.IptablesNFT, func(t *testing.T) []*rules.Ruleset {
			return []*rules.Ruleset{withoutHints(skeleton(t, backend.IptablesNFT, 1))}
		}, "would-pick=iptables-nft; applied=iptables-nft; stays",
			`rke2_proxy_backend_k8s138_would_move{would_pick="iptables-nft",applied="iptables-nft"} 0`},
		{"legacy applied, no hint anywhere: nft by default", backend.IptablesLegacy, func(t *testing.T) []*rules.Ruleset {
			return []*rules.Ruleset{withoutHints(skeleton(t, backend.IptablesLegacy, 1))}
		}, "would-pick=iptables-nft; applied=iptables-legacy; moves",
			`rke2_proxy_backend_k8s138_would_move{would_pick="iptables-nft",applied="iptables-legacy"} 1`},
		{"nftables mode", backend.NFTables, func(t *testing.T) []*rules.Ruleset {
			return []*rules.Ruleset{skeleton(t, backend.NFTables, 1), hintOnly(backend.IptablesLegacy)}
		}, "not-affected; applied=nftables",
			`rke2_proxy_backend_k8s138_would_move{would_pick="not-affected",applied="nftables"} 0`},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := judged(t, verify.Options{Expect: c.expect, Reader: fakeOf(c.live(t)...)})
			k := Readiness138Of(res)
			if got := k.Value(); got != c.value {
				t.Errorf("annotation %q, want %q (%+v)", got, c.value, k)
			}
			if m := string(Metrics(res, time.Unix(1, 0))); !strings.Contains(m, c.series+"\n") {
				t.Errorf("metrics lack %s:\n%s", c.series, m)
			}
			s := State{Result: res, At: time.Unix(1, 0), K138: k}
			p, err := annotationPatch(s, time.Time{}, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			var body struct {
				Metadata struct{ Annotations map[string]string }
			}
			if err := json.Unmarshal(p, &body); err != nil || body.Metadata.Annotations[AnnotationK8s138] != c.value {
				t.Errorf("annotation patch %s, want %s=%q (%v)", p, AnnotationK8s138, c.value, err)
			}
		})
	}
}

// A flavour verify could not read leaves the answer unknown, and the
// textfile carries no series for it (not a 0 that reads as fine).
func TestReadiness138Unknown(t *testing.T) {
	res := &verify.Result{Expect: backend.IptablesNFT, Backends: []verify.BackendState{
		{Backend: backend.IptablesNFT, Expected: true}, {Backend: backend.IptablesLegacy, ReadError: "xtables lock"}}}
	k := Readiness138Of(res)
	if k.Known || !strings.HasPrefix(k.Value(), "unknown; iptables-legacy") {
		t.Errorf("%+v: %q", k, k.Value())
	}
	if m := string(Metrics(res, time.Unix(1, 0))); strings.Contains(m, "rke2_proxy_backend_k8s138_would_move{") {
		t.Errorf("unknown readiness has a series:\n%s", m)
	}
	// An nft hint decides alone: legacy's read error does not matter.
	res.Backends[0].KubeletHints = []string{"ipv4 mangle KUBE-IPTABLES-HINT"}
	if k := Readiness138Of(res); !k.Known || k.Moves {
		t.Errorf("nft hint: %+v", k)
	}
}

// Whether IPTABLES_MODE still decides follows the plan's Kubernetes
// version: the image's wrapper before 1.38, kubelet's chains from 1.38 on;
// nftables mode runs no iptables. The Node says it under its own key.
func TestReadiness138IptablesMode(t *testing.T) {
	for _, c := range []struct {
		kube   string
		expect backend.Backend
		want   string
	}{
		{"v1.37", backend.IptablesNFT, IptablesModeDecides},
		{"v1.38", backend.IptablesNFT, IptablesModeIgnored},
		{"v1.39", backend.IptablesLegacy, IptablesModeIgnored},
		{"", backend.IptablesLegacy, IptablesModeUnknown},
		{"v1.38", backend.NFTables, IptablesModeNotAffected},
	} {
		opts := verify.Options{Expect: c.expect, Reader: fakeOf(skeleton(t, c.expect, 1))}
		if c.kube != "" {
			v, err := rke2.ParseVersion(c.kube)
			if err != nil {
				t.Fatal(err)
			}
			opts.Kubernetes = v
		}
		k := Readiness138Of(judged(t, opts))
		if k.IptablesMode != c.want {
			t.Errorf("%s on %q: IPTABLES_MODE decides %q, want %q", c.expect, c.kube, k.IptablesMode, c.want)
		}
		p, err := annotationPatch(State{K138: k}, time.Time{}, time.Hour)
		if err != nil || !strings.Contains(string(p), `"`+AnnotationIptablesMode+`":"`+c.want+`"`) {
			t.Errorf("annotation patch %s lacks %s=%s (%v)", p, AnnotationIptablesMode, c.want, err)
		}
	}
	if k := Readiness138Of(nil); k.IptablesMode != IptablesModeUnknown {
		t.Errorf("no result: %q", k.IptablesMode)
	}
}
