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
	// Each list is counted on its own, so "and N more" is N of that list.
	var parts []string
	if len(o.Tables) > 0 {
		var tables []string
		for _, t := range o.Tables {
			tables = append(tables, "table "+string(t.Family)+" "+t.Table)
		}
		parts = append(parts, fmt.Sprintf("%d table(s): %s", len(tables), list(tables)))
	} else {
		var chains, jumps []string
		for _, c := range o.Chains {
			chains = append(chains, c.String())
		}
		for _, j := range o.Jumps {
			jumps = append(jumps, fmt.Sprintf("%s to %s", j.ChainRef, j.Rule.Jump))
		}
		if len(chains) > 0 {
			parts = append(parts, fmt.Sprintf("%d chain(s): %s", len(chains), list(chains)))
		}
		if len(jumps) > 0 {
			parts = append(parts, fmt.Sprintf("%d jump(s) into them: %s", len(jumps), list(jumps)))
		}
	}
	return []Finding{{
		Kind:    KindStranded,
		Backend: st.Backend,
		Message: fmt.Sprintf("%d kube-proxy rule(s) stranded in %s while kube-proxy uses %s; %s",
			o.Rules, st.Backend, expect, strings.Join(parts, "; ")),
		Fix: CleanupCommand(st.Backend),
	}}
}

// HintBackend is where kubelet's hint chains belong for kube-proxy's
// backend: the same iptables flavour, and iptables-nft for nftables mode
// (both go through nf_tables; a legacy hint there means the host's
// iptables is legacy while kube-proxy is not).
func HintBackend(expect backend.Backend) backend.Backend {
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
	want := HintBackend(expect)
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
