package plan

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

func TestWriteReadRoundTripAndIdempotence(t *testing.T) {
	root := hostfs.New(t.TempDir())
	if _, err := Read(root); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Read before any write = %v, want not-exist", err)
	}
	p := Plan{
		Decision:      Decision{Backend: backend.IptablesNFT, ProxyMode: "iptables", IptablesMode: "nft", Reasons: []string{"because"}},
		DropIn:        "/etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml",
		ModulesLoaded: []string{"nf_tables"},
		Warnings:      []string{"a warning"},
	}
	changed, err := Write(root, p)
	if err != nil || !changed {
		t.Fatalf("first Write = %v, %v", changed, err)
	}
	fi, err := os.Stat(root.Path(hostfs.PlanFile))
	if err != nil || fi.Mode().Perm() != Mode {
		t.Fatalf("plan file %v mode %v, want %v", err, fi.Mode().Perm(), os.FileMode(Mode))
	}
	if changed, err := Write(root, p); err != nil || changed {
		t.Errorf("second Write of the same plan = %v, %v; want unchanged", changed, err)
	}
	got, err := Read(root)
	if err != nil || !reflect.DeepEqual(got, p) {
		t.Errorf("Read = %+v, %v; want %+v", got, err, p)
	}
}

func TestReadCorrupt(t *testing.T) {
	root := hostfs.New(t.TempDir())
	p := root.Path(hostfs.PlanFile)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("{half"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(root); err == nil || !strings.Contains(err.Error(), "plan.json is not valid JSON") {
		t.Errorf("Read = %v, want an error naming the file", err)
	}
}
