package hostconflict

import (
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
)

// moduleOption maps the modules a backend loads to the kernel option that
// builds them, for those the probe records (facts.KernelOptions).
var moduleOption = map[string]string{
	"nf_tables": "NF_TABLES", "nft_compat": "NFT_COMPAT", "nft_chain_nat": "NFT_CHAIN_NAT",
	"nft_ct": "NFT_CT", "nft_nat": "NFT_NAT", "nft_masq": "NFT_MASQ", "nft_numgen": "NFT_NUMGEN",
	"nft_fib_ipv4": "NFT_FIB_IPV4", "nft_fib_ipv6": "NFT_FIB_IPV6", "nft_reject": "NFT_REJECT",
	"ip_tables": "IP_NF_IPTABLES", "iptable_filter": "IP_NF_FILTER", "iptable_nat": "IP_NF_NAT",
	"iptable_mangle": "IP_NF_MANGLE", "ip6_tables": "IP6_NF_IPTABLES",
	"xt_comment": "NETFILTER_XT_MATCH_COMMENT", "xt_conntrack": "NETFILTER_XT_MATCH_CONNTRACK",
	"xt_addrtype": "NETFILTER_XT_MATCH_ADDRTYPE", "xt_statistic": "NETFILTER_XT_MATCH_STATISTIC",
	"xt_recent": "NETFILTER_XT_MATCH_RECENT", "xt_mark": "NETFILTER_XT_MARK",
	"xt_nat": "NETFILTER_XT_NAT", "xt_MASQUERADE": "NETFILTER_XT_TARGET_MASQUERADE",
}

// modulesMissing lists b's modules whose option is =m while no module file
// is installed (and none is loaded or built in). Only judged when the
// installed-module list was read: otherwise absence proves nothing.
func modulesMissing(f facts.Facts, b backend.Backend) []string {
	m := f.Modules
	if b == "" || !m.AvailableKnown {
		return nil
	}
	var out []string
	for _, mod := range b.Modules() {
		opt, known := moduleOption[mod]
		if !known || f.Kernel.Config[opt] != facts.Module {
			continue
		}
		if facts.HasModule(m.Loaded, mod) || facts.HasModule(m.Builtin, mod) || facts.HasModule(m.Available, mod) {
			continue
		}
		out = append(out, mod)
	}
	return out
}

// modulesPackageFix names the package that carries the extra modules on
// the distributions that split them out.
func modulesPackageFix(release string) string {
	switch {
	case strings.Contains(release, ".el"):
		return "dnf install kernel-modules-extra-" + release + " (EL ships nft_compat, xt_* and ip_set only there)"
	case strings.Contains(release, "-generic") || strings.Contains(release, "-aws") || strings.Contains(release, "-azure") || strings.Contains(release, "-gcp"):
		return "apt-get install linux-modules-extra-" + release
	}
	return "install the kernel package that carries the extra netfilter modules for " + release
}
