package netfilter

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nl"
)

// CompatTable is one nftables table whose rules hold xtables extensions:
// "match" and "target" expressions, which the kernel runs through
// nft_compat and the xt_* modules. iptables-nft (and ebtables-nft,
// arptables-nft) writes every extension nft has no native form of that
// way: -m comment, -m conntrack, -j MASQUERADE.
type CompatTable struct {
	Family string `json:"family"` // nft's word: ip, ip6, inet, arp, bridge, netdev
	Table  string `json:"table"`
	// Rules counts the rules holding at least one extension.
	Rules int `json:"rules"`
	// Matches and Targets are the extensions' names, sorted.
	Matches []string `json:"matches,omitempty"`
	Targets []string `json:"targets,omitempty"`
	// Chains are the chains holding those rules, sorted (for the caller
	// to say whose they are; not printed).
	Chains []string `json:"-"`
}

// NFTCompat lists the nftables tables, every family, whose rules use
// nft_compat, in the calling thread's network namespace: a table, a
// chain and one rule dump per chain on one socket, one after the other
// and on the calling goroutine, so that a caller that entered another
// namespace on a locked thread reads that namespace (DumpChainRules'
// extra sockets would be opened by other threads, in other namespaces).
// While nf_tables is not there no rule can exist and nothing is asked
// (NFTablesAbsent). parallel dumps the chains over up to one socket per
// CPU (nl.DumpChainRules), which only a caller whose every thread is in
// the namespace to read may ask for: the host's, where a large
// iptables-nft ruleset has tens of thousands of chains.
func NFTCompat(ctx context.Context, parallel bool) ([]CompatTable, error) {
	if NFTablesAbsent(hostRoot) != "" {
		return nil, nil
	}
	conn, err := nl.Dial()
	if err != nil {
		return nil, wrapNetlink(backend.IptablesNFT, "opening a netfilter netlink socket", err)
	}
	defer conn.Close()
	var chains []nl.Chain
	err = conn.Execute(unix.NFT_MSG_GETCHAIN, netlink.Dump, unix.AF_UNSPEC, nil, func(m netlink.Message) error {
		c, err := nl.DecodeChain(m)
		if err != nil {
			return fmt.Errorf("chain: %w", err)
		}
		chains = append(chains, c)
		return nil
	})
	if err != nil {
		return nil, wrapNetlink(backend.IptablesNFT, "listing chains", err)
	}
	var out []CompatTable
	if parallel {
		err = compatParallel(conn, chains, &out)
	} else {
		for _, c := range chains {
			if err = ctx.Err(); err != nil {
				return nil, err
			}
			if err = compatChain(conn, c, &out); err != nil {
				break
			}
		}
	}
	if err != nil {
		return nil, wrapNetlink(backend.IptablesNFT, "dumping rules", err)
	}
	for i := range out {
		slices.Sort(out[i].Matches)
		out[i].Matches = slices.Compact(out[i].Matches)
		slices.Sort(out[i].Targets)
		out[i].Targets = slices.Compact(out[i].Targets)
		slices.Sort(out[i].Chains)
		out[i].Chains = slices.Compact(out[i].Chains)
	}
	slices.SortFunc(out, func(a, b CompatTable) int {
		return cmp.Or(cmp.Compare(a.Family, b.Family), cmp.Compare(a.Table, b.Table))
	})
	return out, nil
}

// compatChain dumps one chain's rules and adds those holding extensions
// to their table's entry in out.
func compatChain(conn *nl.Conn, c nl.Chain, out *[]CompatTable) error {
	req := []netlink.Attribute{
		{Type: unix.NFTA_RULE_TABLE, Data: append([]byte(c.Table), 0)},
		{Type: unix.NFTA_RULE_CHAIN, Data: append([]byte(c.Name), 0)},
	}
	return conn.Execute(unix.NFT_MSG_GETRULE, netlink.Dump, c.Family, req, func(m netlink.Message) error {
		return addCompat(m, c, out)
	})
}

// compatParallel is compatChain for every chain over nl.DumpChainRules'
// sockets; the rules of different chains arrive concurrently, so each
// chain's findings are kept apart and merged in chain order after.
func compatParallel(conn *nl.Conn, chains []nl.Chain, out *[]CompatTable) error {
	refs := make([]nl.ChainRef, len(chains))
	for i, c := range chains {
		refs[i] = nl.ChainRef{Family: c.Family, Table: c.Table, Chain: c.Name}
	}
	per := make([][]CompatTable, len(chains))
	err := nl.DumpChainRules(conn, refs, func(i int, m netlink.Message) error { return addCompat(m, chains[i], &per[i]) })
	for _, found := range per {
		for _, f := range found {
			t := compatEntry(out, f.Family, f.Table)
			t.Rules += f.Rules
			t.Matches = append(t.Matches, f.Matches...)
			t.Targets = append(t.Targets, f.Targets...)
			t.Chains = append(t.Chains, f.Chains...)
		}
	}
	return err
}

// addCompat adds rule message m of chain c to out when it holds extensions.
func addCompat(m netlink.Message, c nl.Chain, out *[]CompatTable) error {
	fam := nl.FamilyName(c.Family)
	r, err := nl.DecodeRule(m)
	if err != nil {
		return err
	}
	var t *CompatTable
	for _, e := range r.Exprs {
		if e.Name != "match" && e.Name != "target" {
			continue
		}
		xt, ok := nl.DecodeExpr(c.Family, e).(nl.Xt)
		if !ok {
			continue
		}
		if t == nil {
			t = compatEntry(out, fam, c.Table)
			t.Rules++
			// One chain's rules come together: only the last can be it.
			if n := len(t.Chains); n == 0 || t.Chains[n-1] != c.Name {
				t.Chains = append(t.Chains, c.Name)
			}
		}
		names := &t.Matches
		if xt.Target {
			names = &t.Targets
		}
		if !slices.Contains(*names, xt.Name) {
			*names = append(*names, xt.Name)
		}
	}
	return nil
}

func compatEntry(out *[]CompatTable, fam, table string) *CompatTable {
	for i := range *out {
		if (*out)[i].Family == fam && (*out)[i].Table == table {
			return &(*out)[i]
		}
	}
	*out = append(*out, CompatTable{Family: fam, Table: table})
	return &(*out)[len(*out)-1]
}
