package testhost

import "slices"

// IPVSNode writes /etc/rancher/rke2/config.yaml as operators of ipvs
// nodes do: proxy-mode=ipvs, and ipvs-scheduler=sched when sched is not
// "" (line 2 is the key kube-proxy-arg, as findings name it). Pair it with a kernel
// profile and an RKE2 release (IPVSNodeOn).
func (h *Host) IPVSNode(sched string, extra ...string) *Host {
	h.t.Helper()
	args := []string{"proxy-mode=ipvs"}
	if sched != "" {
		args = append(args, "ipvs-scheduler="+sched)
	}
	return h.KubeProxyArgs("config.yaml", false, append(args, extra...)...)
}

// IPVSNodeOn is a Debian 12 RKE2 server (tarball layout) of release v
// (e.g. "v1.34.10+rke2r1", "v1.38.0+rke2r1", "v1.40.0+rke2r1") whose
// RKE2 config runs kube-proxy in ipvs mode with scheduler sh, and whose
// module tree has IPVS as Debian's kernel ships it: the ipvs fleets
// KEP-5495 makes move.
func (h *Host) IPVSNodeOn(v string) *Host {
	h.t.Helper()
	return h.Debian12().IPVSModuleTree().RKE2Unit("tarball", "server").RKE2Version(v).IPVSNode("sh")
}

// ipvsModules are the IPVS, ipset and dummy modules a distribution kernel
// ships as loadable modules (Debian 12's 6.1 has every one).
var ipvsModules = []string{
	"ip_vs", "ip_vs_rr", "ip_vs_wrr", "ip_vs_lc", "ip_vs_wlc", "ip_vs_sh", "ip_vs_dh", "ip_vs_mh", "ip_vs_sed", "ip_vs_nq",
	"ip_set", "ip_set_hash_ip", "ip_set_hash_ipport", "ip_set_hash_ipportip", "ip_set_hash_ipportnet", "ip_set_hash_net", "ip_set_bitmap_port",
	"xt_set", "xt_ipvs", "dummy",
}

// IPVSModuleTree writes the module tree of a Debian-like kernel with IPVS:
// both iptables backends' modules and ipvsModules, without (leave out
// names in without, e.g. "ip_vs_sh", for a kernel missing one).
func (h *Host) IPVSModuleTree(without ...string) *Host {
	h.t.Helper()
	var names []string
	for _, n := range append(append(append([]string{}, legacyModules...), nftModules...), ipvsModules...) {
		if !slices.Contains(without, n) {
			names = append(names, n)
		}
	}
	return h.AvailableModules(names...)
}
