package ownership

import (
	"reflect"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

func chain(name string, rs ...rules.Rule) rules.Chain { return rules.Chain{Name: name, Rules: rs} }

func TestFindIptables(t *testing.T) {
	rs := &rules.Ruleset{Backend: backend.IptablesNFT, Tables: []rules.Table{
		{Family: rules.IPv4, Name: "nat", Chains: []rules.Chain{
			chain("PREROUTING",
				rules.Rule{Text: "-m comment --comment kubernetes-service-portals -j KUBE-SERVICES", Jump: "KUBE-SERVICES"},
				rules.Rule{Text: "-j cali-PREROUTING", Jump: "cali-PREROUTING"}),
			// A reader that left Jump empty: the target comes from the text.
			chain("POSTROUTING", rules.Rule{Text: "-m comment --comment kubernetes-postrouting-rules -j KUBE-POSTROUTING"}),
			chain("KUBE-SERVICES", rules.Rule{Text: "-j KUBE-NODEPORTS", Jump: "KUBE-NODEPORTS"}),
			chain("KUBE-NODEPORTS"),
			chain("KUBE-POSTROUTING", rules.Rule{Text: "-j RETURN"}, rules.Rule{Text: "-j MASQUERADE"}),
			chain("KUBE-KUBELET-CANARY"),
			chain("cali-PREROUTING", rules.Rule{Text: "-j ACCEPT"}),
		}},
		{Family: rules.IPv6, Name: "mangle", Chains: []rules.Chain{chain("KUBE-IPTABLES-HINT"), chain("KUBE-KUBELET-CANARY")}},
		// Native nftables tables do not count on the iptables side.
		{Family: rules.IPv4, Name: vocab.NFTablesTable, Chains: []rules.Chain{chain("services")}},
	}}
	nat := func(c string) ChainRef { return ChainRef{Family: rules.IPv4, Table: "nat", Chain: c} }
	want := Owned{
		Chains: []ChainRef{nat("KUBE-SERVICES"), nat("KUBE-NODEPORTS"), nat("KUBE-POSTROUTING")},
		Jumps: []JumpRef{
			{ChainRef: nat("PREROUTING"), Rule: rs.Tables[0].Chains[0].Rules[0]},
			{ChainRef: nat("POSTROUTING"), Rule: rs.Tables[0].Chains[1].Rules[0]},
		},
		Rules:        5, // KUBE-SERVICES 1 + KUBE-POSTROUTING 2 + 2 jumps
		KubeletHints: []ChainRef{{Family: rules.IPv6, Table: "mangle", Chain: "KUBE-IPTABLES-HINT"}, {Family: rules.IPv6, Table: "mangle", Chain: "KUBE-KUBELET-CANARY"}},
	}
	got := Find(rs, false)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Find =\n%+v\nwant\n%+v", got, want)
	}
	if got.Empty() {
		t.Error("Empty with kube-proxy chains found")
	}
}

func TestFindNFTables(t *testing.T) {
	rs := &rules.Ruleset{Backend: backend.NFTables, Tables: []rules.Table{
		{Family: rules.IPv6, Name: vocab.NFTablesTable, Chains: []rules.Chain{chain("services", rules.Rule{Text: "ip6 daddr . meta l4proto . th dport vmap @service-ips"}), chain("nat-prerouting")}},
		// iptables-nft's tables as the nftables reader sees them: not kube-proxy's native table.
		{Family: rules.IPv4, Name: "nat", Chains: []rules.Chain{chain("KUBE-SERVICES")}},
		{Family: rules.IPv4, Name: "cilium"},
	}}
	ref := func(c string) ChainRef { return ChainRef{Family: rules.IPv6, Table: vocab.NFTablesTable, Chain: c} }
	want := Owned{Tables: []ChainRef{ref("")}, Chains: []ChainRef{ref("services"), ref("nat-prerouting")}, Rules: 1}
	if got := Find(rs, true); !reflect.DeepEqual(got, want) {
		t.Errorf("Find =\n%+v\nwant\n%+v", got, want)
	}
}

func TestFindNothing(t *testing.T) {
	// Empty legacy tables a probe created, kubelet's chains alone, and no ruleset at all: no footprint.
	rs := &rules.Ruleset{Tables: []rules.Table{
		{Family: rules.IPv4, Name: "filter", Chains: []rules.Chain{chain("INPUT"), chain("KUBE-FIREWALL")}},
		{Family: rules.IPv4, Name: "nat"},
	}}
	for _, r := range []*rules.Ruleset{nil, rs} {
		if o := Find(r, false); !o.Empty() || o.Rules != 0 {
			t.Errorf("Find(%v) = %+v, want empty", r, o)
		}
	}
}
