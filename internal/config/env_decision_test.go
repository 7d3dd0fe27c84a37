package config

import (
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// apply runs inside RKE2's unit, whose environment carries the generator's
// RKE2_PROXY_BACKEND_DECISION; it must not read as an unknown config key.
func TestDecisionVariableIsNotAConfigKey(t *testing.T) {
	root := hostfs.New(t.TempDir())
	cfg, err := Load(root, hostfs.ConfigFile, []string{hostfs.EnvDecision + "=iptables-legacy"}, nil)
	if err != nil {
		t.Fatalf("Load with %s set: %v", hostfs.EnvDecision, err)
	}
	if cfg.Backend != Auto {
		t.Fatalf("backend = %q, want %q: the decision record must not act as an override", cfg.Backend, Auto)
	}
}
