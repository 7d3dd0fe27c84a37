package verify

import (
	"fmt"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// ReadOptions are how much verify reads: kube-proxy's skeleton and where
// it lives, no set or map elements (its checks know sets by name) but
// where the Service dispatch maps' elements lead (the undispatched check
// follows them), and of per-service chains only how many rules and where
// they jump (rendering those is quadratic in services, or most of the
// read's time and memory). Tests give them to a
// netfilter.Fake to see the shapes production sees.
var ReadOptions = netfilter.ReadOptions{Shallow: true, SkipChain: vocab.IsPerServiceChain, SkipNFTablesChain: vocab.IsNFTablesPerServiceChain,
	ReadJumps: isDispatchMap}

// NewReader is verify's production reader of the kernel under root, used
// by the verify command, switchover, watch and the netns tests alike.
func NewReader(root hostfs.Root) *netfilter.System {
	r := netfilter.NewSystem(root)
	r.ReadOptions = ReadOptions
	return r
}

// noteNotLoaded appends to notes that r read backend b as empty without
// asking the kernel, as its kernel part is not loaded
// (netfilter.System.NotLoaded: asking would load nf_tables).
func noteNotLoaded(notes []string, r netfilter.Reader, b backend.Backend, live *rules.Ruleset) []string {
	nl, ok := r.(interface{ NotLoaded(backend.Backend) string })
	if !ok || live == nil || len(live.Tables) > 0 {
		return notes
	}
	if why := nl.NotLoaded(b); why != "" {
		notes = append(notes, fmt.Sprintf("no %s rules (%s)", b, why))
	}
	return notes
}
