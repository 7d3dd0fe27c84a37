#!/usr/bin/env bash
# Benchmark, not a test: how long `verify` takes against the backend's own
# dump tool, and verify's peak memory, at 1k, 5k and 10k synthetic services.
# Each case runs in a throwaway network namespace (unshare -n) holding the
# rendered footprint: N services in IPv4 plus the IPv6 skeleton. Targets
# (issue 4): verify / iptables-legacy-save <= 1.25, / iptables-nft-save
# <= 1.0, / nft list ruleset <= 0.5; peak RSS <= 64 MiB at 5k services.
# Env: SIZES="1000 5000 10000", RUNS=7, BACKENDS="iptables-legacy iptables-nft nftables".
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" != 0 ]; then
  echo "bench/verify.sh: skipped: needs root for network namespaces"
  exit 0
fi

if [ "${1:-}" = --case ]; then
  # Inside the namespace: load, check, time.
  b=$2 n=$3 bin=$4 runs=$5
  root=$(mktemp -d)
  trap 'rm -rf "$root"' EXIT
  case $b in
    iptables-legacy) load4="iptables-legacy-restore -w 5"; load6="ip6tables-legacy-restore -w 5"; dump="iptables-legacy-save" ;;
    iptables-nft) load4="iptables-nft-restore"; load6="ip6tables-nft-restore"; dump="iptables-nft-save" ;;
    nftables) load4="nft -f -"; load6="nft -f -"; dump="nft list ruleset" ;;
  esac
  "$bin" render expected --backend "$b" --family ipv4 --services "$n" | $load4
  "$bin" render expected --backend "$b" --family ipv6 | $load6
  # The legacy reader learns which tables exist from /proc/net under --root.
  mkdir -p "$root/proc/net"
  cat /proc/net/ip_tables_names > "$root/proc/net/ip_tables_names" 2>/dev/null || true
  cat /proc/net/ip6_tables_names > "$root/proc/net/ip6_tables_names" 2>/dev/null || true
  verify=("$bin" --root "$root" verify --expect "$b" --wait 0s --no-status --proxy-mode-url "")
  status=passes
  if ! out=$("${verify[@]}" 2>&1); then
    # Still timed: the work is the same; the verdict is reported.
    status="FAILS ($(echo "$out" | grep -m1 -o '\[[a-z-]*\].*' | cut -c1-100))"
  fi
  us() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1 || true; e=$(date +%s%N); echo $(((e - s) / 1000)); }
  median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
  tv=$(for _ in $(seq "$runs"); do us "${verify[@]}"; done | median)
  # shellcheck disable=SC2086 # $dump is a command line
  td=$(for _ in $(seq "$runs"); do us $dump; done | median)
  rss="-"
  if [ -x /usr/bin/time ]; then
    rss=$( { /usr/bin/time -v "${verify[@]}" >/dev/null || true; } 2>&1 | awk -F': ' '/Maximum resident/ {printf "%.1f", $2/1024}')
  fi
  awk -v b="$b" -v n="$n" -v tv="$tv" -v td="$td" -v d="${dump%% *}" -v rss="$rss" -v st="$status" 'BEGIN {
    printf "%-16s %6d  verify %8.1f ms  %-18s %8.1f ms  ratio %5.2f  verify peak RSS %s MiB  verify %s\n",
      b, n, tv / 1000, d, td / 1000, tv / td, rss, st }'
  exit 0
fi

make -s build
bin=$PWD/bin/rke2-proxy-backend
runs=${RUNS:-7}
echo "verify vs the backend's dump tool, median of $runs runs each, $(nproc) CPUs, kernel $(uname -r)"
for n in ${SIZES:-1000 5000 10000}; do
  for b in ${BACKENDS:-iptables-legacy iptables-nft nftables}; do
    unshare -n "$0" --case "$b" "$n" "$bin" "$runs" || echo "$b $n: FAILED"
  done
done
echo "targets: iptables-legacy <= 1.25, iptables-nft <= 1.00, nftables <= 0.50; peak RSS <= 64 MiB at 5000"
