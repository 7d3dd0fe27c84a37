package ownership

import (
	"slices"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
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
var K3s = GroupOf(distro.Kind("k3s"))

// GroupOf is the group of a distribution: kube-proxy and the writers its
// profile runs in the same process ("" counts as RKE2, as the probe
// defaults to it).
func GroupOf(k distro.Kind) Group {
	g := Group{KubeProxy}
	for _, w := range k.Profile().Writers {
		g = append(g, Owner(w))
	}
	return g
}

// GroupFor is the group on a node of distribution k: GroupOf(k), less the
// k3s writers this k3s does not run (flannel false: flannel-backend: none;
// netpol false: disable-network-policy: true). Their chains are then an
// operator's writer's, with its own iptables choice: verify does not judge
// them as the group's, and cleanup and switch never remove them.
func GroupFor(k distro.Kind, flannel, netpol bool) Group {
	var g Group
	for _, m := range GroupOf(k) {
		switch {
		case m == Owner(cni.OwnerFlannel) && !flannel, m == Owner(cni.OwnerKubeRouter) && !netpol:
			continue
		}
		g = append(g, m)
	}
	return g
}

// Home is where member m's rules belong while kube-proxy runs in
// kubeProxy: kube-proxy's backend, except that k3s's flannel and
// kube-router write iptables only (k3s#12849), so beside nftables mode
// they belong in iptables-nft, never native. This is the one place that
// rule is written.
func Home(m Owner, kubeProxy backend.Backend) backend.Backend {
	if m == KubeProxy || kubeProxy != backend.NFTables {
		return kubeProxy
	}
	return backend.IptablesNFT
}

// StraysIn is the part of g whose rules in b are out of place while
// kube-proxy runs in kubeProxy: what verify calls stranded in b and what
// cleanup and switch remove from it. That is the members whose Home is
// not b, or all of g when kubeProxy is b (cleanup --force: the live rules
// go too, each writer programs its own again) or "" (nothing says).
func (g Group) StraysIn(b, kubeProxy backend.Backend) Group {
	if kubeProxy == b || kubeProxy == "" {
		return g
	}
	var out Group
	for _, m := range g {
		if Home(m, kubeProxy) != b {
			out = append(out, m)
		}
	}
	return out
}

// LeftBeside is what kube-proxy's move from backend from to kubeProxy
// strands outside from: the members that lived in another backend beside
// from (k3s's flannel and kube-router in iptables-nft beside nftables
// mode) and do not live there now, with that backend ("" and nil for
// none).
func (g Group) LeftBeside(from, kubeProxy backend.Backend) (backend.Backend, Group) {
	var where backend.Backend
	var out Group
	for _, m := range g {
		if h := Home(m, from); h != from && Home(m, kubeProxy) != h {
			where, out = h, append(out, m)
		}
	}
	return where, out
}

// Has reports whether o is one of the group.
func (g Group) Has(o Owner) bool { return slices.Contains(g, o) }
