package netfilter

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/iptsave"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
)

// assertSameAsSave checks that the reader's rules for an iptables backend
// equal what its *-save tools print for both families, minus their
// comments and counters.
func assertSameAsSave(t *testing.T, b backend.Backend, rs *rules.Ruleset) {
	t.Helper()
	flavour := map[backend.Backend]string{backend.IptablesLegacy: "legacy", backend.IptablesNFT: "nft"}[b]
	var saved []rules.Table
	for fam, tool := range map[rules.Family]string{rules.IPv4: "iptables-" + flavour + "-save", rules.IPv6: "ip6tables-" + flavour + "-save"} {
		tables, err := iptsave.Parse(strings.NewReader(nstest.Sh(t, tool)), fam)
		if err != nil {
			t.Fatal(err)
		}
		saved = append(saved, tables...)
	}
	for _, x := range rules.Diff(&rules.Ruleset{Backend: b, Tables: saved}, rs) {
		t.Errorf("reader differs from %s-save: %s", flavour, x)
	}
}

func TestIptablesNFTTracepacketFixture(t *testing.T) {
	if !loadTracepacketFixture(t, "iptables-nft-restore") {
		return
	}
	rs, text := readText(t, backend.IptablesNFT)
	assertSameAsSave(t, backend.IptablesNFT, rs)
	roundTrip(t, backend.IptablesNFT, text)
}

// ipv6Rules are kube-proxy-shaped IPv6 rules exercising the xtables
// decoders the IPv4 dumps do not: IPv6 addresses, DNAT with brackets,
// udp, port ranges, interfaces, REJECT for IPv6, MARK, statistic nth.
const ipv6Rules = `*nat
:PREROUTING ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
:KUBE-MARK-MASQ - [0:0]
:KUBE-POSTROUTING - [0:0]
:KUBE-SEP-AAAA - [0:0]
:KUBE-SERVICES - [0:0]
-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING
-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000
-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully
-A KUBE-SEP-AAAA -s fd00:10::5/128 -j KUBE-MARK-MASQ
-A KUBE-SEP-AAAA -p udp -m udp -j DNAT --to-destination [fd00:10::5]:53
-A KUBE-SERVICES -d fd00:20::a/128 -i eth0 -p udp -m comment --comment "ns/dns:dns cluster IP" -m udp --dport 53 -m statistic --mode nth --every 2 --packet 0 -j KUBE-SEP-AAAA
-A KUBE-SERVICES ! -d fd00:20::/112 -o eth+ -p tcp -m tcp --sport 1000:2000 --dport 30000:32767 -g KUBE-SEP-AAAA
COMMIT
*filter
:INPUT ACCEPT [0:0]
:FORWARD DROP [0:0]
:OUTPUT ACCEPT [0:0]
:KUBE-SERVICES - [0:0]
-A KUBE-SERVICES -d fd00:20::b/128 -p tcp -m comment --comment "ns/none:p has no endpoints" -m tcp --dport 80 -j REJECT --reject-with icmp6-port-unreachable
COMMIT
`

func TestIptablesNFTIPv6(t *testing.T) {
	if !nstest.Setup(t, "ip6tables-nft-restore <<'EOF'\n"+ipv6Rules+"EOF", "ip6tables-nft-restore") {
		return
	}
	rs, text := readText(t, backend.IptablesNFT)
	assertSameAsSave(t, backend.IptablesNFT, rs)
	assertDecoded(t, text)
	roundTrip(t, backend.IptablesNFT, text)
}
