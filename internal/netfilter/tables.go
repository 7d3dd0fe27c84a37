package netfilter

import (
	"context"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nl"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// NFTTables lists the ip and ip6 nftables tables (family and name, no
// content) with one netlink table dump. `nft list tables` costs far more
// on a large ruleset: nft caches the whole ruleset, every set element
// included, before it prints a table name.
func NFTTables(ctx context.Context) ([]rules.Table, error) {
	return nftSkeleton(ctx, false)
}

// NFTChains lists the ip and ip6 nftables tables with their chains (name,
// hook, policy, comment; no rules, sets or elements): one table and one
// chain dump, enough to tell whose chains exist (facts).
func NFTChains(ctx context.Context) ([]rules.Table, error) {
	return nftSkeleton(ctx, true)
}

func nftSkeleton(ctx context.Context, withChains bool) ([]rules.Table, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if NFTablesAbsent(hostRoot) != "" {
		return nil, nil // no table can exist, and asking would load nf_tables
	}
	conn, err := nl.Dial()
	if err != nil {
		return nil, wrapNetlink(backend.NFTables, "opening a netfilter netlink socket", err)
	}
	defer conn.Close()
	rs, _, err := dumpSkeleton(conn, backend.NFTables, func(string) bool { return true }, withChains)
	if err != nil {
		return nil, wrapNetlink(backend.NFTables, "listing tables", err)
	}
	return rs.Tables, nil
}
