package verify

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// The fix names the chart value that moves each writer to where it belongs,
// and nftables mode takes internal/cni's values.
func TestCNIFindingsNameTheFix(t *testing.T) {
	canal, calico := cni.NewSetup(nil, "", nil), cni.NewSetup([]string{"calico"}, "/c.yaml", nil)
	chains := func(o cni.Owner, n int) map[cni.Owner][]string {
		var c []string
		for i := 0; i < n; i++ {
			c = append(c, "ipv4 filter "+string(rune('a'+i)))
		}
		return map[cni.Owner][]string{o: c}
	}
	cases := []struct {
		name         string
		expect, in   backend.Backend
		setup        *cni.Setup
		found        map[cni.Owner][]string
		fix, message string
	}{
		{"flannel on iptables in nftables mode", backend.NFTables, backend.IptablesNFT, &canal, chains(cni.OwnerFlannel, 2),
			"rke2-canal set flannel.enableNFTables: true", "2 chain(s)"},
		{"Calico on iptables in nftables mode", backend.NFTables, backend.IptablesNFT, &calico, chains(cni.OwnerCalico, 10),
			"rke2-calico set installation.calicoNetwork.linuxDataplane: Nftables", "10 chain(s): ipv4 filter a, ipv4 filter b, ipv4 filter c, ipv4 filter d, ipv4 filter e, ipv4 filter f, ipv4 filter g, ipv4 filter h and 2 more"},
		{"Felix in legacy, CNI unknown", backend.IptablesNFT, backend.IptablesLegacy, nil, chains(cni.OwnerCalico, 1),
			"rke2-canal set calico.felixIptablesBackend: nft (Canal) or", "Calico (Felix)"},
		{"portmap in legacy", backend.IptablesNFT, backend.IptablesLegacy, &canal, chains(cni.OwnerPortmap, 3),
			"update-alternatives --set iptables /usr/sbin/iptables-nft; update-alternatives --set ip6tables /usr/sbin/ip6tables-nft (on EL install the iptables-nft package)", "portmap"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := BackendState{Backend: c.in, cniChains: c.found}
			got := group{expect: c.expect}.cniFindings(c.setup, &st)
			if len(got) != 1 {
				t.Fatalf("got %d findings, want 1: %+v", len(got), got)
			}
			if !strings.Contains(got[0].Fix, c.fix) || !strings.Contains(got[0].Message, c.message) {
				t.Errorf("finding %+v\nwant fix containing %q and message containing %q", got[0], c.fix, c.message)
			}
			for o, n := range st.CNIOtherBackend {
				if n != len(c.found[o]) {
					t.Errorf("other-backend count %s = %d, want %d", o, n, len(c.found[o]))
				}
			}
		})
	}
	// Where they belong, no finding: Canal's Felix on iptables-nft in nftables mode.
	st := BackendState{Backend: backend.IptablesNFT, cniChains: chains(cni.OwnerCalico, 3)}
	if got := (group{expect: backend.NFTables}).cniFindings(&canal, &st); len(got) != 0 {
		t.Errorf("Felix on iptables-nft next to nftables mode: %+v", got)
	}
}

// A jump into a named chain counts once (the chain); NodeLocal DNS, with no
// chain, counts the built-in chains holding its rules.
func TestFindCNIChains(t *testing.T) {
	rs := &rules.Ruleset{Tables: []rules.Table{{Family: rules.IPv4, Name: "raw", Chains: []rules.Chain{
		{Name: "PREROUTING", Rules: []rules.Rule{{Comment: "NodeLocal DNS Cache: skip conntrack"}, {Comment: "cali:abc", Jump: "cali-PREROUTING"}}},
		{Name: "cali-PREROUTING"},
	}}}}
	got := group{}.findCNIChains(rs)
	if strings.Join(got[cni.OwnerCalico], ",") != "ipv4 raw cali-PREROUTING" || strings.Join(got[cni.OwnerNodeLocalDNS], ",") != "ipv4 raw PREROUTING" || len(got) != 2 {
		t.Errorf("findCNIChains = %v", got)
	}
}
