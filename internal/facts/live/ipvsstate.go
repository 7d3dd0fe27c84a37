package live

import (
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/ipvs"
)

// ipvsStateOf names what of kube-proxy's ipvs mode lives on the node (its
// KUBE-* ipsets, kube-ipvs0, the virtual servers on its addresses), one
// line per object, classified by the rule verify and cleanup use: only
// kube-proxy's objects count, never kube-router's sets or keepalived's
// virtual servers. detect shows it so leftovers are seen before a verify
// fails on them.
func ipvsStateOf(f ipvs.Footprint) []string {
	l := ipvs.Classify(f)
	state := []string{}
	for _, s := range append(l.Sets, l.ReferencedSets...) {
		state = append(state, "ipset "+s.Name)
	}
	if l.Link != nil {
		state = append(state, "link "+l.Link.Name)
	}
	for _, s := range l.Services {
		state = append(state, "virtual server "+s.String())
	}
	return state
}
