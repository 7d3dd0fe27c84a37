package adopt

import (
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
)

// unitsToAdopt are the units whose activity means kube-proxy runs: RKE2's
// two, or on k3s the units distro finds (k3s, k3s-agent, k3s-NAME), since
// k3s runs kube-proxy inside its own process.
func unitsToAdopt(o Options) []string {
	if o.Facts.RKE2.Distribution == distro.K3s {
		// The probe already found and read them.
		var names []string
		for _, u := range o.Facts.RKE2.Units {
			names = append(names, u.Name)
		}
		return names
	}
	return RKE2Units
}

// notRunning is NotRunning's message for the node's distribution.
func notRunning(f facts.Facts, looked []string) string {
	if f.RKE2.Distribution != distro.K3s {
		return "RKE2 is not running (neither rke2-server nor rke2-agent is active): nothing to adopt; its next start runs apply, which records the plan"
	}
	which := "no k3s unit (k3s.service, k3s-agent.service, k3s-<name>.service) is installed"
	if len(looked) > 0 {
		which = "none of " + strings.Join(looked, ", ") + " is active"
	}
	return "k3s is not running (" + which + "): nothing to adopt; its next start runs apply, which records the plan"
}

// k3sWords are adoption's sentences about RKE2 whose fact holds on k3s as
// it is (a restart, a start, a config file); the ones that differ (who
// picks the iptables variant) are worded in observe.go.
var k3sWords = strings.NewReplacer(
	"without restarting RKE2", "without restarting k3s",
	"since RKE2 started", "since k3s started",
	"RKE2's next start", "k3s's next start",
	"RKE2's own defaults", "k3s's own defaults",
	"before RKE2 restarts", "before k3s restarts",
	"it restarts RKE2", "it restarts k3s",
	"RKE2's own proxy-mode / IPTABLES_MODE settings", "k3s's own proxy-mode (config) / IPTABLES_MODE (unit) settings",
	"RKE2's config", "k3s's config",
	"RKE2 was started before", "k3s was started before",
)

// inK3sWords rewrites what adoption tells the operator on a k3s node.
func inK3sWords(f facts.Facts, res *Result) {
	if f.RKE2.Distribution != distro.K3s {
		return
	}
	res.Message = k3sWords.Replace(res.Message)
	for i, d := range res.Differences {
		res.Differences[i] = k3sWords.Replace(d)
	}
	if p := res.Plan; p != nil {
		for i, r := range p.Decision.Reasons {
			p.Decision.Reasons[i] = k3sWords.Replace(r)
		}
		for i, w := range p.Warnings {
			p.Warnings[i] = k3sWords.Replace(w)
		}
	}
}
