package ownership

import (
	"reflect"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// On k3s the group is kube-proxy, flannel and kube-router: their chains
// and the jumps into them count, and kube-router's commented rule in a
// built-in; Felix's, kubelet's and the built-ins do
// not. RKE2's group still finds kube-proxy's alone in the same rules.
func TestGroupFind(t *testing.T) {
	jump := func(to string) rules.Rule { return rules.Rule{Text: "-j " + to, Jump: to} }
	rs := &rules.Ruleset{Backend: backend.IptablesLegacy, Tables: []rules.Table{
		{Family: rules.IPv4, Name: "filter", Chains: []rules.Chain{
			chain("FORWARD", jump("KUBE-ROUTER-FORWARD"), jump("KUBE-FORWARD"),
				rules.Rule{Text: `-m comment --comment "flanneld forward" -j FLANNEL-FWD`, Jump: "FLANNEL-FWD"}, jump("cali-FORWARD"),
				// kube-router's accept of policy-marked traffic, in the
				// built-in: its comment says whose it is.
				rules.Rule{Text: `-m comment --comment "KUBE-ROUTER rule to explicitly ACCEPT traffic that comply to network policies" -m mark --mark 0x20000/0x20000 -j ACCEPT`,
					Comment: "KUBE-ROUTER rule to explicitly ACCEPT traffic that comply to network policies", Jump: "ACCEPT"}),
			chain("KUBE-FORWARD"),
			chain("KUBE-ROUTER-FORWARD", jump("KUBE-POD-FW-4XGPQLOJ6OOL6D6B")),
			chain("KUBE-POD-FW-4XGPQLOJ6OOL6D6B", jump("KUBE-NWPLCY-DEFAULT")),
			chain("KUBE-NWPLCY-DEFAULT"),
			chain("FLANNEL-FWD", rules.Rule{Text: "-s 10.42.0.0/16 -j ACCEPT"}),
			chain("cali-FORWARD"),
			chain("KUBE-FIREWALL"),
		}},
	}}
	ref := func(c string) ChainRef { return ChainRef{Family: rules.IPv4, Table: "filter", Chain: c} }
	fwd := rs.Tables[0].Chains[0].Rules
	for _, c := range []struct {
		group Group
		want  Owned
	}{
		{GroupOf(distro.RKE2), Owned{
			Chains: []ChainRef{ref("KUBE-FORWARD")},
			Jumps:  []JumpRef{{ChainRef: ref("FORWARD"), Rule: fwd[1]}},
			Rules:  1,
		}},
		{GroupOf(distro.Kind("k3s")), Owned{
			Chains: []ChainRef{ref("KUBE-FORWARD"), ref("KUBE-ROUTER-FORWARD"), ref("KUBE-POD-FW-4XGPQLOJ6OOL6D6B"), ref("KUBE-NWPLCY-DEFAULT"), ref("FLANNEL-FWD")},
			Jumps:  []JumpRef{{ChainRef: ref("FORWARD"), Rule: fwd[0]}, {ChainRef: ref("FORWARD"), Rule: fwd[1]}, {ChainRef: ref("FORWARD"), Rule: fwd[2]}, {ChainRef: ref("FORWARD"), Rule: fwd[4]}},
			Rules:  7, // 3 chains with one rule each + 3 jumps and kube-router's accept in FORWARD
		}},
	} {
		if got := c.group.Find(rs, false); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%v.Find =\n%+v\nwant\n%+v", c.group, got, c.want)
		}
	}
	if GroupOf("").Has(Owner("flannel")) {
		t.Error(`GroupOf("") has flannel: an unknown distribution must count as RKE2`)
	}
}

// GroupFor leaves out the k3s writers k3s does not run, and never adds
// one on RKE2.
func TestGroupFor(t *testing.T) {
	fl, kr := Owner("flannel"), Owner("kube-router")
	for _, c := range []struct {
		kind            distro.Kind
		flannel, netpol bool
		want            Group
	}{
		{distro.Kind("k3s"), true, true, Group{KubeProxy, fl, kr}},
		{distro.Kind("k3s"), false, true, Group{KubeProxy, kr}},
		{distro.Kind("k3s"), true, false, Group{KubeProxy, fl}},
		{distro.Kind("k3s"), false, false, Group{KubeProxy}},
		{distro.RKE2, true, true, Group{KubeProxy}},
		{"", true, true, Group{KubeProxy}},
	} {
		if got := GroupFor(c.kind, c.flannel, c.netpol); !reflect.DeepEqual(got, c.want) {
			t.Errorf("GroupFor(%q, %t, %t) = %v, want %v", c.kind, c.flannel, c.netpol, got, c.want)
		}
	}
}

// Where k3s's group is stranded: everywhere but kube-proxy's backend,
// except that beside nftables mode flannel and kube-router live in
// iptables-nft; leaving nftables mode strands them there.
func TestGroupStraysIn(t *testing.T) {
	fl, kr := Owner("flannel"), Owner("kube-router")
	legacy, nft, native := backend.IptablesLegacy, backend.IptablesNFT, backend.NFTables
	for _, c := range []struct {
		b, kubeProxy backend.Backend
		want         Group
	}{
		{legacy, nft, K3s},
		{nft, legacy, K3s},
		{native, nft, K3s},
		{legacy, native, K3s},
		{nft, native, Group{KubeProxy}},
		{native, native, K3s}, // --force: the live rules too
		{nft, "", K3s},        // no plan: nothing says
	} {
		if got := K3s.StraysIn(c.b, c.kubeProxy); !reflect.DeepEqual(got, c.want) {
			t.Errorf("StraysIn(%s, %s) = %v, want %v", c.b, c.kubeProxy, got, c.want)
		}
	}
	if got := KubeProxyOnly.StraysIn(nft, native); !reflect.DeepEqual(got, KubeProxyOnly) {
		t.Errorf("RKE2: %v", got)
	}
	for _, c := range []struct {
		from, kubeProxy backend.Backend
		where           backend.Backend
		want            Group
	}{
		{native, legacy, nft, Group{fl, kr}},
		{native, nft, "", nil},
		{legacy, nft, "", nil},
		{nft, native, "", nil},
	} {
		if where, got := K3s.LeftBeside(c.from, c.kubeProxy); where != c.where || !reflect.DeepEqual(got, c.want) {
			t.Errorf("LeftBeside(%s, %s) = %s %v, want %s %v", c.from, c.kubeProxy, where, got, c.where, c.want)
		}
	}
}
