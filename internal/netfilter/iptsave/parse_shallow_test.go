package iptsave

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// A shallow parse counts the skipped chains' rules without reading them,
// and reads every other chain exactly as a full parse does.
func TestParseIptablesSaveShallow(t *testing.T) {
	in := `*nat
:PREROUTING ACCEPT [0:0]
:KUBE-SERVICES - [0:0]
:KUBE-SVC-AAAA - [0:0]
-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A KUBE-SERVICES -d 10.0.0.1/32 -p tcp -m comment --comment "ns/svc:p cluster IP" -m tcp --dport 80 -j KUBE-SVC-AAAA
-A KUBE-SVC-AAAA -m comment --comment "ns/svc:p -> 10.1.0.1:80" -j DNAT --to-destination 10.1.0.1:80
[3:180] -A KUBE-SVC-AAAA -j RETURN
COMMIT
`
	full, err := Parse(strings.NewReader(in), rules.IPv4)
	if err != nil {
		t.Fatal(err)
	}
	shallow, err := ParseShallow(strings.NewReader(in), rules.IPv4, func(c string) bool { return strings.HasPrefix(c, "KUBE-SVC-") })
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range shallow[0].Chains {
		want := full[0].Chains[i]
		if len(c.Rules) != len(want.Rules) {
			t.Fatalf("%s: %d rules, want %d (skipped rules must still count)", c.Name, len(c.Rules), len(want.Rules))
		}
		for j, r := range c.Rules {
			if c.Name == "KUBE-SVC-AAAA" {
				if r != (rules.Rule{NotRead: true}) {
					t.Errorf("%s rule %d = %+v, want the not-read placeholder", c.Name, j, r)
				}
				continue
			}
			if r != want.Rules[j] {
				t.Errorf("%s rule %d = %+v, want %+v", c.Name, j, r, want.Rules[j])
			}
		}
	}
}
