package hostconflict

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

func enable(h *testhost.Host, target, unit string) *testhost.Host {
	return h.File("/usr/lib/systemd/system/"+unit, "[Unit]\n").
		Symlink("/etc/systemd/system/"+target+".wants/"+unit, "/usr/lib/systemd/system/"+unit)
}

func TestFind(t *testing.T) {
	tests := []struct {
		name    string
		host    func(h *testhost.Host)
		b       backend.Backend
		id      string // "" means no finding at all
		text    string
		fix     string
		options facts.Options
	}{
		{"quiet debian host", func(h *testhost.Host) { h.Debian12() }, backend.IptablesNFT, "", "", "", facts.Options{}},
		{"firewalld with FlushAllOnReload", func(h *testhost.Host) {
			enable(h.Debian12(), "multi-user.target", "firewalld.service")
		}, backend.IptablesNFT, "firewalld", "firewalld is enabled with FlushAllOnReload=yes in /etc/firewalld/firewalld.conf, so every `firewall-cmd --reload` wipes", "systemctl disable --now firewalld", facts.Options{}},
		{"firewalld without FlushAllOnReload", func(h *testhost.Host) {
			enable(h.Debian12(), "multi-user.target", "firewalld.service").File(facts.FirewalldConf, "FlushAllOnReload=no\n")
		}, backend.IptablesNFT, "firewalld", "FlushAllOnReload=no", "systemctl disable --now firewalld", facts.Options{}},
		{"ufw on", func(h *testhost.Host) { h.Debian12().File(facts.UfwConf, "ENABLED=yes\n") },
			backend.IptablesNFT, "ufw", "ufw is on (ENABLED=yes in /etc/ufw/ufw.conf)", "ufw disable", facts.Options{}},
		{"nm-cloud-setup timer", func(h *testhost.Host) { enable(h.RHEL9(), "timers.target", "nm-cloud-setup.timer") },
			backend.IptablesNFT, "nm-cloud-setup", "nm-cloud-setup.timer is enabled", "systemctl disable nm-cloud-setup.timer && reboot", facts.Options{}},
		{"NetworkManager manages cali*", func(h *testhost.Host) {
			enable(h.RHEL9(), "multi-user.target", "NetworkManager.service").File(facts.NMConfDir+"/x.conf", "[keyfile]\nunmanaged-devices=interface-name:flannel*\n")
		}, backend.IptablesNFT, "networkmanager", "not told to leave cali* alone", "unmanaged-devices=interface-name:cali*;interface-name:flannel*", facts.Options{}},
		{"no iptables for portmap", func(h *testhost.Host) {
			h.Debian12().Remove("/usr/sbin/iptables").Remove("/sbin/iptables").Remove("/etc/alternatives/iptables")
		},
			backend.IptablesNFT, "no-iptables", "No iptables command on the host", "install the Debian/Ubuntu package iptables (EL: iptables-nft; EL 8: iptables)", facts.Options{}},
		{"iptables 1.8.4", func(h *testhost.Host) {
			h.Debian12().File(facts.DpkgStatus, "Package: iptables\nStatus: install ok installed\nVersion: 1.8.4-3ubuntu2\n")
		},
			backend.IptablesNFT, "iptables-1.8.0-1.8.4", "The host's iptables is 1.8.4 (per /var/lib/dpkg/status (package iptables))", "upgrade iptables", facts.Options{ToolVersions: true}},
		{"old nft in nftables mode", func(h *testhost.Host) {
			h.Debian12().File(facts.DpkgStatus, "Package: nftables\nStatus: install ok installed\nVersion: 0.9.8-3.1\n")
		}, backend.NFTables, "nft-too-old", "The host's nft is 0.9.8", "upgrade nftables", facts.Options{ToolVersions: true}},
		{"EL10 without kernel-modules-extra", func(h *testhost.Host) {
			h.Kernel("6.12.0-55.el10.x86_64").BootConfig(map[string]string{"NF_TABLES": "m", "NFT_COMPAT": "m", "NETFILTER_XT_MATCH_COMMENT": "m", "NFT_CHAIN_NAT": "m"}).
				AvailableModules("nf_tables", "nft_chain_nat")
		}, backend.IptablesNFT, "modules-missing", "configured to build nft_compat, xt_comment as modules (=m in /boot/config-6.12.0-55.el10.x86_64), but their files are not installed", "dnf install kernel-modules-extra-6.12.0-55.el10.x86_64", facts.Options{}},
		{"canal's Felix pinned to the other backend", func(h *testhost.Host) {
			h.Debian12().File("/var/lib/rancher/rke2/server/manifests/rke2-canal-config.yaml",
				"apiVersion: helm.cattle.io/v1\nkind: HelmChartConfig\nmetadata: {name: rke2-canal, namespace: kube-system}\nspec:\n  valuesContent: |-\n    calico:\n      felixIptablesBackend: Legacy\n")
		}, backend.IptablesNFT, "cni-backend", "rke2-canal's HelmChartConfig in /var/lib/rancher/rke2/server/manifests/rke2-canal-config.yaml sets calico.felixIptablesBackend: Legacy, so Felix writes its rules in another backend than kube-proxy's iptables-nft", "set calico.felixIptablesBackend: nft in /var/lib/rancher/rke2/server/manifests/rke2-canal-config.yaml", facts.Options{}},
		{"PREEMPT_RT with legacy", func(h *testhost.Host) {
			h.Kernel("6.12.25-rt-rpi").KernelConfig(map[string]string{"PREEMPT_RT": "y", "NF_TABLES": "y"})
		}, backend.IptablesLegacy, "preempt-rt-legacy", "PREEMPT_RT kernel (CONFIG_PREEMPT_RT=y in /proc/config.gz)", "backend: iptables-nft", facts.Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := testhost.New(t)
			tt.host(h)
			tt.options.HostServices = true
			found := Find(facts.Probe(h.Root(), tt.options), tt.b)
			if tt.id == "" {
				if len(found) != 0 {
					t.Fatalf("findings on a quiet host: %+v", found)
				}
				return
			}
			for _, f := range found {
				if f.ID != tt.id {
					continue
				}
				if !strings.Contains(f.Text, tt.text) || !strings.Contains(f.Fix, tt.fix) || strings.Contains(f.Line(), "\n") {
					t.Errorf("finding %q\nwant text %q, fix %q", f.Line(), tt.text, tt.fix)
				}
				return
			}
			t.Errorf("no %s finding in %+v", tt.id, found)
		})
	}
}

// The backend-specific findings stay quiet for the other backends.
func TestFindBackendSpecific(t *testing.T) {
	h := testhost.New(t).Kernel("6.12.25-rt-rpi").KernelConfig(map[string]string{"PREEMPT_RT": "y", "NF_TABLES": "y"}).
		File(facts.DpkgStatus, "Package: nftables\nStatus: install ok installed\nVersion: 0.9.8-3.1\n")
	f := facts.Probe(h.Root(), facts.Options{ToolVersions: true})
	for _, fd := range Find(f, backend.IptablesNFT) {
		if fd.ID == "preempt-rt-legacy" || fd.ID == "nft-too-old" {
			t.Errorf("%s reported for iptables-nft", fd.ID)
		}
	}
}
