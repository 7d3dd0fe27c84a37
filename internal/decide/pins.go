package decide

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// pins are the kube-proxy settings the operator put in RKE2's own config.
// Our drop-in is left out: what this tool wrote on an earlier boot is not
// an operator's choice, and counting it would freeze the first decision.
type pins struct {
	proxyMode, proxyModeFile       string
	iptablesMode, iptablesModeFile string
	disabled                       bool
	disabledFile                   string
	// gate is true when a kube-proxy-arg already enables NFTablesProxyMode.
	gate bool
	// miscasedGate is a kube-proxy-arg naming the gate in another letter
	// case, which kube-proxy does not know (it then refuses to start).
	miscasedGate, miscasedGateFile string
	// k3sEnv is, on k3s, where the unit's environment pins IPTABLES_MODE
	// (iptablesMode then is its value): k3s has no kube-proxy-extra-env.
	k3sEnv *facts.UnitEnvSetting
}

func readPins(f facts.Facts) pins {
	main := f.RKE2.ConfigFile
	if main == "" {
		main = hostfs.RKE2ConfigFile
	}
	ours := rke2.DropInPath(main)
	eff := f.RKE2.Config
	var p pins
	p.proxyMode, p.proxyModeFile = eff.ProxyMode(ours)
	p.iptablesMode, p.iptablesModeFile = eff.IptablesMode(ours)
	if embedded(f) {
		p.iptablesMode, p.iptablesModeFile = "", ""
		if p.k3sEnv = f.RKE2.K3sIptablesMode(); p.k3sEnv != nil {
			p.iptablesMode, p.iptablesModeFile = p.k3sEnv.Value, p.k3sEnv.Where()
		}
	}
	if p.iptablesMode != "" {
		p.iptablesMode = strings.TrimSpace(p.iptablesMode)
	}
	p.disabled, p.disabledFile = eff.DisableKubeProxy()
	args := eff.Strings(rke2.KeyKubeProxyArg)
	from := eff.ItemOrigin[rke2.KeyKubeProxyArg]
	for i, a := range args {
		if i < len(from) && from[i] == ours {
			continue
		}
		name, value, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(a), "--"), "=")
		if name != "feature-gates" {
			continue
		}
		enabled, miscased := nftablesGateIn(value)
		p.gate = p.gate || enabled
		if miscased && p.miscasedGate == "" {
			p.miscasedGate = a
			if i < len(from) {
				p.miscasedGateFile = from[i]
			}
		}
	}
	return p
}

func (p pins) any() bool { return p.proxyMode != "" || p.iptablesMode != "" }

// text lists the pinned settings with their files, for reasons and Respected.
func (p pins) text() []string {
	var out []string
	if p.proxyMode != "" {
		out = append(out, fmt.Sprintf("proxy-mode=%s in %s", p.proxyMode, p.proxyModeFile))
	}
	if p.iptablesMode != "" {
		out = append(out, fmt.Sprintf("IPTABLES_MODE=%s in %s", p.iptablesMode, p.iptablesModeFile))
	}
	return out
}

// nftablesGateIn reads a --feature-gates value ("A=true,B=false") as
// kube-proxy does: gate names are case-sensitive, values are booleans.
// enabled: NFTablesProxyMode=true is there; miscased: the gate is named in
// another letter case, an unknown gate to kube-proxy.
func nftablesGateIn(value string) (enabled, miscased bool) {
	gateName := strings.TrimSuffix(nftablesGate, "=true")
	for _, item := range strings.Split(value, ",") {
		k, v, _ := strings.Cut(item, "=")
		k = strings.TrimSpace(k)
		switch {
		case k == gateName:
			if b, err := strconv.ParseBool(strings.TrimSpace(v)); err == nil && b {
				enabled = true
			}
		case strings.EqualFold(k, gateName):
			miscased = true
		}
	}
	return enabled, miscased
}
