package netfilter_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ruleload"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// TestFakeShapesAreProductionShapes loads kube-proxy's footprint for each
// backend into a network namespace, reads it whole, hands that to a Fake
// with verify's ReadOptions, and checks the Fake answers exactly what
// verify's production reader reads: NotRead rules with their jumps and
// comments (legacy, iptables-nft), bare NotRead rules in per-service
// chains, anonymous sets not read (nftables).
func TestFakeShapesAreProductionShapes(t *testing.T) {
	for _, b := range backend.All {
		t.Run(string(b), func(t *testing.T) {
			if !nstest.InNetns(t) {
				return
			}
			if b == backend.IptablesLegacy {
				nstest.Tool(t, "iptables-legacy-save") // the whole read runs the save tools
				nstest.Tool(t, "ip6tables-legacy-save")
			}
			rs, err := expected.Render(expected.Options{Backend: b, Services: 20, Families: []rules.Family{rules.IPv4, rules.IPv6}})
			if err != nil {
				t.Fatal(err)
			}
			for _, fam := range []rules.Family{rules.IPv4, rules.IPv6} {
				nstest.Tool(t, ruleload.Argv(b, fam)[0])
				if err := ruleload.Load(b, rs, fam); err != nil {
					t.Fatal(err)
				}
			}
			ctx := context.Background()
			whole, err := netfilter.NewSystem(hostfs.New("/")).Read(ctx, b)
			if err != nil {
				t.Fatal(err)
			}
			real, err := verify.NewReader(hostfs.New("/")).Read(ctx, b)
			if err != nil {
				t.Fatal(err)
			}
			fake := netfilter.NewFake(whole)
			fake.ReadOptions = verify.ReadOptions
			faked, err := fake.Read(ctx, b)
			if err != nil {
				t.Fatal(err)
			}
			got, want := shapeJSON(t, faked), shapeJSON(t, real)
			if got != want {
				t.Errorf("the Fake's shallow %s read differs from the real one:\nfake: %s\nreal: %s", b, got, want)
			}
			if got == shapeJSON(t, whole) {
				t.Errorf("the shallow %s read is the whole read: the test shows nothing", b)
			}
		})
	}
}

func shapeJSON(t *testing.T, rs *rules.Ruleset) string {
	b, err := json.Marshal(rules.Normalize(rs))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
