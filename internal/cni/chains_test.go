package cni

import "testing"

// Each classifier against names the CNIs use themselves, as their sources
// create them: Felix (cali-FORWARD, cali-fw-<iface>, cali-pi-<policy>,
// its "cali:" rule comments, its nftables table calico), flanneld
// (CreateIP4Chain("nat", "FLANNEL-POSTRTG"), "filter" "FLANNEL-FWD", its
// rule comments and tables flannel-ipv4/6), cilium-agent's feeder chains,
// portmap's hostport chains, NodeLocal DNS's rule comments, kube-router's
// network policy chains (k3s).
func TestOwners(t *testing.T) {
	for _, c := range []struct {
		name  string
		owner func(string) Owner
		cases map[string]Owner
	}{
		{"ChainOwner", ChainOwner, map[string]Owner{
			"cali-FORWARD":                 OwnerCalico,
			"cali-fw-cali1234abcd":         OwnerCalico,
			"cali-pi-_Xb3h7":               OwnerCalico,
			"cali-nat-outgoing":            OwnerCalico,
			"FLANNEL-POSTRTG":              OwnerFlannel,
			"FLANNEL-FWD":                  OwnerFlannel,
			"CILIUM_POST_nat":              OwnerCilium,
			"CILIUM_PRE_mangle":            OwnerCilium,
			"CILIUM_INPUT":                 OwnerCilium,
			"OLD_CILIUM_POST_nat":          OwnerCilium,
			"CNI-HOSTPORT-DNAT":            OwnerPortmap,
			"CNI-HOSTPORT-SETMARK":         OwnerPortmap,
			"CNI-HOSTPORT-MASQ":            OwnerPortmap,
			"CNI-DN-7e8b1d0c4f2a9e6b3d":    OwnerPortmap,
			"KUBE-ROUTER-INPUT":            OwnerKubeRouter,
			"KUBE-ROUTER-FORWARD":          OwnerKubeRouter,
			"KUBE-NWPLCY-DEFAULT":          OwnerKubeRouter,
			"KUBE-NWPLCY-7JHBYQ3ZWWA5TP2M": OwnerKubeRouter,
			"KUBE-POD-FW-4XGPQLOJ6OOL6D6B": OwnerKubeRouter,
			"KUBE-FW-4XGPQLOJ6OOL6D6B":     OwnerNone, // kube-proxy's firewall chain
			"KUBE-SERVICES":                OwnerNone,
			"KUBE-IPTABLES-HINT":           OwnerNone,
			"CALI-FORWARD":                 OwnerNone, // case matters in netfilter
			"cali-":                        OwnerNone, // a bare prefix is no chain of Felix's
			"POSTROUTING":                  OwnerNone,
			"services":                     OwnerNone,
		}},
		{"RuleCommentOwner", RuleCommentOwner, map[string]Owner{
			"NodeLocal DNS Cache: skip conntrack":    OwnerNodeLocalDNS,
			"NodeLocal DNS Cache: allow DNS traffic": OwnerNodeLocalDNS,
			"flanneld masq":                          OwnerFlannel,
			"flanneld forward":                       OwnerFlannel,
			"cilium-feeder: CILIUM_PRE_nat":          OwnerCilium,
			"cali:Cz_u1IQiXIMmKD4c":                  OwnerCalico,
			"kube-router netpol - 4IA2OSFRMVNDXBVV":  OwnerKubeRouter,
			"KUBE-ROUTER rule to explicitly ACCEPT traffic that comply to network policies": OwnerKubeRouter,
			"rule to explicitly ACCEPT traffic that comply to network policies":             OwnerNone, // in kube-router's own chains, which say whose it is
			"kubernetes service portals": OwnerNone,
			"NodeLocal DNS Cache":        OwnerNone,
		}},
		{"TableOwner", TableOwner, map[string]Owner{
			"calico": OwnerCalico, "flannel-ipv4": OwnerFlannel, "flannel-ipv6": OwnerFlannel,
			"kube-proxy": OwnerNone, "filter": OwnerNone, "nat": OwnerNone, "calico-x": OwnerNone, "Calico": OwnerNone, "firewalld": OwnerNone,
		}},
	} {
		for in, want := range c.cases {
			if got := c.owner(in); got != want {
				t.Errorf("%s(%q) = %q, want %q", c.name, in, got, want)
			}
		}
	}
}
