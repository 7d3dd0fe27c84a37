// Package netfilter reads live netfilter state without side effects: one
// iptables-legacy-save call per family for legacy (never -L, -S or -t, which
// create tables), one google/nftables netlink dump for iptables-nft and
// native nftables.
package netfilter

import (
	"context"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// Reader reads one backend's whole current ruleset, both families.
type Reader interface {
	Read(ctx context.Context, b backend.Backend) (*rules.Ruleset, error)
}
