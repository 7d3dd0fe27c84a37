package decide

import (
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// probed is what detect reads on fixture host h: the real probe's facts
// (with opts) and the operator config the real loader reads with env.
func probed(t *testing.T, h *testhost.Host, opts facts.Options, env []string) (facts.Facts, config.Config) {
	t.Helper()
	f := facts.Probe(h.Root(), opts)
	c, err := config.Load(h.Root(), hostfs.ConfigFile, env, f.Cmdline)
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

// decideOn probes a fixture host and decides, as detect does (with the
// tools' versions, which the userspace skew reasons weigh).
func decideOn(t *testing.T, h *testhost.Host) (facts.Facts, config.Config, Decision) {
	t.Helper()
	f, c := probed(t, h, facts.Options{ToolVersions: true}, nil)
	return f, c, Decide(f, c)
}

// TestProfiles runs the whole front half on fixture roots: the real probe
// reads a fake host, the real config loader reads its operator config and
// kernel command line, and Decide must pick what that kind of node needs.
func TestProfiles(t *testing.T) {
	cfgFile := hostfs.ConfigFile
	tests := []struct {
		name string
		host func(*testhost.Host)
		env  []string
		want want
	}{
		{"synology 4.4 without nf_tables", func(h *testhost.Host) { h.Synology44().RKE2v134() }, nil, want{
			backend: backend.IptablesLegacy, source: "auto",
			args: []string{"proxy-mode=iptables"}, env: []string{"IPTABLES_MODE=legacy"},
			reasons: []string{"The kernel has no nf_tables (CONFIG_NF_TABLES is not set in /proc/config.gz), so only iptables-legacy can work."},
		}},
		{"synology without a kernel config: legacy trigger by PCI id", func(h *testhost.Host) {
			h.Synology44().Remove("/proc/config.gz").File(cfgFile, "legacy_triggers:\n  pci_ids: [\"1b4b:9235\"]\n")
		}, nil, want{
			backend: backend.IptablesLegacy, source: "auto",
			args: []string{"proxy-mode=iptables"}, env: []string{"IPTABLES_MODE=legacy"},
			reasons: []string{`The legacy trigger PCI device 0000:01:00.0 (1b4b:9235) matches legacy_triggers.pci_ids "1b4b:9235", so iptables-legacy is used.`},
		}},
		{"debian 12 (6.1)", func(h *testhost.Host) { h.Debian12().RKE2v134() }, nil, want{
			backend: backend.IptablesNFT, source: "auto",
			args: []string{"proxy-mode=iptables"}, env: []string{"IPTABLES_MODE=nft"},
			reasons: []string{"The kernel can run both iptables-legacy and iptables-nft (per /boot/config-6.1.0-18-amd64).", "The host's iptables command is iptables-nft"},
		}},
		{"rhel 9 (5.14)", func(h *testhost.Host) { h.RHEL9().RKE2v134() }, nil, want{
			backend: backend.IptablesNFT, source: "auto",
			args: []string{"proxy-mode=iptables"}, env: []string{"IPTABLES_MODE=nft"},
			reasons: []string{"The host's iptables command is iptables-nft"},
		}},
		{"ubuntu 22.04 with docker on legacy", func(h *testhost.Host) { h.Ubuntu2204DockerLegacy().RKE2v134() }, nil, want{
			backend: backend.IptablesLegacy, source: "auto",
			args: []string{"proxy-mode=iptables"}, env: []string{"IPTABLES_MODE=legacy"},
			reasons: []string{"The host's iptables command is iptables-legacy"},
		}},
		{"alpine 6.17 without legacy xtables", func(h *testhost.Host) { h.Alpine617().RKE2v134() }, nil, want{
			backend: backend.IptablesNFT, source: "auto",
			args: []string{"proxy-mode=iptables"}, env: []string{"IPTABLES_MODE=nft"},
			reasons: []string{"The kernel has no legacy xtables, which iptables-legacy needs from kernel 6.17 on"},
		}},
		{"alpine 6.17: iptables-legacy from the cmdline is refused", func(h *testhost.Host) {
			h.Alpine617().RKE2v134().Cmdline("quiet rke2.proxy_backend=iptables-legacy")
		}, nil, want{
			backend: backend.IptablesNFT, source: "auto", refused: 1,
			args: []string{"proxy-mode=iptables"}, env: []string{"IPTABLES_MODE=nft"},
			reasons: []string{"The override rke2.proxy_backend=iptables-legacy on the kernel command line asks for iptables-legacy, but the kernel has no legacy xtables"},
		}},
		{"rke2 v1.30: nftables is refused, RKE2 does not document it yet", func(h *testhost.Host) {
			h.Debian12().RKE2v130().File(cfgFile, "backend: nftables\n")
		}, nil, want{
			backend: backend.IptablesNFT, source: "auto", refused: 1,
			args: []string{"proxy-mode=iptables"}, env: []string{"IPTABLES_MODE=nft"},
			reasons: []string{"RKE2 v1.30.11+rke2r1 predates the first releases that document nftables mode"},
		}},
		{"rke2 v1.30: pinned nftables is kept and needs the gate", func(h *testhost.Host) {
			h.Debian12().RKE2v130().PinnedProxyMode("nftables")
		}, nil, want{
			backend: backend.NFTables, source: "rke2-config", respected: []string{"proxy-mode=nftables in /etc/rancher/rke2/config.yaml"},
			args: []string{"feature-gates=NFTablesProxyMode=true"}, env: []string{"IPTABLES_MODE=nft"},
			reasons: []string{"Kubernetes v1.30.11 needs the feature gate NFTablesProxyMode=true", "experimental"},
		}},
		{"rke2 v1.34: nftables without a gate", func(h *testhost.Host) { h.Debian12().RKE2v134() },
			[]string{"RKE2_PROXY_BACKEND=nftables"}, want{
				backend: backend.NFTables, source: "env",
				args: []string{"proxy-mode=nftables"}, env: []string{"IPTABLES_MODE=nft"},
				reasons: []string{"The override RKE2_PROXY_BACKEND=nftables in the environment sets the backend to nftables."},
			}},
		{"pinned proxy-mode is kept", func(h *testhost.Host) { h.RHEL9().RKE2v134().PinnedProxyMode("nftables") }, nil, want{
			backend: backend.NFTables, source: "rke2-config",
			env:       []string{"IPTABLES_MODE=nft"},
			respected: []string{"proxy-mode=nftables in /etc/rancher/rke2/config.yaml"},
			reasons:   []string{"RKE2's config already sets proxy-mode=nftables in /etc/rancher/rke2/config.yaml, and respect_rke2_config is true, so nftables is kept."},
		}},
		{"our earlier drop-in does not freeze the decision", func(h *testhost.Host) {
			h.Debian12().RKE2v134().RKE2Config("config.yaml.d/60-proxy-backend.yaml",
				"kube-proxy-arg+:\n  - proxy-mode=iptables\nkube-proxy-extra-env+:\n  - IPTABLES_MODE=legacy\n")
		}, nil, want{
			backend: backend.IptablesNFT, source: "auto",
			args: []string{"proxy-mode=iptables"}, env: []string{"IPTABLES_MODE=nft"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := testhost.New(t)
			tt.host(h)
			f, c := probed(t, h, facts.Options{}, tt.env)
			if len(f.Unreadable) > 0 {
				t.Fatalf("fixture has unreadable sources: %q", f.Unreadable)
			}
			d := Decide(f, c)
			check(t, d, tt.want)
			for i, r := range d.Reasons {
				t.Logf("%d. %s", i+1, r) // read them with go test -v
			}
		})
	}
}
