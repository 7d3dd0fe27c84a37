// Package cleanup removes kube-proxy's rules from one backend: the rules a
// backend switch stranded there, which kube-proxy itself never removes
// (it cleans only the backend its wrapper chose). Only the objects of the
// distribution's owner group go (ownership.GroupFor: kube-proxy's on RKE2;
// kube-proxy's, flannel's and kube-router's on k3s, which move with it):
// never kubelet's chains (KUBE-IPTABLES-HINT, KUBE-KUBELET-CANARY,
// KUBE-FIREWALL), never anyone else's.
package cleanup

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ownership"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// Plan is what one cleanup removes from one backend.
type Plan struct {
	Backend backend.Backend `json:"backend"`
	// Removals lists each removed object, one plain line each, in the order
	// they go.
	Removals []string `json:"removals"`
	// Scripts is the one transaction per family: iptables-restore --noflush
	// input for the iptables backends, nft -f input for nftables.
	Scripts map[rules.Family]string `json:"scripts"`
	// Owners are whose objects Removals holds, in the group's order.
	Owners []ownership.Owner `json:"owners,omitempty"`

	// group is whose objects were looked for (the report's "no rules of").
	group ownership.Group
}

// Empty reports whether there is nothing to remove.
func (p *Plan) Empty() bool { return len(p.Removals) == 0 }

// Compute plans the removal of kube-proxy's objects from rs, a live read of
// backend rs.Backend: RKE2's group.
func Compute(rs *rules.Ruleset) *Plan { return ComputeGroup(rs, ownership.KubeProxyOnly) }

// ComputeGroup plans the removal of the objects of g's writers from rs.
// Every chain or jump of a writer other than kube-proxy says whose it is.
func ComputeGroup(rs *rules.Ruleset, g ownership.Group) *Plan {
	p := &Plan{Backend: rs.Backend, Removals: []string{}, Scripts: map[rules.Family]string{}, group: g}
	owned := g.Find(rs, rs.Backend == backend.NFTables)
	went := map[ownership.Owner]bool{}
	if rs.Backend == backend.NFTables {
		for _, t := range owned.Tables {
			fam := rules.NFTFamily(t.Family)
			went[ownership.KubeProxy] = true
			p.Removals = append(p.Removals, fmt.Sprintf("table %s %s with all its chains, sets and maps", fam, t.Table))
			p.Scripts[t.Family] += fmt.Sprintf("delete table %s %s\n", fam, t.Table)
		}
		p.Owners = ownersIn(g, went)
		return p
	}
	for _, fam := range []rules.Family{rules.IPv4, rules.IPv6} {
		var b strings.Builder
		for _, table := range tablesOf(owned, fam) {
			chains := chainsIn(owned.Chains, fam, table)
			jumps := jumpsIn(owned.Jumps, fam, table)
			// In --noflush mode a chain line flushes an existing chain, so
			// every owned chain is empty before any is deleted and no
			// reference between them blocks the -X.
			fmt.Fprintf(&b, "*%s\n", table)
			for _, c := range chains {
				fmt.Fprintf(&b, ":%s - [0:0]\n", c)
			}
			for _, d := range deletions(rs, fam, table, jumps) {
				b.WriteString(d + "\n")
			}
			for _, j := range jumps {
				o := j.Owner()
				went[o] = true
				p.Removals = append(p.Removals, fmt.Sprintf("%s %s rule: -A %s %s%s", fam, table, j.Chain, printable(j.Rule.Text), whose(o)))
			}
			for _, c := range chains {
				o := ownership.Of(table, c)
				went[o] = true
				fmt.Fprintf(&b, "-X %s\n", c)
				p.Removals = append(p.Removals, fmt.Sprintf("%s %s chain %s%s", fam, table, c, whose(o)))
			}
			b.WriteString("COMMIT\n")
		}
		if b.Len() > 0 {
			p.Scripts[fam] = b.String()
		}
	}
	p.Owners = ownersIn(g, went)
	return p
}

// whose marks a removal that is not kube-proxy's with its writer, so a k3s
// operator reads which chains were flannel's or kube-router's; RKE2's
// lines (kube-proxy's alone) stay as they always were.
func whose(o ownership.Owner) string {
	if o == ownership.KubeProxy {
		return ""
	}
	return " (" + string(o) + ")"
}

// ownersIn are g's writers with an object in went, in g's order.
func ownersIn(g ownership.Group, went map[ownership.Owner]bool) []ownership.Owner {
	var out []ownership.Owner
	for _, o := range g {
		if went[o] {
			out = append(out, o)
		}
	}
	return out
}

// tablesOf lists the tables of fam holding owned chains or jumps, in
// iptables-save order.
func tablesOf(o ownership.Owned, fam rules.Family) []string {
	seen := map[string]bool{}
	for _, c := range o.Chains {
		if c.Family == fam {
			seen[c.Table] = true
		}
	}
	for _, j := range o.Jumps {
		if j.Family == fam {
			seen[j.Table] = true
		}
	}
	var out []string
	for _, t := range []string{"raw", "mangle", "nat", "filter", "security"} {
		if seen[t] {
			out = append(out, t)
		}
	}
	return out
}

func chainsIn(refs []ownership.ChainRef, fam rules.Family, table string) []string {
	var out []string
	for _, c := range refs {
		if c.Family == fam && c.Table == table {
			out = append(out, c.Chain)
		}
	}
	slices.Sort(out)
	return out
}

func jumpsIn(refs []ownership.JumpRef, fam rules.Family, table string) []ownership.JumpRef {
	var out []ownership.JumpRef
	for _, j := range refs {
		if j.Family == fam && j.Table == table {
			out = append(out, j)
		}
	}
	return out
}
