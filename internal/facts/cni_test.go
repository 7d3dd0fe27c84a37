package facts

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

func TestProbeCNI(t *testing.T) {
	h := testhost.New(t).
		RKE2Config("config.yaml", "cni: [multus, canal]\n").
		File("/var/lib/rancher/rke2/server/manifests/rke2-canal.yaml", "apiVersion: helm.cattle.io/v1\nkind: HelmChart\nmetadata: {name: rke2-canal}\n").
		File("/var/lib/rancher/rke2/server/manifests/rke2-canal-config.yaml", helmChartConfig("rke2-canal", "calico:\n  felixIptablesBackend: legacy\n"))
	f := Probe(h.Root(), Options{})
	s := f.RKE2.CNI
	if s.Primary != cni.Canal || s.Source != "cni: in /etc/rancher/rke2/config.yaml" || len(s.Charts) != 1 {
		t.Fatalf("setup %+v", s)
	}
	if fl := s.NFTables(); !fl.Refuse || !strings.Contains(fl.Why, "rke2-canal-config.yaml sets calico.felixIptablesBackend: legacy") {
		t.Errorf("follow %+v", fl)
	}
	if got := f.RKE2.ManifestsDir(); got != "/var/lib/rancher/rke2/server/manifests" {
		t.Errorf("manifests dir %q", got)
	}
}

func TestProbeCNIDefaultsAndBrokenManifest(t *testing.T) {
	h := testhost.New(t).
		RKE2Config("config.yaml", "data-dir: /srv/rke2\n").
		File("/srv/rke2/server/manifests/bad.yaml", "kind: HelmChartConfig\napiVersion: helm.cattle.io/v1\nspec: {valuesContent: '- x'}\n")
	f := Probe(h.Root(), Options{})
	if f.RKE2.CNI.Primary != cni.Canal || !strings.Contains(f.RKE2.CNI.Source, "default") {
		t.Errorf("setup %+v", f.RKE2.CNI)
	}
	if !strings.Contains(strings.Join(f.Unreadable, "\n"), "/srv/rke2/server/manifests/bad.yaml") {
		t.Errorf("broken manifest not reported: %q", f.Unreadable)
	}
}

// ReadCNI alone finds what the full probe finds: the config file the unit
// names (RKE2_CONFIG_FILE in its env file), the data-dir it sets, and the
// HelmChartConfigs there. verify reads it to name the CNI that runs.
func TestReadCNIFollowsTheUnitAndDataDir(t *testing.T) {
	h := testhost.New(t).
		RKE2Unit("rpm", "server").
		File("/etc/sysconfig/rke2-server", "RKE2_CONFIG_FILE=/etc/rke2/alt.yaml\n").
		File("/etc/rke2/alt.yaml", "cni: calico\ndata-dir: /srv/rke2\n").
		File("/srv/rke2/server/manifests/calico-nft.yaml", helmChartConfig("rke2-calico", "installation:\n  calicoNetwork:\n    linuxDataplane: Nftables\n")).
		File("/srv/rke2/server/manifests/broken.yaml", "kind: HelmChartConfig\napiVersion: helm.cattle.io/v1\nspec: {valuesContent: '- x'}\n")
	s, unreadable := ReadCNI(h.Root())
	if s.Primary != cni.Calico || s.Source != "cni: in /etc/rke2/alt.yaml" {
		t.Errorf("setup %+v; want calico from /etc/rke2/alt.yaml", s)
	}
	if fl := s.NFTables(); fl.Refuse || len(fl.Missing) != 0 || fl.Chart != "rke2-calico" {
		t.Errorf("follow %+v; want rke2-calico with nothing missing", fl)
	}
	if len(unreadable) != 1 || !strings.Contains(unreadable[0], "/srv/rke2/server/manifests/broken.yaml") {
		t.Errorf("unreadable %q; want the broken manifest named", unreadable)
	}
	if probed := Probe(h.Root(), Options{}).RKE2.CNI; probed.Primary != s.Primary || probed.Source != s.Source || len(probed.Charts) != len(s.Charts) {
		t.Errorf("ReadCNI %+v differs from the probe's %+v", s, probed)
	}
}
