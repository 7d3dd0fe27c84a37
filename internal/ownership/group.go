package ownership

import (
	"slices"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
)

// Group is the writers whose rules live in kube-proxy's backend and move
// with it: what verify expects beside kube-proxy's rules, and what cleanup
// and switch sweep from the backend a node left.
type Group []Owner

// KubeProxyOnly is RKE2's group. RKE2's CNIs run in pods of their own with
// their own iptables choice (Felix's backend, flannel's enableNFTables), so
// their chains are judged by verify's CNI check and never removed here.
var KubeProxyOnly = Group{KubeProxy}

// K3s is k3s's group. kube-proxy, flannel and kube-router's network policy
// controller all run inside the k3s process and exec the first iptables on
// its PATH (k3s-root's bin/aux wrappers, or the host's), so their rules
// land in one backend, and when the bin/aux links change all three write
// again in the new one and leave their old chains behind. k3s's flannel and
// kube-router write iptables only (k3s#12849): in nftables mode their
// chains belong in iptables-nft, and none of them has a native table.
var K3s = Group{KubeProxy, Owner(cni.OwnerFlannel), Owner(cni.OwnerKubeRouter)}

// GroupOf is the group of a distribution ("" counts as RKE2, as the probe
// defaults to it).
func GroupOf(k distro.Kind) Group {
	if k == distro.K3s {
		return K3s
	}
	return KubeProxyOnly
}

// Has reports whether o is one of the group.
func (g Group) Has(o Owner) bool { return slices.Contains(g, o) }
