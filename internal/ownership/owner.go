// Package ownership says who wrote a live netfilter object: kube-proxy,
// kubelet, a CNI component, or nobody this tool knows. Every reader of live
// rules asks here (facts, verify, cleanup, switchover, watch), so that
// "kube-proxy's" means the same chains to all of them; the renderer in
// rules/expected only renders.
package ownership

import (
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// Owner names who wrote a chain. Besides the constants below it can be a
// CNI component (cni.OwnerCalico, ...), as Of reports it.
type Owner string

const (
	Nobody    Owner = ""
	KubeProxy Owner = "kube-proxy"
	Kubelet   Owner = "kubelet"
)

// Of says who created a chain: KubeProxy, Kubelet, the CNI component whose
// name it bears (the names are internal/cni's knowledge), or Nobody for
// anything else (built-in chains, KUBE-* chains of writers it does not
// know). Only KubeProxy's chains are this tool's to move or
// delete. For nftables, every chain of a table named vocab.NFTablesTable
// is kube-proxy's.
func Of(table, chain string) Owner {
	switch {
	case table == vocab.NFTablesTable:
		return KubeProxy
	case vocab.IsKubeletChain(chain):
		return Kubelet
	case vocab.IsKubeProxyChain(chain):
		return KubeProxy
	}
	return Owner(cni.ChainOwner(chain))
}

// IsKubeletHintChain forwards to vocab.IsKubeletHintChain for the callers
// in verify/check.go and switchover/kubelethints.go, which other work was
// changing when the names moved to vocab; move them and delete this.
func IsKubeletHintChain(chain string) bool { return vocab.IsKubeletHintChain(chain) }
