package adopt

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ruleload"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// load writes kube-proxy's IPv4 footprint for b into this namespace with
// the backend's own loader (ruleload's, as apply's trial uses).
func load(t *testing.T, b backend.Backend) {
	t.Helper()
	nstest.Tool(t, ruleload.Argv(b, rules.IPv4)[0])
	if err := ruleload.Load(b, footprint(t, b), rules.IPv4); err != nil {
		t.Fatal(err)
	}
}

// TestAdoptReadsTheKernelInNetns: the production reader (verify's, through
// the project's netfilter reader) sees real rules loaded by each backend's
// own tool; adoption records the one backend, and refuses to pick between
// two.
func TestAdoptReadsTheKernelInNetns(t *testing.T) {
	for _, c := range []struct {
		name  string
		load  []backend.Backend
		want  Outcome
		check func(t *testing.T, res Result)
	}{
		{"iptables-legacy", []backend.Backend{backend.IptablesLegacy}, Adopted, nil},
		{"iptables-nft", []backend.Backend{backend.IptablesNFT}, Adopted, nil},
		{"nftables", []backend.Backend{backend.NFTables}, Adopted, nil},
		{"legacy-and-nft", []backend.Backend{backend.IptablesLegacy, backend.IptablesNFT}, CannotTell, func(t *testing.T, res Result) {
			if !strings.Contains(res.Message, "kube-proxy rules are in iptables-legacy and iptables-nft") {
				t.Errorf("message %q", res.Message)
			}
		}},
		{"empty", nil, CannotTell, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !nstest.Setup(t, "") {
				return
			}
			for _, b := range c.load {
				load(t, b)
			}
			h := testhost.New(t).Debian12().RKE2v134()
			sd := running()
			// The kernel of this namespace, its /proc/net legacy table lists included.
			o := options(t, h, verify.NewReader(hostfs.New("/")), sd)
			res, err := Run(context.Background(), o)
			if err != nil || res.Outcome != c.want {
				t.Fatalf("Run = %s (%s), %v; want %s", res.Outcome, res.Message, err, c.want)
			}
			if !slices.Equal(res.Observed.KubeProxy, c.load) && c.load != nil {
				t.Errorf("observed kube-proxy rules in %v, loaded %v", res.Observed.KubeProxy, c.load)
			}
			if c.want == Adopted {
				p, err := plan.Read(h.Root())
				if err != nil || p.Decision.Backend != c.load[0] {
					t.Errorf("plan %+v, %v", p.Decision, err)
				}
				generatorKeeps(t, h, o, c.load[0])
			}
			if c.check != nil {
				c.check(t, res)
			}
		})
	}
}
