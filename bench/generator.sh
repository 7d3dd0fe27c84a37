#!/usr/bin/env bash
# Benchmark, not a test: the generator sits on every boot's critical path
# and runs at every daemon-reload, so it is timed against systemd's own C
# generator, systemd-getty-generator, with the same three output dirs.
# Targets (issue 3): generator / systemd-getty-generator <= 1.0 (median wall
# time), on a realistic fixture root and on this host; apply without module
# loading <= 20 ms.
# Env: RUNS=200 (runs per command), WARMUP=10.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
runs=${RUNS:-200}
warmup=${WARMUP:-10}

getty=""
for g in /usr/lib/systemd/system-generators/systemd-getty-generator /lib/systemd/system-generators/systemd-getty-generator; do
  [ -x "$g" ] && getty=$g && break
done
if [ -z "$getty" ]; then
  echo "bench/generator.sh: skipped: systemd-getty-generator not installed (Debian package systemd)"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=$work/rke2-proxy-backend
make -s build >/dev/null
cp bin/rke2-proxy-backend "$bin"
ln -s rke2-proxy-backend "$work/rke2-proxy-backend-generator"
gen=$work/rke2-proxy-backend-generator

# A Debian 12 RKE2 server as the generator sees it at boot: kernel config in
# /boot, loaded and available modules, sysfs PCI and DMI, the iptables
# alternative, RKE2's unit (tarball layout), its config and a Rancher drop-in.
fixture() {
  local r=$1 rel=6.1.0-18-amd64 m
  mkdir -p "$r"/proc/sys/kernel "$r"/boot "$r/lib/modules/$rel" "$r"/etc/alternatives "$r"/usr/sbin \
    "$r"/usr/local/lib/systemd/system "$r"/usr/local/bin "$r"/etc/rancher/rke2/config.yaml.d \
    "$r"/sys/class/dmi/id "$r"/sys/bus/pci/drivers/virtio-pci "$r"/sbin
  echo "$rel" >"$r/proc/sys/kernel/osrelease"
  echo "BOOT_IMAGE=/boot/vmlinuz-$rel root=UUID=0b1c ro quiet" >"$r/proc/cmdline"
  for o in NF_TABLES NFT_COMPAT NFT_CT NFT_NAT NFT_MASQ NFT_NUMGEN NFT_FIB_IPV4 NFT_FIB_IPV6 NFT_REJECT \
    IP_NF_IPTABLES IP6_NF_IPTABLES IP_NF_FILTER IP_NF_NAT IP_NF_MANGLE NETFILTER_XTABLES NF_NAT NF_CONNTRACK; do
    echo "CONFIG_$o=m"
  done >"$r/boot/config-$rel"
  for m in nf_tables nft_compat nf_conntrack nf_nat xt_conntrack virtio_net ext4 overlay br_netfilter; do
    echo "$m 315392 1 - Live 0x0000000000000000"
  done >"$r/proc/modules"
  for m in x_tables ip_tables iptable_filter iptable_nat iptable_mangle ip6_tables ip6table_filter ip6table_nat \
    ip6table_mangle ipt_REJECT ip6t_REJECT nf_tables nft_compat nft_chain_nat nft_counter nft_ct nft_nat nft_masq \
    nft_numgen nft_fib nft_fib_ipv4 nft_fib_ipv6 nft_reject nft_reject_inet nf_nat nf_conntrack xt_comment \
    xt_conntrack xt_mark xt_addrtype xt_statistic xt_recent xt_nat xt_MASQUERADE xt_tcpudp; do
    echo "kernel/net/netfilter/$m.ko.xz:"
  done >"$r/lib/modules/$rel/modules.dep"
  printf 'kernel/net/unix/unix.ko\nkernel/net/packet/af_packet.ko\n' >"$r/lib/modules/$rel/modules.builtin"
  echo QEMU >"$r/sys/class/dmi/id/sys_vendor"
  echo "Standard PC (Q35 + ICH9, 2009)" >"$r/sys/class/dmi/id/product_name"
  for d in 00:01.0 00:02.0 00:03.0 00:1f.2; do
    mkdir -p "$r/sys/bus/pci/devices/0000:$d"
    echo 0x1af4 >"$r/sys/bus/pci/devices/0000:$d/vendor"
    echo 0x1041 >"$r/sys/bus/pci/devices/0000:$d/device"
    ln -s ../../../bus/pci/drivers/virtio-pci "$r/sys/bus/pci/devices/0000:$d/driver"
  done
  touch "$r/usr/sbin/xtables-nft-multi"
  ln -s /usr/sbin/xtables-nft-multi "$r/etc/alternatives/iptables"
  ln -s /etc/alternatives/iptables "$r/usr/sbin/iptables"
  cat >"$r/usr/local/lib/systemd/system/rke2-server.service" <<'UNIT'
[Unit]
Description=Rancher Kubernetes Engine v2 (server)
Wants=network-online.target
After=network-online.target

[Service]
Type=notify
EnvironmentFile=-/etc/default/%N
EnvironmentFile=-/etc/sysconfig/%N
EnvironmentFile=-/usr/local/lib/systemd/system/%N.env
KillMode=process
Delegate=yes
ExecStartPre=-/sbin/modprobe br_netfilter
ExecStartPre=-/sbin/modprobe overlay
ExecStart=/usr/local/bin/rke2 server
UNIT
  echo "HOME=/root" >"$r/usr/local/lib/systemd/system/rke2-server.env"
  echo "#!fake rke2" >"$r/usr/local/bin/rke2"
  printf 'token: secret\nwrite-kubeconfig-mode: "0644"\ntls-san: [k8s.example.com]\n' >"$r/etc/rancher/rke2/config.yaml"
  printf 'node-label+:\n  - rancher=managed\nkube-proxy-arg+:\n  - metrics-bind-address=0.0.0.0:10249\n' \
    >"$r/etc/rancher/rke2/config.yaml.d/50-rancher.yaml"
  printf '#!/bin/sh\nexit 0\n' >"$r/sbin/modprobe"
  chmod 755 "$r/sbin/modprobe"
}

fix=$work/root
fixture "$fix"
# systemd hands generators directories on tmpfs (/run/systemd/generator*).
out=$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d)
trap 'rm -rf "$work" "$out"' EXIT
n=$out/normal e=$out/early l=$out/late
mkdir -p "$n" "$e" "$l"

median_ms() { # command... -> median wall time in ms
  if command -v hyperfine >/dev/null; then
    hyperfine -N --style none --runs "$runs" --warmup "$warmup" --export-json "$work/h.json" "$*" >/dev/null 2>&1
    python3 -c 'import json,sys; print("%.3f" % (json.load(open(sys.argv[1]))["results"][0]["median"]*1000))' "$work/h.json"
  else
    local i s t
    for ((i = 0; i < runs; i++)); do
      s=$(date +%s%N)
      "$@" >/dev/null 2>&1 || true
      t=$(date +%s%N)
      echo $(((t - s) / 1000))
    done | sort -n | awk '{a[NR]=$1} END {printf "%.3f\n", a[int((NR+1)/2)]/1000}'
  fi
}

echo "bench/generator.sh: median of $runs runs each ($(command -v hyperfine >/dev/null && echo hyperfine || echo shell loop)), same three temp dirs"
# Sanity: the fixture really generates drop-ins.
RKE2_PROXY_BACKEND_ROOT=$fix "$gen" "$n" "$e" "$l" 2>/dev/null
[ -f "$n/rke2-server.service.d/50-rke2-proxy-backend.conf" ] || { echo "fixture produced no drop-in" >&2; exit 1; }

g_ms=$(median_ms "$getty" "$n" "$e" "$l")
f_ms=$(median_ms env RKE2_PROXY_BACKEND_ROOT="$fix" "$gen" "$n" "$e" "$l")
h_ms=$(median_ms "$gen" "$n" "$e" "$l")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
printf '  %-46s %8s ms\n' "systemd-getty-generator" "$g_ms"
printf '  %-46s %8s ms  ratio %sx (target <= 1.0x)\n' "rke2-proxy-backend-generator, fixture root" "$f_ms" "$(ratio "$f_ms" "$g_ms")"
printf '  %-46s %8s ms  ratio %sx (target <= 1.0x)\n' "rke2-proxy-backend-generator, this host" "$h_ms" "$(ratio "$h_ms" "$g_ms")"

# apply as ExecStartPre, every module already loaded (no modprobe runs);
# the first run writes, the timed ones find everything up to date.
for m in x_tables ip_tables iptable_filter iptable_nat iptable_mangle ip6_tables ip6table_filter ip6table_nat \
  ip6table_mangle ipt_REJECT ip6t_REJECT nft_chain_nat nft_counter xt_comment xt_mark xt_addrtype xt_statistic \
  xt_recent xt_nat xt_MASQUERADE xt_tcpudp; do
  echo "$m 16384 0 - Live 0x0000000000000000" >>"$fix/proc/modules"
done
"$bin" --root "$fix" apply --backend=iptables-nft 2>/dev/null
a_ms=$(median_ms "$bin" --root "$fix" apply --backend=iptables-nft)
printf '  %-46s %8s ms  (target <= 20 ms)\n' "apply --backend=iptables-nft, no module loading" "$a_ms"
