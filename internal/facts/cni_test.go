package facts

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testhost"
)

func TestProbeCNI(t *testing.T) {
	h := testhost.New(t).
		RKE2Config("config.yaml", "cni: [multus, canal]\n").
		File("/var/lib/rancher/rke2/server/manifests/rke2-canal.yaml", "apiVersion: helm.cattle.io/v1\nkind: HelmChart\nmetadata: {name: rke2-canal}\n").
		File("/var/lib/rancher/rke2/server/manifests/rke2-canal-config.yaml", `apiVersion: helm.cattle.io/v1
kind: HelmChartConfig
metadata:
  name: rke2-canal
  namespace: kube-system
spec:
  valuesContent: |-
    calico:
      felixIptablesBackend: legacy
`)
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
