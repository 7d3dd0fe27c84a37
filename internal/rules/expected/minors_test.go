package expected

import (
	"slices"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

func names[T any](xs []T, name func(T) string) []string {
	var out []string
	for _, x := range xs {
		out = append(out, name(x))
	}
	return out
}

// The nftables skeleton per minor, as pkg/proxy/nftables/proxier.go
// setupNFTables writes it: 1.36 dropped mark-for-masquerade and added the
// hairpin-connections set; 1.37's additions are behind an alpha gate.
func TestNFTablesLayoutPerMinor(t *testing.T) {
	for _, tc := range []struct {
		minor             int
		markMasq, hairpin bool
	}{{34, true, false}, {35, true, false}, {36, false, true}, {37, false, true}} {
		rs, err := Render(Options{Backend: backend.NFTables, Kubernetes: rke2.KubeVersion{Major: 1, Minor: tc.minor, Patch: -1}, Families: []rules.Family{rules.IPv4}})
		if err != nil {
			t.Fatal(err)
		}
		tb := rs.Tables[0]
		chains := names(tb.Chains, func(c rules.Chain) string { return c.Name })
		sets := names(tb.Sets, func(s rules.Set) string { return s.Name })
		if got := slices.Contains(chains, "mark-for-masquerade"); got != tc.markMasq {
			t.Errorf("1.%d: mark-for-masquerade chain %v, want %v", tc.minor, got, tc.markMasq)
		}
		if got := slices.Contains(sets, HairpinSet); got != tc.hairpin {
			t.Errorf("1.%d: hairpin-connections set %v, want %v", tc.minor, got, tc.hairpin)
		}
	}
}

// The invariants keep what every known minor writes and nothing one of
// them lacks.
func TestInvariants(t *testing.T) {
	rs, err := Invariants(backend.NFTables, []rules.Family{rules.IPv4})
	if err != nil {
		t.Fatal(err)
	}
	tb := rs.Tables[0]
	chains := names(tb.Chains, func(c rules.Chain) string { return c.Name })
	sets := names(tb.Sets, func(s rules.Set) string { return s.Name })
	for _, want := range []string{"nat-prerouting", "nat-output", "nat-postrouting", "filter-input", "services", "masquerading"} {
		if !slices.Contains(chains, want) {
			t.Errorf("invariants lack chain %s: %v", want, chains)
		}
	}
	if slices.Contains(chains, "mark-for-masquerade") || slices.Contains(sets, HairpinSet) {
		t.Errorf("invariants keep a minor-specific object: chains %v sets %v", chains, sets)
	}
	for _, c := range tb.Chains {
		if c.Name == "masquerading" && len(c.Rules) != 0 {
			t.Errorf("masquerading's rules changed in 1.36, yet invariants keep %v", c.Rules)
		}
	}
	if !slices.Contains(sets, "service-ips") {
		t.Errorf("invariants lack service-ips: %v", sets)
	}
	// 1.38's localhost NodePort rejects are not in older minors, so a minor
	// newer than the newest known is not required to have them.
	if slices.Contains(sets, LocalhostNodePortRejectMap) || slices.Contains(chains, LocalhostNodePortRejectChain("udp")) || len(tb.Counters) != 0 {
		t.Errorf("invariants keep 1.38's localhost NodePort objects: chains %v sets %v counters %v", chains, sets, tb.Counters)
	}
	for _, c := range tb.Chains {
		if c.Name == "nodeport-endpoints-check" && slices.ContainsFunc(c.Rules, func(r rules.Rule) bool { return strings.Contains(r.Text, LocalhostNodePortRejectMap) }) {
			t.Errorf("invariants keep 1.38's localhost rule in nodeport-endpoints-check: %v", c.Rules)
		}
	}
}

func TestNewerThanKnownAndCandidates(t *testing.T) {
	if NewerThanKnown(Newest) || NewerThanKnown(rke2.KubeVersion{}) || !NewerThanKnown(rke2.KubeVersion{Major: 1, Minor: Newest.Minor + 1}) {
		t.Error("NewerThanKnown misjudges the newest, unknown or next minor")
	}
	var got []string
	for _, v := range Candidates(backend.NFTables) {
		got = append(got, v.String())
	}
	if want := []string{"v1.38", "v1.37", "v1.35", "v1.33"}; !slices.Equal(got, want) {
		t.Errorf("nftables candidates %v, want one per layout %v", got, want)
	}
}
