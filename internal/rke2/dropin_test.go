package rke2

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

func TestDropInPath(t *testing.T) {
	for in, want := range map[string]string{
		hostfs.RKE2ConfigFile:          "/etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml",
		"/opt/rke2/cfg.yaml":           "/opt/rke2/cfg.yaml.d/60-proxy-backend.yaml",
		"etc/x/../rancher/config.yaml": "/etc/rancher/config.yaml.d/60-proxy-backend.yaml",
	} {
		if got := DropInPath(in); got != want {
			t.Errorf("DropInPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLaterOverrides(t *testing.T) {
	dir := hostfs.RKE2ConfigFile + ".d/"
	files := []File{
		{Path: hostfs.RKE2ConfigFile, Values: map[string]any{"kube-proxy-arg": []string{"a=b"}}},
		{Path: dir + "50-rancher.yaml", Values: map[string]any{"kube-proxy-arg": "x=y"}},
		{Path: dir + DropInName, Values: map[string]any{"kube-proxy-arg+": []string{"proxy-mode=iptables"}}},
		{Path: dir + "70-append.yaml", Values: map[string]any{"kube-proxy-arg+": "v=2"}},
		{Path: dir + "90-wipe.yaml", Values: map[string]any{"kube-proxy-extra-env": "A=b", "node-label": "x=y"}},
	}
	got := LaterOverrides(files, hostfs.RKE2ConfigFile, "RKE2", []string{KeyKubeProxyArg, KeyKubeProxyExtraEnv})
	if len(got) != 1 || !strings.Contains(got[0], "90-wipe.yaml") || !strings.Contains(got[0], `"kube-proxy-extra-env"`) {
		t.Errorf("LaterOverrides = %q, want one warning about 90-wipe.yaml's kube-proxy-extra-env", got)
	}
}
