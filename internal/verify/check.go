package verify

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ownership"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
)

// Finding kinds.
const (
	KindMissingTable = "missing-table"
	KindMissingChain = "missing-chain"
	KindMissingJump  = "missing-jump"
	// KindMissingDispatch: a Service dispatch rule outside the base chains
	// is gone (nftables vmap @service-ips / @service-nodeports, iptables
	// nat KUBE-SERVICES -> KUBE-NODEPORTS).
	KindMissingDispatch = "missing-dispatch"
	KindBaseChain       = "wrong-base-chain"
	KindMissingSet      = "missing-set"
	// KindMissingCounter: a named nftables counter kube-proxy counts in is
	// gone (1.38's localhost NodePort reject counters).
	KindMissingCounter = "missing-counter"
	KindStranded       = "stranded-rules"
	KindKubeletHint    = "kubelet-hint"
	KindProxyMode      = "proxy-mode"
	KindReadError      = "read-error"
)

// missingSkeleton compares the live ruleset of the expected backend with the
// rendered skeleton and returns what is absent. Only the footprint every
// kube-proxy of that layout writes is checked: tables, fixed chains,
// base-chain jumps with their comments, nftables base chains and sets; never
// per-service rules, which depend on the cluster.
func (g group) missingSkeleton(want, live *rules.Ruleset) []Finding {
	var out []Finding
	for _, wt := range want.Tables {
		lt := live.Table(wt.Family, wt.Name)
		where := fmt.Sprintf("%s %s table %s", want.Backend, wt.Family, wt.Name)
		if lt == nil {
			out = append(out, Finding{Kind: KindMissingTable, Backend: want.Backend, Family: wt.Family, Table: wt.Name,
				Message: where + " is absent: kube-proxy has not synced in this backend", Fix: g.restartKubeProxy()})
			continue
		}
		var chains, jumps []string
		for _, wc := range wt.Chains {
			if ownership.IsKubeletHintChain(wc.Name) {
				continue // kubelet's; reported by the hint check, not here
			}
			lc := lt.Chain(wc.Name)
			if lc == nil && expected.LocalhostProxiedTCP(wc.Name) {
				continue // absent when kube-proxy proxies TCP localhost NodePorts itself
			}
			if lc == nil {
				// iptables-nft creates a built-in chain only when a rule
				// needs it: a missing one shows as missing jumps.
				if want.Backend.UsesIptables() && rules.IsBuiltinChain(wt.Name, wc.Name) {
					lc = &rules.Chain{Name: wc.Name}
				} else {
					chains = append(chains, wc.Name)
					continue
				}
			}
			if want.Backend == backend.NFTables && wc.Hook != "" &&
				(lc.Hook != wc.Hook || lc.Type != wc.Type || lc.Priority != wc.Priority) {
				out = append(out, Finding{Kind: KindBaseChain, Backend: want.Backend, Family: wt.Family, Table: wt.Name,
					Message: fmt.Sprintf("%s: base chain %s is type %q hook %q priority %d, want type %s hook %s priority %d",
						where, wc.Name, lc.Type, lc.Hook, lc.Priority, wc.Type, wc.Hook, wc.Priority),
					Fix: g.restartKubeProxy()})
			}
			for _, wr := range requiredJumps(want.Backend, wt.Name, wc) {
				if !slices.ContainsFunc(lc.Rules, func(r rules.Rule) bool { return jumpMatches(r, wr) }) {
					jumps = append(jumps, describeJump(wc.Name, wr))
				}
			}
		}
		if d := missingDispatch(want.Backend, lt, wt); len(d) > 0 {
			out = append(out, Finding{Kind: KindMissingDispatch, Backend: want.Backend, Family: wt.Family, Table: wt.Name,
				Message: fmt.Sprintf("%s lacks Service dispatch: %s", where, list(d)), Fix: g.fixFor(d)})
		}
		if len(chains) > 0 {
			out = append(out, Finding{Kind: KindMissingChain, Backend: want.Backend, Family: wt.Family, Table: wt.Name,
				Message: fmt.Sprintf("%s lacks %d kube-proxy chain(s): %s", where, len(chains), list(chains)), Fix: g.fixFor(chains)})
		}
		if len(jumps) > 0 {
			out = append(out, Finding{Kind: KindMissingJump, Backend: want.Backend, Family: wt.Family, Table: wt.Name,
				Message: fmt.Sprintf("%s lacks %d base-chain jump(s): %s", where, len(jumps), list(jumps)), Fix: g.restartKubeProxy()})
		}
		var sets []string
		for _, ws := range wt.Sets {
			if ws.Name == expected.NodePortIPsSet {
				continue // absent when NodePorts accept every address
			}
			if !slices.ContainsFunc(lt.Sets, func(s rules.Set) bool { return s.Name == ws.Name }) {
				sets = append(sets, ws.Name)
			}
		}
		if len(sets) > 0 {
			out = append(out, Finding{Kind: KindMissingSet, Backend: want.Backend, Family: wt.Family, Table: wt.Name,
				Message: fmt.Sprintf("%s lacks set(s)/map(s): %s", where, list(sets)), Fix: g.fixFor(sets)})
		}
		var counters []string
		for _, c := range wt.Counters {
			if !slices.Contains(lt.Counters, c) && !expected.LocalhostProxiedTCP(c) {
				counters = append(counters, c)
			}
		}
		if len(counters) > 0 {
			out = append(out, Finding{Kind: KindMissingCounter, Backend: want.Backend, Family: wt.Family, Table: wt.Name,
				Message: fmt.Sprintf("%s lacks named counter(s): %s", where, list(counters)), Fix: g.fixFor(counters)})
		}
	}
	return out
}

// localhostGateHint: 1.38's localhost NodePort objects are missing by
// design where the operator turned their feature gate off, which verify
// cannot see (it does not read kube-proxy's flags).
const localhostGateHint = "; if kube-proxy runs with feature-gates=KubeProxyNFTablesLocalhostNodePorts=false, the localhost-nodeport-* objects are absent by design: judge this node with --kubernetes v1.37"

// fixFor is the fix for a finding naming these missing objects.
func (g group) fixFor(missing []string) string {
	if slices.ContainsFunc(missing, func(m string) bool { return strings.Contains(m, "localhost-nodeport-") }) {
		return g.restartKubeProxy() + localhostGateHint
	}
	return g.restartKubeProxy()
}

// requiredJumps are the rules of c that must exist live: every jump in a
// base chain (dispatch rules elsewhere are missingDispatch's).
func requiredJumps(_ backend.Backend, _ string, c rules.Chain) []rules.Rule {
	var out []rules.Rule
	for _, r := range c.Rules {
		if r.Jump != "" && c.Hook != "" {
			out = append(out, r)
		}
	}
	return out
}

// missingDispatch names the dispatch rules of table wt (as the skeleton
// has them) that live table lt lacks. A chain that is missing altogether
// is reported as a missing chain instead.
func missingDispatch(b backend.Backend, lt *rules.Table, wt rules.Table) []string {
	var out []string
	for _, d := range expected.Dispatches(b) {
		if d.Table != wt.Name || wt.Chain(d.Chain) == nil || (d.Jump != "" && wt.Chain(d.Jump) == nil) {
			continue // not this table's, or another proxy mode's
		}
		lc := lt.Chain(d.Chain)
		if lc == nil {
			continue
		}
		if d.Jump != "" && !slices.ContainsFunc(lc.Rules, func(r rules.Rule) bool { return r.Jump == d.Jump || textJumps(r.Text, d.Jump) }) {
			out = append(out, fmt.Sprintf("%s has no rule jumping to %s (%s)", d.Chain, d.Jump, d.What))
		}
		if d.Key != "" && !hasKey(*wt.Chain(d.Chain), d.Key) {
			continue // not in this layout (the skeleton of an older minor, or the invariants)
		}
		if d.Key != "" && !hasKey(*lc, d.Key) {
			out = append(out, fmt.Sprintf("%s has no rule with %q (%s)", d.Chain, d.Key, d.What))
		}
	}
	return out
}

func hasKey(c rules.Chain, key string) bool {
	return slices.ContainsFunc(c.Rules, func(r rules.Rule) bool { return strings.Contains(r.Text, key) })
}

// jumpMatches compares by target and comment, not by text: readers of
// different backends print the same rule's matches differently.
func jumpMatches(live, want rules.Rule) bool {
	if live.Jump != want.Jump && !textJumps(live.Text, want.Jump) {
		return false
	}
	return live.Comment == want.Comment || (want.Comment != "" && strings.Contains(live.Text, want.Comment))
}

func textJumps(text, target string) bool {
	for _, verb := range []string{"-j ", "-g ", "jump ", "goto "} {
		if strings.HasSuffix(text, verb+target) || strings.Contains(text, verb+target+" ") {
			return true
		}
	}
	return false
}

func describeJump(chain string, r rules.Rule) string {
	s := chain + " -> " + r.Jump
	if r.Comment != "" {
		s += fmt.Sprintf(" (%q)", r.Comment)
	}
	return s
}

// list prints names, shortening long lists so a report stays readable.
func list(names []string) string { return clipList(names, 8) }
