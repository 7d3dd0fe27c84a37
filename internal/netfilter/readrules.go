package netfilter

import (
	"fmt"
	"slices"

	"github.com/mdlayher/netlink"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nfttext"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nl"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// dumpRules reads the rules of every chain of the tables, one dump per
// chain (nl.DumpChainRules says why). Each chain's rules are appended
// only by the worker that dumps the chain; the chain and set maps are
// only read meanwhile. The rules of chains skip names are only counted,
// without decoding their expressions, and share one array of bare NotRead
// rules at the end (they are all alike: most of a large ruleset, kept in
// one allocation); native nftables ones keep their Jump (nl.NFTJump), so
// a chain with a jump gets rules of its own. With shallow, other
// iptables-nft rules are NotRead with only their Jump and Comment
// (nl.XtJumpComment), as the in-process legacy reader gives them.
func dumpRules(conn *nl.Conn, b backend.Backend, readers []*tableReader, shallow bool, skip func(chain string) bool) error {
	type job struct {
		r       *tableReader
		c       *rules.Chain
		isChain func(string) bool
		skipped bool
		n       int // rules counted in a skipped chain
		// jumps are the rules of a skipped native nftables chain that
		// jump, by index.
		jumps []indexedJump
	}
	chains := 0
	for _, r := range readers {
		chains += len(r.table.Chains)
	}
	jobs, refs := make([]job, 0, chains), make([]nl.ChainRef, 0, chains)
	for _, r := range readers {
		isChain := func(n string) bool { _, ok := r.chains[n]; return ok }
		for ci := range r.table.Chains {
			c := &r.table.Chains[ci]
			jobs = append(jobs, job{r: r, c: c, isChain: isChain, skipped: skip != nil && skip(c.Name)})
			refs = append(refs, nl.ChainRef{Family: r.fam, Table: r.table.Name, Chain: c.Name})
		}
	}
	err := nl.DumpChainRules(conn, refs, func(i int, m netlink.Message) error {
		j := &jobs[i]
		if j.skipped {
			if b == backend.NFTables {
				jump, err := nl.NFTJump(m)
				if err != nil {
					return fmt.Errorf("rule in %s %s: %w", j.r.table.Name, j.c.Name, err)
				}
				if len(jump) > 0 {
					j.jumps = append(j.jumps, indexedJump{j.n, j.r.chainName(jump)})
				}
			}
			j.n++
			return nil
		}
		rule, err := j.r.rule(b, j.c.Name, m, j.isChain, shallow)
		if err != nil {
			return fmt.Errorf("rule: %w", err)
		}
		j.c.Rules = append(j.c.Rules, rule)
		return nil
	})
	if err != nil {
		return err
	}
	most := 0
	for _, j := range jobs {
		most = max(most, j.n)
	}
	notRead := make([]rules.Rule, most)
	for i := range notRead {
		notRead[i].NotRead = true
	}
	for _, j := range jobs {
		switch {
		case len(j.jumps) > 0:
			j.c.Rules = slices.Clone(notRead[:j.n])
			for _, ij := range j.jumps {
				j.c.Rules[ij.i].Jump = ij.jump
			}
		case j.n > 0:
			j.c.Rules = notRead[:j.n:j.n] // capped: an append copies
		}
	}
	return nil
}

// chainName is name as a string: the table's own chain name when it has
// that chain (thousands of jumps then share the chains' names), else a
// copy.
func (r *tableReader) chainName(name []byte) string {
	if i, ok := r.chains[string(name)]; ok {
		return r.table.Chains[i].Name
	}
	return string(name)
}

// indexedJump is the Jump of rule i of a skipped chain.
type indexedJump struct {
	i    int
	jump string
}

// rule reads one rule message of chain of the table: its Jump and
// Comment for a shallow iptables-nft read, else rendered whole.
func (r *tableReader) rule(b backend.Backend, chain string, m netlink.Message, isChain func(string) bool, shallow bool) (rules.Rule, error) {
	if b == backend.IptablesNFT && shallow {
		jump, comment, err := nl.XtJumpComment(m, r.table.Name, chain, isChain)
		return rules.Rule{NotRead: true, Jump: jump, Comment: comment}, err
	}
	nr, err := nl.DecodeRule(m)
	if err != nil {
		return rules.Rule{}, err
	}
	if nr.Table != r.table.Name || nr.Chain != chain {
		return rules.Rule{}, fmt.Errorf("asked the kernel for the rules of chain %s %s, got one of %s %s", r.table.Name, chain, nr.Table, nr.Chain)
	}
	if b == backend.IptablesNFT {
		return nfttext.IptablesRule(nr, isChain), nil
	}
	return nfttext.NFTRule(nr, func(n string) *nl.Set { return r.sets[n] }), nil
}
