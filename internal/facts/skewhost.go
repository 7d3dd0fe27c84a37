package facts

import (
	"fmt"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/skew"
)

// SkewHost is what skew.Judge needs from the facts: RKE2's release and
// Kubernetes version, the host's nft, and the foreign sets if read.
func SkewHost(f Facts) skew.Host {
	h := skew.Host{Release: f.RKE2.Version, Kubernetes: kubeVersion(f.RKE2.Kubernetes),
		Sets: f.LiveRules.UserdataSets, SetsRead: f.LiveRules.UserdataSetsRead}
	if v, err := skew.ParseVersion(f.Userspace.Nft.Version); err == nil {
		h.Nft, h.NftSource = v, f.Userspace.Nft.Source
	}
	if f.RKE2.Distribution.Profile().KubeProxyEmbedded {
		// No image: the nft on k3s's PATH reads the sets.
		n := f.RKE2.K3sRunningNft(f.Userspace.Nft)
		if v, err := skew.ParseVersion(n.Version.Version); err == nil {
			h.Reader, h.ReaderSource = v, fmt.Sprintf("%s on k3s's PATH, per %s", n.Path, n.Version.Source)
		}
	}
	return h
}

// kubeVersion is the full Kubernetes version, unknown without a patch:
// the pairs' kube-proxy ranges end at patch releases.
func kubeVersion(v rke2.KubeVersion) skew.Version {
	if !v.Known() || v.Patch < 0 {
		return skew.Version{}
	}
	kv, err := skew.ParseVersion(fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch))
	if err != nil {
		return skew.Version{}
	}
	return kv
}
