package backend

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, b := range All {
		got, err := Parse(string(b))
		if err != nil || got != b {
			t.Errorf("Parse(%q) = %q, %v", b, got, err)
		}
	}
	for _, bad := range []string{"", "modern", "legacy", "nft", "IPTABLES-NFT"} {
		if _, err := Parse(bad); err == nil || !strings.Contains(err.Error(), Names()) {
			t.Errorf("Parse(%q) err = %v, want one listing %s", bad, err, Names())
		}
	}
}

// RKE2's kube-proxy image accepts only legacy and nft (DOMAIN.md section 2).
func TestModesAreWhatKubeProxyAccepts(t *testing.T) {
	want := map[Backend][2]string{
		IptablesLegacy: {"iptables", "legacy"},
		IptablesNFT:    {"iptables", "nft"},
		NFTables:       {"nftables", "nft"},
	}
	for b, w := range want {
		if b.ProxyMode() != w[0] || b.IptablesMode() != w[1] {
			t.Errorf("%s: proxy-mode %s IPTABLES_MODE %s, want %v", b, b.ProxyMode(), b.IptablesMode(), w)
		}
	}
}

// Loading iptable_* on an nft node creates legacy tables that mislead
// detection: only the legacy backend may load them.
func TestOnlyLegacyLoadsLegacyTables(t *testing.T) {
	for _, b := range All {
		for _, m := range b.Modules() {
			legacy := strings.HasPrefix(m, "iptable_") || strings.HasPrefix(m, "ip6table_") || m == "ip_tables" || m == "ip6_tables"
			if legacy && b != IptablesLegacy {
				t.Errorf("%s loads %s", b, m)
			}
			if strings.HasPrefix(m, "nf_tables") && b == IptablesLegacy {
				t.Errorf("%s loads %s", b, m)
			}
		}
		if len(b.Requirements()) == 0 {
			t.Errorf("%s has no kernel requirements", b)
		}
	}
}
