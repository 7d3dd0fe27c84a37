package rke2

import (
	"os"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
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

// The k3s drop-in's comments name k3s, whose start runs apply; RKE2's
// keep RKE2's words, and a value that happens to hold them stays as set.
func TestRenderK3sDropInSaysK3s(t *testing.T) {
	label := "note=before every RKE2 start"
	for _, d := range []DropIn{
		{Backend: backend.IptablesNFT, KubeProxyArgs: []string{"proxy-mode=iptables"}, NodeLabels: []string{label}},
		{Backend: backend.IptablesNFT},
	} {
		k3s, err := RenderK3sDropIn(d, false)
		if err != nil {
			t.Fatal(err)
		}
		rke2, err := RenderDropIn(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(k3s), "\n") {
			if strings.HasPrefix(line, "#") && strings.Contains(line, "RKE2") {
				t.Errorf("a k3s drop-in comment names RKE2: %q\n%s", line, k3s)
			}
		}
		if !strings.Contains(string(k3s), "before every k3s start") || !strings.Contains(string(rke2), "before every RKE2 start") {
			t.Errorf("headers:\nk3s:\n%s\nRKE2:\n%s", k3s, rke2)
		}
		if len(d.NodeLabels) > 0 && !strings.Contains(string(k3s), label) {
			t.Errorf("the node label's value was rewritten:\n%s", k3s)
		}
		if len(d.NodeLabels) == 0 && !strings.Contains(string(k3s), "k3s's own config already pins") {
			t.Errorf("the empty k3s drop-in does not say k3s's config pins everything:\n%s", k3s)
		}
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
