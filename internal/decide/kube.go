package decide

import (
	"fmt"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// nftImageFrom is, per Kubernetes minor, the first RKE2 patch release whose
// kube-proxy image (hardened-kubernetes, built from 2025-03-12 on) ships the
// nft binary that nftables mode calls; later minors all have it (DOMAIN.md
// section 3).
var nftImageFrom = patchFrom{{29, 15}, {30, 11}, {31, 7}, {32, 3}}

// nftablesGate is the feature gate nftables mode needs while it was alpha.
const nftablesGate = "NFTablesProxyMode=true"

// kubeSupportsNFTables judges the Kubernetes side of nftables mode: version
// and image (on k3s, the nft on k3s's PATH). Unknown versions are
// unsupported because the feature gate cannot be chosen safely: passing a
// gate a version lacks stops kube-proxy.
func kubeSupportsNFTables(f facts.Facts) capability {
	v := f.RKE2.Kubernetes
	if !v.Known() {
		return capability{support: unsupported, why: fmt.Sprintf("%s's Kubernetes version is unknown (no %s version was found), so whether kube-proxy's nftables mode and its feature gate apply cannot be told", f.RKE2.Distribution.Name(), f.RKE2.Distribution.Name())}
	}
	if !v.AtLeast(1, 29) {
		return capability{support: unsupported, why: fmt.Sprintf("Kubernetes %s has no nftables mode in kube-proxy (it arrived in 1.29)", v)}
	}
	if embedded(f) {
		return k3sNftCapability(f) // no image: the nft on k3s's PATH runs
	}
	if v.Major == 1 {
		if first, ok := nftImageFrom.first(v.Minor); ok {
			if v.Patch < 0 {
				return capability{support: unsupported, why: fmt.Sprintf("the RKE2 patch release of Kubernetes %s is unknown, and only v1.%d.%d and later ship a kube-proxy image with the nft binary", v, v.Minor, first)}
			}
			if v.Patch < first {
				return capability{support: unsupported, why: fmt.Sprintf("RKE2's kube-proxy image for Kubernetes %s lacks the nft binary (it ships from v1.%d.%d on)", v, v.Minor, first)}
			}
		}
	}
	return capability{support: supported}
}

// needsGate reports whether kube-proxy needs NFTablesProxyMode=true: only
// 1.29 and 1.30, where the gate was alpha and off by default.
func needsGate(v rke2.KubeVersion) bool {
	return v.Major == 1 && (v.Minor == 29 || v.Minor == 30)
}
