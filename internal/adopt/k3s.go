package adopt

import (
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
)

// unitsToAdopt are the units whose activity means kube-proxy runs: the
// distribution's fixed units (RKE2's two, server first), or the ones the
// probe found and read (k3s, k3s-agent, k3s-NAME), since k3s runs
// kube-proxy inside its own process.
func unitsToAdopt(o Options) []string {
	if fixed := o.Facts.RKE2.Distribution.Profile().Units; fixed != nil {
		return fixed
	}
	var names []string
	for _, u := range o.Facts.RKE2.Units {
		names = append(names, u.Name)
	}
	return names
}

// notRunning is NotRunning's message for the node's distribution.
func notRunning(f facts.Facts, looked []string) string {
	p := f.RKE2.Distribution.Profile()
	which := "no " + p.AnyUnit + " is installed"
	switch {
	case p.Units != nil:
		var short []string
		for _, u := range p.Units {
			short = append(short, strings.TrimSuffix(u, ".service"))
		}
		which = "neither " + strings.Join(short, " nor ") + " is active"
	case len(looked) > 0:
		which = "none of " + strings.Join(looked, ", ") + " is active"
	}
	return p.Name + " is not running (" + which + "): nothing to adopt; its next start runs apply, which records the plan"
}
