package facts

import (
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// On k3s the probe reads k3s's units, config and data dir, and apply's
// probe asks the binary the unit runs for its version (k3s's data
// directory names none).
func TestProbeK3s(t *testing.T) {
	h := testhost.New(t).Debian12().K3sUnit("k3s-agent", "agent").K3sBinary("/usr/local/bin/k3s", "v1.30.4+k3s1").
		K3sConfig("/srv/k3s.yaml", "data-dir: /srv/k3s\n").EnvFile("/etc/systemd/system/k3s-agent.service.env", "K3S_CONFIG_FILE=/srv/k3s.yaml")
	f := Probe(h.Root(), Options{Distribution: distro.K3s, RKE2Binary: true})
	r := f.RKE2
	if len(r.Units) != 1 || r.Units[0].Name != "k3s-agent.service" || r.Units[0].Role != "agent" || r.Units[0].Binary != "/usr/local/bin/k3s" {
		t.Errorf("units %+v", r.Units)
	}
	if r.ConfigFile != "/srv/k3s.yaml" || r.DataDir != "/srv/k3s" {
		t.Errorf("config %s, data dir %s", r.ConfigFile, r.DataDir)
	}
	if r.Version != "v1.30.4+k3s1" || r.Kubernetes.Minor != 30 || r.VersionSource != "/usr/local/bin/k3s --version" {
		t.Errorf("version %q (%s), kubernetes %v", r.Version, r.VersionSource, r.Kubernetes)
	}
	// The same host probed as RKE2 has no units: nothing is mistaken.
	if rk := Probe(h.Root(), Options{}).RKE2; len(rk.Units) != 0 || rk.ConfigFile != "/etc/rancher/rke2/config.yaml" {
		t.Errorf("as RKE2: units %+v, config %s", rk.Units, rk.ConfigFile)
	}
}
