package decide

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

const detectWarning = "chooses iptables-legacy or iptables-nft itself"

func TestDetectMode(t *testing.T) {
	for _, tc := range []struct {
		h    HintChains
		want backend.Backend
	}{
		{HintChains{}, backend.IptablesNFT},
		{HintChains{NFT: true}, backend.IptablesNFT},
		{HintChains{Legacy: true}, backend.IptablesLegacy},
		{HintChains{NFT: true, Legacy: true}, backend.IptablesNFT},
	} {
		if got := DetectMode(tc.h); got != tc.want {
			t.Errorf("DetectMode(%+v) = %s, want %s", tc.h, got, tc.want)
		}
	}
}

func TestPredictFlavour(t *testing.T) {
	live := func(hints ...string) facts.LiveRules {
		return facts.LiveRules{Probed: true, KubeletHint: hints}
	}
	const nft, legacy = "iptables-nft", "iptables-legacy"
	for _, tc := range []struct {
		name  string
		live  facts.LiveRules
		alt   string
		want  backend.Backend
		known bool
		why   string
	}{
		{"boot, alternative nft", facts.LiveRules{}, "nft", backend.IptablesNFT, true, "the host's iptables command is iptables-nft"},
		{"boot, alternative legacy", facts.LiveRules{}, "legacy", backend.IptablesLegacy, true, "the host's iptables command is iptables-legacy"},
		{"boot, alternative unknown", facts.LiveRules{}, "unknown", backend.IptablesNFT, false, "unknown"},
		{"not probed: hints ignored", facts.LiveRules{KubeletHint: []string{nft}}, "legacy", backend.IptablesLegacy, true, ""},
		{"stale nft hint after the alternative moved to legacy", live(nft), "legacy", backend.IptablesNFT, true, "stale copy"},
		{"both flavours hold hints", live(legacy, nft), "legacy", backend.IptablesNFT, true, "stale copy"},
		{"legacy hint, alternative nft", live(legacy), "nft", backend.IptablesNFT, true, "iptables-nft"},
		{"nft hint, alternative unknown: nft either way", live(nft), "unknown", backend.IptablesNFT, true, "looked at first"},
		{"legacy hint, alternative unknown: kubelet may add nft", live(legacy), "", backend.IptablesLegacy, false, "iptables-legacy only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := PredictFlavour(tc.live, tc.alt)
			if p.Flavour != tc.want || p.Known != tc.known || !strings.Contains(p.Why, tc.why) {
				t.Errorf("PredictFlavour = %+v, want %s known=%v with %q", p, tc.want, tc.known, tc.why)
			}
		})
	}
}

// FuzzPredictFlavour: DetectMode's answer is nft unless a legacy hint
// exists and no nft hint does, and the prediction is DetectMode of the
// live chains plus kubelet's installed mode; when it says Known, no value
// of an unknown alternative changes it.
func FuzzPredictFlavour(f *testing.F) {
	f.Add(true, false, true, "legacy")
	f.Add(false, true, false, "nft")
	f.Add(true, true, true, "unknown")
	f.Fuzz(func(t *testing.T, probed, nftHint, legacyHint bool, alt string) {
		var hints []string
		if nftHint {
			hints = append(hints, string(backend.IptablesNFT))
		}
		if legacyHint {
			hints = append(hints, string(backend.IptablesLegacy))
		}
		p := PredictFlavour(facts.LiveRules{Probed: probed, KubeletHint: hints}, alt)
		anyNFT := probed && nftHint || alt == "nft"
		anyLegacy := probed && legacyHint || alt == "legacy"
		want := backend.IptablesNFT
		if anyLegacy && !anyNFT {
			want = backend.IptablesLegacy
		}
		if p.Flavour != want {
			t.Fatalf("probed=%v nft=%v legacy=%v alt=%q: %s, want %s", probed, nftHint, legacyHint, alt, p.Flavour, want)
		}
		if p.Why == "" {
			t.Fatalf("no why: %+v", p)
		}
		if p.Known && alt != "legacy" && alt != "nft" {
			for _, a := range []string{"legacy", "nft"} {
				if q := PredictFlavour(facts.LiveRules{Probed: probed, KubeletHint: hints}, a); q.Flavour != p.Flavour {
					t.Fatalf("known %s with alternative %q, but %s with %q", p.Flavour, alt, q.Flavour, a)
				}
			}
		}
	})
}

// On fixture roots (no live rules under --root): an operator who pins
// iptables-legacy on a host whose alternative is nft gets the warning on
// 1.38 and not on 1.37; auto follows the alternative and gets none.
func TestDetectHostFixtures(t *testing.T) {
	for _, tc := range []struct {
		name string
		host func(*testhost.Host)
		want backend.Backend
		warn bool
	}{
		{"1.38, IPTABLES_MODE=legacy pinned, alternative nft", func(h *testhost.Host) { h.Debian12().RKE2v138().PinnedIptablesMode("legacy") }, backend.IptablesLegacy, true},
		{"1.37, the same pin", func(h *testhost.Host) { h.Debian12().RKE2v137().PinnedIptablesMode("legacy") }, backend.IptablesLegacy, false},
		{"1.38, backend: iptables-legacy, alternative nft", func(h *testhost.Host) {
			h.Debian12().RKE2v138().File("/etc/rke2-proxy-backend/config.yaml", "backend: iptables-legacy\n")
		}, backend.IptablesLegacy, true},
		{"1.38, pinned nft, alternative legacy", func(h *testhost.Host) {
			h.Ubuntu2204DockerLegacy().RKE2v138().PinnedIptablesMode("nft")
		}, backend.IptablesNFT, true},
		{"1.38, auto, legacy trigger, alternative nft", func(h *testhost.Host) {
			h.Debian12().RKE2v138().File("/etc/rke2-proxy-backend/config.yaml", "legacy_triggers:\n  pci_ids: [\"1af4:1041\"]\n")
		}, backend.IptablesLegacy, true},
		{"1.38, auto, alternative nft", func(h *testhost.Host) { h.Debian12().RKE2v138() }, backend.IptablesNFT, false},
		{"1.38, auto, alternative legacy", func(h *testhost.Host) { h.Ubuntu2204DockerLegacy().RKE2v138() }, backend.IptablesLegacy, false},
		{"1.38, nftables mode: no iptables flavour", func(h *testhost.Host) { h.Debian12().RKE2v138().PinnedProxyMode("nftables") }, backend.NFTables, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := testhost.New(t)
			tc.host(h)
			_, _, d := decideOn(t, h)
			if d.Backend != tc.want {
				t.Fatalf("backend %s, want %s; reasons %q", d.Backend, tc.want, d.Reasons)
			}
			r := reasonWith(d, "Warning: ", detectWarning)
			if (r != "") != tc.warn {
				t.Fatalf("warning %q, want one: %v; reasons %q", r, tc.warn, d.Reasons)
			}
			if !tc.warn {
				return
			}
			mode := d.Backend.IptablesMode()
			for _, part := range []string{"modelled on iptables-wrappers' DetectMode", "v1.0.0", "not by IPTABLES_MODE",
				"so it will pick " + string(map[string]backend.Backend{"legacy": backend.IptablesNFT, "nft": backend.IptablesLegacy}[mode]),
				"update-alternatives --set iptables /usr/sbin/iptables-" + mode} {
				if !strings.Contains(r, part) {
					t.Errorf("warning lacks %q: %s", part, r)
				}
			}
			if want := mode == "legacy"; strings.Contains(r, "cleanup --kubelet-hints") != want {
				t.Errorf("cleanup --kubelet-hints named: %v, want %v: %s", !want, want, r)
			}
			if !strings.Contains(strings.Join(d.KubeProxyEnv, " ")+strings.Join(d.Respected, " "), "IPTABLES_MODE="+mode) {
				t.Errorf("IPTABLES_MODE=%s neither written nor kept: env %q, respected %q", mode, d.KubeProxyEnv, d.Respected)
			}
		})
	}
}

// Live rules cannot be put in a fixture root, so the stale hint is
// unit level: a legacy node whose alternative was moved to legacy while
// kubelet's old chains still sit in nft mangle is sent to nft by 1.38.
func TestDetectHostStaleNFTHint(t *testing.T) {
	f := withRKE2(ubuntuDockerLegacy(), "v1.38.0+rke2r1")
	f.LiveRules = facts.LiveRules{Probed: true, KubeProxy: []string{"iptables-legacy"}, KubeletHint: []string{"iptables-legacy", "iptables-nft"}}
	d := Decide(f, config.Defaults())
	if d.Backend != backend.IptablesLegacy {
		t.Fatalf("backend %s, want iptables-legacy (live rules); reasons %q", d.Backend, d.Reasons)
	}
	if reasonWith(d, "Warning: ", detectWarning, "stale copy", "so it will pick iptables-nft", "cleanup --kubelet-hints") == "" {
		t.Errorf("no stale-hint warning: %q", d.Reasons)
	}
	f.RKE2.Kubernetes = rke2.KubeVersion{Major: 1, Minor: 37, Patch: 2}
	if r := reasonWith(Decide(f, config.Defaults()), detectWarning); r != "" {
		t.Errorf("1.37 warned: %s", r)
	}
	f.LiveRules.KubeletHint = []string{"iptables-legacy"}
	f.RKE2.Kubernetes.Minor = 38
	if r := reasonWith(Decide(f, config.Defaults()), detectWarning); r != "" {
		t.Errorf("hints only in legacy warned: %s", r)
	}
}
