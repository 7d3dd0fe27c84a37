package rules

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Difference is one way got differs from want, located by table, chain or
// set, in words an operator can act on.
type Difference struct {
	Family Family `json:"family"`
	Table  string `json:"table"`
	Chain  string `json:"chain,omitempty"`
	Set    string `json:"set,omitempty"`
	What   string `json:"what"`
}

func (d Difference) String() string {
	where := string(d.Family) + " table " + d.Table
	if d.Chain != "" {
		where += " chain " + d.Chain
	}
	if d.Set != "" {
		where += " set " + d.Set
	}
	return where + ": " + d.What
}

// Diff compares two rulesets exactly: tables, chain headers, every rule in
// order, sets and their elements. It is the generic comparison for
// round-trips and node-to-node diffs; verify's "is the skeleton there"
// check is looser and lives in internal/verify.
func Diff(want, got *Ruleset) []Difference {
	w, g := Normalize(want), Normalize(got)
	var out []Difference
	pairByKey(w.Tables, g.Tables, tableKey,
		func(wt, gt Table) { out = append(out, diffTable(wt, gt)...) },
		func(wt Table) {
			out = append(out, Difference{Family: wt.Family, Table: wt.Name, What: "table missing"})
		},
		func(gt Table) {
			out = append(out, Difference{Family: gt.Family, Table: gt.Name, What: "unexpected table"})
		})
	return out
}

func tableKey(t Table) string { return string(t.Family) + "/" + t.Name }

func diffTable(w, g Table) []Difference {
	var out []Difference
	add := func(chain, set, format string, args ...any) {
		out = append(out, Difference{Family: w.Family, Table: w.Name, Chain: chain, Set: set, What: fmt.Sprintf(format, args...)})
	}
	if w.Comment != g.Comment {
		add("", "", "comment %q, want %q", g.Comment, w.Comment)
	}
	pairByKey(w.Chains, g.Chains, func(c Chain) string { return c.Name },
		func(wc, gc Chain) {
			if wh, gh := chainHeader(wc), chainHeader(gc); wh != gh {
				add(wc.Name, "", "chain is %q, want %q", gh, wh)
			}
			wr, gr := ruleTexts(wc), ruleTexts(gc)
			if !slices.Equal(wr, gr) {
				add(wc.Name, "", "rules differ:\n  want:\n    %s\n  got:\n    %s", strings.Join(wr, "\n    "), strings.Join(gr, "\n    "))
			}
		},
		func(wc Chain) { add(wc.Name, "", "chain missing") },
		func(gc Chain) { add(gc.Name, "", "unexpected chain") })
	pairByKey(w.Sets, g.Sets, func(s Set) string { return s.Name },
		func(ws, gs Set) {
			if wd, gd := setDecl("", ws), setDecl("", gs); wd != gd {
				add("", ws.Name, "set is %q, want %q", gd, wd)
			}
			if we, ge := ws.ShownElements(), gs.ShownElements(); !slices.Equal(we, ge) {
				add("", ws.Name, "elements differ: want %s, got %s", elementCount(ws), elementCount(gs))
			}
		},
		func(ws Set) { add("", ws.Name, "set missing") },
		func(gs Set) { add("", gs.Name, "unexpected set") })
	pairByKey(w.Counters, g.Counters, func(n string) string { return n },
		func(string, string) {},
		func(n string) { add("", "", "counter %s missing", n) },
		func(n string) { add("", "", "unexpected counter %s", n) })
	return out
}

// pairByKey pairs want's and got's elements by key: same gets each pair
// and missing each element of want that got lacks, both in want's order;
// extra gets each element of got that want lacks, in got's order.
func pairByKey[T any](want, got []T, key func(T) string, same func(w, g T), missing, extra func(T)) {
	unmatched := make(map[string]T, len(got))
	for _, g := range got {
		unmatched[key(g)] = g
	}
	for _, w := range want {
		g, ok := unmatched[key(w)]
		if !ok {
			missing(w)
			continue
		}
		delete(unmatched, key(w))
		same(w, g)
	}
	for _, g := range got {
		if _, left := unmatched[key(g)]; left {
			extra(g)
		}
	}
}

func chainHeader(c Chain) string {
	return fmt.Sprintf("hook=%s type=%s priority=%d policy=%s comment=%q", c.Hook, c.Type, c.Priority, c.Policy, c.Comment)
}

func ruleTexts(c Chain) []string {
	out := make([]string, len(c.Rules))
	for i, r := range c.Rules {
		out[i] = r.Shown()
	}
	return out
}

// elementCount is how many elements set s holds, as Diff says it.
func elementCount(s Set) string {
	if s.NotRead {
		return "not read"
	}
	return strconv.Itoa(len(s.Elements))
}
