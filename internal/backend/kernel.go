package backend

import "fmt"

// Requirement is one kernel feature a backend cannot run without. It is
// there when one of Modules is built in, loaded or in the kernel's module
// tree, or one of Options (CONFIG_ names without the prefix) is y. An
// option set to m promises a module file: the tree must have it.
type Requirement struct {
	Feature string   // what an operator would call it
	Options []string // kernel config options, any of which is enough
	Modules []string // module names that provide it, any of which is enough
}

// legacyXtables is what iptables-legacy needs on every kernel. From 6.17
// the legacy socket API sits behind NETFILTER_XTABLES_LEGACY as well.
var legacyXtables = Requirement{
	Feature: "legacy iptables (ip_tables)",
	Options: []string{"IP_NF_IPTABLES_LEGACY", "IP_NF_IPTABLES"},
	Modules: []string{"ip_tables"},
}

// legacyTables are the IPv4 tables kube-proxy and kubelet write: its rules
// in filter and nat (kube-proxy's own support check lists nat's
// POSTROUTING), the hint and canary chains in mangle, which kube-proxy 1.38
// and iptables-wrappers read to pick legacy or nft. Each is a module of its
// own on distribution kernels. The ip6 tables are preloaded but not
// required: without them kube-proxy runs IPv4 only.
var legacyTables = []Requirement{
	{Feature: "legacy filter table (iptable_filter)", Options: []string{"IP_NF_FILTER"}, Modules: []string{"iptable_filter"}},
	{Feature: "legacy nat table (iptable_nat)", Options: []string{"IP_NF_NAT"}, Modules: []string{"iptable_nat"}},
	{Feature: "legacy mangle table (iptable_mangle)", Options: []string{"IP_NF_MANGLE"}, Modules: []string{"iptable_mangle"}},
}

var nfTables = Requirement{
	Feature: "nf_tables",
	Options: []string{"NF_TABLES"},
	Modules: []string{"nf_tables"},
}

var nftCompat = Requirement{
	Feature: "nft_compat (xtables matches inside nf_tables)",
	Options: []string{"NFT_COMPAT"},
	Modules: []string{"nft_compat"},
}

// nftChainNAT is the nat chain type of nf_tables, which both nf_tables
// backends create. Since 5.1 it is one module, nft_chain_nat, built by
// NFT_CHAIN_NAT and later by NFT_NAT (6.1 has no NFT_CHAIN_NAT); before,
// it was per family under other names, so it is only required from 5.1.
var nftChainNAT = Requirement{
	Feature: "nat chains in nf_tables (nft_chain_nat)",
	Options: []string{"NFT_NAT", "NFT_CHAIN_NAT"},
	Modules: []string{"nft_chain_nat"},
}

// nftChainNATFrom is the first kernel with nftChainNAT's module name.
var nftChainNATFrom = [2]int{5, 1}

// Requirements lists the kernel features the backend needs on any kernel,
// in the order an operator should check them.
func (b Backend) Requirements() []Requirement {
	switch b {
	case IptablesLegacy:
		return append([]Requirement{legacyXtables}, legacyTables...)
	case IptablesNFT:
		return []Requirement{nfTables, nftCompat}
	case NFTables:
		return []Requirement{nfTables}
	}
	return nil
}

// RequirementsOn is Requirements for a kernel major.minor: from 6.17 on,
// iptables-legacy also needs the legacy xtables socket API, which new
// distro kernels often leave out; from 5.1 the nf_tables backends need
// nft_chain_nat. Unknown (0.0) adds nothing.
func (b Backend) RequirementsOn(major, minor int) []Requirement {
	reqs := b.Requirements()
	gate := XtablesLegacyGateFrom
	if b == IptablesLegacy && atLeast(major, minor, gate) {
		// First: on such a kernel it is the reason the tables are gone.
		reqs = append([]Requirement{{
			Feature: fmt.Sprintf("legacy xtables, which iptables-legacy needs from kernel %d.%d on", gate[0], gate[1]),
			Options: []string{"NETFILTER_XTABLES_LEGACY", "IP_NF_IPTABLES_LEGACY"},
			Modules: []string{"ip_tables"},
		}}, reqs...)
	}
	if b != IptablesLegacy && atLeast(major, minor, nftChainNATFrom) {
		reqs = append(reqs, nftChainNAT)
	}
	return reqs
}

func atLeast(major, minor int, v [2]int) bool {
	return major > v[0] || major == v[0] && minor >= v[1]
}

// XtablesLegacyGateFrom is the first kernel (major, minor) whose legacy
// xtables socket API needs CONFIG_NETFILTER_XTABLES_LEGACY.
var XtablesLegacyGateFrom = [2]int{6, 17}

// NFTablesMinKernel is the oldest kernel kube-proxy's nftables mode accepts
// without KUBE_PROXY_NFTABLES_SKIP_KERNEL_VERSION_CHECK.
var NFTablesMinKernel = [2]int{5, 13}

// xtMatches are the xtables extensions kube-proxy's iptables rules use; both
// iptables backends need them (iptables-nft stores them as xt compat).
var xtMatches = []string{
	"xt_comment", "xt_conntrack", "xt_mark", "xt_addrtype", "xt_statistic",
	"xt_recent", "xt_nat", "xt_MASQUERADE", "xt_tcpudp",
}

// Modules is the set of kernel modules the backend loads, and only those:
// loading iptable_* on an nft node creates legacy tables that mislead the
// kube-proxy image's detection (DOMAIN.md section 4). Not every kernel
// has each as a file of its own (nft_counter is part of nf_tables.ko on
// 6.1): decide keeps those a kernel does not build as modules out of the
// list it hands to apply.
func (b Backend) Modules() []string {
	switch b {
	case IptablesLegacy:
		return append([]string{
			"x_tables", "ip_tables", "iptable_filter", "iptable_nat", "iptable_mangle",
			"ip6_tables", "ip6table_filter", "ip6table_nat", "ip6table_mangle",
			"nf_nat", "nf_conntrack", "ipt_REJECT", "ip6t_REJECT",
		}, xtMatches...)
	case IptablesNFT:
		return append([]string{
			"nf_tables", "nft_compat", "nft_chain_nat", "nft_counter",
			"nf_nat", "nf_conntrack",
		}, xtMatches...)
	case NFTables:
		return []string{
			"nf_tables", "nft_chain_nat", "nft_ct", "nft_nat", "nft_masq",
			"nft_numgen", "nft_fib", "nft_fib_ipv4", "nft_fib_ipv6",
			"nft_reject", "nft_reject_inet",
		}
	}
	return nil
}
