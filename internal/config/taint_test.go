package config_test

import (
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/check"
)

func TestNodeTaintLoads(t *testing.T) {
	loaded := func(in string) string {
		root := hostfs.New(t.TempDir())
		if in != "" {
			if _, err := root.WriteFileAtomic(hostfs.ConfigFile, []byte(in), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		c, err := config.Load(root, hostfs.ConfigFile, nil, nil)
		if err != nil {
			t.Errorf("config %q: %v", in, err)
		}
		return c.NodeTaint
	}
	check.Table(t, "the NodeTaint of config", loaded, map[string]string{
		"":                   "",
		"node_taint: \"\"\n": "",
		"node_taint: rke2-proxy-backend/backend=iptables-legacy:NoSchedule\n":  "rke2-proxy-backend/backend=iptables-legacy:NoSchedule",
		"node_taint: 'rke2-proxy-backend/backend=nftables:PreferNoSchedule'\n": "rke2-proxy-backend/backend=nftables:PreferNoSchedule",
	})
	// The environment layer checks the same rule.
	root := hostfs.New(t.TempDir())
	if _, err := config.Load(root, hostfs.ConfigFile, []string{"RKE2_PROXY_BACKEND_NODE_TAINT=x=y:NoSchedule"}, nil); err == nil {
		t.Error("RKE2_PROXY_BACKEND_NODE_TAINT with a foreign key was accepted")
	}
}
