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
	p.Schema = Schema // Marshal writes the schema it knows
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

func TestMarshalWritesSchema(t *testing.T) {
	data, err := Marshal(Plan{Decision: Decision{Backend: backend.IptablesNFT}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "{\n  \"schema\": 1,\n") {
		t.Errorf("plan.json does not open with its schema:\n%s", data)
	}
}

// A plan.json from before the schema field (the previous version's apply,
// still in /run while the package is upgraded on a running node) reads as
// schema 1: its layout is schema 1's.
func TestParseReadsThePreviousVersionsPlan(t *testing.T) {
	old := `{"decision":{"backend":"iptables-legacy","proxy_mode":"iptables","iptables_mode":"legacy","source":"config","modules":[],"kube_proxy_args":[],"kube_proxy_env":[],"reasons":["r"]},"modules_loaded":["ip_tables"],"kubernetes":"v1.34"}`
	p, err := Parse([]byte(old))
	if err != nil || p.Schema != Schema || p.Decision.Backend != backend.IptablesLegacy || p.Kubernetes != "v1.34" {
		t.Fatalf("Parse(previous version's plan) = %+v, %v", p, err)
	}
}

func TestReadRefusesAnUnknownSchema(t *testing.T) {
	for _, c := range []struct{ doc, value string }{
		{`{"schema":2,"decision":{"backend":"iptables-nft"}}`, "schema 2 "},
		{`{"schema":0,"decision":{"backend":"iptables-nft"}}`, "schema 0 "},
		{`{"schema":-1}`, "schema -1 "},
	} {
		root := hostfs.New(t.TempDir())
		p := root.Path(hostfs.PlanFile)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c.doc), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Read(root)
		var se *SchemaError
		if !errors.As(err, &se) {
			t.Fatalf("Read(%s) = %v, want a SchemaError", c.doc, err)
		}
		for _, want := range []string{p, c.value, "reads schema 1", "rke2-proxy-backend adopt"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("Read(%s) = %q, want it to name %q", c.doc, err, want)
			}
		}
	}
	// A schema of the wrong type is not JSON the plan's shape.
	if _, err := Parse([]byte(`{"schema":"1"}`)); err == nil {
		t.Error(`Parse({"schema":"1"}) accepted a string schema`)
	}
}
