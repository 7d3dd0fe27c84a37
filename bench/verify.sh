#!/usr/bin/env bash
# Benchmark, not a test: verify against the backend's own dump tools, on
# rules kube-proxy's real proxier programmed (the oracle, test/kubeproxy,
# dual-stack, kubelet's chains too) at 1k, 5k, 10k and 20k Services. Each
# case runs in a throwaway network namespace (unshare -n). verify reads
# both families, so it is compared with the tools that read both:
# iptables-legacy-save and ip6tables-legacy-save, iptables-nft-save and
# ip6tables-nft-save (one after the other), or nft list ruleset. verify and
# the tools run as interleaved pairs (A B A B ...), so load drift hits both
# alike; each of wall time, CPU (user+sys of the children, from the shell's
# rusage) and peak RSS (the largest process, /usr/bin/time) is printed as
# verify's and the tools' medians and the median of the per-pair ratios
# with their min-max, with the load average before and after. A table of
# verify's own figures per size follows, with its peak RSS growth per 1k
# Services.
# Targets at 5k (issue 35): wall <= 0.75 / 0.5 / 0.2 of the tools, CPU <=
# 0.8 of the tools', peak RSS <= 40 MiB, legacy growth <= 4 MiB per 1k.
# Env: SIZES="1000 5000 10000 20000", PAIRS=7, MINOR=v1.36,
#      BACKENDS="iptables-legacy iptables-nft nftables",
#      SKIP="iptables-nft/20000": kube-proxy's own iptables-nft-restore
#      took 13 minutes to program 10k Services here (2 cores), and grows
#      faster than linearly; SKIP= runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
oracle_bench

if [ "${1:-}" = --case ]; then
  # Inside the namespace: program, check, time.
  b=$2 n=$3 bin=$4 pairs=$5 oracle=$6 minor=$7 scale=$8
  root=$(mktemp -d)
  trap 'rm -rf "$root"' EXIT
  case $b in
    iptables-legacy) dump="iptables-legacy-save; ip6tables-legacy-save" name="iptables-legacy-save+ip6" ;;
    iptables-nft) dump="iptables-nft-save; ip6tables-nft-save" name="iptables-nft-save+ip6" ;;
    nftables) dump="nft list ruleset" name="nft list ruleset" ;;
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
  # measure CMD... prints CMD's wall time and CPU time (user+sys, from the
  # shell's rusage of its children) in microseconds and its peak RSS in
  # KiB (/usr/bin/time's, of the largest process).
  measure() {
    local s e c TIMEFORMAT='%3U %3S'
    s=$(date +%s%N)
    c=$( { time /usr/bin/time -o "$root/rss" -f %M "$@" >/dev/null 2>&1; } 2>&1) || true
    e=$(date +%s%N)
    echo "$(((e - s) / 1000)) $c $(tail -1 "$root/rss")" | awk '{ printf "%d %d %d\n", $1, ($2 + $3) * 1e6, $4 }'
  }
  load0=$(cut -d' ' -f1-3 /proc/loadavg)
  pairs_out=$(for _ in $(seq "$pairs"); do
    echo "$(measure "${verify[@]}") $(measure sh -c "$dump")"
  done)
  load1=$(cut -d' ' -f1-3 /proc/loadavg)
  echo "$pairs_out" | awk -v b="$b" -v n="$n" -v d="$name" -v st="$status" -v l0="$load0" -v l1="$load1" -v scale="$scale" '
    function median(a, n,   i, j, x, s) {
      for (i = 1; i <= n; i++) s[i] = a[i]
      for (i = 2; i <= n; i++) { x = s[i]; for (j = i - 1; j >= 1 && s[j] > x; j--) s[j + 1] = s[j]; s[j + 1] = x }
      return n % 2 ? s[(n + 1) / 2] : (s[n / 2] + s[n / 2 + 1]) / 2
    }
    function lo(a, n,   i, m) { m = a[1]; for (i = 2; i <= n; i++) if (a[i] < m) m = a[i]; return m }
    function hi(a, n,   i, m) { m = a[1]; for (i = 2; i <= n; i++) if (a[i] > m) m = a[i]; return m }
    # column k of verify (k) against the tools (k + 3): medians and pair ratios
    function col(what, k, unit, div,   i, v, t, r) {
      for (i = 1; i <= NR; i++) { v[i] = f[i, k]; t[i] = f[i, k + 3]; r[i] = f[i, k] / (f[i, k + 3] > 0 ? f[i, k + 3] : 1) }
      vm[k] = median(v, NR) / div
      return sprintf("  %s %7.1f / %7.1f %s = %4.2f (%4.2f-%4.2f)", what, median(v, NR) / div, median(t, NR) / div, unit, median(r, NR), lo(r, NR), hi(r, NR))
    }
    { for (k = 1; k <= 6; k++) f[NR, k] = $k }
    END {
      printf "%-15s %6d vs %-24s%s%s%s  %d pairs, load %s -> %s, verify %s\n", b, n, d,
        col("wall", 1, "ms", 1000), col("CPU", 2, "ms", 1000), col("peak RSS", 3, "MiB", 1024), NR, l0, l1, st
      printf "%s %d %.1f %.1f %.1f\n", b, n, vm[1], vm[2], vm[3] >> scale
    }'
  exit 0
fi

make -s build
bin=$PWD/bin/rke2-proxy-backend
pairs=${PAIRS:-7}
minor=${MINOR:-v1.36}
# kube-proxy: the oracle for $minor, built once and cached in .cache/oracle.
oracle=$(oracle_binary "$minor") || { echo "bench/verify.sh: no kube-proxy oracle for $minor (see internal/testkit/oracle.Minors)" >&2; exit 1; }
scale=$(mktemp)
trap 'rm -f "$scale"' EXIT
echo "verify vs the backend's dump tools (both families) on kube-proxy $minor's own rules (dual-stack), $pairs interleaved pairs each; verify / tools, median pair ratio (min-max); $(nproc) CPUs, kernel $(uname -r)"
for n in ${SIZES:-1000 5000 10000 20000}; do
  for b in ${BACKENDS:-iptables-legacy iptables-nft nftables}; do
    case " ${SKIP-iptables-nft/20000} " in
      *" $b/$n "*) echo "$b $n: skipped (SKIP)"; continue ;;
    esac
    unshare -n "$0" --case "$b" "$n" "$bin" "$pairs" "$oracle" "$minor" "$scale" || echo "$b $n: FAILED"
  done
done
echo "targets at 5000: wall <= 0.75 (iptables-legacy) / 0.50 (iptables-nft) / 0.20 (nftables), CPU <= 0.80, peak RSS <= 40 MiB"
echo
echo "verify's medians per size (wall ms / CPU ms / peak RSS MiB), and its peak RSS growth per 1k Services between the smallest and largest size:"
sort -k1,1 -k2,2n "$scale" | awk '
  $1 != b { if (b != "") done(); b = $1; line = sprintf("%-15s", b); n0 = $2; r0 = $5 }
  { line = line sprintf("  %5dk %7.1f/%7.1f/%5.1f", $2 / 1000, $3, $4, $5); n1 = $2; r1 = $5 }
  function done() { printf "%s  growth %s\n", line, (n1 > n0 ? sprintf("%.2f MiB/1k", (r1 - r0) * 1000 / (n1 - n0)) : "-") }
  END { if (b != "") done() }'
echo "target: legacy growth <= 4 MiB per 1k Services"
