package vocab

import "strings"

// kube-proxy's fixed chains in iptables mode (pkg/proxy/iptables/proxier.go).
const (
	ChainServices         = "KUBE-SERVICES"
	ChainExternalServices = "KUBE-EXTERNAL-SERVICES"
	ChainForward          = "KUBE-FORWARD"
	ChainNodePorts        = "KUBE-NODEPORTS"
	ChainProxyFirewall    = "KUBE-PROXY-FIREWALL"
	ChainProxyCanary      = "KUBE-PROXY-CANARY"
	ChainPostrouting      = "KUBE-POSTROUTING"
	ChainMarkMasq         = "KUBE-MARK-MASQ"
	// ChainMarkDrop is gone since 1.28 but still found on old nodes.
	ChainMarkDrop = "KUBE-MARK-DROP"
)

// Per-Service and per-endpoint chain prefixes (isServiceChainName); a
// 16-character hash follows.
const (
	PrefixService         = "KUBE-SVC-"
	PrefixServiceLocal    = "KUBE-SVL-"
	PrefixServiceExternal = "KUBE-EXT-"
	PrefixServiceFirewall = "KUBE-FW-"
	PrefixEndpoint        = "KUBE-SEP-"
)

var perServicePrefixes = []string{PrefixService, PrefixServiceLocal, PrefixServiceExternal, PrefixServiceFirewall, PrefixEndpoint}

// IsKubeProxyChain reports whether an iptables chain is kube-proxy's: one
// of its fixed chains (any release, any mode) or a per-Service one.
// KUBE-FIREWALL is not: kubelet owns it (IsKubeletChain).
// The fixed names count for any release and mode (older releases and the
// ipvs mode used more): a switch between backends can strand any of them.
// A switch, not a map, so the generator, which links vocab, builds no
// table at every boot's start.
func IsKubeProxyChain(chain string) bool {
	switch chain {
	case ChainServices, ChainExternalServices, ChainForward, ChainNodePorts, ChainProxyFirewall,
		ChainProxyCanary, ChainPostrouting, ChainMarkMasq, ChainMarkDrop:
		return true
	}
	return IsPerServiceChain(chain) || IsIPVSOnlyChain(chain)
}

// IsPerServiceChain reports whether chain is one of kube-proxy's
// per-service or per-endpoint iptables chains (KUBE-SVC-*, KUBE-SEP-*, ...):
// most of a large ruleset, and nothing verify looks inside.
func IsPerServiceChain(chain string) bool {
	for _, p := range perServicePrefixes {
		if strings.HasPrefix(chain, p) {
			return true
		}
	}
	return false
}

// nftablesPerServicePrefixes are the per-service, per-endpoint and
// firewall chain prefixes of kube-proxy's nftables mode
// (pkg/proxy/nftables/proxier.go); a name base "HASH-ns/svc/proto/port"
// follows.
var nftablesPerServicePrefixes = []string{"service-", "local-", "external-", "endpoint-", "firewall-"}

// IsNFTablesPerServiceChain reports whether chain is one of kube-proxy's
// per-service or per-endpoint chains in its nftables table
// ("service-ULMVA6XW-ns1/svc1/tcp/p80", "endpoint-..."): most of a large
// ruleset, and nothing verify looks inside. The '/' tells them from the
// fixed chains that share a prefix (service-endpoints-check,
// firewall-check): kube-proxy separates the name base's parts by it, and
// no fixed chain has one.
func IsNFTablesPerServiceChain(chain string) bool {
	if !strings.Contains(chain, "/") {
		return false
	}
	for _, p := range nftablesPerServicePrefixes {
		if strings.HasPrefix(chain, p) {
			return true
		}
	}
	return false
}
