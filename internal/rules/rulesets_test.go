package rules_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
)

// The two forms of `render` say the same: the JSON read back and printed
// as text is the text, byte for byte, and it is sorted even when the
// rulesets handed in are not.
func TestRulesetsTextAndJSONAgree(t *testing.T) {
	var s rules.Rulesets
	for _, b := range backend.All {
		rs, err := expected.Render(expected.Options{Backend: b, Services: 3})
		if err != nil {
			t.Fatal(err)
		}
		// Unsorted on purpose: tables and chains reversed.
		for i, j := 0, len(rs.Tables)-1; i < j; i, j = i+1, j-1 {
			rs.Tables[i], rs.Tables[j] = rs.Tables[j], rs.Tables[i]
		}
		for ti := range rs.Tables {
			c := rs.Tables[ti].Chains
			for i, j := 0, len(c)-1; i < j; i, j = i+1, j-1 {
				c[i], c[j] = c[j], c[i]
			}
		}
		s = append(s, rs)
	}
	text := s.Text()
	if !strings.HasPrefix(text, "# backend iptables-legacy\n") || !strings.Contains(text, "# backend nftables\n") {
		t.Fatalf("text lacks a backend:\n%.400s", text)
	}
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back []*rules.Ruleset
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if len(back) != len(s) {
		t.Fatalf("JSON holds %d rulesets, want %d", len(back), len(s))
	}
	for i, rs := range back {
		if !jsonEqual(t, rs, rules.Normalize(s[i])) {
			t.Errorf("JSON ruleset %d is not the sorted %s ruleset", i, s[i].Backend)
		}
	}
	if got := rules.Rulesets(back).Text(); got != text {
		t.Errorf("the JSON printed as text differs from the text")
	}
	for _, empty := range []rules.Rulesets{nil, {}} {
		if b, err := json.Marshal(empty); err != nil || string(b) != "[]" {
			t.Errorf("no rulesets: %s, %v; want []", b, err)
		}
	}
}

func jsonEqual(t *testing.T, a, b any) bool {
	t.Helper()
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	if err := errors.Join(errA, errB); err != nil {
		t.Fatal(err)
	}
	return string(ja) == string(jb)
}
