package vocab

import (
	"strings"
	"sync"
)

// IPVSDummyLink is the link kube-proxy's ipvs mode puts every Service IP
// on (defaultDummyDevice, pkg/proxy/ipvs/proxier.go).
const IPVSDummyLink = "kube-ipvs0"

// kube-proxy's fixed chains in ipvs mode that its iptables mode never
// writes (pkg/proxy/ipvs/proxier.go); the ones both modes write are
// ChainServices and its neighbours (kubeproxy.go).
const (
	ChainIPVSLoadBalancer = "KUBE-LOAD-BALANCER"
	ChainIPVSNodePort     = "KUBE-NODE-PORT"
	ChainIPVSLoopBack     = "KUBE-LOOP-BACK"
	ChainIPVSFilter       = "KUBE-IPVS-FILTER"
	ChainIPVSOutFilter    = "KUBE-IPVS-OUT-FILTER"
	ChainIPVSSourceRanges = "KUBE-SOURCE-RANGES-FIREWALL"
)

// ipvsOnlyChains are the iptables chains kube-proxy writes in ipvs mode
// and never in iptables mode: after a move to iptables mode on the same
// backend, nothing rewrites or removes them.
var ipvsOnlyChains = []string{
	ChainIPVSLoadBalancer,
	ChainIPVSNodePort,
	ChainIPVSLoopBack,
	ChainIPVSFilter,
	ChainIPVSOutFilter,
	ChainIPVSSourceRanges,
}

// IsIPVSOnlyChain reports whether chain is one of ipvsOnlyChains.
func IsIPVSOnlyChain(chain string) bool {
	for _, c := range ipvsOnlyChains {
		if c == chain {
			return true
		}
	}
	return false
}

// kube-proxy's ipvs-mode ipsets, IPv4 names (pkg/proxy/ipvs/ipset.go,
// k8s.io/kubernetes v1.37.2). Only these exact names are kube-proxy's:
// other programs on RKE2 and k3s nodes also name sets KUBE-* (kube-router's
// network policy controller uses KUBE-SRC-*/KUBE-DST-*), so a prefix match
// would sweep theirs.
var ipvsIPSets = []string{
	"KUBE-LOOP-BACK",
	"KUBE-CLUSTER-IP",
	"KUBE-EXTERNAL-IP",
	"KUBE-EXTERNAL-IP-LOCAL",
	"KUBE-LOAD-BALANCER",
	"KUBE-LOAD-BALANCER-LOCAL",
	"KUBE-LOAD-BALANCER-FW",
	"KUBE-LOAD-BALANCER-SOURCE-IP",
	"KUBE-LOAD-BALANCER-SOURCE-CIDR",
	"KUBE-NODE-PORT-TCP",
	"KUBE-NODE-PORT-LOCAL-TCP",
	"KUBE-NODE-PORT-UDP",
	"KUBE-NODE-PORT-LOCAL-UDP",
	"KUBE-NODE-PORT-SCTP-HASH",
	"KUBE-NODE-PORT-LOCAL-SCTP-HASH",
	"KUBE-HEALTH-CHECK-NODE-PORT",
	"KUBE-IPVS-IPS",
}

// ipvsIPSetNames is built at its first use: every program links vocab,
// and the generator, which starts at every boot, never asks.
var ipvsIPSetNames = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, n := range ipvsIPSets {
		m[n] = true
		m[IPv6IPSetName(n)] = true
	}
	return m
})

// IPv6IPSetName is the name kube-proxy gives the IPv6 twin of an ipvs
// set: "KUBE-" becomes "KUBE-6-", cut to ipset's 31 bytes (NewIPSet).
func IPv6IPSetName(name string) string {
	if !strings.HasPrefix(name, "KUBE-") {
		return name
	}
	n := "KUBE-6-" + strings.TrimPrefix(name, "KUBE-")
	if len(n) > 31 {
		n = n[:31]
	}
	return n
}

// IPVSIPSets lists kube-proxy's ipvs-mode set names, IPv4 then IPv6.
func IPVSIPSets() []string {
	out := append([]string(nil), ipvsIPSets...)
	for _, n := range ipvsIPSets {
		out = append(out, IPv6IPSetName(n))
	}
	return out
}

// IsKubeProxyIPSet reports whether an ipset is one kube-proxy's ipvs mode
// creates (either family).
func IsKubeProxyIPSet(name string) bool { return ipvsIPSetNames()[name] }
