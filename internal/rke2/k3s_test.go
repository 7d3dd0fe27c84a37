package rke2

import (
	"os"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
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

// A bad k3s config file is named as k3s's, RKE2's as RKE2's.
func TestParseErrorsNameTheDistribution(t *testing.T) {
	root := t.TempDir()
	dir := root + "/etc/rancher/k3s"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/config.yaml", []byte("- a list\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for program, want := range map[string]string{"k3s": "k3s config /etc/rancher/k3s/config.yaml: line 1", ProgramRKE2: "RKE2 config /etc/rancher/k3s/config.yaml: line 1"} {
		_, err := LoadEffectiveOf(hostfs.New(root), "/etc/rancher/k3s/config.yaml", program)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v, want %q...", program, err, want)
		}
	}
}
