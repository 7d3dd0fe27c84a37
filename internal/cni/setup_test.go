package cni

import (
	"strings"
	"testing"
)

func chart(t *testing.T, file, text string) []ChartConfig {
	t.Helper()
	c, err := ParseChartConfigs(file, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const canalNFT = `apiVersion: helm.cattle.io/v1
kind: HelmChartConfig
metadata:
  name: rke2-canal
  namespace: kube-system
spec:
  valuesContent: |-
    flannel:
      iface: "eth1"
      enableNFTables: true
    calico:
      felixIptablesBackend: nft
`

func TestSetupDefaults(t *testing.T) {
	s := NewSetup(nil, "", nil)
	if s.Primary != Canal || !strings.Contains(s.Source, "default") {
		t.Fatalf("default setup %+v", s)
	}
	s = NewSetup([]string{"multus", "cilium"}, "/etc/rancher/rke2/config.yaml", nil)
	if s.Primary != Cilium || s.Source != "cni: in /etc/rancher/rke2/config.yaml" {
		t.Fatalf("multus list: %+v", s)
	}
	if s = NewSetup([]string{"multus,Calico"}, "f", nil); s.Primary != Calico {
		t.Fatalf("comma list: %+v", s)
	}
}

func TestNFTablesFollow(t *testing.T) {
	tests := []struct {
		name    string
		cnis    []string
		charts  string
		refuse  bool
		unconf  bool
		missing int
		why     string
	}{
		{"canal without config needs both values", nil, "", false, false, 2, ""},
		{"canal already switched", nil, canalNFT, false, false, 0, ""},
		{"canal pinned to legacy by the operator", nil, strings.Replace(canalNFT, "felixIptablesBackend: nft", "felixIptablesBackend: legacy", 1), true, false, 0,
			"/m/a.yaml sets calico.felixIptablesBackend: legacy for rke2-canal"},
		{"flannel with enableNFTables false", []string{"flannel"}, "apiVersion: helm.cattle.io/v1\nkind: HelmChartConfig\nmetadata: {name: rke2-flannel, namespace: kube-system}\nspec:\n  valuesContent: |-\n    flannel:\n      enableNFTables: false\n", true, false, 0, "keeps flannel on iptables"},
		{"calico needs linuxDataplane", []string{"calico"}, "", false, false, 1, ""},
		{"cilium needs nothing", []string{"cilium"}, "", false, false, 0, ""},
		{"none is unconfirmed", []string{"none"}, "", false, true, 0, "not one RKE2 bundles"},
		{"nodelocal dns refuses", []string{"cilium"}, "apiVersion: helm.cattle.io/v1\nkind: HelmChartConfig\nmetadata: {name: rke2-coredns, namespace: kube-system}\nspec:\n  valuesContent: |-\n    nodelocal:\n      enabled: true\n", true, false, 0, "NodeLocal DNSCache is enabled (nodelocal.enabled in /m/a.yaml)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var charts []ChartConfig
			if tt.charts != "" {
				charts = chart(t, "/m/a.yaml", tt.charts)
			}
			f := NewSetup(tt.cnis, "c", charts).NFTables()
			if f.Refuse != tt.refuse || f.Unconfirmed != tt.unconf || len(f.Missing) != tt.missing || !strings.Contains(f.Why, tt.why) {
				t.Errorf("got %+v", f)
			}
		})
	}
}
