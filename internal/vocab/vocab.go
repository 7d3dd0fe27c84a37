// Package vocab holds the names kube-proxy and kubelet give their netfilter
// objects (kube-proxy's nftables table, its fixed and per-Service iptables
// chains, kubelet's hint and canary chains) and iptables' argument quoting.
// It imports nothing of this module: the renderer (rules/expected), the
// owner classification (ownership) and the readers (netfilter/...) all sit
// above it, so none of them reaches up into another for a name or a quote.
package vocab

// NFTablesTable is the name of kube-proxy's table in nftables mode (one in
// family ip, one in ip6); every chain in it is kube-proxy's.
const NFTablesTable = "kube-proxy"

// IptablesTables are the tables iptables (legacy or nft) can hold, in the
// order iptables-nft creates them. An nftables dump may also hold them, and
// a native nftables reader must tell them from kube-proxy's own table.
var IptablesTables = []string{"filter", "nat", "mangle", "raw", "security"}

// IsIptablesTable reports whether name is one of IptablesTables.
func IsIptablesTable(name string) bool {
	switch name {
	case "filter", "nat", "mangle", "raw", "security":
		return true
	}
	return false
}
