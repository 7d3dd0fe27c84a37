package netfilter

import (
	"slices"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// ReadOptions say how much of a ruleset a read returns. System and Fake
// honour them alike, so a test sees the shapes production sees.
type ReadOptions struct {
	// Shallow skips the elements of nftables sets: anonymous ones
	// (kube-proxy's per-service endpoint vmaps), whose per-set lookups
	// by the kernel, a linear walk over the table's sets, make listing
	// every one quadratic in the number of services, for nft too; and
	// named ones (service-ips, service-nodeports, ...), which the checks
	// know by name only. A rule using an anonymous set then shows
	// "{ UNSUPPORTED[elements not read] }", and a named set is NotRead;
	// neither loads. verify, which checks the skeleton, sets it; render
	// live does not. Legacy
	// tables are then read in-process (no save tool), and every legacy
	// and iptables-nft rule is NotRead with only its Jump and Comment.
	Shallow bool
	// SkipChain, with Shallow, names iptables chains (legacy and
	// iptables-nft) whose rules are only counted (NotRead, nothing else):
	// verify sets kube-proxy's per-service chains, most of a large
	// ruleset, which it never looks inside.
	SkipChain func(chain string) bool
	// SkipNFTablesChain, with Shallow, is SkipChain for native nftables
	// chains (kube-proxy's names them differently): their rules are only
	// counted, with the chain each one jumps to or goes to (Jump), which
	// spares rendering most of a large table's rules.
	SkipNFTablesChain func(chain string) bool
	// ReadJumps, with Shallow, names the nftables verdict maps whose
	// elements are read for the chains they jump or go to (Set.Jumps), not
	// kept: verify follows kube-proxy's Service dispatch maps to the
	// chains their elements lead to.
	ReadJumps func(set string) bool
}

// readsJumps says whether a read with o learns where the elements of
// named set name lead.
func (o ReadOptions) readsJumps(name string) bool {
	return o.Shallow && o.ReadJumps != nil && o.ReadJumps(name)
}

// elementJumps are the chains elements jump or go to, sorted, each once.
func elementJumps(elements []string) []string {
	var out []string
	for _, e := range elements {
		if j := rules.ElementJump(e); j != "" {
			out = append(out, j)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// elementsNotRead is what a shallow read shows for an anonymous set.
var elementsNotRead = "{ " + rules.Unsupported("elements not read") + " }"

// shape turns a whole ruleset into what a read with o returns (the Fake's
// answer); rs is a copy the caller owns.
func (o ReadOptions) shape(rs *rules.Ruleset) *rules.Ruleset {
	if !o.Shallow {
		return rs
	}
	for ti := range rs.Tables {
		for si := range rs.Tables[ti].Sets {
			s := &rs.Tables[ti].Sets[si]
			if o.readsJumps(s.Name) {
				s.Jumps = elementJumps(s.Elements)
			}
			s.Elements, s.NotRead = nil, true
		}
		for ci := range rs.Tables[ti].Chains {
			c := &rs.Tables[ti].Chains[ci]
			for ri, r := range c.Rules {
				switch rs.Backend {
				case backend.IptablesLegacy, backend.IptablesNFT:
					if o.SkipChain != nil && o.SkipChain(c.Name) {
						c.Rules[ri] = rules.Rule{NotRead: true}
					} else {
						c.Rules[ri] = rules.Rule{NotRead: true, Jump: r.Jump, Comment: r.Comment}
					}
				case backend.NFTables:
					if o.SkipNFTablesChain != nil && o.SkipNFTablesChain(c.Name) {
						c.Rules[ri] = rules.Rule{NotRead: true, Jump: r.Jump}
					} else {
						c.Rules[ri].Text = withoutElements(r.Text)
					}
				}
			}
		}
	}
	return rs
}

// withoutElements replaces each inline anonymous set "{ ... }" of an nft
// rule (outside quoted strings) by the shallow marker.
func withoutElements(text string) string {
	if !strings.Contains(text, "{") {
		return text
	}
	var b strings.Builder
	quoted, depth := false, 0
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '\\' && quoted && i+1 < len(text):
			if depth == 0 {
				b.WriteString(text[i : i+2])
			}
			i++
			continue
		case c == '"':
			quoted = !quoted
		case c == '{' && !quoted:
			if depth == 0 {
				b.WriteString(elementsNotRead)
			}
			depth++
			continue
		case c == '}' && !quoted && depth > 0:
			depth--
			continue
		}
		if depth == 0 {
			b.WriteByte(c)
		}
	}
	return b.String()
}
