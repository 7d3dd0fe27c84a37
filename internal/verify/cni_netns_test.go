package verify

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
)

// felixRules is the start of what Felix's iptables dataplane writes on a
// Canal node. The chain names are Felix's own (projectcalico/calico
// felix/rules/rule_defs.go: ChainNamePrefix "cali-", ChainFilterForward
// cali-FORWARD, ChainDispatchFromHostEndPointForward cali-from-hep-forward,
// ChainDispatchToHostEndpointForward cali-to-hep-forward, ChainNATPrerouting,
// ChainNATPostrouting, ChainNATOutgoing cali-nat-outgoing; the rules of
// cali-FORWARD in felix/rules/static.go). Every rule carries the
// "cali:<16-char hash>" comment Felix computes from the chain and rule
// (felix/iptables/table.go, CalculateRuleHashes); the hashes and the
// 0x0/0xe0000 mark clear (Felix's default pass and scratch marks) are as
// calico-node's iptables-save shows them. Six cali- chains: filter
// cali-FORWARD, cali-from-hep-forward, cali-to-hep-forward; nat
// cali-PREROUTING, cali-POSTROUTING, cali-nat-outgoing.
const felixRules = `*filter
:cali-FORWARD - [0:0]
:cali-from-hep-forward - [0:0]
:cali-to-hep-forward - [0:0]
-A FORWARD -m comment --comment "cali:wUHhoiAYhphO9Mso" -j cali-FORWARD
-A cali-FORWARD -m comment --comment "cali:vjrMJCRpqwy5oRoX" -j MARK --set-xmark 0x0/0xe0000
-A cali-FORWARD -m comment --comment "cali:A_sPAO0mcxbT9mOV" -m mark --mark 0x0/0x10000 -j cali-from-hep-forward
-A cali-FORWARD -m comment --comment "cali:12bc6HljsMKsmfr-" -j cali-to-hep-forward
COMMIT
*nat
:cali-PREROUTING - [0:0]
:cali-POSTROUTING - [0:0]
:cali-nat-outgoing - [0:0]
-A PREROUTING -m comment --comment "cali:6gwbT8clXdHdC1b1" -j cali-PREROUTING
-A POSTROUTING -m comment --comment "cali:O3lYWMrLQYEMJtB5" -j cali-POSTROUTING
-A cali-POSTROUTING -m comment --comment "cali:nYKhEzDlr11Jccal" -j cali-nat-outgoing
COMMIT
`

// nodeLocalDNSRules are node-cache's rules for its link-local address
// 169.254.20.10, port 53 and health port 8080 (kubernetes/dns
// cmd/node-cache/app/cache_app.go initIptables: NOTRACK in raw PREROUTING
// and OUTPUT commented "NodeLocal DNS Cache: skip conntrack", ACCEPT in
// filter INPUT and OUTPUT commented "NodeLocal DNS Cache: allow DNS
// traffic", each for tcp and udp; -p udp --dport adds the udp match in
// iptables-save). No chain of its own: four built-in chains hold them.
const nodeLocalDNSRules = `*raw
-A PREROUTING -d 169.254.20.10/32 -p tcp -m tcp --dport 53 -m comment --comment "NodeLocal DNS Cache: skip conntrack" -j NOTRACK
-A PREROUTING -d 169.254.20.10/32 -p udp -m udp --dport 53 -m comment --comment "NodeLocal DNS Cache: skip conntrack" -j NOTRACK
-A OUTPUT -s 169.254.20.10/32 -p tcp -m tcp --sport 53 -m comment --comment "NodeLocal DNS Cache: skip conntrack" -j NOTRACK
-A OUTPUT -s 169.254.20.10/32 -p udp -m udp --sport 53 -m comment --comment "NodeLocal DNS Cache: skip conntrack" -j NOTRACK
-A OUTPUT -d 169.254.20.10/32 -p tcp -m tcp --dport 53 -m comment --comment "NodeLocal DNS Cache: skip conntrack" -j NOTRACK
-A OUTPUT -d 169.254.20.10/32 -p udp -m udp --dport 53 -m comment --comment "NodeLocal DNS Cache: skip conntrack" -j NOTRACK
-A OUTPUT -d 169.254.20.10/32 -p tcp -m tcp --dport 8080 -m comment --comment "NodeLocal DNS Cache: skip conntrack" -j NOTRACK
-A OUTPUT -s 169.254.20.10/32 -p tcp -m tcp --sport 8080 -m comment --comment "NodeLocal DNS Cache: skip conntrack" -j NOTRACK
COMMIT
*filter
-A INPUT -d 169.254.20.10/32 -p tcp -m tcp --dport 53 -m comment --comment "NodeLocal DNS Cache: allow DNS traffic" -j ACCEPT
-A INPUT -d 169.254.20.10/32 -p udp -m udp --dport 53 -m comment --comment "NodeLocal DNS Cache: allow DNS traffic" -j ACCEPT
-A OUTPUT -s 169.254.20.10/32 -p tcp -m tcp --sport 53 -m comment --comment "NodeLocal DNS Cache: allow DNS traffic" -j ACCEPT
-A OUTPUT -s 169.254.20.10/32 -p udp -m udp --sport 53 -m comment --comment "NodeLocal DNS Cache: allow DNS traffic" -j ACCEPT
COMMIT
`

func loadIptables(t *testing.T, b backend.Backend, payload string) {
	t.Helper()
	tool := map[backend.Backend]string{backend.IptablesLegacy: "iptables-legacy-restore", backend.IptablesNFT: "iptables-nft-restore"}[b]
	nstest.Feed(t, payload, tool, "-w", "5", "--noflush")
}

// The CNI setups the tests put Felix and flannel on: RKE2's default Canal,
// and Calico chosen in RKE2's config.
func canalSetup() *cni.Setup { s := cni.NewSetup(nil, "", nil); return &s }

func calicoSetup() *cni.Setup {
	s := cni.NewSetup([]string{"calico"}, "/etc/rancher/rke2/config.yaml", nil)
	return &s
}

func TestCNIOtherBackendInNetns(t *testing.T) {
	cases := []struct {
		name          string
		expect        backend.Backend
		setup         *cni.Setup
		writer        backend.Backend
		payload       string
		want, fix     string
		otherChains   int
		countsBackend backend.Backend
	}{
		{"Felix in legacy, kube-proxy in iptables-nft", backend.IptablesNFT, canalSetup(), backend.IptablesLegacy, felixRules,
			"cni-other-backend@iptables-legacy", "rke2-canal set calico.felixIptablesBackend: nft", 6, backend.IptablesLegacy},
		{"Felix next to kube-proxy in iptables-nft", backend.IptablesNFT, canalSetup(), backend.IptablesNFT, felixRules, "", "", 0, backend.IptablesNFT},
		{"Felix in iptables-nft, kube-proxy in legacy (rke2-calico)", backend.IptablesLegacy, calicoSetup(), backend.IptablesNFT, felixRules,
			"cni-other-backend@iptables-nft", `"iptablesBackend":"Legacy"`, 6, backend.IptablesNFT},
		// NodeLocal DNS uses iptables only: next to nftables mode its rules
		// in iptables-nft are where they can be; in legacy they are not.
		{"NodeLocal DNS in iptables-nft, kube-proxy nftables", backend.NFTables, nil, backend.IptablesNFT, nodeLocalDNSRules, "", "", 0, backend.IptablesNFT},
		{"NodeLocal DNS in legacy, kube-proxy nftables", backend.NFTables, nil, backend.IptablesLegacy, nodeLocalDNSRules,
			"cni-other-backend@iptables-legacy", "nodelocal.enabled: false", 4, backend.IptablesLegacy},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !nstest.InNetns(t) {
				return
			}
			loadExpected(t, c.expect, 3, rules.IPv4, rules.IPv6)
			loadIptables(t, c.writer, c.payload)
			r := NewReader(hostfs.New("/"))
			res := run(t, Options{Expect: c.expect, Reader: r, CNI: c.setup})
			var text strings.Builder
			WriteText(&text, res)
			if got := kinds(res); got != c.want {
				t.Fatalf("findings %q, want %q\n%s", got, c.want, text.String())
			}
			if c.want != "" {
				f := res.Findings[0]
				if !strings.Contains(f.Fix, c.fix) || !strings.Contains(f.Message, fmt.Sprintf("%d chain(s)", c.otherChains)) {
					t.Errorf("finding does not name %q and %d chains:\n%s", c.fix, c.otherChains, text.String())
				}
			}
			// The counts behind the textfile's CNI series (internal/proof).
			for _, st := range res.Backends {
				if st.Backend != c.countsBackend {
					continue
				}
				if c.want != "" && len(st.CNIOtherBackend) == 0 {
					t.Errorf("no other-backend count in %s: %+v", c.countsBackend, st)
				}
				if len(st.CNIChains) == 0 {
					t.Errorf("no CNI chain count in %s: %+v", c.countsBackend, st)
				}
			}
		})
	}
}

// flannelNFTables is what flanneld with EnableNFTables writes: a table per
// family named flannel-ipv4/flannel-ipv6 with the comment "rules for
// <table>", a forward chain accepting the cluster CIDR and a postrtg chain
// masquerading it (flannel-io/flannel pkg/trafficmngr/nftables/nftables.go:
// initTable, SetupAndEnsureForwardRules, addMasqRules; the pod CIDR
// 10.42.1.0/24 of cluster 10.42.0.0/16 is RKE2's default).
const flannelNFTables = `table ip flannel-ipv4 {
	comment "rules for flannel-ipv4"
	chain forward {
		comment "chain to accept flannel traffic"
		type filter hook forward priority filter; policy accept;
		ip saddr 10.42.0.0/16 accept
		ip daddr 10.42.0.0/16 accept
	}
	chain postrtg {
		comment "chain to manage traffic masquerading by flannel"
		type nat hook postrouting priority srcnat; policy accept;
		meta mark 0x4000 return
		ip saddr 10.42.1.0/24 ip daddr 10.42.0.0/16 return
		ip saddr 10.42.0.0/16 ip daddr 10.42.1.0/24 return
		ip saddr != 10.42.1.0/24 ip daddr 10.42.0.0/16 return
		ip saddr 10.42.0.0/16 ip daddr != 224.0.0.0/4 masquerade fully-random
		ip saddr != 10.42.0.0/16 ip daddr 10.42.0.0/16 masquerade fully-random
	}
}
table ip6 flannel-ipv6 {
	comment "rules for flannel-ipv6"
}
`

// calicoNFTables is the start of Felix's nftables dataplane: one table
// "calico" per family (projectcalico/calico felix/dataplane/linux/
// int_dataplane.go nftables.NewTable("calico", 4, ...)) whose base chains
// are named after the iptables table and hook they stand for
// (felix/nftables/table.go baseChains: filter-FORWARD, nat-POSTROUTING, all
// at priority 0) and jump to Felix's own chains (the same "<table>-" prefix,
// felix/nftables/table_layer.go), each rule tagged "cali:<hash>".
const calicoNFTables = `table ip calico {
	chain filter-cali-FORWARD {
		meta mark set meta mark & 0xfff1ffff comment "cali:vjrMJCRpqwy5oRoX"
	}
	chain filter-FORWARD {
		type filter hook forward priority 0; policy accept;
		jump filter-cali-FORWARD comment "cali:wUHhoiAYhphO9Mso"
	}
	chain nat-POSTROUTING {
		type nat hook postrouting priority 0; policy accept;
	}
}
`

// A CNI's own nftables tables next to kube-proxy on iptables are a finding
// naming the CNI, its tables and the value that moves it; next to
// kube-proxy's nftables mode they are where they belong.
func TestCNINativeTablesInNetns(t *testing.T) {
	cases := []struct {
		name    string
		expect  backend.Backend
		setup   *cni.Setup
		payload string
		want    string
		message string
		fix     string
	}{
		{"flannel's tables, kube-proxy on iptables-nft", backend.IptablesNFT, canalSetup(), flannelNFTables, "cni-other-backend@nftables",
			"flannel has rules in nftables, but next to kube-proxy in iptables-nft they belong in iptables-nft: 2 nftables table(s) of its own: ipv4 table flannel-ipv4, ipv6 table flannel-ipv6",
			"in a HelmChartConfig for rke2-canal set flannel.enableNFTables: false"},
		{"Calico's table, kube-proxy on iptables-legacy (rke2-calico)", backend.IptablesLegacy, calicoSetup(), calicoNFTables, "cni-other-backend@nftables",
			"Calico (Felix) has rules in nftables, but next to kube-proxy in iptables-legacy they belong in iptables-legacy: 1 nftables table(s) of its own: ipv4 table calico",
			"in a HelmChartConfig for rke2-calico set installation.calicoNetwork.linuxDataplane: Iptables"},
		{"Felix's own table on Canal, kube-proxy on iptables-nft", backend.IptablesNFT, canalSetup(), calicoNFTables, "cni-other-backend@nftables",
			"1 nftables table(s) of its own: ipv4 table calico",
			`calico.felixIptablesBackend: nft and Felix's own nftables dataplane off with kubectl patch felixconfiguration default --type merge -p '{"spec":{"nftablesMode":"Disabled"}}'`},
		{"flannel's tables next to nftables mode", backend.NFTables, canalSetup(), flannelNFTables, "", "", ""},
		{"Calico's table next to nftables mode", backend.NFTables, calicoSetup(), calicoNFTables, "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !nstest.InNetns(t) {
				return
			}
			loadExpected(t, c.expect, 1, rules.IPv4, rules.IPv6)
			nstest.Feed(t, c.payload, nstest.Tool(t, "nft"), "-f", "-")
			res := run(t, Options{Expect: c.expect, Reader: NewReader(hostfs.New("/")), CNI: c.setup, NFTTables: netfilter.NFTTables})
			var text strings.Builder
			WriteText(&text, res)
			if got := kinds(res); got != c.want {
				t.Fatalf("findings %q, want %q\n%s", got, c.want, text.String())
			}
			if c.want == "" {
				return
			}
			if f := res.Findings[0]; !strings.Contains(f.Message, c.message) || !strings.Contains(f.Fix, c.fix) {
				t.Errorf("finding does not say %q\nwith fix %q:\n%s", c.message, c.fix, text.String())
			}
		})
	}
}
