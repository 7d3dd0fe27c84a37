package adopt

import (
	"context"
	"fmt"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeproxy"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ownership"
)

// Observation is what runs now, read from the kernel, kube-proxy and RKE2's
// config; nothing in it is a guess.
type Observation struct {
	// KubeProxy are the backends holding kube-proxy's rules (chains or its
	// nftables tables), in backend.All's order; KubeletHint those holding
	// kubelet's hint chains.
	KubeProxy   []backend.Backend `json:"kube_proxy"`
	KubeletHint []backend.Backend `json:"kubelet_hint"`
	// ProxyMode is kube-proxy's answer on /proxyMode ("" when none came);
	// ProxyModeNote says why none came, ProxyModeProblem what answered
	// instead of kube-proxy.
	ProxyMode        string `json:"proxy_mode,omitempty"`
	ProxyModeNote    string `json:"proxy_mode_note,omitempty"`
	ProxyModeProblem string `json:"proxy_mode_problem,omitempty"`
	// RKE2ProxyMode and RKE2IptablesMode are what RKE2's effective config
	// (every file it reads, our drop-in included) gives kube-proxy, each
	// with the file that set it ("" when nothing sets it).
	RKE2ProxyMode        string `json:"rke2_proxy_mode,omitempty"`
	RKE2ProxyModeFile    string `json:"rke2_proxy_mode_file,omitempty"`
	RKE2IptablesMode     string `json:"rke2_iptables_mode,omitempty"`
	RKE2IptablesModeFile string `json:"rke2_iptables_mode_file,omitempty"`
	// dist is the node's distribution, for the words. Where kube-proxy
	// is embedded (k3s) RKE2IptablesMode is the operator's in the unit's
	// environment (our generator's drop-in is not counted), with the file
	// and line.
	dist distro.Kind
}

// observe reads every backend's live rules through the project's one
// netfilter reader (kube-proxy's and kubelet's objects found by ownership,
// as verify and cleanup find them) and asks kube-proxy for its mode once.
func observe(ctx context.Context, o Options, f facts.Facts) (Observation, error) {
	obs := Observation{KubeProxy: []backend.Backend{}, KubeletHint: []backend.Backend{}}
	for _, b := range backend.All {
		rs, err := o.Reader.Read(ctx, b)
		if err != nil {
			if netfilter.IsPermission(err) {
				return obs, fmt.Errorf("reading %s's live rules: %w (run adopt as root)", b, err)
			}
			return obs, fmt.Errorf("reading %s's live rules: %w; without them what kube-proxy runs cannot be told", b, err)
		}
		owned := ownership.Find(rs, b == backend.NFTables)
		if !owned.Empty() {
			obs.KubeProxy = append(obs.KubeProxy, b)
		}
		if len(owned.KubeletHints) > 0 {
			obs.KubeletHint = append(obs.KubeletHint, b)
		}
	}
	if o.ProxyModeURL != "" {
		obs.ProxyMode, obs.ProxyModeNote, obs.ProxyModeProblem = kubeproxy.AskProxyMode(ctx, o.ProxyModeURL)
	} else {
		obs.ProxyModeNote = "it was not asked: --proxy-mode-url is empty"
	}
	eff := f.RKE2.Config
	obs.RKE2ProxyMode, obs.RKE2ProxyModeFile = eff.ProxyMode()
	obs.RKE2IptablesMode, obs.RKE2IptablesModeFile = eff.IptablesMode()
	obs.dist = f.RKE2.Distribution
	if obs.dist.Profile().KubeProxyEmbedded {
		// kube-proxy runs inside k3s: its IPTABLES_MODE is the unit's.
		obs.RKE2IptablesMode, obs.RKE2IptablesModeFile = "", ""
		if env := f.RKE2.K3sIptablesMode(); env != nil {
			obs.RKE2IptablesMode, obs.RKE2IptablesModeFile = env.Value, env.Where()
		}
	}
	obs.RKE2IptablesMode = strings.TrimSpace(obs.RKE2IptablesMode)
	return obs, nil
}

// names joins backends for a sentence.
func names(bs []backend.Backend) string {
	s := make([]string, len(bs))
	for i, b := range bs {
		s[i] = string(b)
	}
	return strings.Join(s, " and ")
}

// rke2Says is one sentence on what RKE2's config gives kube-proxy, and a
// warning when that disagrees with b, the backend whose rules are live.
func (obs Observation) rke2Says(b backend.Backend) (reason, warning string) {
	var set []string
	if obs.RKE2ProxyMode != "" {
		set = append(set, fmt.Sprintf("proxy-mode=%s (in %s)", obs.RKE2ProxyMode, obs.RKE2ProxyModeFile))
	}
	if obs.RKE2IptablesMode != "" {
		set = append(set, fmt.Sprintf("IPTABLES_MODE=%s (in %s)", obs.RKE2IptablesMode, obs.RKE2IptablesModeFile))
	}
	embedded, name := obs.dist.Profile().KubeProxyEmbedded, obs.dist.Name()
	switch {
	case len(set) == 0 && embedded:
		reason = "k3s's config sets no proxy-mode and its unit no IPTABLES_MODE, so kube-proxy runs in its default iptables mode and the iptables k3s runs (its bundled iptables-detect.sh, or the host's when that comes first in k3s's PATH) chose the iptables variant itself."
	case len(set) == 0:
		reason = "RKE2's config sets neither proxy-mode nor IPTABLES_MODE, so kube-proxy runs in RKE2's default iptables mode and its image chose the iptables variant itself."
	case embedded:
		reason = "k3s's settings give kube-proxy " + strings.Join(set, " and ") + "."
	default:
		reason = "RKE2's config gives kube-proxy " + strings.Join(set, " and ") + "."
	}
	mode := obs.RKE2ProxyMode
	if mode == "" {
		mode = "iptables"
	}
	says := name + "'s config says"
	if embedded {
		says = name + "'s settings say"
	}
	switch {
	case mode != b.ProxyMode():
		warning = fmt.Sprintf("%s proxy-mode=%s but kube-proxy's rules are in %s: %s was started before that setting was made.", says, mode, b, name)
	case b != backend.NFTables && obs.RKE2IptablesMode != "" && obs.RKE2IptablesMode != b.IptablesMode():
		warning = fmt.Sprintf("%s IPTABLES_MODE=%s (in %s) but kube-proxy's rules are in %s: %s was started before that setting was made.", says, obs.RKE2IptablesMode, obs.RKE2IptablesModeFile, b, name)
	}
	return reason, warning
}
