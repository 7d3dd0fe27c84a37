package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// The stand-in, which plays RKE2 in the boot tests, reads a Rancher node's
// config as RKE2 (internal/rke2's merge) does: the testscript
// apply_rancher_provisioned.txtar holds Rancher's 50-rancher.yaml (JSON, as
// Rancher's planner writes it) and the 60-proxy-backend.yaml apply wrote
// beside it; here the stand-in reads the same pair and runs kube-proxy on
// the backend and metrics address that script's detect shows.
func TestRancherNodeConfig(t *testing.T) {
	ar, err := txtar.ParseFile("../../../testscripts/testdata/apply_rancher_provisioned.txtar")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, f := range ar.Files {
		files[f.Name] = f.Data
	}
	for _, c := range []struct{ pool, backend string }{{"worker", "iptables-nft"}, {"nas", "iptables-legacy"}} {
		t.Run(c.pool, func(t *testing.T) {
			mainFile := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.MkdirAll(mainFile+".d", 0o755); err != nil {
				t.Fatal(err)
			}
			for name, dropIn := range map[string]string{"50-rancher.yaml": c.pool + "-50-rancher.yaml", "60-proxy-backend.yaml": c.pool + "-60-proxy-backend.yaml"} {
				if files[dropIn] == nil {
					t.Fatalf("the testscript has no %s", dropIn)
				}
				if err := os.WriteFile(filepath.Join(mainFile+".d", name), files[dropIn], 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cfg, err := loadConfig(mainFile)
			if err != nil {
				t.Fatal(err)
			}
			want := []any{"metrics-bind-address=0.0.0.0:10249", "conntrack-max-per-core=0", "proxy-mode=iptables"}
			if got := cfg.Values["kube-proxy-arg"]; !reflect.DeepEqual(got, want) {
				t.Errorf("kube-proxy-arg = %v, want %v", got, want)
			}
			backend, mode, err := pickBackend(cfg.Values)
			if err != nil || backend != c.backend || mode != "iptables" {
				t.Errorf("kube-proxy runs %s in %s mode (%v), want %s in iptables mode", backend, mode, err, c.backend)
			}
			if addr := metricsAddress(cfg.Values); addr != "0.0.0.0:10249" {
				t.Errorf("kube-proxy's metrics on %s, want Rancher's 0.0.0.0:10249", addr)
			}
		})
	}
}
