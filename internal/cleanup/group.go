package cleanup

import (
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ownership"
)

// Sweep is the part of group g whose chains in backend b are not the live
// ones while kube-proxy runs in kubeProxy ("" when nothing says): what
// cleanup and switch remove from b. That is all of g (with --force, the
// live backend's too: each writer programs its chains again), except that
// k3s's flannel and kube-router write iptables only (k3s#12849): with
// kube-proxy in nftables mode they live in iptables-nft, so there only
// kube-proxy's chains are stranded.
func Sweep(g ownership.Group, b, kubeProxy backend.Backend) ownership.Group {
	if kubeProxy == backend.NFTables && b == backend.IptablesNFT {
		return ownership.KubeProxyOnly
	}
	return g
}
