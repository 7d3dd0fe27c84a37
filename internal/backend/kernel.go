package backend

import "fmt"

// Requirement is one kernel feature a backend cannot run without. Any one of
// Options (CONFIG_ names without the prefix) being y or m satisfies it.
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
	Modules: []string{"ip_tables", "iptable_filter"},
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

// Requirements lists the kernel features the backend needs, in the order an
// operator should check them.
func (b Backend) Requirements() []Requirement {
	switch b {
	case IptablesLegacy:
		return []Requirement{legacyXtables}
	case IptablesNFT:
		return []Requirement{nfTables, nftCompat}
	case NFTables:
		return []Requirement{nfTables}
	}
	return nil
}

// RequirementsOn is Requirements for a kernel major.minor: from 6.17 on,
// iptables-legacy also needs the legacy xtables socket API, which new
// distro kernels often leave out. Unknown (0.0) adds nothing.
func (b Backend) RequirementsOn(major, minor int) []Requirement {
	reqs := b.Requirements()
	gate := XtablesLegacyGateFrom
	if b == IptablesLegacy && (major > gate[0] || major == gate[0] && minor >= gate[1]) {
		reqs = append(reqs, Requirement{
			Feature: fmt.Sprintf("legacy xtables, which iptables-legacy needs from kernel %d.%d on", gate[0], gate[1]),
			Options: []string{"NETFILTER_XTABLES_LEGACY", "IP_NF_IPTABLES_LEGACY"},
			Modules: []string{"ip_tables"},
		})
	}
	return reqs
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
// kube-proxy image's detection (DOMAIN.md section 4).
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
