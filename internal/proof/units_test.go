package proof

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// The verdicts that tell the operator which unit to start or read name the
// node's own units (issue 32 item 7): on a k3s node check asked about
// rke2-server/agent, units that node does not have, and said apply gave
// RKE2 no backend.
func TestCheckNamesTheUnitsOfTheNodesDistribution(t *testing.T) {
	nothing := `{"schema":2,"applied":{"nothing":"no backend can run on this host"},"decision":{"backend":"iptables-nft","source":"auto"}}`
	applied := `{"schema":2,"applied":{"backend":"iptables-nft","by":"apply"},"decision":{"backend":"iptables-nft","source":"auto"}}`
	for _, tc := range []struct {
		name  string
		node  func(h *testhost.Host)
		plan  string
		says  string
		never string
	}{
		{"k3s server, no plan", func(h *testhost.Host) { h.K3sUnit("k3s", "server") }, "", "no plan: apply has not run since boot (is k3s started?)", "rke2"},
		{"k3s agent, no plan", func(h *testhost.Host) { h.K3sUnit("k3s-agent", "agent") }, "", "(is k3s-agent started?)", "rke2"},
		{"k3s, nothing applied", func(h *testhost.Host) { h.K3sUnit("k3s", "server") }, nothing, "not applied: apply gave k3s no backend this boot: no backend can run", "RKE2"},
		{"k3s, no status", func(h *testhost.Host) { h.K3sUnit("k3s", "server") }, applied, "no status: verify has not finished since boot; see journalctl -u k3s", "rke2"},
		{"k3s binary without a unit", func(h *testhost.Host) { h.File("/usr/local/bin/k3s", "#!fake k3s\n") }, "", "(is k3s started?)", "rke2"},
		{"RKE2, no plan", func(h *testhost.Host) { h.RKE2Unit("tarball", "server") }, "", "(is rke2-server/rke2-agent started?)", "k3s"},
		{"RKE2, nothing applied", func(h *testhost.Host) { h.RKE2Unit("tarball", "server") }, nothing, "apply gave RKE2 no backend", "k3s"},
		{"RKE2, no status", func(h *testhost.Host) { h.RKE2Unit("tarball", "agent") }, applied, "see journalctl -u rke2-server/rke2-agent", "k3s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := testhost.New(t)
			tc.node(h)
			if tc.plan != "" {
				h.File(hostfs.PlanFile, tc.plan)
			}
			v := Check(h.Root(), CheckOptions{})
			if v.Status != Unknown || !strings.Contains(v.Message, tc.says) || strings.Contains(v.Message, tc.never) {
				t.Errorf("Check = %s %q; want unknown, saying %q, never %q", v.Status, v.Message, tc.says, tc.never)
			}
		})
	}
}
