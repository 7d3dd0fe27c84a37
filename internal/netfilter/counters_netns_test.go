package netfilter

import (
	"slices"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
)

// localhostNodePorts138 is what kube-proxy 1.38's nftables proxier writes
// for localhost NodePorts (pkg/proxy/nftables/proxier.go setupNFTables,
// KubeProxyNFTablesLocalhostNodePorts on by default): named counters, the
// chains that count in them and reject, and the map steering 127.0.0.0/8
// (::1) NodePort traffic there.
const localhostNodePorts138 = `add table ip kube-proxy { comment "rules for kube-proxy" ; }
add chain ip kube-proxy nodeport-endpoints-check
add chain ip kube-proxy localhost-nodeport-reject-tcp
add chain ip kube-proxy localhost-nodeport-reject-udp
add map ip kube-proxy localhost-nodeport-reject-ports { type inet_proto . inet_service : verdict ; comment "localhost NodePorts rejected by kube-proxy" ; }
add counter ip kube-proxy localhost-nodeport-rejected-tcp
add counter ip kube-proxy localhost-nodeport-rejected-udp
add rule ip kube-proxy localhost-nodeport-reject-tcp counter name "localhost-nodeport-rejected-tcp" reject
add rule ip kube-proxy localhost-nodeport-reject-udp counter name "localhost-nodeport-rejected-udp" reject
add rule ip kube-proxy nodeport-endpoints-check ip daddr 127.0.0.0/8 meta l4proto . th dport vmap @localhost-nodeport-reject-ports
add element ip kube-proxy localhost-nodeport-reject-ports { tcp . 30080 : goto localhost-nodeport-reject-tcp }
add table ip6 kube-proxy { comment "rules for kube-proxy" ; }
add chain ip6 kube-proxy nodeport-endpoints-check
add chain ip6 kube-proxy localhost-nodeport-reject-sctp
add counter ip6 kube-proxy localhost-nodeport-rejected-sctp
add rule ip6 kube-proxy localhost-nodeport-reject-sctp counter name "localhost-nodeport-rejected-sctp" reject
add rule ip6 kube-proxy nodeport-endpoints-check ip6 daddr ::1 meta l4proto . th dport vmap @localhost-nodeport-reject-ports
`

// TestNFTablesNamedCounters: the reader sees named counters and the rules
// counting in them, and its render loads back to what nft lists for the
// original (without the counters, nft refuses the rules that name them).
func TestNFTablesNamedCounters(t *testing.T) {
	script := strings.Replace(localhostNodePorts138,
		"add rule ip6 kube-proxy nodeport-endpoints-check",
		"add map ip6 kube-proxy localhost-nodeport-reject-ports { type inet_proto . inet_service : verdict ; }\nadd rule ip6 kube-proxy nodeport-endpoints-check", 1)
	if !nstest.Setup(t, "nft -f - <<'EOF'\n"+script+"EOF", "nft") {
		return
	}
	listed := nstest.Sh(t, "nft list ruleset")
	rs, text := readText(t, backend.NFTables)
	assertDecoded(t, text)
	for fam, want := range map[rules.Family][]string{
		rules.IPv4: {"localhost-nodeport-rejected-tcp", "localhost-nodeport-rejected-udp"},
		rules.IPv6: {"localhost-nodeport-rejected-sctp"},
	} {
		tb := rs.Table(fam, "kube-proxy")
		if tb == nil {
			t.Fatalf("no %s kube-proxy table read:\n%s", fam, text)
		}
		if got := slices.Sorted(slices.Values(tb.Counters)); !slices.Equal(got, want) {
			t.Errorf("%s counters %v, want %v", fam, got, want)
		}
	}
	for _, line := range []string{
		"add counter ip kube-proxy localhost-nodeport-rejected-tcp\n",
		`add rule ip kube-proxy localhost-nodeport-reject-tcp counter name "localhost-nodeport-rejected-tcp" reject` + "\n",
		"add rule ip6 kube-proxy nodeport-endpoints-check ip6 daddr ::1 meta l4proto . th dport vmap @localhost-nodeport-reject-ports\n",
	} {
		if !strings.Contains(text, line) {
			t.Errorf("render lacks %q:\n%s", line, text)
		}
	}
	roundTripListsSame(t, text, listed)
}
