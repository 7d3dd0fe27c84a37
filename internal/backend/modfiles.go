package backend

import "strings"

// moduleOptions maps the modules backends load to the kernel options that
// build each, for the options the probe records (facts.KernelOptions).
// An option set to m promises the module's file; an option the config
// does not set builds no file of that name (nft_counter has had no
// option of its own since it became part of nf_tables.ko). nft_chain_nat
// is built by NFT_CHAIN_NAT where that option exists, else by NFT_NAT.
// A list, not a map: the linker lays it out, where a map would be built at
// every start of the generator, which links this package.
var moduleOptions = []struct {
	module  string
	options []string
}{
	{"nf_tables", []string{"NF_TABLES"}}, {"nft_compat", []string{"NFT_COMPAT"}},
	{"nft_chain_nat", []string{"NFT_CHAIN_NAT", "NFT_NAT"}}, {"nft_counter", []string{"NFT_COUNTER"}},
	{"nft_ct", []string{"NFT_CT"}}, {"nft_nat", []string{"NFT_NAT"}}, {"nft_masq", []string{"NFT_MASQ"}},
	{"nft_numgen", []string{"NFT_NUMGEN"}}, {"nft_fib_ipv4", []string{"NFT_FIB_IPV4"}},
	{"nft_fib_ipv6", []string{"NFT_FIB_IPV6"}}, {"nft_reject", []string{"NFT_REJECT"}},
	{"ip_tables", []string{"IP_NF_IPTABLES"}}, {"iptable_filter", []string{"IP_NF_FILTER"}},
	{"iptable_nat", []string{"IP_NF_NAT"}}, {"iptable_mangle", []string{"IP_NF_MANGLE"}},
	{"ip6_tables", []string{"IP6_NF_IPTABLES"}},
	{"xt_comment", []string{"NETFILTER_XT_MATCH_COMMENT"}}, {"xt_conntrack", []string{"NETFILTER_XT_MATCH_CONNTRACK"}},
	{"xt_addrtype", []string{"NETFILTER_XT_MATCH_ADDRTYPE"}}, {"xt_statistic", []string{"NETFILTER_XT_MATCH_STATISTIC"}},
	{"xt_recent", []string{"NETFILTER_XT_MATCH_RECENT"}}, {"xt_mark", []string{"NETFILTER_XT_MARK"}},
	{"xt_nat", []string{"NETFILTER_XT_NAT"}}, {"xt_MASQUERADE", []string{"NETFILTER_XT_TARGET_MASQUERADE"}},
}

// ModuleOptions are the kernel options that build module name (nil when
// not known); any one set to m promises its file.
func ModuleOptions(name string) []string {
	name = strings.ReplaceAll(name, "-", "_")
	for _, m := range moduleOptions {
		if m.module == name {
			return m.options
		}
	}
	return nil
}

// ModulesPackage says which package usually ships a module file of
// kernel release that is not installed: distributions that split their
// kernel's modules keep netfilter's less common ones apart (Ubuntu's
// linux-modules-extra, EL's kernel-modules-extra: nft_compat, xt_* and
// ip_set on EL 10). It is a hint, worded as one.
func ModulesPackage(release string) string {
	if pkg, distro := ModulesPackageOf(release); pkg != "" {
		return "the package that usually ships it on " + distro + " is " + pkg
	}
	return "the kernel's own package usually ships it, or an extra-modules package (Ubuntu: linux-modules-extra-" + release + ", EL: kernel-modules-extra)"
}

// ModulesPackageOf names the package that usually holds release's
// netfilter modules on the distributions whose release strings say who
// built the kernel ("" when none does): EL's and Ubuntu's extra-modules
// packages, Debian's one kernel package.
func ModulesPackageOf(release string) (pkg, distro string) {
	switch {
	case strings.Contains(release, ".el"):
		return "kernel-modules-extra-" + release, "EL"
	case flavour(release, "-generic", "-lowlatency", "-aws", "-azure", "-gcp", "-gke", "-oracle", "-kvm", "-ibm"):
		return "linux-modules-extra-" + release, "Ubuntu"
	case flavour(release, "-amd64", "-arm64", "-armmp", "-armmp-lpae", "-686", "-686-pae", "-rpi", "-powerpc64le", "-s390x"):
		return "linux-image-" + release, "Debian"
	}
	return "", ""
}

// flavour recognises a distribution's kernel flavours by the release's
// suffix ("6.8.0-45-generic", "6.1.0-57-cloud-amd64").
func flavour(release string, suffixes ...string) bool {
	for _, f := range suffixes {
		if strings.HasSuffix(release, f) {
			return true
		}
	}
	return false
}
