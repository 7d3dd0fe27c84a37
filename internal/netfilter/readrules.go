package netfilter

import (
	"fmt"

	"github.com/mdlayher/netlink"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nfttext"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nl"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// dumpRules reads the rules of every chain of the tables, one dump per
// chain (nl.DumpChainRules says why). Each chain's rules are appended
// only by the worker that dumps the chain; the chain and set maps are
// only read meanwhile. The rules of chains skip names are counted, each
// kept as a bare NotRead rule, without decoding their expressions; with
// shallow, other iptables-nft rules are NotRead with only their Jump and
// Comment (nl.XtJumpComment), as the in-process legacy reader gives them.
func dumpRules(conn *nl.Conn, b backend.Backend, readers []*tableReader, shallow bool, skip func(chain string) bool) error {
	type job struct {
		r       *tableReader
		c       *rules.Chain
		isChain func(string) bool
		skipped bool
	}
	var (
		jobs []job
		refs []nl.ChainRef
	)
	for _, r := range readers {
		isChain := func(n string) bool { _, ok := r.chains[n]; return ok }
		for ci := range r.table.Chains {
			c := &r.table.Chains[ci]
			jobs = append(jobs, job{r, c, isChain, skip != nil && skip(c.Name)})
			refs = append(refs, nl.ChainRef{Family: r.fam, Table: r.table.Name, Chain: c.Name})
		}
	}
	return nl.DumpChainRules(conn, refs, func(i int, m netlink.Message) error {
		j := jobs[i]
		rule, err := j.r.rule(b, j.c.Name, m, j.isChain, shallow, j.skipped)
		if err != nil {
			return fmt.Errorf("rule: %w", err)
		}
		j.c.Rules = append(j.c.Rules, rule)
		return nil
	})
}

// rule reads one rule message of chain of the table: counted only when
// skipped, its Jump and Comment for a shallow iptables-nft read, else
// rendered whole.
func (r *tableReader) rule(b backend.Backend, chain string, m netlink.Message, isChain func(string) bool, shallow, skipped bool) (rules.Rule, error) {
	switch {
	case skipped:
		return rules.Rule{NotRead: true}, nil
	case b == backend.IptablesNFT && shallow:
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
