package costbench

import (
	"context"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
)

// A backend whose loader is missing is skipped with the binary, what
// needed it and the package: iptables for legacy, nftables for nftables.
func TestMissingLoaderNamesItsPackage(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for b, want := range map[backend.Backend]string{
		backend.IptablesLegacy: "measuring iptables-legacy needs iptables-legacy-restore, which is not installed (not found in PATH): install the Debian/Ubuntu package iptables (EL: iptables-legacy, from EPEL on EL 9)",
		backend.NFTables:       "measuring nftables needs nft, which is not installed (not found in PATH): install the Debian/Ubuntu package nftables (EL: nftables)",
	} {
		if _, missing := toolsFor(context.Background(), b); missing != want {
			t.Errorf("%s: missing = %q\nwant %q", b, missing, want)
		}
	}
}
