package facts

import (
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

func TestSkewHost(t *testing.T) {
	f := Facts{RKE2: RKE2{Version: "v1.34.5+rke2r1", Kubernetes: rke2.KubeVersion{Major: 1, Minor: 34, Patch: 5}},
		Userspace: Userspace{Nft: ToolVersion{Version: "1.1.3", Source: DpkgStatus + " (package nftables)"}}}
	h := SkewHost(f)
	if h.Release != "v1.34.5+rke2r1" || h.Kubernetes.String() != "1.34.5" || h.Nft.String() != "1.1.3" || h.NftSource == "" || h.SetsRead {
		t.Errorf("%+v", h)
	}
	// Without a patch release the kube-proxy ranges cannot be judged, and
	// a version nft would not print is no version.
	f.RKE2.Kubernetes.Patch = -1
	f.Userspace.Nft.Version = "1.1.3~rc1"
	if h := SkewHost(f); h.Kubernetes.Known() || h.Nft.Known() || h.NftSource != "" {
		t.Errorf("%+v", h)
	}
}
