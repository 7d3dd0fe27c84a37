package decide

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/skew"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// dpkgNftables is a dpkg status file with the host's nftables and iptables.
func dpkgNftables(nft string) string {
	return "Package: nftables\nStatus: install ok installed\nVersion: " + nft + "-1\n\n" +
		"Package: iptables\nStatus: install ok installed\nVersion: 1.8.11-2\n"
}

// trixieHost is a Debian trixie node (nft 1.1.3 in dpkg's status file,
// kernel 6.12) running RKE2 release rel.
func trixieHost(t *testing.T, rel string) *testhost.Host {
	h := testhost.New(t).Debian12().Kernel("6.12.38+deb13-amd64").BootConfig(map[string]string{
		"NF_TABLES": "m", "NF_TABLES_INET": "y", "NF_TABLES_IPV4": "y", "NF_TABLES_IPV6": "y",
		"NFT_COMPAT": "m", "NFT_CT": "m", "NFT_NAT": "m", "NFT_MASQ": "m", "NFT_NUMGEN": "m",
		"NFT_FIB_IPV4": "m", "NFT_FIB_IPV6": "m", "NFT_REJECT": "m",
		"NETFILTER_XTABLES": "m", "IP_NF_IPTABLES": "m", "IP6_NF_IPTABLES": "m",
		"IP_NF_FILTER": "m", "IP_NF_NAT": "m", "IP_NF_MANGLE": "m",
	}).AvailableModules(testhost.DebianCloudModules()...) // trixie's tree, as far as netfilter's names go
	h.File(facts.DpkgStatus, dpkgNftables("1.1.3"))
	return h.RKE2Unit("tarball", "server").RKE2Version(rel)
}

// RKE2 v1.34.5's kube-proxy lists every table's sets (kubernetes#137501
// came in 1.34.7) with its image's nft 1.1.0, and trixie's nft 1.1.3
// writes sets with user data: an operator's proxy-mode=nftables is kept,
// with the warning naming both versions and the sources.
func TestSkewFixtureHostPinnedNFTables(t *testing.T) {
	h := trixieHost(t, "v1.34.5+rke2r1").PinnedProxyMode("nftables")
	f, _, d := decideOn(t, h)
	if f.Userspace.Nft.Version != "1.1.3" {
		t.Fatalf("host nft %+v, want 1.1.3 from the fixture's dpkg status", f.Userspace.Nft)
	}
	check(t, d, want{backend: backend.NFTables, source: SourceRKE2Config, args: []string{}, env: []string{"IPTABLES_MODE=nft"},
		respected: []string{"proxy-mode=nftables in /etc/rancher/rke2/config.yaml"},
		reasons: []string{
			"Warning: RKE2 v1.34.5+rke2r1's kube-proxy image has nft 1.1.0 (k3s-root v0.15.0, internal/skew/images.tsv) and the host's nft is 1.1.3 (per /var/lib/dpkg/status (package nftables)), a known-bad pair: image nft 1.1.1 or older against sets written by nft 1.1.2 or later",
			"kubernetes/kubernetes#137501", "the sets in the kernel were not read here",
		}})
	// The same node on v1.34.8 (kube-proxy lists only its own table) gets
	// no such warning.
	_, _, d = decideOn(t, trixieHost(t, "v1.34.8+rke2r1").PinnedProxyMode("nftables"))
	for _, r := range d.Reasons {
		if strings.Contains(r, "known-bad pair") {
			t.Errorf("v1.34.8: %q", r)
		}
	}
}

// withTable swaps in a table with a release the shipped one cannot have
// yet: documented for nftables (v1.36.3) and with an image nft 1.0.4,
// which every kube-proxy's nft -f trips on.
func withTable(t *testing.T) {
	t.Helper()
	tab, err := skew.ParseTable(strings.Join([]string{
		"k3s-root\tv9.0.0\t1.0.4\tyes\t1.8.9\ttest row",
		"image\tv1.36.3+rke2r1\tv9.0.0\ttest row",
		"pair\t1.0.1-1.0.5\t1.1.2-\t*\tkubernetes/kubernetes#136786\tnft -f segfaults",
	}, "\n"), "test.tsv")
	if err != nil {
		t.Fatal(err)
	}
	old := skewTable
	skewTable = func() *skew.Table { return tab }
	t.Cleanup(func() { skewTable = old })
}

// With a known-bad pair auto does not choose nftables although prefer
// lists it first, and a switch to it is refused; with the host on nft
// 1.1.1 (outside the writer range) both go ahead.
func TestSkewBlocksAutoAndSwitch(t *testing.T) {
	withTable(t)
	prefer := "prefer: [nftables, iptables-nft]\n"
	h := trixieHost(t, "v1.36.3+rke2r1").File(hostfs.ConfigFile, prefer)
	f, _, d := decideOn(t, h)
	check(t, d, autoIptables(backend.IptablesNFT,
		"The prefer list puts nftables first, but RKE2 v1.36.3+rke2r1's kube-proxy image has nft 1.0.4 (k3s-root v9.0.0, internal/skew/images.tsv) and the host's nft is 1.1.3",
		"image nft 1.0.1 to 1.0.5 against sets written by nft 1.1.2 or later: nft -f segfaults (kubernetes/kubernetes#136786); the sets in the kernel were not read here, so an iptables backend is used."))
	if why := SwitchRefusal(f, backend.NFTables); !strings.Contains(why, "a known-bad pair") || !strings.HasSuffix(why, "then switch again") {
		t.Errorf("switch refusal %q", why)
	}
	// cheapest leaves nftables out too.
	_, _, d = decideOn(t, trixieHost(t, "v1.36.3+rke2r1").File(hostfs.ConfigFile, "prefer: [cheapest, nftables, iptables-nft]\n"))
	if d.Backend == backend.NFTables {
		t.Errorf("cheapest chose nftables: %q", d.Reasons)
	}

	ok := trixieHost(t, "v1.36.3+rke2r1").File(hostfs.ConfigFile, prefer).File(facts.DpkgStatus, dpkgNftables("1.1.1"))
	f, _, d = decideOn(t, ok)
	if d.Backend != backend.NFTables {
		t.Errorf("host nft 1.1.1: backend %s, reasons %q", d.Backend, d.Reasons)
	}
	if why := SwitchRefusal(f, backend.NFTables); why != "" {
		t.Errorf("host nft 1.1.1: switch refused: %s", why)
	}
}

// An unknown host nft with foreign sets carrying user data cannot be told
// from a bad pair: nftables is still chosen, with the warning.
func TestSkewSuspectWarns(t *testing.T) {
	withTable(t)
	h := trixieHost(t, "v1.36.3+rke2r1").File(hostfs.ConfigFile, "prefer: [nftables, iptables-nft]\n").Remove(facts.DpkgStatus)
	f, c := probed(t, h, facts.Options{ToolVersions: true}, nil)
	f.LiveRules.UserdataSets = []skew.UserdataSet{{Family: "inet", Table: "firewalld", Name: "allowed", Kinds: []string{"key-byteorder"}}}
	f.LiveRules.UserdataSetsRead = true
	d := Decide(f, c)
	check(t, d, want{backend: backend.NFTables, source: "auto", args: []string{"proxy-mode=nftables"}, env: []string{"IPTABLES_MODE=nft"},
		reasons: []string{"Warning: RKE2 v1.36.3+rke2r1's kube-proxy image has nft 1.0.4", "the host's nft version is unknown while sets written with user data exist", "inet firewalld set allowed"}})
}
