// Package netfilter reads live netfilter state without side effects, for
// every backend through one Reader:
//
//   - iptables-nft and native nftables: netlink sockets of its own
//     (package nl) dump tables, chains, sets, elements, and rules one
//     chain at a time over up to one socket per CPU, rendered as they
//     stream in (package nfttext, xt blobs by package xtblob); a shallow
//     iptables-nft read keeps only each rule's jump and comment
//     (nl.XtJumpComment), and a shallow read of either only counts the
//     rules of skipped chains;
//   - iptables-legacy: one iptables-legacy-save per family, streamed
//     through the iptables-save parser (package iptsave), never -L, -S or
//     -t, which create tables; or, for a shallow read, the legacy socket's
//     GET calls in-process (package legacy).
//
// System reads the kernel; verify.NewReader is the shallow System verify,
// switchover and watch use; Fake serves tests with the same shapes.
// NFTTables and NFTChains list names only; Stamper tells whether anything
// changed since the last read.
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
