package cni

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
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

// TestParseChartConfigsLists: the items of a List, in YAML and JSON, are
// read as the deploy controller reads them; what makes it refuse a file is
// an error naming the file and the document.
func TestParseChartConfigsLists(t *testing.T) {
	list := `{"apiVersion": "v1", "kind": "List", "items": [
	  {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}},
	  {"apiVersion": "helm.cattle.io/v1", "kind": "HelmChartConfig", "metadata": {"name": "rke2-canal"},
	   "spec": {"valuesContent": "flannel:\n  iface: eth1\n"}}]}`
	c, err := ParseChartConfigs("/l.json", []byte(list))
	if err != nil || len(c) != 1 || c[0].Chart != "rke2-canal" || fmt.Sprint(c[0].Values) != "map[flannel:map[iface:eth1]]" {
		t.Errorf("JSON List: %+v %v", c, err)
	}
	// A typed list's items without kind and apiVersion take the list's.
	c, err = ParseChartConfigs("/t.yaml", []byte("apiVersion: helm.cattle.io/v1\nkind: HelmChartConfigList\nitems:\n- metadata: {name: rke2-calico}\n"))
	if err != nil || len(c) != 1 || c[0].Chart != "rke2-calico" {
		t.Errorf("typed List: %+v %v", c, err)
	}
	for _, bad := range []struct{ data, want string }{
		{"- a\n", "/b.yaml: document 1 is not an object but a YAML list"},
		{"kind: List\nitems: 3\n", "document 1 is a List whose items are not a list"},
		{"kind: Secret\n---\nkind: List\nitems: [3]\n", "document 2 item 1 is not an object but a YAML scalar"},
		{"metadata: {name: rke2-canal}\n", "document 1 has no kind; RKE2 applies nothing from this file"},
	} {
		if _, err := ParseChartConfigs("/b.yaml", []byte(bad.data)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: error %v, want %q", bad.data, err, bad.want)
		}
	}
	if c, err := ParseChartConfigs("/n.yaml", []byte("kind: List\nitems: null\n---\n# only a comment\n")); err != nil || len(c) != 0 {
		t.Errorf("empty list and empty document: %+v %v", c, err)
	}
}

// FuzzParseChartConfigsAsList checks a property, not only for crashes:
// the documents of a file that parses, put as the items of one List, give
// the same chart configs in the same order (the deploy controller applies
// both alike). The List is built as a YAML node, not written out: yaml's
// encoder does not write every node back as its parser reads it.
func FuzzParseChartConfigsAsList(f *testing.F) {
	f.Add([]byte(canalNFT))
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\n---\n" + canalNFT))
	f.Add([]byte(`{"apiVersion":"helm.cattle.io/v1","kind":"HelmChartConfig","metadata":{"name":"a"},"spec":{"valuesContent":"x: &a {b: 1}\ny: *a"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		direct, err := ParseChartConfigs("/f.yaml", data)
		if err != nil {
			return
		}
		items := &yaml.Node{Kind: yaml.SequenceNode}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var doc yaml.Node
			if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("parsed, but a second decode fails: %v", err)
			}
			n := doc.Content[0]
			if n.Kind == yaml.ScalarNode {
				continue // an empty document
			}
			if mappingValue(n, "items") != nil {
				return // lists are not nested
			}
			items.Content = append(items.Content, n)
		}
		list := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
			{Kind: yaml.ScalarNode, Value: "apiVersion"}, {Kind: yaml.ScalarNode, Value: "v1"},
			{Kind: yaml.ScalarNode, Value: "kind"}, {Kind: yaml.ScalarNode, Value: "List"},
			{Kind: yaml.ScalarNode, Value: "items"}, items,
		}}
		viaList, err := documentConfigs("/f.yaml", list, IsGenerated(data))
		if err != nil {
			t.Fatalf("as a List: %v", err)
		}
		if !reflect.DeepEqual(direct, viaList) {
			t.Fatalf("as documents %+v, in a List %+v", direct, viaList)
		}
	})
}
