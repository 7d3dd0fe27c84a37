package expected

import "strings"

// Owners of netfilter objects, as Owner reports them.
const (
	OwnerKubeProxy = "kube-proxy"
	OwnerKubelet   = "kubelet"
)

// NFTablesTable is the name of kube-proxy's table in nftables mode (one in
// family ip, one in ip6).
const NFTablesTable = "kube-proxy"

// kubeletChains are created by kubelet with the host's iptables
// (pkg/kubelet/kubelet_network_linux.go). KUBE-FIREWALL is shared: kube-proxy
// ensures an identical copy, but never deletes it (CleanupLeftovers skips
// it), so it counts as kubelet's.
var kubeletChains = map[string]bool{
	"KUBE-IPTABLES-HINT":  true,
	"KUBE-KUBELET-CANARY": true,
	"KUBE-FIREWALL":       true,
}

// kubeProxyChains are kube-proxy's fixed chain names in iptables mode, plus
// names older releases and the ipvs mode used: a switch between backends can
// strand any of them.
var kubeProxyChains = map[string]bool{
	"KUBE-SERVICES":          true,
	"KUBE-EXTERNAL-SERVICES": true,
	"KUBE-FORWARD":           true,
	"KUBE-NODEPORTS":         true,
	"KUBE-PROXY-FIREWALL":    true,
	"KUBE-PROXY-CANARY":      true,
	"KUBE-POSTROUTING":       true,
	"KUBE-MARK-MASQ":         true,
	"KUBE-MARK-DROP":         true, // gone since 1.28, still found on old nodes
	// ipvs mode
	"KUBE-LOAD-BALANCER":          true,
	"KUBE-NODE-PORT":              true,
	"KUBE-LOOP-BACK":              true,
	"KUBE-IPVS-FILTER":            true,
	"KUBE-IPVS-OUT-FILTER":        true,
	"KUBE-SOURCE-RANGES-FIREWALL": true,
}

// kubeProxyPrefixes name kube-proxy's per-service and per-endpoint chains
// (pkg/proxy/iptables/proxier.go isServiceChainName).
var kubeProxyPrefixes = []string{"KUBE-SVC-", "KUBE-SVL-", "KUBE-EXT-", "KUBE-FW-", "KUBE-SEP-"}

// Owner says who created a chain: OwnerKubeProxy, OwnerKubelet, or "" for
// anything else (built-in chains, CNI chains, other KUBE-* chains such as
// kube-router's, which this tool must never touch). For nftables, every chain
// of a table named NFTablesTable is kube-proxy's.
func Owner(table, chain string) string {
	if table == NFTablesTable {
		return OwnerKubeProxy
	}
	if kubeletChains[chain] {
		return OwnerKubelet
	}
	if kubeProxyChains[chain] {
		return OwnerKubeProxy
	}
	if IsPerServiceChain(chain) {
		return OwnerKubeProxy
	}
	return ""
}

// IsPerServiceChain reports whether chain is one of kube-proxy's
// per-service or per-endpoint iptables chains (KUBE-SVC-*, KUBE-SEP-*, ...):
// most of a large ruleset, and nothing verify looks inside.
func IsPerServiceChain(chain string) bool {
	for _, p := range kubeProxyPrefixes {
		if strings.HasPrefix(chain, p) {
			return true
		}
	}
	return false
}

// IsKubeletHint reports whether chain is one of the chains kubelet creates
// so that kube-proxy's image can tell which iptables backend the host uses
// (iptables-wrappers looks for these in mangle).
func IsKubeletHint(table, chain string) bool {
	return table == "mangle" && IsKubeletHintChain(chain)
}

// IsKubeletHintChain reports whether chain is kubelet's hint or canary,
// whatever the table (kubelet puts the canary in mangle, nat and filter).
func IsKubeletHintChain(chain string) bool {
	return chain == "KUBE-IPTABLES-HINT" || chain == "KUBE-KUBELET-CANARY"
}
