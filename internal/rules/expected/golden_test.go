package expected

import (
	"path/filepath"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/golden"
)

// The canonical text of each footprint is pinned: a change to kube-proxy's
// expected rules must show up in review. UPDATE_GOLDEN=1 rewrites.
func TestGolden(t *testing.T) {
	cases := map[string]Options{
		"iptables-legacy.golden":    {Backend: backend.IptablesLegacy, Services: 2},
		"iptables-nft-v1.27.golden": {Backend: backend.IptablesNFT, Kubernetes: rke2.KubeVersion{Major: 1, Minor: 27}},
		"nftables.golden":           {Backend: backend.NFTables, Services: 2},
		"nftables-v1.37.golden":     {Backend: backend.NFTables, Kubernetes: rke2.KubeVersion{Major: 1, Minor: 37}, Services: 2},
		"nftables-v1.33.golden":     {Backend: backend.NFTables, Kubernetes: rke2.KubeVersion{Major: 1, Minor: 33}},
		"nftables-v1.34.golden":     {Backend: backend.NFTables, Kubernetes: rke2.KubeVersion{Major: 1, Minor: 34}, Services: 2},
	}
	for name, opts := range cases {
		rs, err := Render(opts)
		if err != nil {
			t.Fatal(err)
		}
		golden.File(t, filepath.Join("testdata", name), []byte(rules.Format(rs)))
	}
}
