package nstest

import (
	"slices"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
)

// Flush empties the tables of the named backends in the current namespace
// (call it inside InNetns), both families: rules loaded with ruleload's
// --noflush commands add to what is there, so a test that loads twice
// empties first. iptables-nft's tables are nftables tables, so one
// "nft flush ruleset" serves both nft backends.
func Flush(t testing.TB, backends ...backend.Backend) {
	t.Helper()
	script := ""
	if slices.Contains(backends, backend.IptablesLegacy) {
		script += `for t in $(cat /proc/net/ip_tables_names); do iptables-legacy -t $t -F; iptables-legacy -t $t -X; done
for t in $(cat /proc/net/ip6_tables_names); do ip6tables-legacy -t $t -F; ip6tables-legacy -t $t -X; done
`
	}
	if slices.Contains(backends, backend.IptablesNFT) || slices.Contains(backends, backend.NFTables) {
		script += "nft flush ruleset\n"
	}
	Sh(t, script)
}
