package verify_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/oracle"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// footprintDisagreements compares the footprint model of minor kv (what
// verify requires: tables, fixed chains, base-chain hooks and jumps,
// sets and maps, dispatch) with a live ruleset kube-proxy itself programmed,
// both ways: what the model requires and kube-proxy did not write fails
// healthy nodes; what kube-proxy writes and the model lacks is a layout
// change verify cannot see. Per-service objects and config-dependent rule
// texts are not the model's business.
func footprintDisagreements(b backend.Backend, kv rke2.KubeVersion, fams []rules.Family, live *rules.Ruleset) []string {
	want, err := expected.Render(expected.Options{Backend: b, Kubernetes: kv, Families: fams})
	if err != nil {
		return []string{err.Error()}
	}
	return modelDisagreements(want, live)
}

// modelDisagreements compares a rendered model with live, both ways.
func modelDisagreements(want, live *rules.Ruleset) []string {
	b := want.Backend
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	for _, wt := range want.Tables {
		lt := live.Table(wt.Family, wt.Name)
		if lt == nil {
			add("model requires %s table %s, kube-proxy wrote none", wt.Family, wt.Name)
			continue
		}
		where := fmt.Sprintf("%s table %s", wt.Family, wt.Name)
		for _, wc := range wt.Chains {
			lc := lt.Chain(wc.Name)
			switch {
			case lc == nil && b.UsesIptables() && rules.IsBuiltinChain(wt.Name, wc.Name):
				// iptables-nft creates a built-in chain only when a rule needs it.
			case lc == nil:
				add("%s: model requires chain %s, kube-proxy did not write it", where, wc.Name)
			case b == backend.NFTables && (lc.Hook != wc.Hook || lc.Type != wc.Type || lc.Priority != wc.Priority):
				add("%s: base chain %s is type %s hook %s priority %d, the model says type %s hook %s priority %d",
					where, wc.Name, lc.Type, lc.Hook, lc.Priority, wc.Type, wc.Hook, wc.Priority)
			}
		}
		for _, ws := range wt.Sets {
			if ws.Name == expected.NodePortIPsSet {
				continue // present or not by --nodeport-addresses
			}
			if ls := lt.Set(ws.Name); ls == nil {
				add("%s: model requires set %s, kube-proxy did not write it", where, ws.Name)
			} else if ls.Type != ws.Type {
				add("%s: set %s has type %q, the model says %q", where, ws.Name, ls.Type, ws.Type)
			}
		}
		for _, lc := range lt.Chains {
			if perService(b, lc.Name) || !kubeOwned(b, wt.Name, lc.Name) {
				continue
			}
			wc := wt.Chain(lc.Name)
			if wc == nil {
				add("%s: kube-proxy wrote chain %s, the model lacks it", where, lc.Name)
				continue
			}
			if lc.Hook == "" {
				continue
			}
			if got, exp := jumpTargets(b, lc), jumpTargets(b, *wc); !slices.Equal(got, exp) {
				add("%s: base chain %s jumps to %v, the model says %v", where, lc.Name, got, exp)
			}
		}
		for _, ls := range lt.Sets {
			if !perService(b, ls.Name) && ls.Name != expected.NodePortIPsSet && wt.Set(ls.Name) == nil {
				add("%s: kube-proxy wrote set %s, the model lacks it", where, ls.Name)
			}
		}
		for _, c := range wt.Counters {
			if !slices.Contains(lt.Counters, c) {
				add("%s: model requires counter %s, kube-proxy did not write it", where, c)
			}
		}
		for _, c := range lt.Counters {
			if !slices.Contains(wt.Counters, c) {
				add("%s: kube-proxy wrote counter %s, the model lacks it", where, c)
			}
		}
		// 1.38's localhost NodePort objects are rendered exactly as
		// kube-proxy writes them with its default configuration.
		if ws, ls := wt.Set(expected.LocalhostNodePortRejectMap), lt.Set(expected.LocalhostNodePortRejectMap); ws != nil && ls != nil && ls.Comment != ws.Comment {
			add("%s: map %s has comment %q, the model says %q", where, ws.Name, ls.Comment, ws.Comment)
		}
		for _, name := range exactChains {
			wc, lc := wt.Chain(name), lt.Chain(name)
			if wc == nil || lc == nil {
				continue // reported above
			}
			if got, exp := ruleTexts(*lc), ruleTexts(*wc); !slices.Equal(got, exp) {
				add("%s: chain %s has rules %q, the model says %q", where, name, got, exp)
			}
		}
		// nodeport-endpoints-check's first rule depends on
		// --nodeport-addresses; the localhost one does not.
		if wc, lc := wt.Chain("nodeport-endpoints-check"), lt.Chain("nodeport-endpoints-check"); wc != nil && lc != nil {
			for _, r := range wc.Rules {
				if strings.Contains(r.Text, expected.LocalhostNodePortRejectMap) && !slices.Contains(ruleTexts(*lc), r.Text) {
					add("%s: nodeport-endpoints-check lacks the model's %q: it has %q", where, r.Text, ruleTexts(*lc))
				}
			}
			for _, r := range lc.Rules {
				if strings.Contains(r.Text, expected.LocalhostNodePortRejectMap) && !slices.Contains(ruleTexts(*wc), r.Text) {
					add("%s: kube-proxy wrote %q in nodeport-endpoints-check, the model lacks it", where, r.Text)
				}
			}
		}
	}
	for _, lt := range live.Tables {
		if (b == backend.NFTables && lt.Name == vocab.NFTablesTable) && want.Table(lt.Family, lt.Name) == nil {
			add("kube-proxy wrote %s table %s, the model lacks it", lt.Family, lt.Name)
		}
	}
	return out
}

// exactChains are the nftables chains whose every rule the model renders
// as kube-proxy writes them (the others' texts depend on the cluster's
// configuration and are not compared).
var exactChains = []string{
	expected.LocalhostNodePortRejectChain("tcp"), expected.LocalhostNodePortRejectChain("udp"), expected.LocalhostNodePortRejectChain("sctp"),
}

func ruleTexts(c rules.Chain) []string {
	out := make([]string, len(c.Rules))
	for i, r := range c.Rules {
		out[i] = r.Text
	}
	return out
}

// perService: iptables KUBE-SVC-/KUBE-SEP-/... chains; nftables objects
// named after a service ("service-HASH-ns/name/proto/port", affinity sets).
func perService(b backend.Backend, name string) bool {
	if b == backend.NFTables {
		return strings.Contains(name, "/")
	}
	return vocab.IsPerServiceChain(name)
}

// kubeOwned: every object of kube-proxy's nftables table; in iptables,
// built-in chains (for their jumps) and KUBE-* chains, not a CNI's.
func kubeOwned(b backend.Backend, table, chain string) bool {
	if b == backend.NFTables {
		return table == vocab.NFTablesTable
	}
	return rules.IsBuiltinChain(table, chain) || strings.HasPrefix(chain, "KUBE-")
}

// jumpTargets are the sorted kube chains a base chain jumps to.
func jumpTargets(b backend.Backend, c rules.Chain) []string {
	var out []string
	for _, r := range c.Rules {
		if r.Jump != "" && (b == backend.NFTables || strings.HasPrefix(r.Jump, "KUBE-")) {
			out = append(out, r.Jump)
		}
	}
	slices.Sort(out)
	return out
}

// The comparison itself must be able to fail: a model of the wrong minor
// disagrees with a footprint in both directions.
func TestFootprintDisagreementsCanFail(t *testing.T) {
	bothFamilies := []rules.Family{rules.IPv4, rules.IPv6}
	v134 := rke2.KubeVersion{Major: 1, Minor: 34, Patch: -1}
	v136 := rke2.KubeVersion{Major: 1, Minor: 36, Patch: -1}
	live, err := expected.Render(expected.Options{Backend: backend.NFTables, Kubernetes: v136, Services: 3, Families: bothFamilies})
	if err != nil {
		t.Fatal(err)
	}
	if d := footprintDisagreements(backend.NFTables, v136, bothFamilies, live); len(d) != 0 {
		t.Errorf("the 1.36 model disagrees with its own render: %q", d)
	}
	d := strings.Join(footprintDisagreements(backend.NFTables, v134, bothFamilies, live), "\n")
	for _, want := range []string{"model requires chain mark-for-masquerade", "kube-proxy wrote set hairpin-connections, the model lacks it"} {
		if !strings.Contains(d, want) {
			t.Errorf("1.34 model against 1.36 rules: want %q in\n%s", want, d)
		}
	}
}

// Every minor the oracle runs must be one the model knows: a new minor is
// added to both, and the oracle matrix then shows what changed.
func TestOracleMinorsAreKnown(t *testing.T) {
	for _, m := range oracle.Minors {
		kv, err := rke2.ParseVersion(m)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(expected.KnownMinors, func(k rke2.KubeVersion) bool { return k.Major == kv.Major && k.Minor == kv.Minor }) {
			t.Errorf("the oracle runs Kubernetes %s, which expected.KnownMinors lacks: add it there and fix what the oracle matrix reports", m)
		}
	}
}
