package verify

import (
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// ReadOptions are how much verify reads: kube-proxy's skeleton and where
// it lives, never per-service map elements or per-service legacy chains
// (reading those is quadratic in services). Tests give them to a
// netfilter.Fake to see the shapes production sees.
var ReadOptions = netfilter.ReadOptions{Shallow: true, SkipChain: vocab.IsPerServiceChain}

// NewReader is verify's production reader of the kernel under root, used
// by the verify command, switchover, watch and the netns tests alike.
func NewReader(root hostfs.Root) *netfilter.System {
	r := netfilter.NewSystem(root)
	r.ReadOptions = ReadOptions
	return r
}
