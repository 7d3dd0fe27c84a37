package decide

import (
	"reflect"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
)

// One pool-wide config taints only the nodes that choose the named backend
// (synology() decides iptables-legacy), and the reasons say which way.
func TestNodeTaintOnlyForTheNamedBackend(t *testing.T) {
	for taint, want := range map[string][]string{
		"rke2-proxy-backend/backend=iptables-legacy:NoSchedule": {"rke2-proxy-backend/backend=iptables-legacy:NoSchedule"},
		"rke2-proxy-backend/backend=nftables:NoSchedule":        nil,
		"": nil,
	} {
		d := Decide(synology(), cfg(func(c *config.Config) { c.NodeTaint = taint }))
		if d.Backend != backend.IptablesLegacy {
			t.Fatalf("fixture decided %s, want iptables-legacy", d.Backend)
		}
		if !reflect.DeepEqual(d.NodeTaints, want) {
			t.Errorf("node_taint %q: taints %q, want %q", taint, d.NodeTaints, want)
		}
		said := strings.Join(d.Reasons, "\n")
		switch {
		case taint == "" && strings.Contains(said, "node_taint"):
			t.Errorf("no node_taint, yet the reasons mention it:\n%s", said)
		case want != nil && !strings.Contains(said, "registers the node with the taint "+taint):
			t.Errorf("node_taint %q applied without a reason:\n%s", taint, said)
		case taint != "" && want == nil && !strings.Contains(said, "node_taint is for nftables nodes; this node runs iptables-legacy"):
			t.Errorf("node_taint %q skipped without a reason:\n%s", taint, said)
		}
	}
}
