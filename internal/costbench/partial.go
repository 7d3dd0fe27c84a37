package costbench

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// alwaysWritten are the chains kube-proxy's iptables proxier rewrites in
// every sync, partial or not (kubernetes pkg/proxy/iptables/proxier.go,
// syncProxyRules: the filter and nat "top-level" chains); per-service
// chains are written only when they changed. This is why a partial sync
// still grows with N: KUBE-SERVICES holds one rule per service port.
var alwaysWritten = map[string][]string{
	"filter": {"KUBE-SERVICES", "KUBE-EXTERNAL-SERVICES", "KUBE-FORWARD", "KUBE-NODEPORTS", "KUBE-PROXY-FIREWALL"},
	"nat":    {"KUBE-SERVICES", "KUBE-NODEPORTS", "KUBE-POSTROUTING", "KUBE-MARK-MASQ"},
}

// partialText is what a partial sync from before to after hands the loader
// for one family: for iptables an iptables-restore --noflush input with the
// always-written chains, the changed ones and -X for the gone ones; for
// nftables one nft -f transaction that adds new chains, flushes and refills
// changed ones, and flushes and deletes gone ones (as kube-proxy's nftables
// proxier does for a changed service).
func partialText(fp footprint, fam rules.Family) string {
	before, after := familyTables(fp.before, fam), familyTables(fp.after, fam)
	if fp.after.Backend == backend.NFTables {
		return partialNFT(before, after)
	}
	return partialIptables(before, after)
}

func familyTables(rs *rules.Ruleset, fam rules.Family) []rules.Table {
	var out []rules.Table
	for _, t := range rules.Normalize(rs).Tables {
		if t.Family == fam {
			out = append(out, t)
		}
	}
	return out
}

func chainIndex(t rules.Table) map[string]rules.Chain {
	m := map[string]rules.Chain{}
	for _, c := range t.Chains {
		m[c.Name] = c
	}
	return m
}

func tableNamed(ts []rules.Table, name string) rules.Table {
	for _, t := range ts {
		if t.Name == name {
			return t
		}
	}
	return rules.Table{Name: name}
}

func partialIptables(before, after []rules.Table) string {
	var b strings.Builder
	for _, t := range after {
		old := chainIndex(tableNamed(before, t.Name))
		var write []rules.Chain
		for _, c := range t.Chains {
			if rules.IsBuiltinChain(t.Name, c.Name) {
				continue
			}
			prev, existed := old[c.Name]
			if slices.Contains(alwaysWritten[t.Name], c.Name) || !existed || !slices.Equal(prev.Rules, c.Rules) {
				write = append(write, c)
			}
		}
		now := chainIndex(t)
		var gone []string
		for _, c := range tableNamed(before, t.Name).Chains {
			if _, ok := now[c.Name]; !ok && !rules.IsBuiltinChain(t.Name, c.Name) {
				gone = append(gone, c.Name)
			}
		}
		if len(write)+len(gone) == 0 {
			continue
		}
		b.WriteString("*" + t.Name + "\n")
		for _, c := range write {
			fmt.Fprintf(&b, ":%s - [0:0]\n", c.Name)
		}
		for _, name := range gone { // flushed here, deleted below
			fmt.Fprintf(&b, ":%s - [0:0]\n", name)
		}
		for _, c := range write {
			for _, r := range c.Rules {
				fmt.Fprintf(&b, "-A %s %s\n", c.Name, r.Text)
			}
		}
		for _, name := range gone {
			fmt.Fprintf(&b, "-X %s\n", name)
		}
		b.WriteString("COMMIT\n")
	}
	return b.String()
}

func partialNFT(before, after []rules.Table) string {
	var adds, refills, deletes strings.Builder
	for _, t := range after {
		prefix := rules.NFTFamily(t.Family) + " " + t.Name
		bt := tableNamed(before, t.Name)
		old := chainIndex(bt)
		for _, c := range t.Chains {
			prev, existed := old[c.Name]
			switch {
			case !existed:
				fmt.Fprintf(&adds, "add chain %s %s\n", prefix, c.Name)
				for _, r := range c.Rules {
					fmt.Fprintf(&adds, "add rule %s %s %s\n", prefix, c.Name, r.Text)
				}
			case !slices.Equal(prev.Rules, c.Rules):
				fmt.Fprintf(&refills, "flush chain %s %s\n", prefix, c.Name)
				for _, r := range c.Rules {
					fmt.Fprintf(&refills, "add rule %s %s %s\n", prefix, c.Name, r.Text)
				}
			}
		}
		now := chainIndex(t)
		for _, c := range bt.Chains {
			if _, ok := now[c.Name]; !ok {
				fmt.Fprintf(&deletes, "flush chain %s %s\ndelete chain %s %s\n", prefix, c.Name, prefix, c.Name)
			}
		}
		oldSets := map[string]rules.Set{}
		for _, s := range bt.Sets {
			oldSets[s.Name] = s
		}
		for _, s := range t.Sets {
			oldElems, newElems := elementSet(oldSets[s.Name].Elements), elementSet(s.Elements)
			for _, e := range s.Elements {
				if !oldElems[e] {
					fmt.Fprintf(&refills, "add element %s %s { %s }\n", prefix, s.Name, e)
				}
			}
			for _, e := range oldSets[s.Name].Elements {
				if !newElems[e] {
					fmt.Fprintf(&deletes, "delete element %s %s { %s }\n", prefix, s.Name, e)
				}
			}
		}
	}
	return adds.String() + refills.String() + deletes.String()
}

func elementSet(elems []string) map[string]bool {
	m := make(map[string]bool, len(elems))
	for _, e := range elems {
		m[e] = true
	}
	return m
}
