package adopt

import (
	"fmt"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
)

// judge says which backend runs, or why that cannot be told. It never
// picks between two backends holding kube-proxy's rules: the one kube-proxy
// does not use holds stranded rules, and which is which only kube-proxy's
// own start knows.
func judge(obs Observation) (backend.Backend, Outcome, string) {
	mode := "no answer from /proxyMode"
	if obs.ProxyMode != "" {
		mode = "/proxyMode says " + obs.ProxyMode
	}
	name := obs.dist.Name()
	switch n := len(obs.KubeProxy); {
	case n == 0:
		return "", CannotTell, fmt.Sprintf("no kube-proxy rules in any backend (iptables-legacy, iptables-nft and nftables read just now; %s): kube-proxy has not synced since %s started, or does not run; "+
			"nothing recorded. Run `rke2-proxy-backend adopt --wait 5m` to wait for its first sync; %s's next start records a plan anyway", mode, name, name)
	case n > 1:
		var hints []string
		for _, b := range obs.KubeProxy {
			hints = append(hints, fmt.Sprintf("`rke2-proxy-backend verify --expect %s --wait 0s`", b))
		}
		return "", CannotTell, fmt.Sprintf("kube-proxy rules are in %s (%s), so which one kube-proxy runs on cannot be told from the rules; nothing recorded. "+
			"The other one holds stranded rules: compare %s, remove the stranded ones with `rke2-proxy-backend cleanup --backend B`, then run adopt again",
			names(obs.KubeProxy), mode, strings.Join(hints, " and "))
	}
	b := obs.KubeProxy[0]
	if obs.ProxyModeProblem != "" {
		return "", Refused, fmt.Sprintf("kube-proxy's rules are in %s, but %s; nothing recorded. Find what holds kube-proxy's metrics port, then run adopt again", b, obs.ProxyModeProblem)
	}
	if obs.ProxyMode == "ipvs" {
		return "", Refused, fmt.Sprintf("kube-proxy runs in ipvs mode (its /proxyMode says so; the iptables rules in %s are ipvs mode's), which adopt does not take over: apply decides the iptables backend under ipvs at %s's next start (docs/switching.md: ipvs nodes), and verify does not judge ipvs's rules yet; nothing recorded. To leave the node alone meanwhile, set backend: off in %s", b, name, hostfs.ConfigFile)
	}
	if obs.ProxyMode != "" && obs.ProxyMode != b.ProxyMode() {
		return "", Refused, fmt.Sprintf("kube-proxy's rules are in %s, which is %s mode, but its /proxyMode says %s: the rules are another kube-proxy's, left stranded; nothing recorded. "+
			"Check with `rke2-proxy-backend verify --expect %s --wait 0s`, then run adopt again", b, b.ProxyMode(), obs.ProxyMode, b)
	}
	return b, Adopted, ""
}

// record is the adopted plan: the backend that runs, and why adoption says
// so. Nothing was written to RKE2 or loaded, so the drop-in, args, env and
// modules loaded stay empty; Modules is the backend's set, for reference.
func record(f facts.Facts, obs Observation, b backend.Backend) plan.Plan {
	reasons := []string{fmt.Sprintf("kube-proxy was already running when rke2-proxy-backend was adopted, so its backend is recorded as it runs, without restarting %s: its rules are live in %s and in no other backend.", f.RKE2.Distribution.Name(), b)}
	if obs.ProxyMode != "" {
		reasons = append(reasons, fmt.Sprintf("kube-proxy's /proxyMode says %s.", obs.ProxyMode))
	} else {
		reasons = append(reasons, fmt.Sprintf("kube-proxy's /proxyMode gave no answer (%s), so the mode comes from the rules alone.", obs.ProxyModeNote))
	}
	say, warn := obs.rke2Says(b)
	reasons = append(reasons, say)
	if len(obs.KubeletHint) > 0 {
		reasons = append(reasons, fmt.Sprintf("kubelet's hint chains are in %s.", names(obs.KubeletHint)))
	}
	p := plan.Plan{
		// Nothing was written: RKE2 was given this backend by whatever ran
		// before adopt, and kube-proxy runs on it.
		Applied: plan.Applied{Backend: b, ProxyMode: b.ProxyMode(), By: plan.ByAdopt},
		Decision: plan.Decision{
			Backend: b, ProxyMode: b.ProxyMode(), IptablesMode: b.IptablesMode(), Source: Source,
			Modules: b.Modules(), KubeProxyArgs: []string{}, KubeProxyEnv: []string{}, Reasons: reasons,
		},
		ModulesLoaded: []string{},
	}
	if warn != "" {
		p.Warnings = append(p.Warnings, warn)
	}
	if k := f.RKE2.Kubernetes; k.Known() {
		p.Kubernetes = k.String()
	}
	return p
}
