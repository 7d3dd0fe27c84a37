package kubeproxy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// Where kube-proxy listens, read from RKE2 fixture configs as RKE2 merges
// them (last flag wins, drop-ins after the main file, "+" appends).
func TestProxyModeEndpointFromRKE2Config(t *testing.T) {
	for _, c := range []struct {
		name          string
		main, dropIn  string
		url, fromText string
	}{
		{"no config", "", "", "http://127.0.0.1:10249/proxyMode", "kube-proxy's default"},
		{"other args only", "kube-proxy-arg: [proxy-mode=nftables]\n", "", "http://127.0.0.1:10249/proxyMode", "kube-proxy's default"},
		{"every IPv4 address", "kube-proxy-arg: [metrics-bind-address=0.0.0.0:10249]\n", "", "http://127.0.0.1:10249/proxyMode", "metrics-bind-address=0.0.0.0:10249 in /etc/rancher/rke2/config.yaml"},
		{"every IPv6 address", "kube-proxy-arg: ['--metrics-bind-address=[::]:9999']\n", "", "http://[::1]:9999/proxyMode", "metrics-bind-address=[::]:9999"},
		{"a node IP", "kube-proxy-arg: [metrics-bind-address=192.0.2.10:10249]\n", "", "http://192.0.2.10:10249/proxyMode", "192.0.2.10"},
		{"an IP without a port", "kube-proxy-arg: [metrics-bind-address=127.0.0.3]\n", "", "http://127.0.0.3:10249/proxyMode", ""},
		{"the deprecated port flag", "kube-proxy-arg: [metrics-bind-address=0.0.0.0, metrics-port=10300]\n", "", "http://127.0.0.1:10300/proxyMode", "metrics-port=10300"},
		{"a port flag does not override an address with a port", "kube-proxy-arg: [metrics-bind-address=127.0.0.4:10251, metrics-port=10300]\n", "", "http://127.0.0.4:10251/proxyMode", ""},
		{"the last flag wins, across a drop-in", "kube-proxy-arg: [metrics-bind-address=0.0.0.0:10249]\n", "kube-proxy-arg+: [metrics-bind-address=127.0.0.5:10249]\n", "http://127.0.0.5:10249/proxyMode", "config.yaml.d/50-scrape.yaml"},
		{"a drop-in without + replaces the list", "kube-proxy-arg: [metrics-bind-address=0.0.0.0:10270]\n", "kube-proxy-arg: [proxy-mode=iptables]\n", "http://127.0.0.1:10249/proxyMode", "kube-proxy's default"},
		{"metrics off", "kube-proxy-arg: [metrics-port=0]\n", "", "", "turns kube-proxy's metrics server off"},
		{"a config file", "kube-proxy-arg: [config=/etc/kp.yaml, metrics-bind-address=0.0.0.0:10271]\n", "", "http://127.0.0.1:10249/proxyMode", "the address in that file is not read"},
		{"garbage", "kube-proxy-arg: [metrics-bind-address=localhost:10249]\n", "", "http://127.0.0.1:10249/proxyMode", "is not an IP address"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := hostfs.New(t.TempDir())
			write := func(p, s string) {
				if s == "" {
					return
				}
				if err := os.MkdirAll(filepath.Dir(root.Path(p)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(root.Path(p), []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write(hostfs.RKE2ConfigFile, c.main)
			write(hostfs.RKE2ConfigFile+".d/50-scrape.yaml", c.dropIn)
			eff, err := rke2.LoadEffective(root, hostfs.RKE2ConfigFile)
			if err != nil {
				t.Fatal(err)
			}
			ep := ProxyModeEndpoint(eff)
			if ep.URL != c.url || !strings.Contains(ep.Source, c.fromText) {
				t.Errorf("endpoint %+v, want %s from %q", ep, c.url, c.fromText)
			}
		})
	}
}

// The URL a config may name is held to this node: loopback or one of its
// own addresses, never one elsewhere.
func TestCheckProxyModeURLStaysOnTheNode(t *testing.T) {
	if err := CheckProxyModeURL("http://192.0.2.10:10249/proxyMode"); err == nil || !strings.Contains(err.Error(), "nor one of this node's") {
		t.Errorf("an address not on this node: %v", err)
	}
}
