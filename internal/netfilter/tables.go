package netfilter

import (
	"context"
	"fmt"
	"slices"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// NFTTables lists the ip and ip6 nftables tables (family and name, no
// content) with one netlink table dump. `nft list tables` costs far more
// on a large ruleset: nft caches the whole ruleset, every set element
// included, before it prints a table name.
func NFTTables(ctx context.Context) ([]rules.Table, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	conn, err := dialNetfilter()
	if err != nil {
		return nil, wrapNetlink(backend.NFTables, "opening a netfilter netlink socket", err)
	}
	defer conn.Close()
	var out []rules.Table
	err = conn.execute(unix.NFT_MSG_GETTABLE, netlink.Dump, unix.AF_UNSPEC, nil, func(m netlink.Message) error {
		t, err := decodeTable(m)
		if err != nil {
			return fmt.Errorf("table: %w", err)
		}
		if slices.Contains(families, t.family) {
			out = append(out, rules.Table{Family: familyOf(t.family), Name: t.name, Comment: t.comment})
		}
		return nil
	})
	if err != nil {
		return nil, wrapNetlink(backend.NFTables, "listing tables", err)
	}
	return out, nil
}
