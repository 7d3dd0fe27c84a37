package costbench

import (
	"slices"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
)

// The tools a bench result records are the binaries ruleload runs, each
// once: nft serves both families.
func TestLoadersAreRuleloadsBinaries(t *testing.T) {
	for b, want := range map[backend.Backend][]string{
		backend.IptablesLegacy: {"iptables-legacy-restore", "ip6tables-legacy-restore"},
		backend.IptablesNFT:    {"iptables-nft-restore", "ip6tables-nft-restore"},
		backend.NFTables:       {"nft"},
	} {
		if got := loaders(b); !slices.Equal(got, want) {
			t.Errorf("loaders(%s) = %q, want %q", b, got, want)
		}
	}
}
