package cleanup

import (
	"context"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// The sweep refuses, before it reads anything, every node where kube-proxy
// may be in ipvs mode.
func TestIPVSLeftoversRefusesLiveIPVS(t *testing.T) {
	ipvsPlan := `{"schema": 1, "drop_in": "/etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml", "decision": {"backend": "iptables-nft", "proxy_mode": "ipvs", "iptables_mode": "nft", "source": "rke2-config", "reasons": []}, "modules_loaded": []}`
	for _, tc := range []struct{ name, plan, want string }{
		{"no plan", "", "no plan at " + hostfs.PlanFile},
		{"turned off or ipvs pinned", offPlan, "records no managed proxy mode"},
		{"ipvs mode", ipvsPlan, "kube-proxy runs in ipvs mode"},
		{"corrupt", "not json", hostfs.PlanFile},
	} {
		_, err := IPVSLeftovers(context.Background(), rootWithPlan(t, tc.plan), Options{DryRun: true})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	if err := ipvsGuard(rootWithPlan(t, nftPlan)); err != nil {
		t.Errorf("an iptables-mode plan: %v", err)
	}
}
