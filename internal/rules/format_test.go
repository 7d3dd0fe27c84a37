package rules

import (
	"slices"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
)

func TestFormatNFT(t *testing.T) {
	rs := &Ruleset{Backend: backend.NFTables, Tables: []Table{
		{Family: IPv6, Name: "kube-proxy", Comment: "rules for kube-proxy"},
		{Family: IPv4, Name: "kube-proxy", Comment: "rules for kube-proxy",
			Chains: []Chain{
				{Name: "services", Rules: []Rule{
					{Text: "ip daddr . meta l4proto . th dport vmap @service-ips"},
					{Text: "jump reject-chain", Jump: "reject-chain"},
				}},
				{Name: "reject-chain", Comment: "helper", Rules: []Rule{{Text: "reject"}}},
				{Name: "nat-prerouting", Hook: "prerouting", Type: "nat", Priority: -100, Policy: "accept",
					Rules: []Rule{{Text: "jump services", Jump: "services"}}},
			},
			Sets: []Set{
				{Name: "service-ips", Map: true, Type: "ipv4_addr . inet_proto . inet_service : verdict", Comment: "c",
					Elements: []string{"172.30.0.42 . tcp . 80 : goto reject-chain", "172.30.0.41 . tcp . 80 : drop"}},
				{Name: "affinity", Type: "ipv4_addr", Flags: []string{"timeout", "dynamic"}, Timeout: "10800s", Size: 65535},
			}},
	}}
	want := `# backend nftables
# family ipv4
add table ip kube-proxy { comment "rules for kube-proxy" ; }
add chain ip kube-proxy nat-prerouting { type nat hook prerouting priority -100 ; policy accept ; }
add chain ip kube-proxy reject-chain { comment "helper" ; }
add chain ip kube-proxy services
add set ip kube-proxy affinity { type ipv4_addr ; flags dynamic,timeout ; timeout 10800s ; size 65535 ; }
add map ip kube-proxy service-ips { type ipv4_addr . inet_proto . inet_service : verdict ; comment "c" ; }
add rule ip kube-proxy nat-prerouting jump services
add rule ip kube-proxy reject-chain reject
add rule ip kube-proxy services ip daddr . meta l4proto . th dport vmap @service-ips
add rule ip kube-proxy services jump reject-chain
add element ip kube-proxy service-ips { 172.30.0.41 . tcp . 80 : drop }
add element ip kube-proxy service-ips { 172.30.0.42 . tcp . 80 : goto reject-chain }
# family ipv6
add table ip6 kube-proxy { comment "rules for kube-proxy" ; }
`
	if got := Format(rs); got != want {
		t.Errorf("Format =\n%s\nwant\n%s", got, want)
	}
	// Format must not reorder the caller's ruleset.
	if rs.Tables[0].Family != IPv6 || rs.Tables[1].Chains[0].Name != "services" {
		t.Errorf("Format modified its input")
	}
	parts, err := SplitFamilies(want)
	if err != nil {
		t.Fatal(err)
	}
	if parts[IPv6] != "add table ip6 kube-proxy { comment \"rules for kube-proxy\" ; }\n" {
		t.Errorf("ipv6 part = %q", parts[IPv6])
	}
}

func TestSplitFamiliesErrors(t *testing.T) {
	if _, err := SplitFamilies("*filter\n"); err == nil {
		t.Error("text before a family header was accepted")
	}
	if _, err := SplitFamilies("# family inet6\n"); err == nil {
		t.Error("unknown family accepted")
	}
}

func TestDiff(t *testing.T) {
	base := func() *Ruleset {
		return &Ruleset{Backend: backend.IptablesLegacy, Tables: []Table{{Family: IPv4, Name: "nat", Chains: []Chain{
			{Name: "PREROUTING", Hook: "prerouting", Policy: "ACCEPT", Rules: []Rule{{Text: "-j KUBE-SERVICES"}}},
			{Name: "KUBE-SERVICES"},
		}}}}
	}
	if d := Diff(base(), base()); len(d) != 0 {
		t.Errorf("equal rulesets differ: %v", d)
	}
	got := base()
	got.Tables[0].Chains[0].Rules = nil
	got.Tables[0].Chains = append(got.Tables[0].Chains, Chain{Name: "KUBE-EXTRA"})
	got.Tables = append(got.Tables, Table{Family: IPv6, Name: "nat"})
	d := Diff(base(), got)
	if len(d) != 3 {
		t.Fatalf("Diff = %v, want rules differ, unexpected chain, unexpected table", d)
	}
	if d[0].Chain != "PREROUTING" || d[1].What != "unexpected chain" || d[2].What != "unexpected table" {
		t.Errorf("Diff = %v", d)
	}
	if d := Diff(base(), &Ruleset{}); len(d) != 1 || d[0].String() != "ipv4 table nat: table missing" {
		t.Errorf("Diff against empty = %v", d)
	}
}

// Every kind of difference, in order: per table, chains (want's order,
// then got's extras), then sets likewise.
func TestDiffChainsAndSets(t *testing.T) {
	want := &Ruleset{Backend: backend.NFTables, Tables: []Table{{Family: IPv4, Name: "kube-proxy",
		Chains: []Chain{{Name: "a"}, {Name: "b"}},
		Sets:   []Set{{Name: "s", Type: "ipv4_addr", Elements: []string{"10.0.0.1"}}, {Name: "t", Type: "ipv4_addr"}}}}}
	got := &Ruleset{Backend: backend.NFTables, Tables: []Table{{Family: IPv4, Name: "kube-proxy",
		Chains: []Chain{{Name: "c"}, {Name: "a", Policy: "drop"}},
		Sets:   []Set{{Name: "u", Type: "ipv4_addr"}, {Name: "s", Type: "ipv4_addr"}}}}}
	var whats []string
	for _, d := range Diff(want, got) {
		whats = append(whats, d.Chain+d.Set+": "+strings.SplitN(d.What, " ", 3)[0]+" "+strings.SplitN(d.What, " ", 3)[1])
	}
	wantWhats := []string{"a: chain is", "b: chain missing", "c: unexpected chain", "s: elements differ:", "t: set missing", "u: unexpected set"}
	if !slices.Equal(whats, wantWhats) {
		t.Errorf("Diff = %q\nwant %q", whats, wantWhats)
	}
}

// TestSetNotRead: a set a shallow read did not read prints a marker
// element, which nft refuses, and Diff says its elements were not read
// instead of counting none.
func TestSetNotRead(t *testing.T) {
	set := func(s Set) *Ruleset {
		return &Ruleset{Backend: backend.NFTables, Tables: []Table{{Family: IPv4, Name: "kube-proxy", Sets: []Set{s}}}}
	}
	read := Set{Name: "service-ips", Map: true, Type: "ipv4_addr : verdict", Elements: []string{"10.0.0.1 : drop"}}
	lean := Set{Name: "service-ips", Map: true, Type: "ipv4_addr : verdict", NotRead: true}
	if got, want := Format(set(lean)), "add element ip kube-proxy service-ips { UNSUPPORTED[elements not read] }\n"; !strings.HasSuffix(got, want) {
		t.Errorf("Format of a set not read:\n%s\nwant it to end with %q", got, want)
	}
	d := Diff(set(read), set(lean))
	if len(d) != 1 || d[0].What != "elements differ: want 1, got not read" {
		t.Errorf("Diff of a read set and one not read = %+v", d)
	}
}
