#!/usr/bin/env bash
# Benchmark, not a test: how long `verify` takes against the backend's own
# dump tool, and verify's peak memory, on rules kube-proxy's real proxier
# programmed (the oracle, test/kubeproxy, dual-stack, kubelet's chains too)
# at 1k, 5k and 10k Services. Each case runs in a throwaway network
# namespace (unshare -n). verify and the dump tool run as interleaved pairs
# (A B A B ...), so load drift hits both alike; the figure is the median of
# the per-pair ratios, with their min-max and the load average; CPU is the
# median user+sys of each (verify / tool, and the median per-pair ratio).
# Targets (issue 8): verify / iptables-legacy-save <= 1.25,
# / iptables-nft-save <= 1.0, / nft list ruleset <= 0.5; (issue 35) peak RSS
# <= 40 MiB and verify's CPU <= 0.8x the tool's at 5k Services.
# Env: SIZES="1000 5000 10000", PAIRS=7, MINOR=v1.36,
#      BACKENDS="iptables-legacy iptables-nft nftables".
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
oracle_bench

if [ "${1:-}" = --case ]; then
  # Inside the namespace: program, check, time.
  b=$2 n=$3 bin=$4 pairs=$5 oracle=$6 minor=$7
  root=$(mktemp -d)
  trap 'rm -rf "$root"' EXIT
  case $b in
    iptables-legacy) dump="iptables-legacy-save" ;;
    iptables-nft) dump="iptables-nft-save" ;;
    nftables) dump="nft list ruleset" ;;
  esac
  kube_proxy_flavour "$root/bin" "$b"
  PATH=$root/bin:$PATH "$oracle" --mode "$mode" --services "$n" --kubelet >/dev/null 2>"$root/oracle.log" || {
    echo "$b $n: the oracle failed:"; tail -5 "$root/oracle.log"; exit 1; }
  # The legacy reader learns which tables exist from /proc/net under --root.
  mkdir -p "$root/proc/net"
  cat /proc/net/ip_tables_names > "$root/proc/net/ip_tables_names" 2>/dev/null || true
  cat /proc/net/ip6_tables_names > "$root/proc/net/ip6_tables_names" 2>/dev/null || true
  verify=("$bin" --root "$root" verify --expect "$b" --kubernetes "$minor" --wait 0s --no-status)
  status=passes
  if ! out=$("${verify[@]}" 2>&1); then
    # Still timed: the work is the same; the verdict is reported.
    status="FAILS ($(echo "$out" | grep -m1 -o '\[[a-z-]*\].*' | cut -c1-100))"
  fi
  # us CMD prints CMD's wall time and its CPU time (user+sys, from the
  # shell's rusage of its children), both in microseconds.
  us() {
    local s e c TIMEFORMAT='%3U %3S'
    s=$(date +%s%N)
    c=$( { time "$@" >/dev/null 2>&1; } 2>&1) || true
    e=$(date +%s%N)
    echo "$(((e - s) / 1000)) $c" | awk '{ printf "%d %d\n", $1, ($2 + $3) * 1e6 }'
  }
  pairs_out=$(for _ in $(seq "$pairs"); do
    tv=$(us "${verify[@]}")
    # shellcheck disable=SC2086 # $dump is a command line
    td=$(us $dump)
    echo "$tv $td"
  done)
  rss="-"
  if [ -x /usr/bin/time ]; then
    rss=$( { /usr/bin/time -v "${verify[@]}" >/dev/null || true; } 2>&1 | awk -F': ' '/Maximum resident/ {printf "%.1f", $2/1024}')
  fi
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  echo "$pairs_out" | awk -v b="$b" -v n="$n" -v d="${dump%% *}" -v rss="$rss" -v st="$status" -v ld="$load" '
    { v[NR] = $1; vc[NR] = $2; t[NR] = $3; tc[NR] = $4; r[NR] = $1 / $3; rc[NR] = $2 / ($4 > 0 ? $4 : 1) }
    function median(a, n,   i, j, x, s) {
      for (i = 1; i <= n; i++) s[i] = a[i]
      for (i = 2; i <= n; i++) { x = s[i]; for (j = i - 1; j >= 1 && s[j] > x; j--) s[j + 1] = s[j]; s[j + 1] = x }
      return n % 2 ? s[(n + 1) / 2] : (s[n / 2] + s[n / 2 + 1]) / 2
    }
    END {
      lo = hi = r[1]; for (i = 2; i <= NR; i++) { if (r[i] < lo) lo = r[i]; if (r[i] > hi) hi = r[i] }
      printf "%-16s %6d  verify %8.1f ms  %-18s %8.1f ms  ratio %5.2f (%.2f-%.2f, %d pairs)  CPU %.1f / %.1f ms = %.2f  peak RSS %s MiB  load %s  verify %s\n",
        b, n, median(v, NR) / 1000, d, median(t, NR) / 1000, median(r, NR), lo, hi, NR,
        median(vc, NR) / 1000, median(tc, NR) / 1000, median(rc, NR), rss, ld, st }'
  exit 0
fi

make -s build
bin=$PWD/bin/rke2-proxy-backend
pairs=${PAIRS:-7}
minor=${MINOR:-v1.36}
# kube-proxy: the oracle for $minor, built once and cached in .cache/oracle.
oracle=$(oracle_binary "$minor") || { echo "bench/verify.sh: no kube-proxy oracle for $minor (see internal/testkit/oracle.Minors)" >&2; exit 1; }
echo "verify vs the backend's dump tool on kube-proxy $minor's own rules (dual-stack), $pairs interleaved pairs each, $(nproc) CPUs, kernel $(uname -r)"
for n in ${SIZES:-1000 5000 10000}; do
  for b in ${BACKENDS:-iptables-legacy iptables-nft nftables}; do
    unshare -n "$0" --case "$b" "$n" "$bin" "$pairs" "$oracle" "$minor" || echo "$b $n: FAILED"
  done
done
echo "targets: iptables-legacy <= 1.25, iptables-nft <= 1.00, nftables <= 0.50; at 5000 peak RSS <= 40 MiB, CPU <= 0.80"
