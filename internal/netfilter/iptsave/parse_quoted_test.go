package iptsave

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// A comment with newlines, as iptables-save prints it (raw, inside quotes),
// must not end the rule, commit the table or start a new one: anyone with
// NET_ADMIN can plant one, and cleanup must still read the backend.
func TestParseIptablesSaveQuotedNewline(t *testing.T) {
	in := "*filter\n:INPUT ACCEPT [0:0]\n:KUBE-SERVICES - [0:0]\n" +
		"-A INPUT -m comment --comment \"evil\nCOMMIT\n*x\" -j KUBE-SERVICES\n" +
		"[1:2] -A INPUT -m comment --comment \"a\\\"\nb\" -j ACCEPT\n" +
		"-A KUBE-SERVICES -j RETURN\nCOMMIT\n"
	for _, skip := range []func(string) bool{nil, func(c string) bool { return c == "INPUT" }} {
		tables, err := ParseShallow(strings.NewReader(in), rules.IPv4, skip)
		if err != nil {
			t.Fatalf("skip=%v: %v", skip != nil, err)
		}
		if len(tables) != 1 || len(tables[0].Chains) != 2 {
			t.Fatalf("skip=%v: tables = %+v, want filter with INPUT and KUBE-SERVICES", skip != nil, tables)
		}
		input := tables[0].Chains[0]
		if len(input.Rules) != 2 {
			t.Fatalf("skip=%v: INPUT rules = %+v, want 2", skip != nil, input.Rules)
		}
		if skip != nil {
			continue
		}
		if r := input.Rules[0]; r.Comment != "evil\nCOMMIT\n*x" || r.Jump != "KUBE-SERVICES" {
			t.Errorf("rule 1 = %+v", r)
		}
		if r := input.Rules[1]; r.Comment != "a\"\nb" {
			t.Errorf("rule 2 = %+v", r)
		}
		// The canonical text reads back the same.
		rs := &rules.Ruleset{Backend: backend.IptablesLegacy, Tables: tables}
		again, err := Parse(strings.NewReader(rules.FormatFamily(rs, rules.IPv4)), rules.IPv4)
		if err != nil {
			t.Fatal(err)
		}
		if d := rules.Diff(rs, &rules.Ruleset{Backend: rs.Backend, Tables: again}); len(d) != 0 {
			t.Errorf("round trip differs: %v", d)
		}
	}
	if _, err := Parse(strings.NewReader("*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -m comment --comment \"open\nCOMMIT\n"), rules.IPv4); err == nil || !strings.Contains(err.Error(), "line 3: quoted argument never ends") {
		t.Errorf("unterminated quote: err = %v", err)
	}
}

// iptables-restore flushes a table at its "*name" line, so a table given
// twice is the last block; the parse says the same, and round-trips.
func TestParseIptablesSaveTableTwice(t *testing.T) {
	in := "*filter\n:INPUT ACCEPT [0:0]\n:OLD - [0:0]\nCOMMIT\n*nat\nCOMMIT\n*filter\n:INPUT DROP [0:0]\n-A INPUT -j ACCEPT\nCOMMIT\n"
	tables, err := Parse(strings.NewReader(in), rules.IPv4)
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 2 || tables[0].Name != "filter" || tables[1].Name != "nat" {
		t.Fatalf("tables = %+v, want filter then nat", tables)
	}
	f := tables[0]
	if len(f.Chains) != 1 || f.Chains[0].Policy != "DROP" || len(f.Chains[0].Rules) != 1 {
		t.Errorf("filter = %+v, want only the second block (INPUT DROP, one rule)", f)
	}
}
