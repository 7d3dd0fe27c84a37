package netfilter

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
)

func TestNFTablesReferenceDump(t *testing.T) {
	ref := nstest.RefDir(t)
	if !nstest.Setup(t, "nft -f "+filepath.Join(ref, "derived/nftables-overall-v4.reordered.nft"), "nft") {
		return
	}
	listed := nstest.Sh(t, "nft list ruleset")
	rs, text := readText(t, backend.NFTables)
	assertNFTSkeleton(t, rs)

	// Round trip: flush, load the render, render again: identical. And
	// the kernel holds the same ruleset as after loading the original, as
	// nft itself lists it, so the render means what the original meant.
	roundTripListsSame(t, text, listed)
	assertDecoded(t, text)

	// A shallow read differs only in the rules using anonymous sets and
	// in the elements of named sets: one marker line each.
	shallow, err := (&System{ReadOptions: ReadOptions{Shallow: true}}).Read(context.Background(), backend.NFTables)
	if err != nil {
		t.Fatal(err)
	}
	marked, sets, named := 0, 0, 0
	for _, l := range strings.Split(rules.Format(shallow), "\n") {
		switch {
		case strings.HasPrefix(l, "add rule ") && strings.Contains(l, "{ UNSUPPORTED[elements not read] }"):
			marked++
		case strings.HasPrefix(l, "add element ") && strings.HasSuffix(l, " { UNSUPPORTED[elements not read] }"):
			sets++
		case !strings.Contains(text, l+"\n"):
			t.Errorf("shallow read has a line the full read does not: %q", l)
		}
	}
	for _, tb := range shallow.Tables {
		for _, s := range tb.Sets {
			named++
			if !s.NotRead || len(s.Elements) > 0 {
				t.Errorf("shallow read of set %s: NotRead %v with %d elements, want not read", s.Name, s.NotRead, len(s.Elements))
			}
		}
	}
	if marked != 5 {
		t.Errorf("shallow read marked %d rules, want the 5 numgen vmap rules", marked)
	}
	if sets != named || named == 0 {
		t.Errorf("shallow read marked the elements of %d sets, want each of its %d named sets", sets, named)
	}
}

func TestNFTablesBaseDump(t *testing.T) {
	ref := nstest.RefDir(t)
	if !nstest.Setup(t, "nft -f "+filepath.Join(ref, "nftables-base-v4.knft"), "nft") {
		return
	}
	rs, _ := readText(t, backend.NFTables)
	assertNFTSkeleton(t, rs)
	// Nothing of kube-proxy's shows up as iptables-nft.
	if ipt, _ := readText(t, backend.IptablesNFT); len(ipt.Tables) != 0 {
		t.Errorf("iptables-nft reader sees %+v in a native nftables ruleset", ipt.Tables)
	}
}

// roundTripListsSame is roundTrip for nftables plus nft's own view: after
// the render is loaded back, `nft list ruleset` shows what it showed after
// the original was loaded (listed), so the render means what it meant.
func roundTripListsSame(t *testing.T, text, listed string) {
	t.Helper()
	roundTrip(t, backend.NFTables, text)
	if again := nstest.Sh(t, "nft list ruleset"); sortedLines(again) != sortedLines(listed) {
		t.Errorf("nft lists the loaded render differently from the original:\n--- original\n%s\n--- render\n%s\n--- our text\n%s", listed, again, text)
	}
}

// sortedLines compares nft listings without depending on the order nft
// prints set elements in.
func sortedLines(s string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		for _, part := range strings.Split(l, ",") {
			lines = append(lines, strings.TrimSpace(part))
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// assertNFTSkeleton checks kube-proxy's 1.34+ base chains, hooks,
// priorities, jumps and comments in the ip kube-proxy table.
func assertNFTSkeleton(t *testing.T, rs *rules.Ruleset) {
	t.Helper()
	var table *rules.Table
	for i := range rs.Tables {
		if rs.Tables[i].Family == rules.IPv4 && rs.Tables[i].Name == "kube-proxy" {
			table = &rs.Tables[i]
		}
	}
	if table == nil {
		t.Fatalf("no ip kube-proxy table in %+v", rs.Tables)
	}
	if table.Comment != "rules for kube-proxy" {
		t.Errorf("table comment %q", table.Comment)
	}
	want := map[string]string{
		"filter-prerouting-pre-dnat": "filter prerouting -110 firewall-check",
		"filter-output-pre-dnat":     "filter output -110 firewall-check",
		"filter-forward":             "filter forward 0 service-endpoints-check cluster-ips-check",
		"filter-input":               "filter input 0 nodeport-endpoints-check service-endpoints-check",
		"filter-output":              "filter output 0 service-endpoints-check cluster-ips-check",
		"nat-prerouting":             "nat prerouting -100 services",
		"nat-output":                 "nat output -100 services",
		"nat-postrouting":            "nat postrouting 100 masquerading",
		"reject-chain":               "  0",
		"mark-for-masquerade":        "  0",
	}
	for _, c := range table.Chains {
		w, ok := want[c.Name]
		if !ok {
			continue
		}
		delete(want, c.Name)
		got := fmt.Sprintf("%s %s %d", c.Type, c.Hook, c.Priority)
		for _, r := range c.Rules {
			if r.Jump != "" {
				got += " " + r.Jump
			}
		}
		if got != w {
			t.Errorf("chain %s = %q, want %q", c.Name, got, w)
		}
		if c.Name == "reject-chain" && c.Comment != "helper for @no-endpoint-services / @no-endpoint-nodeports" {
			t.Errorf("reject-chain comment %q", c.Comment)
		}
	}
	for name := range want {
		t.Errorf("chain %s missing", name)
	}
	sets := map[string]string{}
	for _, s := range table.Sets {
		sets[s.Name] = s.Type
	}
	for name, typ := range map[string]string{
		"cluster-ips": "ipv4_addr", "nodeport-ips": "ipv4_addr",
		"service-ips": "ipv4_addr . inet_proto . inet_service : verdict", "service-nodeports": "inet_proto . inet_service : verdict",
		"no-endpoint-services": "ipv4_addr . inet_proto . inet_service : verdict", "no-endpoint-nodeports": "inet_proto . inet_service : verdict",
		"firewall-ips": "ipv4_addr . inet_proto . inet_service : verdict",
	} {
		if sets[name] != typ {
			t.Errorf("set %s type %q, want %q", name, sets[name], typ)
		}
	}
}

// extraNFT exercises what the reference dump does not: IPv6, interval
// sets (anonymous and named), ranges, limits, counters, other rejects.
const extraNFT = `add table ip6 kube-proxy { comment "rules for kube-proxy" ; }
add chain ip6 kube-proxy services
add chain ip6 kube-proxy mark-for-masquerade
add chain ip6 kube-proxy endpoint-A
add chain ip6 kube-proxy firewall-A
add chain ip6 kube-proxy nat-postrouting { type nat hook postrouting priority 100 ; }
add chain ip6 kube-proxy filter-input { type filter hook input priority 0 ; policy drop ; }
add set ip6 kube-proxy cluster-ips { type ipv6_addr ; comment "Active ClusterIPs" ; }
add set ip6 kube-proxy ranges { type ipv6_addr ; flags interval ; }
add map ip6 kube-proxy service-ips { type ipv6_addr . inet_proto . inet_service : verdict ; }
add rule ip6 kube-proxy services ip6 daddr . meta l4proto . th dport vmap @service-ips
add rule ip6 kube-proxy services ip6 daddr fd00:20::/112 ip6 saddr != fd00:10::/64 counter jump mark-for-masquerade
add rule ip6 kube-proxy mark-for-masquerade meta mark set meta mark | 0x00004000
add rule ip6 kube-proxy endpoint-A ip6 saddr fd00:10::5 jump mark-for-masquerade
add rule ip6 kube-proxy endpoint-A meta l4proto tcp dnat to [fd00:10::5]:8080
add rule ip6 kube-proxy firewall-A ip6 saddr != { fd00:30::/64, fd00:31::/64 } drop
add rule ip6 kube-proxy firewall-A ip6 saddr @ranges accept
add rule ip6 kube-proxy firewall-A th dport 30000-32767 limit rate over 10/second drop
add rule ip6 kube-proxy firewall-A reject with tcp reset
add rule ip6 kube-proxy firewall-A reject
add rule ip6 kube-proxy firewall-A iifname "eth0" fib daddr type local accept
add rule ip6 kube-proxy nat-postrouting masquerade random,persistent
add element ip6 kube-proxy cluster-ips { fd00:20::1 }
add element ip6 kube-proxy ranges { fd00:40::/48, fd00:50::1-fd00:50::9 }
add element ip6 kube-proxy service-ips { fd00:20::1 . tcp . 80 : goto endpoint-A }
`

func TestNFTablesIPv6AndMore(t *testing.T) {
	if !nstest.Setup(t, "nft -f - <<'EOF'\n"+extraNFT+"EOF", "nft") {
		return
	}
	listed := nstest.Sh(t, "nft list ruleset")
	_, text := readText(t, backend.NFTables)
	assertDecoded(t, text)
	roundTripListsSame(t, text, listed)
}

// TestNFTablesUndecodableIsLoud checks that an expression the reader does
// not decode shows as a marker that makes loading the render fail.
func TestNFTablesUndecodableIsLoud(t *testing.T) {
	if !nstest.Setup(t, `nft -f - <<'EOF'
add table ip kube-proxy
add chain ip kube-proxy services
add rule ip kube-proxy services log prefix "x " accept
EOF`, "nft") {
		return
	}
	_, text := readText(t, backend.NFTables)
	if !strings.Contains(text, "UNSUPPORTED[") {
		t.Fatalf("log expression rendered without a marker:\n%s", text)
	}
	nstest.Sh(t, "nft flush ruleset")
	parts, err := rules.SplitFamilies(text)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("nft", "-f", "-")
	cmd.Stdin = strings.NewReader(parts[rules.IPv4])
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("nft loaded a render with an undecoded expression:\n%s\n%s", text, out)
	}
}

// TestNFTablesKubeProxy136DNAT reads the statements kube-proxy's nftables
// proxier writes from 1.36 on (numgen DNAT maps with address . port data,
// the hairpin set, the new masquerading rules, 1.37's single-endpoint
// DNAT) and loads the render back: what nft accepts as kube-proxy wrote it.
func TestNFTablesKubeProxy136DNAT(t *testing.T) {
	if !nstest.Setup(t, "nft -f testdata/kube-proxy-1.36-dnat.nft", "nft") {
		return
	}
	listed := nstest.Sh(t, "nft list ruleset")
	_, text := readText(t, backend.NFTables)
	for _, want := range []string{
		"add rule ip kube-proxy svc1 meta l4proto tcp dnat ip to numgen random mod 3 map { 0 : 10.42.0.7 . 8080, 1 : 10.42.0.8 . 8080, 2 : 10.42.0.9 . 8080 }\n",
		"add rule ip6 kube-proxy svc1 meta l4proto tcp dnat ip6 to numgen random mod 2 map { 0 : fd00::7 . 8080, 1 : fd00::8 . 8080 }\n",
		"add rule ip6 kube-proxy svc1 meta l4proto tcp dnat to [fd00::7]:8080\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("render lacks %q:\n%s", want, text)
		}
	}
	assertDecoded(t, text)
	roundTripListsSame(t, text, listed)
}
