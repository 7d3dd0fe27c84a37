package switchover

import (
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
)

// The node lock's drop-in is the one apply writes: on k3s, K3S_CONFIG_FILE
// moves it (as apply's environment does) and RKE2_CONFIG_FILE does not.
func TestDropInPathOfFollowsTheDistributionsConfigEnv(t *testing.T) {
	t.Setenv("RKE2_CONFIG_FILE", "/srv/rke2.yaml")
	t.Setenv("K3S_CONFIG_FILE", "/srv/k3s.yaml")
	k3s := facts.RKE2{Distribution: distro.Kind("k3s")}
	if got := dropInPathOf(k3s); got != "/srv/k3s.yaml.d/60-proxy-backend.yaml" {
		t.Errorf("k3s with K3S_CONFIG_FILE: %s", got)
	}
	t.Setenv("K3S_CONFIG_FILE", "")
	if got := dropInPathOf(k3s); got != "/etc/rancher/k3s/config.yaml.d/60-proxy-backend.yaml" {
		t.Errorf("k3s, nothing moved: %s", got)
	}
	if got := dropInPathOf(facts.RKE2{Distribution: distro.RKE2}); got != "/srv/rke2.yaml.d/60-proxy-backend.yaml" {
		t.Errorf("RKE2 with RKE2_CONFIG_FILE: %s", got)
	}
}
