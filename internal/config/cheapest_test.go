package config

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// cheapest is a prefer entry, only as the first one (the rest is the
// fallback when nothing was measured), from the file and the environment.
func TestPreferCheapest(t *testing.T) {
	c, err := Load(rootWith(t, ptr("prefer: [cheapest, iptables-nft]\n")), hostfs.ConfigFile, nil, nil)
	if err != nil || len(c.Prefer) != 2 || string(c.Prefer[0]) != PreferCheapest {
		t.Fatalf("prefer %q, err %v", c.Prefer, err)
	}
	if c, err := Load(rootWith(t, nil), hostfs.ConfigFile, []string{"RKE2_PROXY_BACKEND_PREFER=cheapest"}, nil); err != nil || string(c.Prefer[0]) != PreferCheapest {
		t.Errorf("from the environment: prefer %q, err %v", c.Prefer, err)
	}
	_, err = Load(rootWith(t, ptr("prefer: [iptables-nft, cheapest]\n")), hostfs.ConfigFile, nil, nil)
	if err == nil || !strings.Contains(err.Error(), `"cheapest" must be the first entry`) || !strings.Contains(err.Error(), hostfs.ConfigFile) {
		t.Errorf("cheapest after a backend: err %v", err)
	}
	if _, err := Load(rootWith(t, ptr("prefer: [cheapest, cheapest]\n")), hostfs.ConfigFile, nil, nil); err == nil {
		t.Error("cheapest twice was accepted")
	}
}
