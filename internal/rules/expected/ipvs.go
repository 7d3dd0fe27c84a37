package expected

import (
	"fmt"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// kube-proxy's ipvs mode (pkg/proxy/ipvs/proxier.go, the same in every
// known minor that has it): it programs iptables, in the flavour of the
// chosen iptables backend, with chains of its own, and keeps the Service
// addresses in ipsets, on the kube-ipvs0 dummy link and in IPVS virtual
// servers, which are no rules (verify reads them through netlink). Its
// own chains are vocab's ChainIPVS*.

// ipvsJumps is the ipvs proxier's iptablesJumpChain, in source order:
// it ensures each with EnsureRule(Prepend), in both families.
var ipvsJumps = []jump{
	{"nat", "OUTPUT", vocab.ChainServices, "kubernetes service portals", ""},
	{"nat", "PREROUTING", vocab.ChainServices, "kubernetes service portals", ""},
	{"nat", "POSTROUTING", vocab.ChainPostrouting, "kubernetes postrouting rules", ""},
	{"filter", "FORWARD", vocab.ChainForward, "kubernetes forwarding rules", ""},
	{"filter", "INPUT", vocab.ChainIPVSNodePort, "kubernetes health check rules", ""},
	{"filter", "INPUT", vocab.ChainProxyFirewall, "kube-proxy firewall rules", ""},
	{"filter", "FORWARD", vocab.ChainProxyFirewall, "kube-proxy firewall rules", ""},
	{"filter", "INPUT", vocab.ChainIPVSFilter, "kubernetes ipvs access filter", ""},
	{"filter", "OUTPUT", vocab.ChainIPVSOutFilter, "kubernetes ipvs access filter", ""},
}

// ipvsChains is the ipvs proxier's iptablesChains: what it creates in
// every sync, whatever its Services.
var ipvsChains = []struct{ table, chain string }{
	{"nat", vocab.ChainServices}, {"nat", vocab.ChainPostrouting}, {"nat", vocab.ChainIPVSNodePort},
	{"nat", vocab.ChainIPVSLoadBalancer}, {"nat", vocab.ChainMarkMasq},
	{"filter", vocab.ChainForward}, {"filter", vocab.ChainIPVSNodePort}, {"filter", vocab.ChainProxyFirewall},
	{"filter", vocab.ChainIPVSSourceRanges}, {"filter", vocab.ChainIPVSFilter}, {"filter", vocab.ChainIPVSOutFilter},
}

// ipvsNodePortRule is nat KUBE-SERVICES' jump to the NodePort chain for
// traffic to a local address (nodePortAddresses unset: every address).
var ipvsNodePortRule = rules.Rule{Text: "-m addrtype --dst-type LOCAL -j " + vocab.ChainIPVSNodePort, Jump: vocab.ChainIPVSNodePort}

// RenderIPVS is the footprint of kube-proxy's ipvs mode in an iptables
// backend: kubelet's chains, the ipvs proxier's chains and base-chain
// jumps and its NodePort dispatch; opts.Backend is the iptables backend
// (its flavour) and opts.Services must be 0 (Services live in the ipsets
// and IPVS, not in per-Service chains).
func RenderIPVS(opts Options) (*rules.Ruleset, error) {
	if !opts.Backend.UsesIptables() {
		return nil, errIPVSBackend(opts.Backend)
	}
	families := opts.Families
	if len(families) == 0 {
		families = []rules.Family{rules.IPv4, rules.IPv6}
	}
	rs := &rules.Ruleset{Backend: opts.Backend}
	for _, f := range families {
		b := kubeletTables(f)
		for _, c := range ipvsChains {
			b.chain(c.table, c.chain)
		}
		for _, j := range ipvsJumps {
			r := jumpRule(j)
			if !hasRule(b.chain(j.table, j.src), r.Text) {
				b.prepend(j.table, j.src, r)
			}
		}
		b.add("nat", vocab.ChainServices, ipvsNodePortRule)
		rs.Tables = append(rs.Tables, b.finish()...)
	}
	return rs, nil
}

// IPVSSets are the ipsets kube-proxy's ipvs proxier creates for family f
// in every sync (its ipsetInfo), by the names the kernel holds.
func IPVSSets(f rules.Family) []string {
	all := vocab.IPVSIPSets()
	if f == rules.IPv6 {
		return all[len(all)/2:]
	}
	return all[:len(all)/2]
}

func errIPVSBackend(b backend.Backend) error {
	return fmt.Errorf("backend %s: kube-proxy's ipvs mode programs iptables, so its backend is iptables-legacy or iptables-nft", b)
}
