package backend

import (
	"fmt"
	"slices"
	"strings"
)

// What kube-proxy's ipvs mode needs from the kernel beside its backend's
// own set: decide names it, kmod loads what the plan lists.

// DefaultIPVSScheduler is kube-proxy's scheduler when --ipvs-scheduler is
// unset (pkg/proxy/ipvs/proxier.go defaultScheduler).
const DefaultIPVSScheduler = "rr"

// IPVSSchedulers are the kernel's IPVS schedulers (net/netfilter/ipvs,
// one ip_vs_<name> module each). kube-proxy does not check the name
// itself: it hands it to the kernel, which loads ip_vs_<name> on demand,
// and its startup check (CanUseIPVSProxier) creates a probe virtual server
// with it, so any of these works and nothing else does.
var IPVSSchedulers = []string{"dh", "fo", "lblc", "lblcr", "lc", "mh", "nq", "ovf", "rr", "sed", "sh", "twos", "wlc", "wrr"}

// ipvsModules are what kube-proxy's ipvs mode needs besides the iptables
// backend's own set and the scheduler: IPVS itself, ip_set with the set
// types its proxier creates (hash:ip for KUBE-IPVS-IPS, hash:ip,port,
// hash:ip,port,ip, hash:ip,port,net, bitmap:port; pkg/proxy/ipvs
// proxier.go ipsetInfo), the iptables match on them (xt_set), the ipvs
// match of its KUBE-IPVS-OUT-FILTER rules (xt_ipvs), conntrack, and the
// dummy link kube-ipvs0 carries the Service addresses on.
var ipvsModules = []string{
	"ip_vs",
	"ip_set", "ip_set_hash_ip", "ip_set_hash_ipport", "ip_set_hash_ipportip", "ip_set_hash_ipportnet", "ip_set_bitmap_port",
	"xt_set", "xt_ipvs", "nf_conntrack", "dummy",
}

// IPVSModules is the preload for ipvs mode with scheduler ("" is
// kube-proxy's default, rr), in load order: ip_vs before its scheduler.
// An unknown scheduler has no module to load: the error says so and the
// list still holds everything else.
func IPVSModules(scheduler string) ([]string, error) {
	if scheduler == "" {
		scheduler = DefaultIPVSScheduler
	}
	out := append([]string{}, ipvsModules[:1]...)
	var err error
	if slices.Contains(IPVSSchedulers, scheduler) {
		out = append(out, "ip_vs_"+scheduler)
	} else {
		err = fmt.Errorf("ipvs-scheduler %q is not one of the kernel's IPVS schedulers (%s): the kernel has no ip_vs_%s module, and kube-proxy's startup check, which creates a probe virtual server with it, fails", scheduler, strings.Join(IPVSSchedulers, ", "), scheduler)
	}
	return append(out, ipvsModules[1:]...), err
}
