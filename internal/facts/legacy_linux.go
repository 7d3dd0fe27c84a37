//go:build linux

package facts

import (
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/xtlegacy"
)

// legacyChains returns the user-defined chain names of one legacy table,
// read with the legacy xtables socket API (the calls iptables-legacy-save
// makes) without exec'ing it. Only GET calls on a table that already
// exists, so nothing is created or changed.
func legacyChains(table string, ipv6 bool) ([]string, error) {
	sock, err := xtlegacy.Open(ipv6)
	if err != nil {
		return nil, err
	}
	defer sock.Close()
	var chains []string
	err = sock.Read(table, func(_ xtlegacy.Info, blob []byte) error {
		chains, err = xtlegacy.UserChains(blob, sock.Layout)
		return err
	})
	return chains, err
}
