# Sourced by bench/*.sh (not run), from the repository's top directory.

# need_root_or_skip WHY ends a benchmark that needs root, successfully and
# loudly, when it is not root: a benchmark is not a test that can fail for it.
need_root_or_skip() {
  if [ "$(id -u)" != 0 ]; then
    echo "bench/$(basename "$0"): skipped: $1"
    exit 0
  fi
}

# oracle_bench starts a benchmark in which kube-proxy's real proxier (the
# oracle, test/kubeproxy/oracle.sh) programs the rules, in network
# namespaces: the oracle's helpers, and root.
oracle_bench() {
  . test/kubeproxy/oracle.sh
  need_root_or_skip "needs root for network namespaces"
}

# debian12_rke2_root ROOT REL writes the part of a Debian 12 RKE2 server
# (kernel REL) that apply and the generator both read: the kernel release
# and its config, every netfilter module available (compressed, in
# modules.dep), the nft iptables alternative, RKE2's tarball unit and a
# modprobe that succeeds. The modules are also in $debian12_modules for
# the caller to mark loaded. Each bench adds what its command reads on top.
debian12_modules="x_tables ip_tables iptable_filter iptable_nat iptable_mangle ip6_tables ip6table_filter ip6table_nat
  ip6table_mangle ipt_REJECT ip6t_REJECT nf_tables nft_compat nft_chain_nat nft_counter nft_ct nft_nat nft_masq
  nft_numgen nft_fib nft_fib_ipv4 nft_fib_ipv6 nft_reject nft_reject_inet nf_nat nf_conntrack xt_comment
  xt_conntrack xt_mark xt_addrtype xt_statistic xt_recent xt_nat xt_MASQUERADE xt_tcpudp"
debian12_rke2_root() {
  local r=$1 rel=$2 o m
  mkdir -p "$r"/proc/sys/kernel "$r"/boot "$r/lib/modules/$rel" "$r"/etc/alternatives "$r"/usr/sbin \
    "$r"/usr/local/lib/systemd/system "$r"/usr/local/bin "$r"/etc/rancher/rke2/config.yaml.d "$r"/sbin
  echo "$rel" >"$r/proc/sys/kernel/osrelease"
  for o in NF_TABLES NFT_COMPAT NFT_CT NFT_NAT NFT_MASQ NFT_NUMGEN NFT_FIB_IPV4 NFT_FIB_IPV6 NFT_REJECT \
    IP_NF_IPTABLES IP6_NF_IPTABLES IP_NF_FILTER IP_NF_NAT IP_NF_MANGLE NETFILTER_XTABLES NF_NAT NF_CONNTRACK; do
    echo "CONFIG_$o=m"
  done >"$r/boot/config-$rel"
  for m in $debian12_modules; do echo "kernel/net/netfilter/$m.ko.xz:"; done >"$r/lib/modules/$rel/modules.dep"
  touch "$r/usr/sbin/xtables-nft-multi"
  ln -s /usr/sbin/xtables-nft-multi "$r/etc/alternatives/iptables"
  ln -s /etc/alternatives/iptables "$r/usr/sbin/iptables"
  cp internal/testkit/testhost/units/rke2-server.service "$r/usr/local/lib/systemd/system/rke2-server.service"
  printf '#!/bin/sh\nexit 0\n' >"$r/sbin/modprobe"
  chmod 755 "$r/sbin/modprobe"
}
