package decide

import (
	"fmt"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
)

// rke2DocumentsNFTables is, per Kubernetes minor, the first RKE2 patch
// release that documents kube-proxy's nftables mode (v1.34.10+rke2r1,
// v1.35.7+rke2r1, v1.36.3+rke2r1); later minors all do, earlier ones not.
var rke2DocumentsNFTables = patchFrom{{34, 10}, {35, 7}, {36, 3}}

// patchFrom lists, per Kubernetes minor, a first patch release. A list the
// linker lays out, not a map: the generator links this package, and a map
// would be built at every boot's start, RKE2 or not.
type patchFrom []struct{ minor, patch int }

// first is minor's first patch, if listed.
func (p patchFrom) first(minor int) (patch int, listed bool) {
	for _, e := range p {
		if e.minor == minor {
			return e.patch, true
		}
	}
	return 0, false
}

// firstDocumented names those releases for reasons.
const firstDocumented = "v1.34.10+rke2r1, v1.35.7+rke2r1 and v1.36.3+rke2r1"

// nftMinimum is the oldest host nft that does not crash on kube-proxy's
// nftables rules (kubernetes#122743); Calico's nftables mode wants it too.
var nftMinimum = []int{1, 0, 1}

// clusterFollowsNFTables judges what nftables mode needs beyond the kernel
// and the image: an RKE2 release that documents it, a CNI (and no NodeLocal
// DNSCache) that moves to nftables too, and a host nft that can read the
// rules. An unknown RKE2 version is left to kubeSupportsNFTables.
func clusterFollowsNFTables(f facts.Facts) capability {
	// RKE2's release notes are no k3s fact: on k3s the nft on its PATH
	// (kubeSupportsNFTables) and the Kubernetes version decide.
	if v := f.RKE2.Kubernetes; v.Known() && v.Major == 1 && !embedded(f) {
		if predatesNFTablesDocs(v) {
			return capability{support: unsupported, why: fmt.Sprintf("RKE2 %s predates the first releases that document nftables mode (%s)", rke2Name(f), firstDocumented)}
		}
	}
	if nft := f.Userspace.Nft; nft.Version != "" && facts.VersionBelow(nft.Version, nftMinimum...) {
		return capability{support: unsupported, why: fmt.Sprintf("the host's nft is %s (per %s), older than 1.0.1, which crashes on kube-proxy's nftables rules (kubernetes#122743); upgrade nftables", nft.Version, nft.Source)}
	}
	if embedded(f) {
		// k3s's CNI is its own flannel and kube-router, which stay on
		// iptables beside nftables mode (cniReason); no RKE2 chart applies.
		return capability{support: supported}
	}
	follow := cniSetup(f).NFTables()
	switch {
	case follow.Refuse:
		return capability{support: unsupported, why: follow.Why}
	case follow.Unconfirmed:
		return capability{support: unconfirmed, why: follow.Why}
	}
	return capability{support: supported}
}

// cniSetup is the probe's CNI setup; facts built without a probe (tests,
// old JSON) have none and mean RKE2's default.
func cniSetup(f facts.Facts) cni.Setup {
	if len(f.RKE2.CNI.CNIs) == 0 {
		return cni.NewSetup(nil, "", f.RKE2.CNI.Charts)
	}
	return f.RKE2.CNI
}

func rke2Name(f facts.Facts) string {
	if f.RKE2.Version != "" {
		return f.RKE2.Version
	}
	return "with Kubernetes " + f.RKE2.Kubernetes.String()
}

// k3sCNIReason is cniReason on k3s, whose flannel is hard-coded to iptables
// (k3s#12849) and whose network policy controller is kube-router's
// iptables one: no chart switches them, and verify expects their rules in
// iptables-nft, which shares nf_tables with kube-proxy's tables.
const k3sCNIReason = "On k3s, flannel and kube-router's network policy keep writing iptables rules beside kube-proxy's nftables mode (k3s's flannel is iptables-only, k3s#12849): they stay in iptables-nft, where verify expects them, and no chart is changed; a CNI you installed yourself (flannel-backend: none) must be moved to nftables by you."

// cniReason says what the CNI needs once nftables mode is chosen: RKE2 calls
// the mode experimental and the CNI does not follow on its own.
func cniReason(f facts.Facts, manifestsDir string) string {
	if embedded(f) {
		return k3sCNIReason
	}
	s := cniSetup(f)
	follow := s.NFTables()
	base := "RKE2 documents nftables mode as experimental, and the CNI must be switched to nftables too"
	switch {
	case follow.Unconfirmed:
		return base + ": " + follow.Why + "; make sure it writes nftables rules."
	case s.Primary == cni.Cilium:
		return base + "; RKE2 runs cilium, which needs no change."
	case len(follow.Missing) == 0:
		return fmt.Sprintf("%s; the HelmChartConfig for %s in %s already sets it.", base, follow.Chart, manifestsDir)
	}
	var kv []string
	for _, m := range follow.Missing {
		kv = append(kv, fmt.Sprintf("%s: %v", m.Key, m.Value))
	}
	return fmt.Sprintf("%s: RKE2 runs %s (%s), whose chart %s needs %s in a HelmChartConfig in %s; it is cluster-wide, so every node must run nftables (`rke2-proxy-backend detect` prints the manifest, cni.helmchartconfig: write writes it on servers).",
		base, s.Primary, s.Source, follow.Chart, strings.Join(kv, " and "), manifestsDir)
}
