package decide

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
)

func TestForceKeepsAPlanTheHostCanRun(t *testing.T) {
	f := debian12() // auto picks iptables-nft here
	fresh := Decide(f, cfg(nil))
	d, problems := Force(f, cfg(nil), fresh, backend.IptablesLegacy)
	if d.Backend != backend.IptablesLegacy || len(problems) != 0 {
		t.Fatalf("forced legacy on Debian 12: %s, problems %q", d.Backend, problems)
	}
	if !strings.Contains(d.Reasons[0], "A fresh decision would pick iptables-nft") {
		t.Errorf("first reason %q does not say what a fresh decision picks", d.Reasons[0])
	}
	if d.KubeProxyEnv[0] != "IPTABLES_MODE=legacy" {
		t.Errorf("env %q: the forced backend's settings are not what apply writes", d.KubeProxyEnv)
	}
}

func TestForceRefusesWhatTheHostCannotRun(t *testing.T) {
	f := synology() // no nf_tables
	fresh := Decide(f, cfg(nil))
	d, problems := Force(f, cfg(nil), fresh, backend.NFTables)
	if d.Backend == backend.NFTables || len(problems) != 1 {
		t.Fatalf("forced nftables without nf_tables: %s, problems %q", d.Backend, problems)
	}
	if !strings.HasPrefix(problems[0], "the planned backend nftables cannot run on this host: ") || !strings.Contains(problems[0], ForcedBy) {
		t.Errorf("problem %q does not name the plan and why it cannot run", problems[0])
	}
}
