package rules

import (
	"fmt"
	"slices"
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
	gotTables := map[string]*Table{}
	for i := range g.Tables {
		gotTables[tableKey(g.Tables[i])] = &g.Tables[i]
	}
	for _, wt := range w.Tables {
		gt, ok := gotTables[tableKey(wt)]
		if !ok {
			out = append(out, Difference{Family: wt.Family, Table: wt.Name, What: "table missing"})
			continue
		}
		delete(gotTables, tableKey(wt))
		out = append(out, diffTable(wt, *gt)...)
	}
	for _, gt := range g.Tables {
		if _, extra := gotTables[tableKey(gt)]; extra {
			out = append(out, Difference{Family: gt.Family, Table: gt.Name, What: "unexpected table"})
		}
	}
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
	gotChains := map[string]Chain{}
	for _, c := range g.Chains {
		gotChains[c.Name] = c
	}
	for _, wc := range w.Chains {
		gc, ok := gotChains[wc.Name]
		if !ok {
			add(wc.Name, "", "chain missing")
			continue
		}
		delete(gotChains, wc.Name)
		if wh, gh := chainHeader(wc), chainHeader(gc); wh != gh {
			add(wc.Name, "", "chain is %q, want %q", gh, wh)
		}
		wr, gr := ruleTexts(wc), ruleTexts(gc)
		if !slices.Equal(wr, gr) {
			add(wc.Name, "", "rules differ:\n  want:\n    %s\n  got:\n    %s", strings.Join(wr, "\n    "), strings.Join(gr, "\n    "))
		}
	}
	for _, gc := range g.Chains {
		if _, extra := gotChains[gc.Name]; extra {
			add(gc.Name, "", "unexpected chain")
		}
	}
	gotSets := map[string]Set{}
	for _, s := range g.Sets {
		gotSets[s.Name] = s
	}
	for _, ws := range w.Sets {
		gs, ok := gotSets[ws.Name]
		if !ok {
			add("", ws.Name, "set missing")
			continue
		}
		delete(gotSets, ws.Name)
		if wd, gd := setDecl("", ws), setDecl("", gs); wd != gd {
			add("", ws.Name, "set is %q, want %q", gd, wd)
		}
		if !slices.Equal(ws.Elements, gs.Elements) {
			add("", ws.Name, "elements differ: want %d, got %d", len(ws.Elements), len(gs.Elements))
		}
	}
	for _, gs := range g.Sets {
		if _, extra := gotSets[gs.Name]; extra {
			add("", gs.Name, "unexpected set")
		}
	}
	return out
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
