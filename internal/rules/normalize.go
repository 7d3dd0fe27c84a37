package rules

import (
	"cmp"
	"slices"
)

// builtinChains lists each iptables table's built-in chains in hook order,
// the order iptables-save prints them. A list, not a map: the linker lays
// it out, where a map would be built at every start of the generator,
// which links this package.
var builtinChains = []struct {
	table  string
	chains []string
}{
	{"filter", []string{"INPUT", "FORWARD", "OUTPUT"}},
	{"nat", []string{"PREROUTING", "INPUT", "OUTPUT", "POSTROUTING"}},
	{"mangle", []string{"PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"}},
	{"raw", []string{"PREROUTING", "OUTPUT"}},
	{"security", []string{"INPUT", "FORWARD", "OUTPUT"}},
}

// builtinsOf is table's entry of builtinChains (nil for another table).
func builtinsOf(table string) []string {
	for _, b := range builtinChains {
		if b.table == table {
			return b.chains
		}
	}
	return nil
}

// IsBuiltinChain reports whether chain is a built-in chain of iptables
// table.
func IsBuiltinChain(table, chain string) bool {
	return slices.Contains(builtinsOf(table), chain)
}

// BuiltinChains returns iptables table's built-in chains in hook order.
func BuiltinChains(table string) []string { return slices.Clone(builtinsOf(table)) }

// builtinRank orders built-in chains before user chains, in hook order.
func builtinRank(table, chain string) int {
	chains := builtinsOf(table)
	if i := slices.Index(chains, chain); i >= 0 {
		return i
	}
	return len(chains)
}

// Normalize returns a sorted deep copy of rs (see Format for the order).
// It never reorders rules within a chain.
func Normalize(rs *Ruleset) *Ruleset {
	out := &Ruleset{Backend: rs.Backend, Tables: make([]Table, len(rs.Tables))}
	iptables := rs.Backend.UsesIptables()
	for i, t := range rs.Tables {
		out.Tables[i] = normalizeTable(t, iptables)
	}
	slices.SortStableFunc(out.Tables, func(a, b Table) int {
		return cmp.Or(cmp.Compare(a.Family, b.Family), cmp.Compare(a.Name, b.Name))
	})
	return out
}

func normalizeTable(t Table, iptables bool) Table {
	t.Chains = slices.Clone(t.Chains)
	for i := range t.Chains {
		t.Chains[i].Rules = slices.Clone(t.Chains[i].Rules)
	}
	slices.SortStableFunc(t.Chains, func(a, b Chain) int {
		if iptables {
			if c := cmp.Compare(builtinRank(t.Name, a.Name), builtinRank(t.Name, b.Name)); c != 0 {
				return c
			}
		}
		return cmp.Compare(a.Name, b.Name)
	})
	t.Sets = slices.Clone(t.Sets)
	for i := range t.Sets {
		t.Sets[i].Flags = slices.Clone(t.Sets[i].Flags)
		slices.Sort(t.Sets[i].Flags)
		t.Sets[i].Elements = slices.Clone(t.Sets[i].Elements)
		slices.Sort(t.Sets[i].Elements)
		t.Sets[i].Jumps = slices.Clone(t.Sets[i].Jumps)
	}
	slices.SortStableFunc(t.Sets, func(a, b Set) int { return cmp.Compare(a.Name, b.Name) })
	t.Counters = slices.Clone(t.Counters)
	slices.Sort(t.Counters)
	return t
}

// Clone returns a deep copy of rs in its own order.
func Clone(rs *Ruleset) *Ruleset {
	out := &Ruleset{Backend: rs.Backend, Tables: slices.Clone(rs.Tables)}
	for i := range out.Tables {
		t := &out.Tables[i]
		t.Chains = slices.Clone(t.Chains)
		for j := range t.Chains {
			t.Chains[j].Rules = slices.Clone(t.Chains[j].Rules)
		}
		t.Sets = slices.Clone(t.Sets)
		for j := range t.Sets {
			t.Sets[j].Flags = slices.Clone(t.Sets[j].Flags)
			t.Sets[j].Elements = slices.Clone(t.Sets[j].Elements)
			t.Sets[j].Jumps = slices.Clone(t.Sets[j].Jumps)
		}
		t.Counters = slices.Clone(t.Counters)
	}
	return out
}
