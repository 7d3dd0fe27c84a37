package switchover

import (
	"fmt"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
)

// k3sFlannelRefusal says why a switch cannot work on a k3s node whose
// embedded flannel runs ("" when it can). On k3s flannel programs its
// chains through the same iptables as kube-proxy and moves with it, but
// the switch removes only kube-proxy's and kubelet's rules from the old
// backend: its verify step would find flannel's there and roll back,
// leaving flannel's and kubelet's new chains behind (the k3s boot test,
// packaging/test/k3s-boot.sh, saw exactly that). Refusing before anything
// is written is the honest answer until the switch moves flannel's too.
// f is the switch's one probe of the node, taken with kind's paths.
func k3sFlannelRefusal(kind distro.Kind, f facts.Facts) string {
	if kind != distro.K3s {
		return ""
	}
	if v := f.RKE2.Config.Strings("flannel-backend"); len(v) > 0 && v[len(v)-1] == "none" {
		return ""
	}
	return fmt.Sprintf("this k3s node runs k3s's flannel (flannel-backend is not none in %s): switch does not move flannel's chains yet, so its verify step would fail on them and roll back; it is not supported on k3s nodes with flannel (README: k3s nodes)", f.RKE2.ConfigFile)
}
