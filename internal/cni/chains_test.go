package cni

import "testing"

// The names are the CNIs' own, as their sources create them: Felix
// (cali-FORWARD, cali-fw-<iface>, cali-pi-<policy>), flanneld
// (CreateIP4Chain("nat", "FLANNEL-POSTRTG"), "filter" "FLANNEL-FWD"),
// cilium-agent's feeder chains, portmap's hostport chains.
func TestChainOwner(t *testing.T) {
	for chain, want := range map[string]Owner{
		"cali-FORWARD":              OwnerCalico,
		"cali-fw-cali1234abcd":      OwnerCalico,
		"cali-pi-_Xb3h7":            OwnerCalico,
		"cali-nat-outgoing":         OwnerCalico,
		"FLANNEL-POSTRTG":           OwnerFlannel,
		"FLANNEL-FWD":               OwnerFlannel,
		"CILIUM_POST_nat":           OwnerCilium,
		"CILIUM_PRE_mangle":         OwnerCilium,
		"CILIUM_INPUT":              OwnerCilium,
		"OLD_CILIUM_POST_nat":       OwnerCilium,
		"CNI-HOSTPORT-DNAT":         OwnerPortmap,
		"CNI-HOSTPORT-SETMARK":      OwnerPortmap,
		"CNI-HOSTPORT-MASQ":         OwnerPortmap,
		"CNI-DN-7e8b1d0c4f2a9e6b3d": OwnerPortmap,
		"KUBE-SERVICES":             OwnerNone,
		"KUBE-IPTABLES-HINT":        OwnerNone,
		"CALI-FORWARD":              OwnerNone, // case matters in netfilter
		"cali-":                     OwnerNone, // a bare prefix is no chain of Felix's
		"POSTROUTING":               OwnerNone,
		"services":                  OwnerNone,
	} {
		if got := ChainOwner(chain); got != want {
			t.Errorf("ChainOwner(%q) = %q, want %q", chain, got, want)
		}
	}
}

func TestRuleCommentOwner(t *testing.T) {
	for comment, want := range map[string]Owner{
		"NodeLocal DNS Cache: skip conntrack":    OwnerNodeLocalDNS,
		"NodeLocal DNS Cache: allow DNS traffic": OwnerNodeLocalDNS,
		"flanneld masq":                          OwnerFlannel,
		"flanneld forward":                       OwnerFlannel,
		"cilium-feeder: CILIUM_PRE_nat":          OwnerCilium,
		"cali:Cz_u1IQiXIMmKD4c":                  OwnerCalico,
		"kubernetes service portals":             OwnerNone,
		"NodeLocal DNS Cache":                    OwnerNone,
	} {
		if got := RuleCommentOwner(comment); got != want {
			t.Errorf("RuleCommentOwner(%q) = %q, want %q", comment, got, want)
		}
	}
}

func TestTableOwner(t *testing.T) {
	for name, want := range map[string]Owner{
		"calico": OwnerCalico, "flannel-ipv4": OwnerFlannel, "flannel-ipv6": OwnerFlannel,
		"kube-proxy": OwnerNone, "filter": OwnerNone, "nat": OwnerNone, "calico-x": OwnerNone, "Calico": OwnerNone, "firewalld": OwnerNone,
	} {
		if got := TableOwner(name); got != want {
			t.Errorf("TableOwner(%q) = %q, want %q", name, got, want)
		}
	}
}
