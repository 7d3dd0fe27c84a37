package iptsave

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// iptables-save declares every chain before the first rule, but restore
// input written by hand may not; a jump to a chain declared later is still
// a jump.
func TestParseIptablesSaveLateChainDeclaration(t *testing.T) {
	in := `*nat
:PREROUTING ACCEPT [0:0]
-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
:KUBE-SERVICES - [0:0]
-A KUBE-SERVICES -j RETURN
COMMIT
`
	tables, err := Parse(strings.NewReader(in), rules.IPv4)
	if err != nil {
		t.Fatal(err)
	}
	r := tables[0].Chains[0].Rules[0]
	if r.Jump != "KUBE-SERVICES" || r.Comment != "kubernetes service portals" {
		t.Fatalf("rule = %+v, want jump KUBE-SERVICES with its comment", r)
	}
	if j := tables[0].Chains[1].Rules[0].Jump; j != "" {
		t.Fatalf("RETURN is a verdict, not a jump; got Jump %q", j)
	}
}
