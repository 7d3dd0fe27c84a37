package verify

import (
	"fmt"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
)

// CleanupCommand is the command that removes kube-proxy's rules from b.
func CleanupCommand(b backend.Backend) string {
	return "rke2-proxy-backend cleanup --backend " + string(b)
}

// strandedFindings reports kube-proxy objects in a backend kube-proxy does
// not use: nothing ever removes them (kube-proxy cleans only its own
// backend), and they keep steering packets.
func strandedFindings(expect backend.Backend, st BackendState) []Finding {
	o := st.Owned
	if o == nil || o.Empty() {
		return nil
	}
	var names []string
	for _, t := range o.Tables {
		names = append(names, "table "+string(t.Family)+" "+t.Table)
	}
	if len(o.Tables) == 0 {
		for _, c := range o.Chains {
			names = append(names, c.String())
		}
		for _, j := range o.Jumps {
			names = append(names, fmt.Sprintf("%s jump to %s", j.ChainRef, j.Rule.Jump))
		}
	}
	return []Finding{{
		Kind:    KindStranded,
		Backend: st.Backend,
		Message: fmt.Sprintf("%d kube-proxy rule(s) in %d chain(s) stranded in %s while kube-proxy uses %s: %s",
			o.Rules, len(o.Chains), st.Backend, expect, list(names)),
		Fix: CleanupCommand(st.Backend),
	}}
}

// hintBackend is where kubelet's hint chains belong for kube-proxy's
// backend: the same iptables flavour, and iptables-nft for nftables mode
// (both go through nf_tables; a legacy hint there means the host's
// iptables is legacy while kube-proxy is not).
func hintBackend(expect backend.Backend) backend.Backend {
	if expect == backend.IptablesLegacy {
		return backend.IptablesLegacy
	}
	return backend.IptablesNFT
}

// hintFindings reports kubelet hint chains in a backend other than the one
// matching kube-proxy's: kubelet writes them with the host's iptables, so
// the host alternative and kube-proxy disagree, and the image's wrapper
// may pick the wrong backend at the next start.
func hintFindings(expect backend.Backend, states []BackendState) []Finding {
	want := hintBackend(expect)
	var out []Finding
	for _, st := range states {
		if st.Backend == want || len(st.KubeletHints) == 0 {
			continue
		}
		alt := "iptables-nft"
		if want == backend.IptablesLegacy {
			alt = "iptables-legacy"
		}
		out = append(out, Finding{
			Kind:    KindKubeletHint,
			Backend: st.Backend,
			Message: fmt.Sprintf("kubelet's hint chains are in %s but kube-proxy uses %s: %s", st.Backend, expect, list(st.KubeletHints)),
			Fix: fmt.Sprintf("point the host's iptables at %s (update-alternatives --set iptables /usr/sbin/%s; update-alternatives --set ip6tables /usr/sbin/%s) and reboot the node",
				alt, alt, "ip6"+strings.TrimPrefix(alt, "ip")),
		})
	}
	return out
}
