package cni

import (
	"reflect"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestRenderParsesBack checks every CNI's manifest as YAML: the exact
// apiVersion, kind, name and namespace helm-controller matches, and the
// chart keys RKE2's charts read.
func TestRenderParsesBack(t *testing.T) {
	want := map[string]map[string]any{
		Canal:   {"calico": map[string]any{"felixIptablesBackend": "nft"}, "flannel": map[string]any{"enableNFTables": true}},
		Flannel: {"flannel": map[string]any{"enableNFTables": true}},
		Calico:  {"installation": map[string]any{"calicoNetwork": map[string]any{"linuxDataplane": "Nftables"}}},
	}
	for cniName, values := range want {
		chartName, settings, ok := NFTablesValues(cniName)
		if !ok {
			t.Fatalf("%s unknown", cniName)
		}
		data, err := RenderChartConfig(chartName, settings)
		if err != nil {
			t.Fatal(err)
		}
		if !IsGenerated(data) {
			t.Errorf("%s: no generated header", cniName)
		}
		var doc struct {
			APIVersion string `yaml:"apiVersion"`
			Kind       string `yaml:"kind"`
			Metadata   map[string]string
			Spec       map[string]string
		}
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: %v\n%s", cniName, err, data)
		}
		if doc.APIVersion != "helm.cattle.io/v1" || doc.Kind != "HelmChartConfig" ||
			doc.Metadata["name"] != "rke2-"+cniName || doc.Metadata["namespace"] != "kube-system" {
			t.Errorf("%s: header fields %+v", cniName, doc)
		}
		var got map[string]any
		if err := yaml.Unmarshal([]byte(doc.Spec["valuesContent"]), &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, values) {
			t.Errorf("%s: values %#v, want %#v", cniName, got, values)
		}
		again, _ := RenderChartConfig(chartName, settings)
		if string(again) != string(data) {
			t.Errorf("%s: two renders differ", cniName)
		}
		// What we render, the setup reads as already switched.
		parsed, err := ParseChartConfigs("/x.yaml", data)
		if err != nil || len(parsed) != 1 || !parsed[0].Generated {
			t.Fatalf("%s: parse back %+v %v", cniName, parsed, err)
		}
		if f := NewSetup([]string{cniName}, "c", parsed).NFTables(); f.Refuse || len(f.Missing) != 0 {
			t.Errorf("%s: rendered config not recognised: %+v", cniName, f)
		}
	}
}

func TestParseChartConfigsSkipsAndFails(t *testing.T) {
	c, err := ParseChartConfigs("/a.yaml", []byte("apiVersion: v1\nkind: ConfigMap\n---\napiVersion: helm.cattle.io/v1\nkind: HelmChartConfig\nmetadata: {name: x, namespace: other}\n"))
	if err != nil || len(c) != 0 {
		t.Errorf("other kinds and namespaces not skipped: %+v %v", c, err)
	}
	if _, err := ParseChartConfigs("/b.yaml", []byte("kind: [")); err == nil {
		t.Error("broken YAML accepted")
	}
	if _, err := ParseChartConfigs("/c.yaml", []byte("apiVersion: helm.cattle.io/v1\nkind: HelmChartConfig\nmetadata: {name: rke2-canal}\nspec: {valuesContent: \"- a\"}\n")); err == nil {
		t.Error("a valuesContent list accepted")
	}
}

func FuzzParseChartConfigs(f *testing.F) {
	f.Add([]byte(canalNFT))
	f.Add([]byte("---\n---\nkind: HelmChartConfig\napiVersion: helm.cattle.io/v1\nspec: {valuesContent: 'a: {b: 1}'}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cs, err := ParseChartConfigs("/f.yaml", data)
		for _, c := range cs {
			c.Value("a.b.c")
			if c.File != "/f.yaml" {
				t.Fatalf("file lost: %+v", c)
			}
		}
		_ = err
		NewSetup(nil, "", cs).NFTables()
	})
}
