package verify

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ownership"
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
	return []Finding{{
		Kind:    KindStranded,
		Backend: st.Backend,
		Message: fmt.Sprintf("%d kube-proxy rule(s) stranded in %s while kube-proxy uses %s; %s",
			o.Rules, st.Backend, expect, strandedParts(o)),
		Fix: CleanupCommand(st.Backend),
	}}
}

// strandedFindings is strandedFindings for g's node: on k3s st.Owned holds
// the group's objects out of place in st.Backend (flannel's and
// kube-router's with kube-proxy's), and the fix moves the whole group.
func (g group) strandedFindings(st BackendState) []Finding {
	o := st.Owned
	if !g.embedded() || o == nil || o.Empty() || st.strays == "" {
		return strandedFindings(g.expect, st)
	}
	where := string(g.expect)
	if g.expect == backend.NFTables {
		where += " (flannel's and kube-router's iptables rules belong in " + string(backend.IptablesNFT) + ")"
	}
	return []Finding{{
		Kind:    KindStranded,
		Backend: st.Backend,
		Message: fmt.Sprintf("%d rule(s) of %s stranded in %s while kube-proxy uses %s; %s",
			o.Rules, st.strays, st.Backend, where, strandedParts(o)),
		Fix: g.k3sFix(st.Backend),
	}}
}

// writers are the owners of o's tables and chains (every jump of o leads
// into one of them), kube-proxy first, then in the order met.
func writers(o *ownership.Owned) ownership.Group {
	var out ownership.Group
	add := func(table, chain string) {
		if w := ownership.Of(table, chain); !out.Has(w) {
			out = append(out, w)
		}
	}
	if len(o.Tables) > 0 {
		add(o.Tables[0].Table, "")
	}
	for _, c := range o.Chains {
		add(c.Table, c.Chain)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i] == ownership.KubeProxy && out[j] != ownership.KubeProxy })
	return out
}

// strandedParts lists o's objects, tables or else chains and jumps.
func strandedParts(o *ownership.Owned) string {
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
	return strings.Join(parts, "; ")
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

// KubeletHintsCleanup is the command that removes kubelet's leftover hint
// chains once kubelet has written its own where kube-proxy's backend wants.
const KubeletHintsCleanup = "rke2-proxy-backend cleanup --kubelet-hints"

// hintFindings reports kubelet hint chains in a backend other than the one
// matching kube-proxy's. kubelet writes them with the host's iptables at
// its start and never removes them, so there are two causes, with two
// fixes: the host's iptables points at the other backend (kubelet keeps
// writing them there), or it already points at the right one and the
// chains are the leftovers of the kubelet before a switch. hostIptables is
// where the alternative points ("legacy", "nft"; anything else unknown).
func hintFindings(expect backend.Backend, states []BackendState, hostIptables string) []Finding {
	return group{expect: expect}.hintFindings(states, hostIptables)
}

// hintFindings is hintFindings for g's node. On k3s kubelet runs inside
// the k3s process as kube-proxy does and writes its hints with the same
// PATH iptables (k3s-root's bin/aux links), not the host's alternative:
// what moves them is k3s's restart, after which apply has reset the links.
func (g group) hintFindings(states []BackendState, hostIptables string) []Finding {
	want := HintBackend(g.expect)
	wantHas := slices.ContainsFunc(states, func(st BackendState) bool { return st.Backend == want && len(st.KubeletHints) > 0 })
	var out []Finding
	for _, st := range states {
		if st.Backend == want || len(st.KubeletHints) == 0 {
			continue
		}
		f := Finding{Kind: KindKubeletHint, Backend: st.Backend}
		hints := list(st.KubeletHints)
		switch {
		case g.embedded() && wantHas:
			f.Message = fmt.Sprintf("kubelet's hint chains in %s are leftovers: kubelet, which runs inside k3s, already wrote its own in %s, but kubelet never removes the old ones: %s",
				st.Backend, want, hints)
			f.Fix = KubeletHintsCleanup + " (no reboot needed)"
		case g.embedded():
			f.Message = fmt.Sprintf("kubelet's hint chains are in %s but kube-proxy uses %s: kubelet runs inside k3s and writes them at its start with k3s's PATH iptables, which pointed at %s then: %s",
				st.Backend, g.expect, st.Backend, hints)
			f.Fix = fmt.Sprintf("restart k3s so apply resets k3s-root's bin/aux links and kubelet writes them in %s: %s; then %s", want, g.restart(), KubeletHintsCleanup)
		case hostIptables == want.IptablesMode() && wantHas:
			f.Message = fmt.Sprintf("kubelet's hint chains in %s are leftovers: the host's iptables already points at %s and kubelet wrote its own there, but kubelet never removes the old ones: %s",
				st.Backend, want, hints)
			f.Fix = KubeletHintsCleanup + " (no reboot needed)"
		case hostIptables == want.IptablesMode():
			f.Message = fmt.Sprintf("kubelet's hint chains are in %s although the host's iptables already points at %s: kubelet has not started since the alternative moved (it writes them at its start): %s",
				st.Backend, want, hints)
			f.Fix = fmt.Sprintf("restart %s so kubelet writes them in %s: %s; then %s", g.kind.Name(), want, g.restart(), KubeletHintsCleanup)
		default:
			alt := string(want)
			f.Message = fmt.Sprintf("kubelet's hint chains are in %s but kube-proxy uses %s: the host's iptables points at %s, and kubelet writes them with it: %s",
				st.Backend, g.expect, hostIptablesName(hostIptables), hints)
			f.Fix = fmt.Sprintf("point the host's iptables at %s (update-alternatives --set iptables /usr/sbin/%s; update-alternatives --set ip6tables /usr/sbin/%s), restart %s so kubelet writes its hints there: %s; then %s (or reboot the node)",
				alt, alt, "ip6"+strings.TrimPrefix(alt, "ip"), g.kind.Name(), g.restart(), KubeletHintsCleanup)
		}
		out = append(out, f)
	}
	return out
}

func hostIptablesName(mode string) string {
	switch mode {
	case "legacy":
		return "iptables-legacy"
	case "nft":
		return "iptables-nft"
	}
	return "a flavour verify could not tell"
}
