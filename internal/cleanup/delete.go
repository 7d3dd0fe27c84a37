package cleanup

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ownership"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// restorable reports whether a rule's text can stand on one line of
// iptables-restore input. A comment with a newline (anyone with NET_ADMIN
// can set one) cannot: restore reads line by line, and written as is the
// rest of the comment would be read as commands of our own transaction.
func restorable(text string) bool { return !strings.ContainsAny(text, "\n\r") }

// deletions are the restore lines that remove jumps from one table: by
// rule text where it fits on a line (the kernel then checks it is the same
// rule), else by the rule's number in the live read. Numbered deletions go
// first and from the bottom of each chain up, so each number still points
// at the rule read. Should the chain have changed since, a wrong rule may
// go but the jump stays, and the -X of its target then fails the whole
// transaction, which changes nothing.
func deletions(rs *rules.Ruleset, fam rules.Family, table string, jumps []ownership.JumpRef) []string {
	type numbered struct {
		chain string
		n     int
	}
	var byNumber []numbered
	var bySpec []string
	taken := map[numbered]bool{}
	for _, j := range jumps {
		if restorable(j.Rule.Text) {
			bySpec = append(bySpec, fmt.Sprintf("-D %s %s", j.Chain, j.Rule.Text))
			continue
		}
		for i, r := range liveRules(rs, fam, table, j.Chain) {
			d := numbered{j.Chain, i + 1}
			if r.Text == j.Rule.Text && !taken[d] {
				taken[d] = true
				byNumber = append(byNumber, d)
				break
			}
		}
	}
	slices.SortFunc(byNumber, func(a, b numbered) int {
		return cmp.Or(strings.Compare(a.chain, b.chain), b.n-a.n)
	})
	out := make([]string, 0, len(jumps))
	for _, d := range byNumber {
		out = append(out, fmt.Sprintf("-D %s %d", d.chain, d.n))
	}
	return append(out, bySpec...)
}

func liveRules(rs *rules.Ruleset, fam rules.Family, table, chain string) []rules.Rule {
	for _, t := range rs.Tables {
		if t.Family != fam || t.Name != table {
			continue
		}
		for _, c := range t.Chains {
			if c.Name == chain {
				return c.Rules
			}
		}
	}
	return nil
}

// printable shows a rule's text on one line: a planted newline must not
// start a line of its own in cleanup's report.
func printable(text string) string {
	return strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(text)
}
