package decide

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

func TestDecide(t *testing.T) {
	legacyLabel := []string{"rke2-proxy-backend/backend=iptables-legacy"}
	tests := []struct {
		name string
		f    facts.Facts
		c    config.Config
		want want
	}{
		{"synology without nf_tables", synology(), cfg(nil), autoIptables(backend.IptablesLegacy, "The kernel has no nf_tables (CONFIG_NF_TABLES is not set in /proc/config.gz), so only iptables-legacy can work.")},
		{"debian 12 follows the nft alternative", debian12(), cfg(nil), autoIptables(backend.IptablesNFT, "The host's iptables command is iptables-nft (/usr/sbin/iptables), and kubelet writes")},
		{"rhel 9", rhel9(), cfg(nil), autoIptables(backend.IptablesNFT, "iptables command is iptables-nft")},
		{"ubuntu 22.04 with docker on legacy", ubuntuDockerLegacy(), cfg(nil), autoIptables(backend.IptablesLegacy, "The host's iptables command is iptables-legacy")},
		{"alpine 6.17 without legacy xtables", alpine617(), cfg(nil), autoIptables(backend.IptablesNFT, "The kernel has no legacy xtables, which iptables-legacy needs from kernel 6.17 on (CONFIG_NETFILTER_XTABLES_LEGACY and CONFIG_IP_NF_IPTABLES_LEGACY are not set in /boot/config-6.17.3-0-lts), so only iptables-nft can work.")},
		{"nothing known", facts.Facts{}, cfg(nil), func() want {
			w := autoIptables(backend.IptablesNFT, "No kernel config and no module lists could be read, so every backend is assumed to work.", "prefer's first choice, iptables-nft")
			w.treeUnknown = true
			return w
		}()},
		{"prefer legacy when nothing favours one", func() facts.Facts { f := debian12(); f.Userspace.IptablesAlternative = "unknown"; return f }(),
			cfg(func(c *config.Config) { c.Prefer = []backend.Backend{backend.IptablesLegacy, backend.IptablesNFT} }), autoIptables(backend.IptablesLegacy, "prefer's first choice, iptables-legacy, is used.")},
		{"nftables first in prefer on v1.34: no gate", withRKE2(debian12(), "v1.34.10+rke2r1"),
			cfg(func(c *config.Config) { c.Prefer = []backend.Backend{backend.NFTables, backend.IptablesNFT} }), want{
				backend: backend.NFTables, source: "auto",
				args: []string{"proxy-mode=nftables"}, env: []string{"IPTABLES_MODE=nft"},
				reasons: []string{"The prefer list puts nftables first, and kernel 6.1.0-18-amd64 with Kubernetes v1.34.10", "experimental", "calico.felixIptablesBackend: nft"},
			}},
		{"nftables pinned on v1.30.11: kept with a warning, and the gate", withRKE2(debian12(), "v1.30.11+rke2r1", pinNFT()),
			cfg(nil), want{
				backend: backend.NFTables, source: "rke2-config", respected: []string{"proxy-mode=nftables in /etc/rancher/rke2/config.yaml"},
				args: []string{"feature-gates=NFTablesProxyMode=true"}, env: []string{"IPTABLES_MODE=nft"},
				reasons: []string{"Warning: RKE2 v1.30.11+rke2r1 predates the first releases that document nftables mode", "Kubernetes v1.30.11 needs the feature gate NFTablesProxyMode=true for nftables mode, so it is added."},
			}},
		{"nftables never picked by auto before RKE2 documents it", withRKE2(debian12(), "v1.34.9+rke2r1"),
			cfg(func(c *config.Config) { c.Prefer = []backend.Backend{backend.NFTables} }), autoIptables(backend.IptablesNFT, "The prefer list puts nftables first, but RKE2 v1.34.9+rke2r1 predates the first releases that document nftables mode (v1.34.10+rke2r1, v1.35.7+rke2r1 and v1.36.3+rke2r1)")},
		{"nftables override refused on v1.35.6", withRKE2(debian12(), "v1.35.6+rke2r1"),
			cfg(func(c *config.Config) { c.Backend, c.BackendSource = "nftables", "env" }), autoIptables(backend.IptablesNFT, "RKE2_PROXY_BACKEND=nftables in the environment asks for nftables, but RKE2 v1.35.6+rke2r1 predates").refusing()},
		{"nftables accepted on v1.36.3 and v1.37.0", withRKE2(debian12(), "v1.36.3+rke2r1"),
			cfg(func(c *config.Config) { c.Backend, c.BackendSource = "nftables", "env" }), want{
				backend: backend.NFTables, source: "env",
				args: []string{"proxy-mode=nftables"}, env: []string{"IPTABLES_MODE=nft"},
				reasons: []string{"rke2-canal needs calico.felixIptablesBackend: nft and flannel.enableNFTables: true"},
			}},
		{"nftables refused with an old host nft", func() facts.Facts {
			f := withRKE2(debian12(), "v1.37.0+rke2r1")
			f.Userspace.Nft = facts.ToolVersion{Version: "0.9.8", Source: "/var/lib/dpkg/status (package nftables)"}
			return f
		}(), cfg(func(c *config.Config) { c.Backend, c.BackendSource = "nftables", "env" }), autoIptables(backend.IptablesNFT, "the host's nft is 0.9.8 (per /var/lib/dpkg/status (package nftables)), older than 1.0.1").refusing()},
		{"nftables refused when NodeLocal DNS is on", func() facts.Facts {
			f := withRKE2(debian12(), "v1.36.3+rke2r1")
			f.RKE2.CNI = cni.NewSetup([]string{"cilium"}, "/etc/rancher/rke2/config.yaml", []cni.ChartConfig{{File: "/var/lib/rancher/rke2/server/manifests/dns.yaml", Chart: cni.CoreDNSChart, Values: map[string]any{"nodelocal": map[string]any{"enabled": true}}}})
			return f
		}(), cfg(func(c *config.Config) { c.Prefer = []backend.Backend{backend.NFTables} }), autoIptables(backend.IptablesNFT, "NodeLocal DNSCache is enabled (nodelocal.enabled in /var/lib/rancher/rke2/server/manifests/dns.yaml)")},
		{"nftables refused when the operator keeps canal's Felix on legacy", func() facts.Facts {
			f := withRKE2(debian12(), "v1.36.3+rke2r1")
			f.RKE2.CNI = cni.NewSetup(nil, "", []cni.ChartConfig{{File: "/m/canal.yaml", Chart: "rke2-canal", Values: map[string]any{"calico": map[string]any{"felixIptablesBackend": "legacy"}}}})
			return f
		}(), cfg(func(c *config.Config) { c.Backend, c.BackendSource = "nftables", "cmdline" }), autoIptables(backend.IptablesNFT, "/m/canal.yaml sets calico.felixIptablesBackend: legacy for rke2-canal, which keeps canal on iptables").refusing()},
		{"nftables refused on v1.30.10: no nft in the image", withRKE2(debian12(), "v1.30.10+rke2r1"),
			cfg(func(c *config.Config) { c.Backend, c.BackendSource, c.File = "nftables", "config", hostfs.ConfigFile }), autoIptables(backend.IptablesNFT, "The override backend: nftables in /etc/rke2-proxy-backend/config.yaml asks for nftables, but RKE2's kube-proxy image for Kubernetes v1.30.10 lacks the nft binary (it ships from v1.30.11 on), so it is refused and auto-detection decides instead.").refusing()},
		{"nftables refused on kernel 4.4 from the cmdline", withRKE2(synology(), "v1.34.10+rke2r1"),
			cfg(func(c *config.Config) { c.Backend, c.BackendSource = "nftables", "cmdline" }), autoIptables(backend.IptablesLegacy, "rke2.proxy_backend=nftables on the kernel command line asks for nftables, but the kernel has no nf_tables", "only iptables-legacy can work").refusing()},
		{"nftables refused when Kubernetes is unknown", debian12(),
			cfg(func(c *config.Config) { c.Backend, c.BackendSource = "nftables", "env" }), autoIptables(backend.IptablesNFT, "RKE2_PROXY_BACKEND=nftables in the environment asks for nftables, but RKE2's Kubernetes version is unknown").refusing()},
		{"legacy override refused on alpine 6.17", alpine617(),
			cfg(func(c *config.Config) { c.Backend, c.BackendSource = "iptables-legacy", "env" }), autoIptables(backend.IptablesNFT, "RKE2_PROXY_BACKEND=iptables-legacy in the environment asks for iptables-legacy, but the kernel has no legacy xtables").refusing()},
		{"override accepted", debian12(),
			cfg(func(c *config.Config) {
				c.Backend, c.BackendSource = "iptables-legacy", "cmdline"
				c.KubeProxy.ExtraArgs = []string{"iptables-min-sync-period=1s"}
			}), want{
				backend: backend.IptablesLegacy, source: "cmdline",
				args: []string{"proxy-mode=iptables", "iptables-min-sync-period=1s"}, env: []string{"IPTABLES_MODE=legacy"},
				reasons: []string{"rke2.proxy_backend=iptables-legacy on the kernel command line sets the backend to iptables-legacy."},
			}},
		{"legacy trigger by PCI id", debian12WithMarvell(),
			cfg(func(c *config.Config) { c.LegacyTriggers.PCIIDs = []string{"1b4b:9235"} }), autoIptables(backend.IptablesLegacy, `The legacy trigger PCI device 0000:01:00.0 (1b4b:9235) matches legacy_triggers.pci_ids "1b4b:9235", so iptables-legacy is used.`)},
		{"legacy trigger by driver glob and DMI", debian12WithMarvell(),
			cfg(func(c *config.Config) {
				c.LegacyTriggers.Modules = []string{"mv_*"}
				c.LegacyTriggers.DMI = []string{"Synology*"}
			}), autoIptables(backend.IptablesLegacy, `module or driver "mv_sata" matches legacy_triggers.modules "mv_*"; DMI vendor "Synology Inc." matches legacy_triggers.dmi "Synology*"`)},
		{"legacy trigger ignored when the kernel has no legacy", alpine617(),
			cfg(func(c *config.Config) { c.LegacyTriggers.Modules = []string{"nf_tables"} }), autoIptables(backend.IptablesNFT, "so the trigger is ignored.")},
		{"live rules in one backend are kept", func() facts.Facts {
			f := debian12()
			f.LiveRules = facts.LiveRules{Probed: true, KubeProxy: []string{"iptables-legacy"}}
			return f
		}(), cfg(nil), autoIptables(backend.IptablesLegacy, "Live kube-proxy rules are in iptables-legacy right now, so it is kept")},
		{"live rules in two backends: stranded", func() facts.Facts {
			f := debian12()
			f.LiveRules = facts.LiveRules{Probed: true, KubeProxy: []string{"iptables-legacy", "iptables-nft"}}
			return f
		}(), cfg(nil), autoIptables(backend.IptablesNFT, "in more than one backend (iptables-legacy, iptables-nft)", "`rke2-proxy-backend cleanup --backend iptables-legacy`")},
		{"previous plan is kept", func() facts.Facts { f := debian12(); f.PreviousPlan = "iptables-legacy"; return f }(), cfg(nil), autoIptables(backend.IptablesLegacy, "This boot already applied iptables-legacy (recorded in /run/rke2-proxy-backend/plan.json)")},
		{"pinned proxy-mode=nftables is respected", withRKE2(debian12(), "v1.34.10+rke2r1",
			rke2File("/etc/rancher/rke2/config.yaml", map[string]any{"kube-proxy-arg": []string{"proxy-mode=nftables"}})), cfg(nil), want{
			backend: backend.NFTables, source: "rke2-config",
			env:       []string{"IPTABLES_MODE=nft"},
			respected: []string{"proxy-mode=nftables in /etc/rancher/rke2/config.yaml"},
			reasons:   []string{"RKE2's config already sets proxy-mode=nftables in /etc/rancher/rke2/config.yaml, and respect_rke2_config is true, so nftables is kept."},
		}},
		{"pinned IPTABLES_MODE=legacy is respected", withRKE2(debian12(), "v1.34.10+rke2r1",
			rke2File("/etc/rancher/rke2/config.yaml.d/10-mine.yaml", map[string]any{"kube-proxy-extra-env": []string{"IPTABLES_MODE=legacy"}})), cfg(nil), want{
			backend: backend.IptablesLegacy, source: "rke2-config",
			args:      []string{"proxy-mode=iptables"},
			respected: []string{"IPTABLES_MODE=legacy in /etc/rancher/rke2/config.yaml.d/10-mine.yaml"},
		}},
		{"pinned proxy-mode=iptables leaves the iptables backend to auto", withRKE2(ubuntuDockerLegacy(), "v1.34.10+rke2r1",
			rke2File("/etc/rancher/rke2/config.yaml", map[string]any{"kube-proxy-arg": []string{"--proxy-mode=iptables"}})),
			cfg(func(c *config.Config) { c.Prefer = []backend.Backend{backend.NFTables} }), want{
				backend: backend.IptablesLegacy, source: "auto",
				env:       []string{"IPTABLES_MODE=legacy"},
				respected: []string{"proxy-mode=iptables in /etc/rancher/rke2/config.yaml"},
				reasons:   []string{"only the iptables backends are considered"},
			}},
		{"our own drop-in is not a pin", withRKE2(debian12(), "v1.34.10+rke2r1",
			rke2File("/etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml", map[string]any{"kube-proxy-arg+": []string{"proxy-mode=iptables"}, "kube-proxy-extra-env+": []string{"IPTABLES_MODE=legacy"}})), cfg(nil), autoIptables(backend.IptablesNFT)},
		{"respect_rke2_config false overrides the pin", withRKE2(debian12(), "v1.34.10+rke2r1",
			rke2File("/etc/rancher/rke2/config.yaml", map[string]any{"kube-proxy-arg": []string{"proxy-mode=nftables"}})),
			cfg(func(c *config.Config) { c.RespectRKE2Config = false }), autoIptables(backend.IptablesNFT, "respect_rke2_config is false", "the drop-in's proxy-mode=iptables overrides it")},
		{"respect_rke2_config false overrides an IPTABLES_MODE pin", withRKE2(debian12(), "v1.34.10+rke2r1",
			rke2File("/etc/rancher/rke2/config.yaml.d/10-mine.yaml", map[string]any{"kube-proxy-extra-env": []string{"IPTABLES_MODE=legacy"}})),
			cfg(func(c *config.Config) { c.RespectRKE2Config = false }), autoIptables(backend.IptablesNFT, "RKE2's config sets IPTABLES_MODE=legacy in /etc/rancher/rke2/config.yaml.d/10-mine.yaml; the drop-in's IPTABLES_MODE=nft overrides it because RKE2 reads the drop-in later.")},
		{"nftables on v1.30.11: an exact gate in RKE2's config is not doubled", withRKE2(debian12(), "v1.30.11+rke2r1",
			rke2File("/etc/rancher/rke2/config.yaml", map[string]any{"kube-proxy-arg": []string{"proxy-mode=nftables", "feature-gates=Foo=true, NFTablesProxyMode=True"}})),
			cfg(nil), want{
				backend: backend.NFTables, source: "rke2-config", respected: []string{"proxy-mode=nftables in /etc/rancher/rke2/config.yaml"},
				env: []string{"IPTABLES_MODE=nft"},
			}},
		{"nftables on v1.30.11: a gate in another letter case is no gate", withRKE2(debian12(), "v1.30.11+rke2r1",
			rke2File("/etc/rancher/rke2/config.yaml", map[string]any{"kube-proxy-arg": []string{"proxy-mode=nftables", "feature-gates=nftablesproxymode=true"}})),
			cfg(nil), want{
				backend: backend.NFTables, source: "rke2-config", respected: []string{"proxy-mode=nftables in /etc/rancher/rke2/config.yaml"},
				args: []string{"feature-gates=NFTablesProxyMode=true"}, env: []string{"IPTABLES_MODE=nft"},
				reasons: []string{`RKE2's config passes "feature-gates=nftablesproxymode=true" in /etc/rancher/rke2/config.yaml: kube-proxy's gate names are case-sensitive`},
			}},
		{"nftables on v1.30.11: a gate whose name merely contains ours is no gate", withRKE2(debian12(), "v1.30.11+rke2r1",
			rke2File("/etc/rancher/rke2/config.yaml", map[string]any{"kube-proxy-arg": []string{"proxy-mode=nftables", "feature-gates=XNFTablesProxyMode=true"}})),
			cfg(nil), want{
				backend: backend.NFTables, source: "rke2-config", respected: []string{"proxy-mode=nftables in /etc/rancher/rke2/config.yaml"},
				args: []string{"feature-gates=NFTablesProxyMode=true"}, env: []string{"IPTABLES_MODE=nft"},
			}},
		{"IPTABLES_MODE=modern in RKE2's config is not kept", withRKE2(debian12(), "v1.34.10+rke2r1",
			rke2File("/etc/rancher/rke2/config.yaml", map[string]any{"kube-proxy-extra-env": []string{"IPTABLES_MODE=modern"}})), cfg(nil), autoIptables(backend.IptablesNFT, "IPTABLES_MODE=modern in /etc/rancher/rke2/config.yaml, which RKE2's kube-proxy image does not accept")},
		{"override beats a pin and says so", withRKE2(debian12(), "v1.34.10+rke2r1",
			rke2File("/etc/rancher/rke2/config.yaml", map[string]any{"kube-proxy-arg": []string{"proxy-mode=nftables"}})),
			cfg(func(c *config.Config) { c.Backend, c.BackendSource = "iptables-legacy", "env" }), want{
				backend: backend.IptablesLegacy, source: "env",
				args: []string{"proxy-mode=iptables"}, env: []string{"IPTABLES_MODE=legacy"},
				reasons: []string{"RKE2's config sets proxy-mode=nftables in /etc/rancher/rke2/config.yaml; the drop-in's proxy-mode=iptables overrides it"},
			}},
		{"disable-kube-proxy: nothing to do", withRKE2(debian12(), "v1.34.10+rke2r1",
			rke2File("/etc/rancher/rke2/config.yaml", map[string]any{"disable-kube-proxy": true})), cfg(nil), want{
			disabled: true, source: "rke2-config",
			respected: []string{"disable-kube-proxy=true in /etc/rancher/rke2/config.yaml"},
			reasons:   []string{"so this node runs no kube-proxy and there is nothing to do."},
		}},
		{"proxy-mode=ipvs is kept, the backend under it decided", withRKE2(debian12(), "v1.34.10+rke2r1",
			rke2File("/etc/rancher/rke2/config.yaml", map[string]any{"kube-proxy-arg": []string{"proxy-mode=ipvs"}})), cfg(nil), want{
			backend: backend.IptablesNFT, source: "auto", env: []string{"IPTABLES_MODE=nft"},
			respected:   []string{"proxy-mode=ipvs in /etc/rancher/rke2/config.yaml"},
			moreModules: []string{"ip_vs", "ip_vs_rr", "ip_set", "ip_set_hash_ip", "ip_set_hash_ipport", "ip_set_hash_ipportip", "ip_set_hash_ipportnet", "ip_set_bitmap_port", "xt_set", "xt_ipvs", "dummy"},
			reasons:     []string{"so kube-proxy keeps ipvs mode", "The host's iptables command is iptables-nft", "Note: kube-proxy deprecates ipvs mode"},
		}},
		{"proxy-mode=unknown is left alone", withRKE2(debian12(), "v1.34.10+rke2r1",
			rke2File("/etc/rancher/rke2/config.yaml", map[string]any{"kube-proxy-arg": []string{"proxy-mode=kernelspace"}})), cfg(nil), want{
			disabled: true, source: "rke2-config",
			respected: []string{"proxy-mode=kernelspace in /etc/rancher/rke2/config.yaml"},
			reasons:   []string{"a mode rke2-proxy-backend does not manage"},
		}},
		{"backend off", debian12(), cfg(func(c *config.Config) { c.Backend, c.BackendSource = "off", "cmdline" }), want{
			disabled: true, source: "cmdline",
			reasons: []string{"rke2.proxy_backend=off on the kernel command line turns rke2-proxy-backend off"},
		}},
		{"node label", synology(), cfg(nil), autoIptables(backend.IptablesLegacy)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(tt.f, tt.c)
			check(t, d, tt.want)
			if tt.name == "node label" && !reflect.DeepEqual(d.NodeLabels, legacyLabel) {
				t.Errorf("node labels %q, want %q", d.NodeLabels, legacyLabel)
			}
		})
	}
}

func TestNodeLabelOff(t *testing.T) {
	d := Decide(synology(), cfg(func(c *config.Config) { c.NodeLabel = false }))
	if len(d.NodeLabels) != 0 {
		t.Errorf("node_label: false still labels: %q", d.NodeLabels)
	}
}

// TestDeterministic decides every case twice and compares the JSON bytes.
func TestDeterministic(t *testing.T) {
	for _, f := range []facts.Facts{synology(), debian12(), rhel9(), ubuntuDockerLegacy(), alpine617(), withRKE2(debian12WithMarvell(), "v1.30.11+rke2r1")} {
		c := cfg(func(c *config.Config) {
			c.Prefer = []backend.Backend{backend.NFTables, backend.IptablesLegacy}
			c.LegacyTriggers.DMI = []string{"*"}
		})
		a, _ := json.Marshal(Decide(f, c))
		b, _ := json.Marshal(Decide(f, c))
		if string(a) != string(b) {
			t.Errorf("two decisions differ:\n%s\n%s", a, b)
		}
	}
}

// pinNFT pins proxy-mode=nftables in RKE2's main config.
func pinNFT() rke2.File {
	return rke2File("/etc/rancher/rke2/config.yaml", map[string]any{"kube-proxy-arg": []string{"proxy-mode=nftables"}})
}
