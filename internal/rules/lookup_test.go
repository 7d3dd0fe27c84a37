package rules

import "testing"

// Lookups find by family and name, hand out the element itself, and pass
// through an absent table or ruleset as nil.
func TestLookups(t *testing.T) {
	rs := &Ruleset{Tables: []Table{
		{Family: IPv4, Name: "nat", Chains: []Chain{{Name: "A"}, {Name: "B"}}, Sets: []Set{{Name: "s"}}},
		{Family: IPv6, Name: "nat", Chains: []Chain{{Name: "C"}}},
	}}
	if got := rs.Table(IPv6, "nat"); got != &rs.Tables[1] {
		t.Errorf("Table(ipv6, nat) = %p, want the second table %p", got, &rs.Tables[1])
	}
	if got := rs.Table(IPv4, "nat").Chain("B"); got != &rs.Tables[0].Chains[1] {
		t.Errorf("Chain(B) = %p, want %p", got, &rs.Tables[0].Chains[1])
	}
	if got := rs.Table(IPv4, "nat").Set("s"); got != &rs.Tables[0].Sets[0] {
		t.Errorf("Set(s) = %p, want %p", got, &rs.Tables[0].Sets[0])
	}
	var none *Ruleset
	for what, missing := range map[string]bool{
		"ipv6 chain A":       rs.Table(IPv6, "nat").Chain("A") != nil,
		"ipv4 filter table":  rs.Table(IPv4, "filter") != nil,
		"chain in no table":  rs.Table(IPv4, "filter").Chain("A") != nil,
		"set in no table":    rs.Table(IPv6, "mangle").Set("s") != nil,
		"table of nil rules": none.Table(IPv4, "nat") != nil,
		"ipv6 set s":         rs.Table(IPv6, "nat").Set("s") != nil,
	} {
		if missing {
			t.Errorf("%s: found, want nil", what)
		}
	}
}
