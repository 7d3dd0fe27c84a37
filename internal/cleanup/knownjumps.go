package cleanup

import (
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ownership"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
)

// ComputeKnownJumps plans the removal of g's objects from pre, an
// in-process read of an iptables backend, with the text of each jump into the group's chains taken from
// kube-proxy's own footprint (rules/expected: the same chain, target and
// comment), so no *-save runs. Its "-D" lines are checked by the kernel as
// a *-save's are: a live jump that differs from kube-proxy's (another
// version's, or another writer's rule with the same comment) matches no
// rule, the transaction fails whole and changes nothing, and the caller
// reads with *-save after all (switch's clean; `cleanup` still reads
// with *-save first). nil when a jump has no such text (k3s's
// flannel and kube-router, a comment kube-proxy never writes). The jumps
// of pre get their text in place.
func ComputeKnownJumps(pre *rules.Ruleset, g ownership.Group) *Plan {
	type key struct {
		fam                         rules.Family
		table, chain, jump, comment string
	}
	fp, err := expected.Render(expected.Options{Backend: pre.Backend})
	if err != nil {
		return nil
	}
	texts := map[key]string{}
	for _, t := range fp.Tables {
		for _, c := range t.Chains {
			for _, r := range c.Rules {
				k := key{t.Family, t.Name, c.Name, r.Jump, r.Comment}
				if had, ok := texts[k]; ok && had != r.Text {
					texts[k] = "" // two texts: neither is known, for good
					continue
				}
				texts[k] = r.Text
			}
		}
	}
	for ti := range pre.Tables {
		t := &pre.Tables[ti]
		for ci := range t.Chains {
			c := &t.Chains[ci]
			for ri, r := range c.Rules {
				if text := texts[key{t.Family, t.Name, c.Name, r.Jump, r.Comment}]; r.NotRead && r.Jump != "" && text != "" {
					c.Rules[ri] = rules.Rule{Text: text, Jump: r.Jump, Comment: r.Comment}
				}
			}
		}
	}
	for _, j := range g.Find(pre, false).Jumps {
		if j.Rule.NotRead || j.Rule.Text == "" {
			return nil
		}
	}
	return ComputeGroup(pre, g)
}
