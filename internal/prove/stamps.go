package prove

import (
	"context"
	"fmt"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
)

// Stamps joins every backend's change stamp into one, for loopConfig.Stamp.
// An unreadable stamp becomes its error text: a backend whose kernel
// support appears or vanishes then counts as a change. iptables-nft and
// nftables share the nf_tables generation, read once.
func Stamps(ctx context.Context, s netfilter.Stamper) string {
	return stampsOf(ctx, s, backend.NFTables, backend.IptablesLegacy)
}

// LegacyStamp is the stamp of what nf_tables events do not cover: legacy
// x_tables, which announces nothing. It is loopConfig.PolledStamp when watch
// gets events.
func LegacyStamp(ctx context.Context, s netfilter.Stamper) string {
	return stampsOf(ctx, s, backend.IptablesLegacy)
}

func stampsOf(ctx context.Context, s netfilter.Stamper, backends ...backend.Backend) string {
	var b strings.Builder
	for _, be := range backends {
		st, err := s.Stamp(ctx, be)
		if err != nil {
			st = "error: " + err.Error()
		}
		fmt.Fprintf(&b, "%s=%s\n", be, st)
	}
	return b.String()
}
