package plan

import (
	"errors"
	"fmt"
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
		Applied:       Applied{Backend: backend.IptablesNFT, ProxyMode: "iptables", DropIn: "/etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml", By: ByApply},
		Decision:      Decision{Backend: backend.IptablesNFT, ProxyMode: "iptables", IptablesMode: "nft", Reasons: []string{"because"}},
		Refused:       []Refusal{{Backend: backend.IptablesLegacy, Plan: "the generator's plan (apply --backend)", Why: "no ip_tables"}},
		FellForward:   "iptables-legacy, the generator's automatic plan, cannot run",
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
	if !strings.HasPrefix(string(data), "{\n  \"schema\": 2,\n  \"applied\": {") {
		t.Errorf("plan.json does not open with its schema:\n%s", data)
	}
}

// A plan.json of schema 1, or from before the schema field (the previous
// versions' apply, still in /run while the package is upgraded on a
// running node), reads as what it recorded: schema 1's apply set drop_in
// only once it had written the drop-in, adopt none for a running backend.
// A decision without a drop-in was never given to RKE2, and reads so.
func TestParseReadsThePreviousSchemasPlan(t *testing.T) {
	const decision = `"decision":{"backend":"iptables-legacy","proxy_mode":"iptables","iptables_mode":"legacy","source":"%s","modules":[],"kube_proxy_args":[],"kube_proxy_env":[],"reasons":["r"]}`
	for _, c := range []struct {
		name, doc string
		want      Applied
		nothing   string
	}{
		{"written, no schema", `{` + fmt.Sprintf(decision, "config") + `,"drop_in":"/etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml","modules_loaded":["ip_tables"],"kubernetes":"v1.34"}`,
			Applied{Backend: backend.IptablesLegacy, ProxyMode: "iptables", DropIn: "/etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml", By: ByApply}, ""},
		{"written, schema 1", `{"schema":1,` + fmt.Sprintf(decision, "auto") + `,"drop_in":"/etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml","modules_loaded":[],"kubernetes":"v1.34"}`,
			Applied{Backend: backend.IptablesLegacy, ProxyMode: "iptables", DropIn: "/etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml", By: ByApply}, ""},
		{"adopted", `{"schema":1,` + fmt.Sprintf(decision, "adopted") + `,"modules_loaded":[],"kubernetes":"v1.34"}`,
			Applied{Backend: backend.IptablesLegacy, ProxyMode: "iptables", By: ByAdopt}, ""},
		// issue 30: the NAS node's plan after a refused trial, nothing written
		{"not applied", `{"schema":1,` + fmt.Sprintf(decision, "auto") + `,"modules_loaded":[],"warnings":["the planned backend iptables-nft cannot run"],"kubernetes":"v1.34"}`,
			Applied{}, "an earlier version's apply recorded iptables-legacy but wrote no drop-in for it"},
		{"off", `{"schema":1,"decision":{"disabled":true,"backend":"","reasons":["off"]},"modules_loaded":[]}`,
			Applied{}, "rke2-proxy-backend was off"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := Parse([]byte(c.doc))
			if err != nil || p.Schema != Schema || p.Kubernetes != map[bool]string{true: "v1.34"}[c.name != "off"] {
				t.Fatalf("Parse = %+v, %v", p, err)
			}
			got := p.Applied
			got.Nothing = ""
			if got != c.want || !strings.HasPrefix(p.Applied.Nothing, c.nothing) || (c.nothing == "") != (p.Applied.Nothing == "") {
				t.Errorf("applied %+v, want %+v with nothing %q", p.Applied, c.want, c.nothing)
			}
			if p.AppliedBackend() != c.want.Backend {
				t.Errorf("AppliedBackend %q, want %q", p.AppliedBackend(), c.want.Backend)
			}
		})
	}
}

// Carried: only a decision RKE2 was given describes what runs.
func TestCarried(t *testing.T) {
	d := Decision{Backend: backend.IptablesNFT}
	for _, c := range []struct {
		a    Applied
		want bool
	}{
		{Applied{Backend: backend.IptablesNFT, By: ByApply}, true},
		{Applied{Backend: backend.IptablesNFT, By: ByAdopt}, true},
		{Applied{Backend: backend.IptablesNFT, By: ByEarlierRun}, false},
		{Applied{Backend: backend.IptablesLegacy, By: ByApply}, false},
		{Applied{Nothing: "no backend can run"}, false},
	} {
		if got := (Plan{Applied: c.a, Decision: d}).Carried(); got != c.want {
			t.Errorf("Carried(%+v) = %v, want %v", c.a, got, c.want)
		}
	}
}

func TestReadRefusesAnUnknownSchema(t *testing.T) {
	for _, c := range []struct{ doc, value string }{
		{`{"schema":3,"decision":{"backend":"iptables-nft"}}`, "schema 3 "},
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
		for _, want := range []string{p, c.value, "reads schemas 1 and 2", "rke2-proxy-backend adopt"} {
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
