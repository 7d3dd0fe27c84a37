package cleanup

import (
	"context"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// The sweep refuses, before it reads anything, every node where kube-proxy
// may be in ipvs mode.
func TestIPVSLeftoversRefusesLiveIPVS(t *testing.T) {
	ipvsPlan := `{"schema": 1, "drop_in": "/etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml", "decision": {"backend": "iptables-nft", "proxy_mode": "ipvs", "iptables_mode": "nft", "source": "rke2-config", "reasons": []}, "modules_loaded": []}`
	k3s := distro.Kind("k3s")
	for _, tc := range []struct {
		name, plan string
		kind       distro.Kind
		want       string
	}{
		{"no plan", "", distro.RKE2, "no plan at " + hostfs.PlanFile + ": nothing says kube-proxy is out of ipvs mode, so its ipvs state may be live; refusing (let RKE2 start once, or use --force)"},
		{"no plan on k3s", "", k3s, "refusing (let k3s start once, or use --force)"},
		{"turned off or ipvs pinned", offPlan, distro.RKE2, "records no managed proxy mode (the tool is off, RKE2 runs no kube-proxy, or RKE2's config pins ipvs)"},
		{"turned off or ipvs pinned on k3s", offPlan, k3s, "(the tool is off, k3s runs no kube-proxy, or k3s's config pins ipvs)"},
		{"ipvs mode", ipvsPlan, distro.RKE2, "kube-proxy runs in ipvs mode"},
		{"corrupt", "not json", distro.RKE2, hostfs.PlanFile},
	} {
		_, err := IPVSLeftovers(context.Background(), rootWithPlan(t, tc.plan), Options{DryRun: true, Distribution: tc.kind})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	if err := ipvsGuard(rootWithPlan(t, nftPlan), distro.RKE2); err != nil {
		t.Errorf("an iptables-mode plan: %v", err)
	}
}
