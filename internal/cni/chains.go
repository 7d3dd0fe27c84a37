// Package cni knows the CNIs RKE2 ships: which one a node runs (from RKE2's
// `cni:` key and the HelmChartConfigs operators drop into the server
// manifests directory), whether it can follow kube-proxy into nftables mode,
// the exact HelmChartConfig that switches it, and which netfilter chains
// belong to it. Everything here is pure: facts read the files, verify and
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
)

// chainPrefixes map a chain name prefix to its writer. The names are the
// CNIs' own: Felix prefixes every chain with "cali-" (cali-FORWARD,
// cali-fw-<iface>, cali-pi-<policy>...); flanneld creates FLANNEL-FWD and
// FLANNEL-POSTRTG; cilium-agent CILIUM_INPUT, CILIUM_POST_nat,
// CILIUM_PRE_mangle and, while it swaps rules, OLD_CILIUM_*; portmap keeps
// CNI-HOSTPORT-DNAT/-SETMARK/-MASQ and one CNI-DN-<hash> per container.
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
// and the base-chain jumps of flannel ("flanneld masq", "flanneld forward")
// and Cilium ("cilium-feeder: ...").
func RuleCommentOwner(comment string) Owner {
	switch {
	case oneOf(comment, nodeLocalDNSComments):
		return OwnerNodeLocalDNS
	case strings.HasPrefix(comment, "flanneld "):
		return OwnerFlannel
	case strings.HasPrefix(comment, "cilium-feeder: "):
		return OwnerCilium
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
