package census

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ownership"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// legacyTables splits what a namespace's legacy tables hold: tables with a
// rule, a chain of a writer's or a policy other than ACCEPT, and the empty
// rest by name.
func legacyTables(tables []rules.Table) (holding []LegacyTable, empty []string) {
	for _, t := range tables {
		lt := LegacyTable{Family: t.Family, Table: t.Name}
		for _, c := range t.Chains {
			lt.Rules += len(c.Rules)
			builtin := c.Hook != ""
			if !builtin {
				lt.UserChains++
			}
			if builtin && c.Policy != "" && c.Policy != "ACCEPT" {
				lt.Policies = append(lt.Policies, c.Name+" "+c.Policy)
			}
			if len(c.Rules) > 0 || !builtin {
				w := string(ownership.Of(t.Name, c.Name))
				if w == "" {
					w = "unknown"
				}
				if !slices.Contains(lt.Writers, w) {
					lt.Writers = append(lt.Writers, w)
				}
			}
		}
		if lt.Rules == 0 && lt.UserChains == 0 && len(lt.Policies) == 0 {
			empty = append(empty, string(t.Family)+" "+t.Name)
			continue
		}
		slices.Sort(lt.Writers)
		if lt.Writers == nil {
			lt.Writers = []string{"unknown"} // a policy alone: set by whoever ran iptables -P
		}
		holding = append(holding, lt)
	}
	return holding, empty
}

// judge fills the verdict from c.Namespaces: no when any namespace holds
// legacy rules (a definite answer even if others were not read), unknown
// when one could not be read or a bounded round left some, else yes.
func (c *Census) judge() {
	c.HeldBackBy, c.Unread, c.NFTCompat = []Ref{}, nil, 0
	for _, n := range c.Namespaces {
		switch {
		case n.Error != "":
			c.Unread = append(c.Unread, n.ref())
		case len(n.Legacy) > 0:
			c.HeldBackBy = append(c.HeldBackBy, n.ref())
		}
		if len(n.NFTCompat) > 0 {
			c.NFTCompat++
		}
	}
	c.LegacyFree = false
	switch {
	case len(c.HeldBackBy) > 0:
		c.Verdict = No
		var who []string
		for i, r := range c.HeldBackBy {
			if i == maxNamed {
				who = append(who, fmt.Sprintf("and %d more", len(c.HeldBackBy)-maxNamed))
				break
			}
			who = append(who, r.Who()+": "+strings.Join(r.Tables, ", "))
		}
		c.Reason = fmt.Sprintf("%s hold%s rules in legacy xtables: %s", plural(len(c.HeldBackBy), "namespace"), verbS(len(c.HeldBackBy)), strings.Join(who, "; "))
	case len(c.Unread) > 0:
		c.Verdict = Unknown
		c.Reason = fmt.Sprintf("%s could not be read: %s (%s)", plural(len(c.Unread), "namespace"), c.Unread[0].Who(), c.Unread[0].Error)
	case c.NotVisited > 0:
		c.Verdict = Unknown
		c.Reason = fmt.Sprintf("%s were left for a later round (at most %d per round)", plural(c.NotVisited, "namespace"), len(c.Namespaces))
	default:
		c.Verdict, c.LegacyFree = Yes, true
		c.Reason = fmt.Sprintf("none of the %s holds a rule in legacy xtables", plural(len(c.Namespaces), "network namespace"))
	}
}

// maxNamed bounds the namespaces the reason names (the rows and the JSON
// name every one).
const maxNamed = 5

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func verbS(n int) string {
	if n == 1 {
		return "s"
	}
	return ""
}
