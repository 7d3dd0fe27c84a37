package decide

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
)

// A backend whose trial load failed is one the host cannot run: an
// override is refused with what failed, and auto decides without it.
func TestTrialFailureRefuses(t *testing.T) {
	f := debian12()
	f.TrialFailed = map[string]string{"iptables-nft": "loading kube-proxy's ipv4 rules for one service into a throwaway network namespace failed: iptables-nft-restore: Couldn't load match `statistic'"}
	d := Decide(f, cfg(func(c *config.Config) { c.Backend, c.BackendSource = "iptables-nft", "env" }))
	if d.Backend != backend.IptablesLegacy || len(d.Refused) != 1 || !strings.Contains(d.Refused[0], "Couldn't load match `statistic'") {
		t.Errorf("decision %s, refused %q, reasons %q", d.Backend, d.Refused, d.Reasons)
	}
	d = Decide(f, cfg(nil))
	if d.Backend != backend.IptablesLegacy {
		t.Errorf("auto picked %s after its trial failed; reasons %q", d.Backend, d.Reasons)
	}
}
