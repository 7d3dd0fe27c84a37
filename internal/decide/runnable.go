package decide

import (
	"fmt"

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

// CanRun reports whether the facts leave b runnable, as the decision
// judges it (the cluster's side of nftables mode included).
func CanRun(f facts.Facts, b backend.Backend) bool {
	return assess(f)[b].support != unsupported
}

// SwitchRefusal says why a live switch of this node to b must not start
// ("" when nothing rules it out). It judges what Runnable judges and, for
// nftables, what a running node adds: RKE2 is installed, so its version is
// known, and a release that predates the first ones documenting nftables
// mode (or whose kube-proxy image cannot run it) would only restart into
// a kube-proxy that never syncs and a rollback. An unknown version (no
// RKE2 found) is left to apply's own checks at the restart. The CNI's part
// is not judged here: detect and verify name the HelmChartConfig it needs.
func SwitchRefusal(f facts.Facts, b backend.Backend) string {
	if _, not := Runnable(f); not[b] != "" {
		return "this host cannot run it: " + not[b]
	}
	if why := ipvsSwitchRefusal(f, b); why != "" {
		return why
	}
	if why := switchKubeProxyRefusal(f, b); why != "" {
		return why
	}
	v := f.RKE2.Kubernetes
	if b != backend.NFTables || !v.Known() {
		return ""
	}
	if predatesNFTablesDocs(v) && !embedded(f) {
		return fmt.Sprintf("RKE2 %s predates the first releases that document nftables mode (%s); upgrade RKE2 to one of those or later (the same minor's patch or a newer minor), then switch again",
			rke2Name(f), firstDocumented)
	}
	if c := kubeSupportsNFTables(f); c.support == unsupported {
		if embedded(f) {
			return c.why + ", then switch again" // the why names k3s's fix
		}
		return c.why + "; upgrade RKE2, then switch again"
	}
	return skewRefusal(f)
}

// predatesNFTablesDocs reports whether v is a Kubernetes version whose RKE2
// releases do not document nftables mode yet. A 1.34-1.36 version without
// a known patch cannot be told and is not refused.
func predatesNFTablesDocs(v rke2.KubeVersion) bool {
	if !v.Known() || v.Major != 1 {
		return false
	}
	first, listed := rke2DocumentsNFTables.first(v.Minor)
	return v.Minor < 34 || (listed && v.Patch >= 0 && v.Patch < first)
}
