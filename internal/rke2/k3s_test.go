package rke2

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
)

// The releases that know prefer-bundled-bin (k3s v1.26.0 and the
// backports); an unknown or patch-less version does not get it.
func TestSupportsPreferBundledBin(t *testing.T) {
	for v, want := range map[string]bool{
		"v1.26.0+k3s1": true, "v1.31.2+k3s1": true, "v2.0.0+k3s1": true,
		"v1.25.5+k3s1": true, "v1.25.4+k3s1": false, "v1.24.9+k3s1": true, "v1.24.8+k3s1": false,
		"v1.23.15+k3s1": true, "v1.23.14+k3s1": false, "v1.22.17+k3s1": false, "v1.31": false,
	} {
		k, err := ParseVersion(v)
		if err != nil {
			t.Fatal(err)
		}
		if got := SupportsPreferBundledBin(k); got != want {
			t.Errorf("%s: %v, want %v", v, got, want)
		}
	}
	if SupportsPreferBundledBin(KubeVersion{}) {
		t.Error("an unknown version gets prefer-bundled-bin")
	}
}

// k3s has no kube-proxy-extra-env: the k3s drop-in never carries it, and
// the values are checked as RKE2's are.
func TestRenderK3sDropIn(t *testing.T) {
	d := DropIn{Backend: backend.IptablesLegacy, KubeProxyArgs: []string{"proxy-mode=iptables"}, KubeProxyEnv: []string{"IPTABLES_MODE=legacy"}}
	for _, prefer := range []bool{false, true} {
		data, err := RenderK3sDropIn(d, prefer)
		if err != nil {
			t.Fatal(err)
		}
		got := string(data)
		if strings.Contains(got, KeyKubeProxyExtraEnv) || !strings.Contains(got, "proxy-mode=iptables") ||
			strings.HasSuffix(got, "prefer-bundled-bin: true\n") != prefer {
			t.Errorf("prefer %v:\n%s", prefer, got)
		}
		f, err := ParseFile("/etc/rancher/k3s/config.yaml.d/60-proxy-backend.yaml", data)
		if err != nil {
			t.Fatalf("the k3s drop-in is not config YAML k3s reads: %v\n%s", err, got)
		}
		eff := Merge([]File{f})
		if b, _ := eff.Values[KeyPreferBundledBin].(bool); b != prefer {
			t.Errorf("prefer %v: merged %v", prefer, eff.Values)
		}
	}
	if _, err := RenderK3sDropIn(DropIn{Backend: backend.IptablesNFT, KubeProxyArgs: []string{"x\ny=1"}}, true); err == nil {
		t.Error("a value with a newline rendered")
	}
}
