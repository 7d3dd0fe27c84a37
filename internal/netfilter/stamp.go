package netfilter

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/legacy"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nl"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// Stamper is a Reader that can tell, for a few syscalls, whether a
// backend's rules may have changed: equal stamps mean a Read would return
// the same rules, so a caller that polls (verify --wait) re-reads only when
// the stamp moves. Reading a large backend costs seconds of CPU; a stamp
// costs microseconds.
type Stamper interface {
	Stamp(ctx context.Context, b backend.Backend) (string, error)
}

// Stamp returns backend b's change stamp. For iptables-nft and nftables it
// is the nf_tables ruleset generation id, which every committed change in
// this network namespace moves. For iptables-legacy it is each listed
// table's info (hooks, entry count, blob size): the kernel keeps no
// generation for x_tables, and kube-proxy's rule changes add, remove or
// resize entries. A rewrite that keeps every count and size is missed; the
// caller re-reads now and then anyway.
func (s *System) Stamp(ctx context.Context, b backend.Backend) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	switch b {
	case backend.IptablesNFT, backend.NFTables:
		if why := s.NotLoaded(b); why != "" {
			// loading nf_tables moves this stamp, like a commit would
			return why, nil
		}
		conn, err := nl.Dial()
		if err != nil {
			return "", wrapNetlink(b, "opening a netfilter netlink socket", err)
		}
		defer conn.Close()
		gen, err := conn.Generation()
		if err != nil {
			return "", wrapNetlink(b, "reading the ruleset generation", err)
		}
		return fmt.Sprintf("gen %d", gen), nil
	case backend.IptablesLegacy:
		return s.legacyStamp()
	}
	return "", fmt.Errorf("stamping rules: unknown backend %q (valid: %s)", b, backend.Names())
}

func (s *System) legacyStamp() (string, error) {
	var b strings.Builder
	for _, lf := range s.legacyFamilies() {
		listed, err := s.Root.ReadFile(lf.names)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("reading legacy table list %s: %w", s.Root.Path(lf.names), err)
		}
		// Only tables the kernel lists here: a GET on another creates it.
		names, err := liveLegacyTables(lf.names, listed)
		if err != nil {
			return "", err
		}
		if len(names) == 0 {
			continue
		}
		slices.Sort(names)
		if err := s.stampFamily(&b, lf, names); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

func (s *System) stampFamily(b *strings.Builder, lf legacyFamily, names []string) error {
	sock, err := legacy.Open(lf.family == rules.IPv6)
	if err != nil {
		return s.sockoptError(lf, err)
	}
	defer sock.Close()
	for _, name := range names {
		info, err := sock.Info(name)
		if err != nil {
			return s.sockoptError(lf, err)
		}
		fmt.Fprintf(b, "%s %s %+v;", lf.family, name, info)
	}
	return nil
}
