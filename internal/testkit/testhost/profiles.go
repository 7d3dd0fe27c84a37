package testhost

// Node profiles for the decision's table tests. Each is a plausible host,
// not a byte copy of one: the kernel options, modules and paths are the
// ones that matter to the backend choice, set as the named distribution
// ships them (sources in the comments). Profiles set the kernel, hardware
// and userspace; add an RKE2 install with RKE2v130/RKE2v134 and settings
// with PinnedProxyMode or RKE2Config.

import "slices"

// legacyModules are the modules iptables-legacy needs (DOMAIN.md section 4).
var legacyModules = []string{
	"x_tables", "ip_tables", "iptable_filter", "iptable_nat", "iptable_mangle",
	"ip6_tables", "ip6table_filter", "ip6table_nat", "ip6table_mangle",
	"nf_nat", "nf_conntrack", "ipt_REJECT", "ip6t_REJECT",
	"xt_comment", "xt_conntrack", "xt_mark", "xt_addrtype", "xt_statistic",
	"xt_recent", "xt_nat", "xt_MASQUERADE", "xt_tcpudp",
}

// nftModules are the modules iptables-nft and kube-proxy's nftables mode need.
var nftModules = []string{
	"nf_tables", "nft_compat", "nft_chain_nat", "nft_ct", "nft_nat", "nft_masq",
	"nft_numgen", "nft_fib", "nft_fib_ipv4", "nft_fib_ipv6", "nft_reject", "nft_reject_inet",
}

// modernConfig is a 5.x/6.x distribution kernel with both backends as
// modules (Debian, Ubuntu and RHEL 9 ship it so). NFT_CHAIN_NAT and
// NFT_COUNTER are left out as current kernels have them: the nat chain type
// is built with NFT_NAT and the counter expression lives in nf_tables
// itself (a 6.18 /proc/config.gz has neither option).
func modernConfig() map[string]string {
	return map[string]string{
		"NF_TABLES": "m", "NF_TABLES_INET": "y", "NF_TABLES_IPV4": "y", "NF_TABLES_IPV6": "y",
		"NFT_COMPAT": "m", "NFT_CT": "m", "NFT_NAT": "m", "NFT_MASQ": "m", "NFT_NUMGEN": "m",
		"NFT_FIB_IPV4": "m", "NFT_FIB_IPV6": "m", "NFT_REJECT": "m",
		"NETFILTER_XTABLES": "m", "IP_NF_IPTABLES": "m", "IP6_NF_IPTABLES": "m",
		"IP_NF_FILTER": "m", "IP_NF_NAT": "m", "IP_NF_MANGLE": "m",
	}
}

// modernDistro is what Debian 12, RHEL 9 and Ubuntu 22.04 have in common:
// kernel release with modernConfig in /boot, both backends' modules
// available, and the iptables alternative set to alt ("nft" or "legacy").
func (h *Host) modernDistro(release, alt string) {
	h.t.Helper()
	h.Kernel(release)
	h.BootConfig(modernConfig())
	h.AvailableModules(slices.Concat(legacyModules, nftModules)...)
	h.IptablesAlternative(alt)
}

// Synology44 is a Synology DSM NAS: kernel 4.4.302+ built without nf_tables
// (DOMAIN.md section 3), legacy iptables modules loaded by DSM's firewall
// and Docker, a Marvell 88SE9235 SATA controller (1b4b:9235) on ahci, DMI
// "Synology Inc.", and DSM's own /sbin/iptables (legacy, no alternatives).
// DSM kernels may lack /proc/config.gz; the profile has one so that "no
// nf_tables" is a definite fact; Remove("/proc/config.gz") tests the other case.
func (h *Host) Synology44() *Host {
	h.t.Helper()
	h.Kernel("4.4.302+")
	h.KernelConfig(map[string]string{
		"NF_TABLES": "n", "NETFILTER_XTABLES": "m", "IP_NF_IPTABLES": "m", "IP6_NF_IPTABLES": "m",
		"IP_NF_FILTER": "m", "IP_NF_NAT": "m", "IP_NF_MANGLE": "m",
	})
	h.LoadedModules("x_tables", "ip_tables", "iptable_filter", "iptable_nat", "nf_nat", "nf_conntrack",
		"xt_conntrack", "xt_MASQUERADE", "xt_tcpudp", "ip6_tables", "ip6table_filter", "igb", "ahci")
	h.AvailableModules(legacyModules...)
	h.PCI("0000:00:12.0", "8086", "5ae3", "ahci")
	h.PCI("0000:01:00.0", "1b4b", "9235", "ahci")
	h.PCI("0000:02:00.0", "8086", "1539", "igb")
	h.DMI("Synology Inc.", "DS918+")
	h.File("/sbin/xtables-legacy-multi", "#!fake binary\n")
	h.Symlink("/sbin/iptables", "xtables-legacy-multi")
	h.LegacyTables([]string{"filter", "nat"}, []string{"filter"})
	return h.Cmdline("root=/dev/md0 netif_num=2 syno_hw_version=DS918+ HddHotplug=1 SataPortMap=4")
}

// Debian12 is a Debian bookworm VM: kernel 6.1.0-18-amd64, config in /boot
// (Debian kernels have no /proc/config.gz), both backends as modules,
// iptables alternative nft (Debian's default since buster), no legacy tables.
func (h *Host) Debian12() *Host {
	h.t.Helper()
	h.modernDistro("6.1.0-18-amd64", "nft")
	h.LoadedModules("nf_tables", "nft_compat", "nf_conntrack", "nf_nat", "xt_conntrack", "virtio_net")
	h.BuiltinModules("unix", "af_packet")
	h.PCI("0000:00:03.0", "1af4", "1041", "virtio-pci")
	h.DMI("QEMU", "Standard PC (Q35 + ICH9, 2009)")
	return h.Cmdline("BOOT_IMAGE=/boot/vmlinuz-6.1.0-18-amd64 root=UUID=0b1c ro quiet")
}

// RHEL9 is a RHEL 9 server: kernel 5.14.0-427 el9, /lib a symlink to
// usr/lib (usrmerge). RHEL 9 ships only iptables-nft userspace (no
// iptables-legacy package) and the alternative points to it; its kernel
// still builds the legacy ip_tables modules (deprecated, removed in RHEL 10),
// so the kernel could run legacy but the host's own tools are nft.
func (h *Host) RHEL9() *Host {
	h.t.Helper()
	h.Mkdir("/usr/lib")
	h.Symlink("/lib", "usr/lib")
	h.modernDistro("5.14.0-427.13.1.el9_4.x86_64", "nft")
	h.LoadedModules("nf_tables", "nft_compat", "nf_conntrack", "nft_ct", "nft_chain_nat", "xfs")
	h.PCI("0000:00:1f.2", "8086", "2922", "ahci")
	h.DMI("Red Hat", "KVM")
	return h.Cmdline("BOOT_IMAGE=(hd0,gpt2)/vmlinuz-5.14.0-427.13.1.el9_4.x86_64 root=/dev/mapper/rhel-root ro crashkernel=1G-4G:192M")
}

// Ubuntu2204DockerLegacy is Ubuntu 22.04 (5.15 generic kernel) whose admin
// switched the alternative to iptables-legacy for Docker, with Docker's
// legacy filter and nat tables live.
func (h *Host) Ubuntu2204DockerLegacy() *Host {
	h.t.Helper()
	h.modernDistro("5.15.0-91-generic", "legacy")
	h.LoadedModules("x_tables", "ip_tables", "iptable_filter", "iptable_nat", "xt_MASQUERADE",
		"xt_conntrack", "xt_addrtype", "nf_nat", "nf_conntrack", "br_netfilter", "bridge", "overlay")
	h.PCI("0000:00:04.0", "1af4", "1000", "virtio-pci")
	h.DMI("Amazon EC2", "t3.large")
	h.LegacyTables([]string{"filter", "nat"}, []string{})
	return h.Cmdline("BOOT_IMAGE=/boot/vmlinuz-5.15.0-91-generic root=LABEL=cloudimg-rootfs ro console=ttyS0")
}

// Alpine617 is an Alpine 3.23-like host on a 6.17 LTS kernel built without
// NETFILTER_XTABLES_LEGACY: from 6.17 the legacy iptables tables (and
// IP_NF_FILTER/NAT/MANGLE, which depend on IP_NF_IPTABLES_LEGACY) are gone,
// while xtables matches stay for nft_compat. Alpine has no alternatives
// system: /sbin/iptables links to xtables-nft-multi.
func (h *Host) Alpine617() *Host {
	h.t.Helper()
	h.Kernel("6.17.3-0-lts")
	cfg := modernConfig()
	for _, opt := range []string{"IP_NF_FILTER", "IP_NF_NAT", "IP_NF_MANGLE"} {
		cfg[opt] = "n"
	}
	cfg["NETFILTER_XTABLES_LEGACY"] = "n"
	cfg["IP_NF_IPTABLES_LEGACY"] = "n"
	cfg["IP6_NF_IPTABLES_LEGACY"] = "n"
	h.BootConfig(cfg)
	h.LoadedModules("nf_tables", "nft_compat", "nf_conntrack", "virtio_net")
	h.AvailableModules(append([]string{"x_tables", "nf_nat", "nf_conntrack", "xt_comment", "xt_conntrack",
		"xt_mark", "xt_addrtype", "xt_statistic", "xt_recent", "xt_nat", "xt_MASQUERADE", "xt_tcpudp"}, nftModules...)...)
	h.PCI("0000:00:02.0", "1af4", "1041", "virtio-pci")
	h.DMI("QEMU", "Standard PC (i440FX + PIIX, 1996)")
	h.File("/sbin/xtables-nft-multi", "#!fake binary\n")
	h.Symlink("/sbin/iptables", "xtables-nft-multi")
	return h.Cmdline("BOOT_IMAGE=/boot/vmlinuz-lts root=UUID=5e1f modules=sd-mod,usb-storage,ext4 quiet rootfstype=ext4")
}

// RKE2v130 installs an RKE2 v1.30 server (tarball layout): Kubernetes 1.30
// needs the NFTablesProxyMode feature gate for nftables mode. v1.30.11 is
// the first 1.30 release whose kube-proxy image has the nft binary.
func (h *Host) RKE2v130() *Host {
	h.t.Helper()
	return h.RKE2Unit("tarball", "server").RKE2Version("v1.30.11+rke2r1")
}

// RKE2v134 installs an RKE2 v1.34 server (tarball layout): nftables mode is
// GA there, no feature gate exists for it.
func (h *Host) RKE2v134() *Host {
	h.t.Helper()
	return h.RKE2Unit("tarball", "server").RKE2Version("v1.34.10+rke2r1")
}

// PinnedProxyMode writes /etc/rancher/rke2/config.yaml pinning kube-proxy's
// proxy mode the way operators do it.
func (h *Host) PinnedProxyMode(mode string) *Host {
	h.t.Helper()
	return h.RKE2Config("config.yaml", "write-kubeconfig-mode: \"0644\"\nkube-proxy-arg:\n  - proxy-mode="+mode+"\n")
}
