package ownership

import (
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// ChainRef names one chain of a live ruleset.
type ChainRef struct {
	Family rules.Family `json:"family"`
	Table  string       `json:"table"`
	Chain  string       `json:"chain"`
}

func (c ChainRef) String() string { return string(c.Family) + " " + c.Table + " " + c.Chain }

// JumpRef is a rule in a chain kube-proxy does not own (a built-in chain)
// that jumps into one it does.
type JumpRef struct {
	ChainRef
	Rule rules.Rule `json:"rule"`
}

// Owned is kube-proxy's and kubelet's footprint found in one live backend.
type Owned struct {
	// Tables are kube-proxy's nftables tables (family and name).
	Tables []ChainRef `json:"tables,omitempty"`
	// Chains are the iptables chains of the group's writers (kube-proxy's
	// alone unless Group.Find was asked for more), or the chains of
	// kube-proxy's nftables tables.
	Chains []ChainRef `json:"chains,omitempty"`
	// Jumps lead from chains outside the group into the group's chains;
	// they also hold the rules a member writes into a chain outside the
	// group that its comment names as the member's (kube-router's accept
	// of policy-marked traffic in the built-ins), which go with it.
	Jumps []JumpRef `json:"jumps,omitempty"`
	// Rules counts the rules in Chains plus Jumps.
	Rules int `json:"rules"`
	// KubeletHints are kubelet's hint chains (mangle KUBE-IPTABLES-HINT,
	// KUBE-KUBELET-CANARY).
	KubeletHints []ChainRef `json:"kubelet_hints,omitempty"`
}

// Empty reports whether no kube-proxy object was found.
func (o Owned) Empty() bool { return len(o.Tables) == 0 && len(o.Chains) == 0 && len(o.Jumps) == 0 }

// Find walks a live ruleset for kube-proxy's footprint alone: what RKE2's
// readers count (KubeProxyOnly.Find).
func Find(rs *rules.Ruleset, nftables bool) Owned { return KubeProxyOnly.Find(rs, nftables) }

// Find walks a live ruleset for the group's footprint. nftables says whether rs comes from the
// native nftables backend (only tables named vocab.NFTablesTable count) or
// from an iptables backend (only iptables tables count: an nftables reader
// may also return iptables-nft's tables, and an iptables-nft reader must
// not count kube-proxy's native table). Empty legacy tables
// created by a probe are not evidence of anything and are not reported.
func (g Group) Find(rs *rules.Ruleset, nftables bool) Owned {
	var o Owned
	if rs == nil {
		return o
	}
	for _, t := range rs.Tables {
		if nftables {
			if t.Name != vocab.NFTablesTable {
				continue
			}
			o.Tables = append(o.Tables, ChainRef{Family: t.Family, Table: t.Name})
			for _, c := range t.Chains {
				o.Chains = append(o.Chains, ChainRef{Family: t.Family, Table: t.Name, Chain: c.Name})
				o.Rules += len(c.Rules)
			}
			continue
		}
		if !vocab.IsIptablesTable(t.Name) {
			continue
		}
		owned := map[string]bool{}
		for _, c := range t.Chains {
			ref := ChainRef{Family: t.Family, Table: t.Name, Chain: c.Name}
			switch owner := Of(t.Name, c.Name); {
			case owner == Kubelet:
				if vocab.IsKubeletHint(rs.Backend == backend.IptablesLegacy, t.Name, c.Name) {
					o.KubeletHints = append(o.KubeletHints, ref)
				}
			case owner != Nobody && g.Has(owner):
				owned[c.Name] = true
				o.Chains = append(o.Chains, ref)
				o.Rules += len(c.Rules)
			}
		}
		for _, c := range t.Chains {
			if owned[c.Name] {
				continue
			}
			for _, r := range c.Rules {
				if target := JumpTarget(r); owned[target] || g.commentOwned(r) {
					o.Jumps = append(o.Jumps, JumpRef{ChainRef: ChainRef{Family: t.Family, Table: t.Name, Chain: c.Name}, Rule: r})
					o.Rules++
				}
			}
		}
	}
	return o
}

// Owner is whose j is: the writer of the chain it jumps into, else the one
// its comment names (a member's own rule in a built-in chain).
func (j JumpRef) Owner() Owner {
	if o := Of(j.Table, JumpTarget(j.Rule)); o != Nobody {
		return o
	}
	return Owner(cni.RuleCommentOwner(j.Rule.Comment))
}

// JumpTarget is r.Jump, or the -j/-g target in its text when a reader left
// Jump empty.
func JumpTarget(r rules.Rule) string {
	if r.Jump != "" {
		return r.Jump
	}
	f := strings.Fields(r.Text)
	for i := 0; i+1 < len(f); i++ {
		if f[i] == "-j" || f[i] == "-g" || f[i] == "--jump" || f[i] == "--goto" {
			return f[i+1]
		}
	}
	return ""
}

// commentOwned reports whether r's comment names a CNI member of g as its
// writer (cni.RuleCommentOwner). kube-proxy's group has no such member, so
// RKE2's footprint is its chains and the jumps into them alone.
func (g Group) commentOwned(r rules.Rule) bool {
	o := Owner(cni.RuleCommentOwner(r.Comment))
	return o != Nobody && g.Has(o)
}
