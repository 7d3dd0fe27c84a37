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

// What a missing module file's reason names as its usual package.
func TestModulesPackageOf(t *testing.T) {
	for release, want := range map[string][2]string{
		"6.12.0-55.el10.x86_64": {"kernel-modules-extra-6.12.0-55.el10.x86_64", "EL"},
		"6.8.0-45-generic":      {"linux-modules-extra-6.8.0-45-generic", "Ubuntu"},
		"6.8.0-1015-aws":        {"linux-modules-extra-6.8.0-1015-aws", "Ubuntu"},
		"6.1.0-57-cloud-amd64":  {"linux-image-6.1.0-57-cloud-amd64", "Debian"},
		"6.1.0-57-cloud-arm64":  {"linux-image-6.1.0-57-cloud-arm64", "Debian"},
		"4.4.302+":              {"", ""},
	} {
		if pkg, distro := ModulesPackageOf(release); pkg != want[0] || distro != want[1] {
			t.Errorf("%s: %q (%s), want %q (%s)", release, pkg, distro, want[0], want[1])
		}
	}
	if got := ModulesPackage("4.4.302+"); !strings.Contains(got, "usually") || !strings.Contains(got, "linux-modules-extra-4.4.302+") || !strings.Contains(got, "kernel-modules-extra") {
		t.Errorf("an unknown distribution's hint %q names neither package", got)
	}
}

// kube-proxy writes nat rules: a legacy kernel without the nat table, or
// an nf_tables one without nat chains, cannot run it (DOMAIN.md section
// 10: a probe must exercise nat).
func TestRequirementsIncludeNAT(t *testing.T) {
	has := func(b Backend, mod string) bool {
		for _, r := range b.RequirementsOn(6, 1) {
			for _, m := range r.Modules {
				if m == mod {
					return true
				}
			}
		}
		return false
	}
	for b, mod := range map[Backend]string{IptablesLegacy: "iptable_nat", IptablesNFT: "nft_chain_nat", NFTables: "nft_chain_nat"} {
		if !has(b, mod) {
			t.Errorf("%s on 6.1 does not require %s", b, mod)
		}
	}
	if has(IptablesNFT, "nft_counter") {
		t.Error("nft_counter is required, but 6.1 has it inside nf_tables.ko, with no file or option of its own")
	}
}
