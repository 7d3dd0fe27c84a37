package decide

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// FuzzDecide throws odd fact combinations at Decide and checks the
// invariants every caller relies on: no panic, same output twice, a valid
// backend with matching mode, only IPTABLES_MODE values the kube-proxy image
// accepts, never a feature gate outside 1.29-1.30, never a refused backend.
func FuzzDecide(f *testing.F) {
	f.Add("y", "n", "m", 6, 17, 1, 30, 11, "nft", "auto", 0, "proxy-mode=nftables", "IPTABLES_MODE=legacy", "iptables-legacy")
	f.Add("n", "m", "", 4, 4, 0, 0, 0, "legacy", "nftables", 2, "", "", "")
	f.Add("unknown", "", "y", 5, 12, 1, 34, -1, "unknown", "iptables-legacy", 1, "--proxy-mode=ipvs", "IPTABLES_MODE=modern", "iptables-nft")
	f.Fuzz(func(t *testing.T, nfTables, legacy, xtLegacy string, kMaj, kMin, vMaj, vMin, vPatch int,
		alt, choice string, prefer int, arg, env, live string) {
		fa := facts.Facts{
			Kernel: facts.Kernel{Release: "x", Major: kMaj, Minor: kMin, ConfigSource: "/proc/config.gz", Config: map[string]facts.Tristate{
				"NF_TABLES": facts.Tristate(nfTables), "NFT_COMPAT": facts.Tristate(nfTables),
				"IP_NF_IPTABLES": facts.Tristate(legacy), "NETFILTER_XTABLES_LEGACY": facts.Tristate(xtLegacy),
			}},
			Userspace: facts.Userspace{IptablesAlternative: alt},
			LiveRules: facts.LiveRules{Probed: live != "", KubeProxy: strings.Fields(live)},
		}
		fa.RKE2.Kubernetes = rke2.KubeVersion{Major: vMaj, Minor: vMin, Patch: vPatch}
		fa.RKE2.Config = rke2.Merge([]rke2.File{operatorFile(map[string]any{
			"kube-proxy-arg": []string{arg}, "kube-proxy-extra-env": []string{env},
		})})
		c := config.Defaults()
		if choice == config.Auto || choice == config.Off || slices.Contains(backend.All, backend.Backend(choice)) {
			c.Backend, c.BackendSource = choice, config.SourceEnv
		}
		orders := [][]backend.Backend{{backend.IptablesNFT, backend.IptablesLegacy}, {backend.NFTables}, {backend.IptablesLegacy}}
		c.Prefer = orders[((prefer%3)+3)%3]

		d := Decide(fa, c)
		a, _ := json.Marshal(d)
		b, _ := json.Marshal(Decide(fa, c))
		if string(a) != string(b) {
			t.Fatalf("not deterministic:\n%s\n%s", a, b)
		}
		if len(d.Reasons) == 0 {
			t.Fatalf("no reasons: %s", a)
		}
		if d.Disabled {
			return
		}
		if mode, _ := fa.RKE2.Config.ProxyMode(); strings.TrimSpace(mode) == ProxyModeIPVS {
			// ipvs is the operator's: kept, never overwritten, and only an
			// iptables backend runs under it.
			if d.ProxyMode != ProxyModeIPVS || !d.Backend.UsesIptables() || d.IPVSScheduler == "" {
				t.Fatalf("ipvs node: backend %q with proxy mode %q, scheduler %q", d.Backend, d.ProxyMode, d.IPVSScheduler)
			}
			for _, a := range d.KubeProxyArgs {
				if strings.HasPrefix(strings.TrimPrefix(a, "--"), "proxy-mode=") {
					t.Fatalf("ipvs node: the drop-in writes %q", a)
				}
			}
			if !slices.Contains(d.Modules, "ip_vs") {
				t.Fatalf("ipvs node: modules %v lack ip_vs", d.Modules)
			}
		} else if !slices.Contains(backend.All, d.Backend) || d.ProxyMode != d.Backend.ProxyMode() {
			t.Fatalf("backend %q with proxy mode %q", d.Backend, d.ProxyMode)
		}
		for _, e := range d.KubeProxyEnv {
			if e != "IPTABLES_MODE=legacy" && e != "IPTABLES_MODE=nft" {
				t.Fatalf("env %q would break the kube-proxy image", e)
			}
		}
		for _, arg := range d.KubeProxyArgs {
			if strings.Contains(arg, "NFTablesProxyMode") && !needsGate(fa.RKE2.Kubernetes) {
				t.Fatalf("gate %q on Kubernetes %v", arg, fa.RKE2.Kubernetes)
			}
		}
		if len(d.Refused) > 0 && string(d.Backend) == c.Backend {
			t.Fatalf("refused %q but chose it anyway", c.Backend)
		}
	})
}
