package cni

import "testing"

func TestBackendMismatches(t *testing.T) {
	felix := func(v any) []ChartConfig {
		return []ChartConfig{{File: "/m/c.yaml", Chart: "rke2-canal", Values: map[string]any{"calico": map[string]any{"felixIptablesBackend": v}}}}
	}
	tests := []struct {
		name             string
		cnis             []string
		charts           []ChartConfig
		proxy, iptables  string
		wantKey, wantGot string
	}{
		{"felix legacy under iptables-nft", nil, felix("Legacy"), "iptables", "nft", "calico.felixIptablesBackend", "Legacy"},
		{"felix nft under iptables-nft", nil, felix("NFT"), "iptables", "nft", "", ""},
		{"felix auto is not judged", nil, felix("Auto"), "iptables", "legacy", "", ""},
		{"felix legacy under nftables", nil, felix("legacy"), "nftables", "nft", "calico.felixIptablesBackend", "legacy"},
		{"flannel nftables under iptables", []string{"flannel"}, []ChartConfig{{File: "/m/f.yaml", Chart: "rke2-flannel", Values: map[string]any{"flannel": map[string]any{"enableNFTables": true}}}}, "iptables", "legacy", "flannel.enableNFTables", "true"},
		{"calico nftables dataplane under iptables", []string{"calico"}, []ChartConfig{{File: "/m/k.yaml", Chart: "rke2-calico", Values: map[string]any{"installation": map[string]any{"calicoNetwork": map[string]any{"linuxDataplane": "Nftables"}}}}}, "iptables", "nft", "installation.calicoNetwork.linuxDataplane", "Nftables"},
		{"nothing set", nil, nil, "iptables", "nft", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewSetup(tt.cnis, "c", tt.charts).BackendMismatches(tt.proxy, tt.iptables)
			if tt.wantKey == "" {
				if len(m) != 0 {
					t.Errorf("mismatches %+v", m)
				}
				return
			}
			if len(m) != 1 || m[0].Key != tt.wantKey || fmtAny(m[0].Got) != tt.wantGot {
				t.Errorf("mismatches %+v, want %s=%s", m, tt.wantKey, tt.wantGot)
			}
		})
	}
}

func fmtAny(v any) string {
	if b, ok := v.(bool); ok {
		if b {
			return "true"
		}
		return "false"
	}
	s, _ := v.(string)
	return s
}
