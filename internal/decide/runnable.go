package decide

import (
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// Runnable splits the backends into those the kernel and userspace facts do
// not rule out (supported or unconfirmed, as auto judges them) and those
// they do, with the clause that says why. bench measures the first kind.
//
// RKE2's Kubernetes version is left out of the judgement: it is unknown
// before RKE2's first start, and the cost of loading rules is the kernel's
// and the loaders', whichever kube-proxy image later writes them. auto still
// checks the version before it picks nftables.
func Runnable(f facts.Facts) (runnable []backend.Backend, not map[backend.Backend]string) {
	f.RKE2.Kubernetes = rke2.KubeVersion{Major: 1, Minor: 34, Patch: 0} // a version with every nftables prerequisite
	not = map[backend.Backend]string{}
	caps := assessOn(f, false)
	for _, b := range backend.All {
		if caps[b].support == unsupported {
			not[b] = caps[b].why
			continue
		}
		runnable = append(runnable, b)
	}
	return runnable, not
}
