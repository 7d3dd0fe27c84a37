package switchover

import (
	"context"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostplan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// On k3s the unit switch restarts is k3s's: the active one, else the one
// install.sh installed (INSTALL_K3S_NAME included).
func TestFindUnitK3s(t *testing.T) {
	inactive := func(context.Context, string) bool { return false }
	h := testhost.New(t).Debian12().K3sUnit("k3s-edge", "agent")
	if got, err := FindUnit(context.Background(), h.Root(), inactive); err != nil || got != "k3s-edge.service" {
		t.Errorf("installed: got %q, %v", got, err)
	}
	h.K3sUnit("k3s", "server")
	active := func(_ context.Context, u string) bool { return u == "k3s.service" }
	if got, err := FindUnit(context.Background(), h.Root(), active); err != nil || got != "k3s.service" {
		t.Errorf("active: got %q, %v", got, err)
	}
	if _, err := FindUnit(context.Background(), h.Root(), inactive); err == nil || !strings.Contains(err.Error(), "k3s-edge.service and k3s.service") {
		t.Errorf("two installed, none active: %v", err)
	}
}

// A switch on a k3s node refuses while k3s's flannel runs (its chains
// would stay in the old backend and the verify step would roll back), and
// goes on once the config says flannel-backend: none; RKE2 nodes are not
// asked.
func TestK3sFlannelRefusal(t *testing.T) {
	refusal := func(h *testhost.Host) string {
		kind := distro.Find(h.Root(), "").Kind
		opts := hostplan.Apply
		opts.Distribution = kind
		return k3sFlannelRefusal(kind, facts.Probe(h.Root(), opts))
	}
	h := testhost.New(t).Debian12().K3sUnit("k3s", "server").K3sConfig("config.yaml", "write-kubeconfig-mode: \"0644\"\n")
	if why := refusal(h); !strings.Contains(why, "runs k3s's flannel (flannel-backend is not none in /etc/rancher/k3s/config.yaml)") {
		t.Errorf("k3s with flannel: %q", why)
	}
	h.K3sConfig("config.yaml.d/10-cni.yaml", "flannel-backend: none\n")
	if why := refusal(h); why != "" {
		t.Errorf("k3s without flannel: %q", why)
	}
	if why := refusal(testhost.New(t).Debian12().RKE2Unit("tarball", "server")); why != "" {
		t.Errorf("RKE2: %q", why)
	}
}
