package expected

import (
	"fmt"
	"slices"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// KnownMinors are the Kubernetes minors whose footprint this model is
// proven against: the oracle test (oracle_netns_test.go) programs each
// with kube-proxy's own proxiers and compares. Supporting a new minor is
// appending it here and fixing what that test then reports.
var KnownMinors = []rke2.KubeVersion{
	{Major: 1, Minor: 34, Patch: -1},
	{Major: 1, Minor: 35, Patch: -1},
	{Major: 1, Minor: 36, Patch: -1},
	{Major: 1, Minor: 37, Patch: -1},
	{Major: 1, Minor: 38, Patch: -1},
}

// Newest is the newest known minor: Render uses its layout when the
// version is unknown.
var Newest = KnownMinors[len(KnownMinors)-1]

// NewerThanKnown reports whether kv is a minor this model has not seen:
// its layout may differ in ways no source here describes.
func NewerThanKnown(kv rke2.KubeVersion) bool {
	return kv.Known() && !(Newest.AtLeast(kv.Major, kv.Minor))
}

// Layout names the footprint layout kube-proxy of kv writes in backend b:
// minors with the same name write the same skeleton.
func Layout(b backend.Backend, kv rke2.KubeVersion) string {
	if !kv.Known() {
		kv = Newest
	}
	if b != backend.NFTables {
		if !kv.AtLeast(1, 28) {
			return "iptables before 1.28 (KUBE-MARK-DROP)"
		}
		return "iptables 1.28+"
	}
	switch {
	case !kv.AtLeast(1, 34):
		return "nftables 1.31-1.33 (filter chains before DNAT)"
	case !kv.AtLeast(1, 36):
		return "nftables 1.34-1.35 (mark-for-masquerade chain)"
	case !kv.AtLeast(1, 38):
		return "nftables 1.36-1.37 (hairpin-connections set, numgen DNAT maps)"
	}
	return "nftables 1.38+ (localhost NodePort reject map, chains and counters)"
}

// Candidates are the versions whose layouts verify tries when the node's
// Kubernetes version is unknown, one per distinct layout, newest first: the
// known minors plus the older layouts the sources describe.
func Candidates(b backend.Backend) []rke2.KubeVersion {
	all := slices.Clone(KnownMinors)
	slices.Reverse(all)
	if b == backend.NFTables {
		all = append(all, rke2.KubeVersion{Major: 1, Minor: 33, Patch: -1})
	}
	var out []rke2.KubeVersion
	seen := map[string]bool{}
	for _, v := range all {
		if l := Layout(b, v); !seen[l] {
			seen[l] = true
			out = append(out, v)
		}
	}
	return out
}

// Invariants renders what every known minor's skeleton shares in backend
// b: the tables, the chains present in all with the same hook, type and
// priority, the base-chain rules and sets all have. verify judges a version
// newer than any known one by these alone.
func Invariants(b backend.Backend, families []rules.Family) (*rules.Ruleset, error) {
	var out *rules.Ruleset
	for _, kv := range KnownMinors {
		rs, err := Render(Options{Backend: b, Kubernetes: kv, Families: families})
		if err != nil {
			return nil, fmt.Errorf("invariants of %s: %w", b, err)
		}
		if out == nil {
			out = rs
			continue
		}
		out = intersect(out, rs)
	}
	return out, nil
}

// intersect keeps what a and b both have, in a's order.
func intersect(a, b *rules.Ruleset) *rules.Ruleset {
	out := &rules.Ruleset{Backend: a.Backend}
	for _, ta := range a.Tables {
		tb := b.Table(ta.Family, ta.Name)
		if tb == nil {
			continue
		}
		t := rules.Table{Family: ta.Family, Name: ta.Name, Comment: ta.Comment}
		for _, ca := range ta.Chains {
			cb := tb.Chain(ca.Name)
			if cb == nil || ca.Hook != cb.Hook || ca.Type != cb.Type || ca.Priority != cb.Priority {
				continue
			}
			c := ca
			c.Rules = []rules.Rule{}
			for _, r := range ca.Rules {
				if slices.ContainsFunc(cb.Rules, func(o rules.Rule) bool { return o.Text == r.Text }) {
					c.Rules = append(c.Rules, r)
				}
			}
			t.Chains = append(t.Chains, c)
		}
		for _, s := range ta.Sets {
			if slices.ContainsFunc(tb.Sets, func(o rules.Set) bool { return o.Name == s.Name && o.Type == s.Type }) {
				t.Sets = append(t.Sets, s)
			}
		}
		for _, c := range ta.Counters {
			if slices.Contains(tb.Counters, c) {
				t.Counters = append(t.Counters, c)
			}
		}
		out.Tables = append(out.Tables, t)
	}
	return out
}
