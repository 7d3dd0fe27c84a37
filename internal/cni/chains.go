// Package cni knows the CNIs RKE2 ships, and k3s's built-in flannel and
// kube-router network policy: which one a node runs (from RKE2's `cni:` key
// and the HelmChartConfigs operators drop into the server manifests
// directory), whether it can follow kube-proxy into nftables mode, the
// exact HelmChartConfig that switches it, and which netfilter chains belong
// to it. Everything here is pure: facts read the files, verify and
// detect use the answers.
package cni

import "strings"

// Owner names who wrote a netfilter chain (or rule) that is not kube-proxy's.
type Owner string

const (
	OwnerNone         Owner = ""
	OwnerCalico       Owner = "calico"  // Felix, in calico and canal
	OwnerFlannel      Owner = "flannel" // flanneld, in flannel and canal
	OwnerCilium       Owner = "cilium"  // cilium-agent's iptables mode
	OwnerPortmap      Owner = "portmap" // the portmap CNI plugin (hostPort)
	OwnerNodeLocalDNS Owner = "nodelocaldns"
	// OwnerKubeRouter is kube-router's network policy controller, which
	// k3s runs in its own process unless disable-network-policy is set.
	OwnerKubeRouter Owner = "kube-router"
)

// chainPrefixes map a chain name prefix to its writer. The names are the
// CNIs' own: Felix prefixes every chain with "cali-" (cali-FORWARD,
// cali-fw-<iface>, cali-pi-<policy>...); flanneld creates FLANNEL-FWD and
// FLANNEL-POSTRTG; cilium-agent CILIUM_INPUT, CILIUM_POST_nat,
// CILIUM_PRE_mangle and, while it swaps rules, OLD_CILIUM_*; portmap keeps
// CNI-HOSTPORT-DNAT/-SETMARK/-MASQ and one CNI-DN-<hash> per container;
// kube-router's network policy controller (pkg/controllers/netpol, which
// k3s embeds) hooks KUBE-ROUTER-INPUT/-FORWARD/-OUTPUT into the filter
// table's built-in chains and keeps one KUBE-NWPLCY-<hash> per policy (and
// KUBE-NWPLCY-DEFAULT) and one KUBE-POD-FW-<hash> per pod. None of these
// starts with a kube-proxy prefix (KUBE-FW- is kube-proxy's, KUBE-POD-FW-
// is not).
var chainPrefixes = []struct {
	prefix string
	owner  Owner
}{
	{"cali-", OwnerCalico},
	{"FLANNEL-", OwnerFlannel},
	{"CILIUM_", OwnerCilium},
	{"OLD_CILIUM_", OwnerCilium},
	{"CNI-HOSTPORT-", OwnerPortmap},
	{"CNI-DN-", OwnerPortmap},
	{"KUBE-ROUTER-", OwnerKubeRouter},
	{"KUBE-NWPLCY-", OwnerKubeRouter},
	{"KUBE-POD-FW-", OwnerKubeRouter},
}

// ChainOwner says which CNI component owns a chain, by name. Chain names
// are case-sensitive in both iptables and nftables, and so is the match:
// "CALI-X" is nobody's.
func ChainOwner(chain string) Owner {
	for _, p := range chainPrefixes {
		if strings.HasPrefix(chain, p.prefix) && len(chain) > len(p.prefix) {
			return p.owner
		}
	}
	return OwnerNone
}

// nodeLocalDNSComments are the comments node-cache (kubernetes/dns,
// cmd/node-cache/app) puts on its rules. It has no chain of its own: its
// NOTRACK rules sit in raw PREROUTING/OUTPUT and its ACCEPT rules in filter
// INPUT/OUTPUT, so only the comment tells them apart.
var nodeLocalDNSComments = []string{
	"NodeLocal DNS Cache: skip conntrack",
	"NodeLocal DNS Cache: allow DNS traffic",
}

// RuleCommentOwner says which CNI component wrote a rule, by its comment,
// for the writers whose rules live in built-in chains: NodeLocal DNS always,
// and the base-chain jumps of flannel ("flanneld masq", "flanneld forward"),
// kube-router ("kube-router netpol - <hash>") and Cilium ("cilium-feeder:
// ...").
func RuleCommentOwner(comment string) Owner {
	switch {
	case oneOf(comment, nodeLocalDNSComments):
		return OwnerNodeLocalDNS
	case strings.HasPrefix(comment, "flanneld "):
		return OwnerFlannel
	case strings.HasPrefix(comment, "cilium-feeder: "):
		return OwnerCilium
	case strings.HasPrefix(comment, "kube-router netpol - "), strings.HasPrefix(comment, "KUBE-ROUTER rule "):
		// kube-router's hooks into the built-ins, and the accept of
		// traffic its policies marked, which some releases put in the
		// built-ins themselves.
		return OwnerKubeRouter
	case strings.HasPrefix(comment, "cali:"):
		// Felix tags every rule it writes with "cali:<hash>".
		return OwnerCalico
	}
	return OwnerNone
}

func oneOf(s string, subs []string) bool {
	for _, sub := range subs {
		if s == sub {
			return true
		}
	}
	return false
}

// TableOwner says which CNI component owns a native nftables table, by
// name ("" for kube-proxy's, the iptables-nft tables and anyone else's).
// The tables CNIs create for themselves (family ip or ip6, one per
// family), from the CNIs' own code:
//   - Felix's nftables dataplane: table "calico" in ip and ip6
//     (projectcalico/calico felix/dataplane/linux/int_dataplane.go
//     nftables.NewTable("calico", 4|6, ...); felix/nftables/table.go makes
//     it knftables IPv4Family/IPv6Family, base chains filter-FORWARD,
//     nat-POSTROUTING, mangle-..., raw-...);
//   - flannel with EnableNFTables: "flannel-ipv4" (ip) and "flannel-ipv6"
//     (ip6), chains forward and postrtg (flannel-io/flannel
//     pkg/trafficmngr/nftables/nftables.go).
//
// Cilium and NodeLocal DNSCache write iptables rules only (cilium's
// iptables manager; kubernetes/dns cmd/node-cache/app/cache_app.go uses
// k8s.io/kubernetes/pkg/util/iptables), and portmap's nftables backend
// uses an inet table the reader does not list, so none of them has a
// native table here. A switch, not a map: the generator links this
// package, and a map would be built at every boot's start.
func TableOwner(table string) Owner {
	switch table {
	case "calico":
		return OwnerCalico
	case "flannel-ipv4", "flannel-ipv6":
		return OwnerFlannel
	}
	return ""
}
