// Package ownership says who wrote a live netfilter object: kube-proxy,
// kubelet, a CNI component, or nobody this tool knows. Every reader of live
// rules asks here (facts, verify, cleanup, switchover, watch), so that
// "kube-proxy's" means the same chains to all of them; the renderer in
// rules/expected only renders.
package ownership

import (
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
)

// Owner names who wrote a chain. Besides the constants below it can be a
// CNI component (cni.OwnerCalico, ...), as Of reports it.
type Owner string

const (
	Nobody    Owner = ""
	KubeProxy Owner = "kube-proxy"
	Kubelet   Owner = "kubelet"
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

// Of says who created a chain: KubeProxy, Kubelet, the CNI component whose
// name it bears (the names are internal/cni's knowledge), or Nobody for
// anything else (built-in chains, other KUBE-* chains such as
// kube-router's). Only KubeProxy's chains are this tool's to move or
// delete. For nftables, every chain of a table named NFTablesTable is
// kube-proxy's.
func Of(table, chain string) Owner {
	switch {
	case table == NFTablesTable:
		return KubeProxy
	case kubeletChains[chain]:
		return Kubelet
	case kubeProxyChains[chain], IsPerServiceChain(chain):
		return KubeProxy
	}
	return Owner(cni.ChainOwner(chain))
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
