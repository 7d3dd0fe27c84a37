package ownership

import (
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
)

func TestOf(t *testing.T) {
	cases := []struct {
		table, chain string
		want         Owner
	}{
		{"nat", "KUBE-SERVICES", KubeProxy},
		{"nat", "KUBE-SEP-SXIVWICOYRO3J4NJ", KubeProxy},
		{"mangle", "KUBE-PROXY-CANARY", KubeProxy},
		{"nat", "KUBE-LOAD-BALANCER", KubeProxy}, // ipvs mode, stranded after a switch
		{"mangle", "KUBE-IPTABLES-HINT", Kubelet},
		{"filter", "KUBE-FIREWALL", Kubelet}, // kube-proxy copies it but never deletes it
		{"nat", "KUBE-KUBELET-CANARY", Kubelet},
		{"filter", "KUBE-ROUTER-INPUT", Owner(cni.OwnerKubeRouter)}, // a KUBE- prefix is not kube-proxy's
		{"filter", "KUBE-POD-FW-4XGPQLOJ6OOL6D6B", Owner(cni.OwnerKubeRouter)},
		{"filter", "KUBE-NETWORK-X", Nobody},
		{"filter", "KUBE-SVC", Nobody}, // the prefix without the hash
		{"filter", "INPUT", Nobody},
		{"kube-proxy", "services", KubeProxy},
		{"kube-proxy", "INPUT", KubeProxy}, // everything in kube-proxy's nftables table
		{"filter", "cali-FORWARD", Owner(cni.OwnerCalico)},
		{"nat", "CNI-HOSTPORT-DNAT", Owner(cni.OwnerPortmap)},
		{"nat", "FLANNEL-POSTRTG", Owner(cni.OwnerFlannel)},
	}
	for _, c := range cases {
		if got := Of(c.table, c.chain); got != c.want {
			t.Errorf("Of(%s, %s) = %q, want %q", c.table, c.chain, got, c.want)
		}
	}
}
