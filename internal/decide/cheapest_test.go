package decide

import (
	"slices"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/bench"
)

// measured records bench figures (full-sync wall seconds) on f's kernel.
func measured(f facts.Facts, full map[backend.Backend]float64) facts.Facts {
	rep := bench.Report{Services: 5000, Kernel: f.Kernel.Release}
	for _, b := range backend.All {
		if v, ok := full[b]; ok {
			rep.Results = append(rep.Results, bench.Result{Backend: b, Steps: []bench.Step{{Step: bench.StepFull, WallSeconds: v}}})
		}
	}
	f.Cost = &facts.Cost{Report: rep}
	return f
}

// ranWith gives f an RKE2 install whose config has our drop-in from an
// earlier boot, telling kube-proxy to use b.
func ranWith(f facts.Facts, b backend.Backend) facts.Facts {
	return withRKE2(f, "v1.34.10+rke2r1", dropInFile(map[string]any{
		"kube-proxy-arg+":       []string{"proxy-mode=" + b.ProxyMode()},
		"kube-proxy-extra-env+": []string{"IPTABLES_MODE=" + b.IptablesMode()},
	}))
}

func preferCheapest(rest ...backend.Backend) config.Config {
	return cfg(func(c *config.Config) { c.Prefer = append([]backend.Backend{config.PreferCheapest}, rest...) })
}

// The debian12 figures from issue 14: legacy 1.1 s, iptables-nft 21 s,
// nftables 11 s at 5,000 services.
var issue14 = map[backend.Backend]float64{backend.IptablesLegacy: 1.1, backend.IptablesNFT: 21, backend.NFTables: 11}

func TestDecideCheapest(t *testing.T) {
	legacy := want{backend: backend.IptablesLegacy, source: "auto", args: []string{"proxy-mode=iptables"}, env: []string{"IPTABLES_MODE=legacy"}}
	nft := want{backend: backend.IptablesNFT, source: "auto", args: []string{"proxy-mode=iptables"}, env: []string{"IPTABLES_MODE=nft"}}
	with := func(w want, reasons ...string) want { w.reasons = reasons; return w }
	tests := []struct {
		name string
		f    facts.Facts
		c    config.Config
		want want
	}{
		{"cheapest picks legacy and quotes the figures", measured(debian12(), issue14), preferCheapest(backend.IptablesNFT),
			with(legacy, "at 5000 services (the last bench, kernel 6.1.0-18-amd64) a full sync took iptables-legacy 1.1 s, iptables-nft 21 s, so iptables-legacy, the cheapest, is used.",
				"The host's iptables command is iptables-nft", "update-alternatives --set iptables /usr/sbin/iptables-legacy")},
		{"not opted in: the figures are ignored", measured(debian12(), issue14), cfg(nil),
			with(nft, "The host's iptables command is iptables-nft")},
		{"no bench yet: the rest of the order decides", debian12(), preferCheapest(),
			with(nft, "no bench result is recorded in /var/lib/rke2-proxy-backend/bench.json", "The host's iptables command is iptables-nft")},
		{"stale bench: measure again", func() facts.Facts {
			f := measured(debian12(), issue14)
			f.Cost.Stale = "it was measured on kernel 6.0 and this is 6.1.0-18-amd64"
			return f
		}(), preferCheapest(), with(nft, "no longer describes this node: it was measured on kernel 6.0", "run `rke2-proxy-backend bench` again")},
		{"a runnable backend without a figure: no choice on half the data", measured(debian12(), map[backend.Backend]float64{backend.IptablesLegacy: 1.1}), preferCheapest(),
			with(nft, "bench has no figure for iptables-nft")},
		{"live rules are sticky", func() facts.Facts {
			f := measured(debian12(), issue14)
			f.LiveRules = facts.LiveRules{Probed: true, KubeProxy: []string{"iptables-nft"}}
			return f
		}(), preferCheapest(), with(nft, "Live kube-proxy rules are in iptables-nft right now, so it is kept")},
		{"rules live in two backends: no move for cost", func() facts.Facts {
			f := measured(debian12(), issue14)
			f.LiveRules = facts.LiveRules{Probed: true, KubeProxy: []string{"iptables-legacy", "iptables-nft"}}
			return f
		}(), preferCheapest(), with(nft, "kube-proxy rules are live (in iptables-legacy, iptables-nft)")},
		{"this boot's plan is sticky", func() facts.Facts { f := measured(debian12(), issue14); f.PreviousPlan = "iptables-nft"; return f }(),
			preferCheapest(), with(nft, "This boot already applied iptables-nft")},
		{"a legacy trigger pins before cost", measured(debian12WithMarvell(), map[backend.Backend]float64{backend.IptablesLegacy: 30, backend.IptablesNFT: 1}),
			func() config.Config { c := preferCheapest(); c.LegacyTriggers.PCIIDs = []string{"1b4b:9235"}; return c }(),
			with(legacy, "The legacy trigger")},
		{"hysteresis: switch when much cheaper", measured(ranWith(debian12(), backend.IptablesNFT), issue14), preferCheapest(),
			with(legacy, "iptables-legacy is cheaper than iptables-nft, which RKE2 ran with last time (per /etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml), by more than 25% and 0.2 s, so it switches to iptables-legacy.")},
		{"hysteresis: 20% cheaper is noise", measured(ranWith(debian12(), backend.IptablesNFT), map[backend.Backend]float64{backend.IptablesLegacy: 0.8, backend.IptablesNFT: 1.0}), preferCheapest(),
			with(nft, "iptables-nft, which RKE2 ran with last time", "is kept: iptables-legacy does not save more than 25% and 0.2 s")},
		{"hysteresis: 75% cheaper but below the floor", measured(ranWith(debian12(), backend.IptablesNFT), map[backend.Backend]float64{backend.IptablesLegacy: 0.05, backend.IptablesNFT: 0.2}), preferCheapest(),
			with(nft, "is kept")},
		{"hysteresis: the last backend is already the cheapest", measured(ranWith(debian12(), backend.IptablesLegacy), issue14), preferCheapest(),
			with(legacy, "so iptables-legacy, the cheapest, is used.")},
		{"nftables only when prefer lists it", measured(withRKE2(debian12(), "v1.34.10+rke2r1"), map[backend.Backend]float64{backend.IptablesLegacy: 3, backend.IptablesNFT: 21, backend.NFTables: 1}), preferCheapest(),
			with(legacy, "a full sync took iptables-legacy 3 s, iptables-nft 21 s, so")},
		{"nftables listed and cheapest", measured(withRKE2(debian12(), "v1.34.10+rke2r1"), map[backend.Backend]float64{backend.IptablesLegacy: 3, backend.IptablesNFT: 21, backend.NFTables: 1}),
			preferCheapest(backend.NFTables, backend.IptablesNFT),
			want{backend: backend.NFTables, source: "auto", args: []string{"proxy-mode=nftables"}, env: []string{"IPTABLES_MODE=nft"},
				reasons: []string{"nftables 1 s, so nftables, the cheapest, is used.", "CNI"}}},
		{"one runnable backend: the kernel decides, not cost", measured(alpine617(), map[backend.Backend]float64{backend.IptablesNFT: 21}), preferCheapest(),
			with(nft, "so only iptables-nft can work")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(tt.f, tt.c)
			check(t, d, tt.want)
			// A reason that uses the figures always quotes them.
			for _, r := range d.Reasons {
				if strings.Contains(r, "cheaper") && !strings.Contains(r, " s") {
					t.Errorf("reason %q compares costs without figures", r)
				}
			}
		})
	}
}

// Without the opt-in, recorded figures never change a decision.
func TestCostIgnoredWithoutOptIn(t *testing.T) {
	for _, f := range []facts.Facts{debian12(), rhel9(), ubuntuDockerLegacy(), alpine617(), synology()} {
		with := measured(f, map[backend.Backend]float64{backend.IptablesLegacy: 100, backend.IptablesNFT: 0.1, backend.NFTables: 0.1})
		a, b := Decide(f, cfg(nil)), Decide(with, cfg(nil))
		if a.Backend != b.Backend || !slices.Equal(a.Reasons, b.Reasons) {
			t.Errorf("%s: figures changed an auto decision without prefer: cheapest: %s -> %s", f.Kernel.Release, a.Backend, b.Backend)
		}
	}
}
