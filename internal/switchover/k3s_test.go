package switchover

import (
	"context"
	"strings"
	"testing"

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
