package adopt

import (
	"context"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// k3sOptions are options on a k3s fixture, probed as k3s.
func k3sOptions(t *testing.T, h *testhost.Host, r netfilter.Reader, sd Systemd) Options {
	t.Helper()
	return probedOptions(t, h, facts.Options{Distribution: distro.Kind("k3s")}, r, sd)
}

// On k3s adoption looks at k3s's units (k3s, k3s-agent, k3s-NAME as
// distro finds them), records what runs under the active one, reads the
// operator's IPTABLES_MODE from the unit, and speaks of k3s.
func TestAdoptK3s(t *testing.T) {
	for _, c := range []struct{ name, role, unit string }{
		{"k3s", "server", "k3s.service"}, {"k3s-agent", "agent", "k3s-agent.service"}, {"k3s-edge", "agent", "k3s-edge.service"},
	} {
		h := testhost.New(t).Debian12().K3sUnit(c.name, c.role).K3sUnitEnv(c.name, "10-iptables.conf", "IPTABLES_MODE=legacy")
		sd := &fakeSystemd{active: []string{c.unit}}
		res := adoptOK(t, k3sOptions(t, h, netfilter.NewFake(footprint(t, backend.IptablesLegacy)), sd))
		if res.Unit != c.unit || res.Plan.Decision.Backend != backend.IptablesLegacy {
			t.Errorf("%s: unit %q, backend %s", c.name, res.Unit, res.Plan.Decision.Backend)
		}
		p, err := plan.Read(h.Root())
		if err != nil {
			t.Fatalf("%s: no plan: %v", c.name, err)
		}
		all := strings.Join(append(p.Decision.Reasons, p.Warnings...), "\n")
		if want := "k3s's settings give kube-proxy IPTABLES_MODE=legacy (in /etc/systemd/system/" + c.name + ".service.d/10-iptables.conf line 2)."; !strings.Contains(all, want) {
			t.Errorf("%s: no %q in\n%s", c.name, want, all)
		}
		if strings.Contains(all, "RKE2") || len(res.Differences) != 0 {
			t.Errorf("%s: reasons name RKE2, or the next start differs (%q):\n%s", c.name, res.Differences, all)
		}
		// What the postinst shows the installer (issue 32 item 7).
		var out strings.Builder
		if err := Print(&out, res, false, false); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"(under " + c.unit + "); recorded it as this boot's plan", "without restarting k3s\n", "adopt: k3s's next start and the next boot keep iptables-legacy"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%s: adopt's output lacks %q:\n%s", c.name, want, out.String())
			}
		}
		if strings.Contains(out.String(), "RKE2") {
			t.Errorf("%s: adopt's output on k3s names RKE2:\n%s", c.name, out.String())
		}
	}
	// Nothing active: k3s's message, naming the units it looked at.
	h := testhost.New(t).Debian12().K3sUnit("k3s-agent", "agent")
	sd := &fakeSystemd{active: []string{"rke2-agent.service"}}
	res, err := Run(context.Background(), k3sOptions(t, h, netfilter.NewFake(footprint(t, backend.IptablesNFT)), sd))
	if err != nil || res.Outcome != NotRunning || !strings.Contains(res.Message, "k3s is not running (none of k3s-agent.service is active)") {
		t.Errorf("Run = %+v, %v", res, err)
	}
}
