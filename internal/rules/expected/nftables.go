package expected

import (
	"fmt"
	"sort"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// TableComment is the comment kube-proxy puts on its nftables tables.
const TableComment = "rules for kube-proxy"

// Standard nftables priorities kube-proxy builds on (knftables DNATPriority,
// SNATPriority, FilterPriority).
const (
	prioDstNAT = -100
	prioSrcNAT = 100
	prioFilter = 0
)

type baseChain struct {
	name, typ, hook string
	priority        int
}

// nftBaseChains134 is the layout from Kubernetes 1.34 on.
var nftBaseChains134 = []baseChain{
	{"filter-prerouting-pre-dnat", "filter", "prerouting", prioDstNAT - 10},
	{"filter-output-pre-dnat", "filter", "output", prioDstNAT - 10},
	{"filter-forward", "filter", "forward", prioFilter},
	{"filter-input", "filter", "input", prioFilter},
	{"filter-output", "filter", "output", prioFilter},
	{"nat-output", "nat", "output", prioDstNAT},
	{"nat-postrouting", "nat", "postrouting", prioSrcNAT},
	{"nat-prerouting", "nat", "prerouting", prioDstNAT},
}

// nftBaseChains131 is the 1.31-1.33 layout: every filter chain before DNAT,
// plus one output chain after it.
var nftBaseChains131 = []baseChain{
	{"filter-prerouting", "filter", "prerouting", prioDstNAT - 10},
	{"filter-input", "filter", "input", prioDstNAT - 10},
	{"filter-forward", "filter", "forward", prioDstNAT - 10},
	{"filter-output", "filter", "output", prioDstNAT - 10},
	{"filter-output-post-dnat", "filter", "output", prioDstNAT + 10},
	{"nat-output", "nat", "output", prioDstNAT},
	{"nat-postrouting", "nat", "postrouting", prioSrcNAT},
	{"nat-prerouting", "nat", "prerouting", prioDstNAT},
}

// nftJump is a rule in a base chain jumping to a regular chain.
type nftJump struct{ src, match, dst string }

var nftJumps134 = []nftJump{
	{"filter-prerouting-pre-dnat", "ct state new", "firewall-check"},
	{"filter-output-pre-dnat", "ct state new", "firewall-check"},
	{"filter-forward", "ct state new", "service-endpoints-check"},
	{"filter-forward", "ct state new", "cluster-ips-check"},
	{"filter-input", "ct state new", "nodeport-endpoints-check"},
	{"filter-input", "ct state new", "service-endpoints-check"},
	{"filter-output", "ct state new", "service-endpoints-check"},
	{"filter-output", "ct state new", "cluster-ips-check"},
	{"nat-output", "", "services"},
	{"nat-postrouting", "", "masquerading"},
	{"nat-prerouting", "", "services"},
}

var nftJumps131 = []nftJump{
	{"filter-prerouting", "ct state new", "firewall-check"},
	{"filter-output", "ct state new", "firewall-check"},
	{"filter-forward", "ct state new", "service-endpoints-check"},
	{"filter-input", "ct state new", "nodeport-endpoints-check"},
	{"filter-input", "ct state new", "service-endpoints-check"},
	{"filter-output", "ct state new", "service-endpoints-check"},
	{"filter-forward", "ct state new", "cluster-ips-check"},
	{"filter-output-post-dnat", "ct state new", "cluster-ips-check"},
	{"nat-output", "", "services"},
	{"nat-postrouting", "", "masquerading"},
	{"nat-prerouting", "", "services"},
}

// NodePortIPsSet is absent when NodePorts accept every address
// (--nodeport-addresses unset in older releases), so verify treats it as optional.
const NodePortIPsSet = "nodeport-ips"

// nftablesTable renders kube-proxy's table for one family with no services.
func nftablesTable(kv rke2.KubeVersion, f rules.Family) rules.Table {
	addr, addrType := nftFamily(f)
	bases, jumps := nftBaseChains134, nftJumps134
	if !kv.AtLeast(1, 34) {
		bases, jumps = nftBaseChains131, nftJumps131
	}
	chains := map[string]*rules.Chain{}
	chain := func(name string) *rules.Chain {
		if chains[name] == nil {
			chains[name] = &rules.Chain{Name: name, Rules: []rules.Rule{}}
		}
		return chains[name]
	}
	add := func(name, text string) { c := chain(name); c.Rules = append(c.Rules, rules.Rule{Text: text}) }
	for _, bc := range bases {
		c := chain(bc.name)
		c.Type, c.Hook, c.Priority, c.Policy = bc.typ, bc.hook, bc.priority, "accept"
	}
	for _, j := range jumps {
		text := "jump " + j.dst
		if j.match != "" {
			text = j.match + " " + text
		}
		c := chain(j.src)
		c.Rules = append(c.Rules, rules.Rule{Text: text, Jump: j.dst})
		chain(j.dst)
	}
	c := chain("cluster-ips-check")
	c.Rules = append(c.Rules, rules.Rule{
		Text:    addr + " daddr @cluster-ips reject comment \"Reject traffic to invalid ports of ClusterIPs\"",
		Comment: "Reject traffic to invalid ports of ClusterIPs",
	})
	add("firewall-check", addr+" daddr . meta l4proto . th dport vmap @firewall-ips")
	hairpin := kv.AtLeast(1, 36)
	if hairpin {
		// 1.36 dropped mark-for-masquerade: rules set the mark themselves,
		// and DNATed connections to a local endpoint from itself (the
		// hairpin-connections set) are masqueraded directly.
		add("masquerading", "meta mark & 0x00004000 != 0x00000000 meta mark set meta mark ^ 0x00004000 masquerade fully-random")
		add("masquerading", "ct status & 0x00000020 != 0x00000000 "+addr+" saddr . "+addr+" daddr . meta l4proto . th dport @"+HairpinSet+" masquerade fully-random")
		add("services", fmt.Sprintf("%s daddr @cluster-ips %s saddr != %s meta mark set meta mark | 0x00004000 comment %q", addr, addr, podCIDR(f), outsideMasqComment))
		chain("services").Rules[0].Comment = outsideMasqComment
	} else {
		add("mark-for-masquerade", "meta mark set meta mark | 0x00004000")
		add("masquerading", "meta mark & 0x00004000 == 0x00000000 return")
		add("masquerading", "meta mark set meta mark ^ 0x00004000")
		add("masquerading", "masquerade fully-random")
	}
	add("nodeport-endpoints-check", addr+" daddr @nodeport-ips meta l4proto . th dport vmap @no-endpoint-nodeports")
	localhost := kv.AtLeast(1, 38)
	if localhost {
		addLocalhostNodePortRejects(chain, add, f)
	}
	add("reject-chain", "reject")
	chain("reject-chain").Comment = rejectChainComment
	add("services", addr+" daddr . meta l4proto . th dport vmap @service-ips")
	add("services", addr+" daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports")
	add("service-endpoints-check", addr+" daddr . meta l4proto . th dport vmap @no-endpoint-services")
	t := rules.Table{Family: f, Name: vocab.NFTablesTable, Comment: TableComment}
	for _, bc := range bases {
		t.Chains = append(t.Chains, *chains[bc.name])
	}
	for _, name := range sortedKeys(chains) {
		if chains[name].Hook == "" {
			t.Chains = append(t.Chains, *chains[name])
		}
	}
	svc := addrType + " . inet_proto . inet_service : verdict"
	port := "inet_proto . inet_service : verdict"
	t.Sets = []rules.Set{
		{Name: "cluster-ips", Type: addrType, Comment: "Active ClusterIPs"},
		{Name: "firewall-ips", Map: true, Type: svc, Comment: "destinations that are subject to LoadBalancerSourceRanges"},
		{Name: "no-endpoint-nodeports", Map: true, Type: port, Comment: "vmap to drop or reject packets to service nodeports with no endpoints"},
		{Name: "no-endpoint-services", Map: true, Type: svc, Comment: "vmap to drop or reject packets to services with no endpoints"},
		{Name: NodePortIPsSet, Type: addrType, Comment: "IPs that accept NodePort traffic"},
		{Name: "service-ips", Map: true, Type: svc, Comment: "ClusterIP, ExternalIP and LoadBalancer IP traffic"},
		{Name: "service-nodeports", Map: true, Type: port, Comment: "NodePort traffic"},
	}
	if hairpin {
		t.Sets = append(t.Sets, rules.Set{Name: HairpinSet, Type: addrType + " . " + addrType + " . inet_proto . inet_service", Comment: "service hairpin connections"})
	}
	if localhost {
		t.Sets = append(t.Sets, rules.Set{Name: LocalhostNodePortRejectMap, Map: true, Type: port, Comment: "localhost NodePorts rejected by kube-proxy"})
		for _, p := range localhostRejectProtocols {
			t.Counters = append(t.Counters, LocalhostNodePortRejectedCounter(p))
		}
	}
	sort.Slice(t.Sets, func(i, j int) bool { return t.Sets[i].Name < t.Sets[j].Name })
	return t
}

// Kubernetes 1.38 (KubeProxyNFTablesLocalhostNodePorts, Beta and on by
// default) rejects and counts NodePort traffic to 127.0.0.0/8 (::1) that
// kube-proxy does not serve, instead of leaving it to time out: per
// family a map of protocol . port to a per-protocol chain that counts in a
// named counter and rejects, and a rule in nodeport-endpoints-check
// steering localhost traffic into the map (pkg/proxy/nftables/proxier.go
// setupNFTables). The map and chains exist with no NodePort Service.
const LocalhostNodePortRejectMap = "localhost-nodeport-reject-ports"

// localhostRejectProtocols are the protocols 1.38 rejects localhost NodePort
// traffic for by default (metrics.LocalhostNodePortRejectableProtocols).
// With a loopback address in --nodeport-addresses kube-proxy serves TCP
// localhost NodePorts itself and writes no TCP chain and counter
// (LocalhostProxiedTCP).
var localhostRejectProtocols = []string{"tcp", "udp", "sctp"}

// LocalhostNodePortRejectChain is the chain 1.38 rejects localhost NodePort
// traffic of protocol proto in.
func LocalhostNodePortRejectChain(proto string) string { return "localhost-nodeport-reject-" + proto }

// LocalhostNodePortRejectedCounter is the named counter of proto's
// rejected localhost NodePort packets.
func LocalhostNodePortRejectedCounter(proto string) string {
	return "localhost-nodeport-rejected-" + proto
}

// LocalhostProxiedTCP reports whether name is one of the objects 1.38
// leaves out when its userspace proxy serves TCP localhost NodePorts
// (--nodeport-addresses names a loopback address): verify does not
// require them, as it does not require the nodeport-ips set.
func LocalhostProxiedTCP(name string) bool {
	return name == LocalhostNodePortRejectChain("tcp") || name == LocalhostNodePortRejectedCounter("tcp")
}

func addLocalhostNodePortRejects(chain func(string) *rules.Chain, add func(chain, text string), f rules.Family) {
	match := "ip daddr 127.0.0.0/8"
	if f == rules.IPv6 {
		match = "ip6 daddr ::1"
	}
	for _, p := range localhostRejectProtocols {
		chain(LocalhostNodePortRejectChain(p))
		add(LocalhostNodePortRejectChain(p), fmt.Sprintf("counter name %q reject", LocalhostNodePortRejectedCounter(p)))
	}
	add("nodeport-endpoints-check", match+" meta l4proto . th dport vmap @"+LocalhostNodePortRejectMap)
}

// HairpinSet is the set of local endpoints 1.36+ masquerades hairpin
// connections for.
const HairpinSet = "hairpin-connections"

// outsideMasqComment is 1.36+'s services-chain rule marking ClusterIP
// traffic from outside the cluster CIDR for masquerade (it was one rule per
// service before).
const outsideMasqComment = "masquerade clusterIP traffic from outside cluster"

// rejectChainComment is the one chain comment kube-proxy sets.
const rejectChainComment = "helper for @no-endpoint-services / @no-endpoint-nodeports"

// nftFamily returns the address match keyword (also the nft family) and
// the address type for f.
func nftFamily(f rules.Family) (addr, addrType string) {
	if f == rules.IPv6 {
		return "ip6", "ipv6_addr"
	}
	return "ip", "ipv4_addr"
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
