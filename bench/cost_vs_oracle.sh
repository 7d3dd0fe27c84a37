#!/usr/bin/env bash
# Benchmark, not a test: keeps `rke2-proxy-backend bench` honest. For each
# backend, on this machine, it compares bench's full sync (the renderer's
# footprint loaded with the backend's own loader) with kube-proxy's real
# full sync of the same number of dual-stack Services: the oracle
# (test/kubeproxy, kube-proxy's own proxier) in a throwaway network
# namespace, read from its own histogram
# kubeproxy_sync_full_proxy_rules_duration_seconds (sum over the IPv4 and
# IPv6 proxiers, as bench's figure covers both families). kube-proxy's
# figure includes its own rule computation, bench's only the load, so the
# ratio kube-proxy / bench is expected a little above 1; the stated
# agreement is a factor FACTOR either way. Exits 1 when a backend is
# outside it.
# Env: SERVICES=1000, FACTOR=3, MINOR=v1.37,
#      BACKENDS="iptables-legacy iptables-nft nftables".
# bench runs in a private mount namespace with a tmpfs on /var/lib, so its
# state file never lands on this machine.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
oracle_bench

if [ "${1:-}" = --oracle ]; then
  # Inside a fresh network namespace: kube-proxy's first full sync.
  b=$2 n=$3 oracle=$4 out=$5
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  kube_proxy_flavour "$tmp" "$b"
  ip link set lo up
  PATH=$tmp:$PATH "$oracle" --mode "$mode" --services "$n" --metrics-out "$out" >/dev/null 2>"$tmp/log" || {
    echo "$b: the oracle failed:" >&2; tail -5 "$tmp/log" >&2; exit 1; }
  exit 0
fi

n=${SERVICES:-1000}
factor=${FACTOR:-3}
minor=${MINOR:-v1.37}
make -s build
bin=$PWD/bin/rke2-proxy-backend
oracle=$(oracle_binary "$minor") || { echo "bench/cost_vs_oracle.sh: no kube-proxy oracle for $minor (see internal/testkit/oracle.Minors)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "bench vs kube-proxy $minor's real full sync at $n dual-stack services, $(nproc) CPUs, kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
unshare -m --propagation private sh -c 'mount -t tmpfs tmpfs /var/lib && exec "$@"' sh \
  "$bin" bench --services "$n" -o json >"$work/bench.json" 2>"$work/bench.log" || {
  echo "bench failed:" >&2; tail -5 "$work/bench.log" >&2; exit 1; }

bad=0
printf '%-16s %12s %12s %12s\n' backend "bench full" "kube-proxy" ratio
for b in ${BACKENDS:-iptables-legacy iptables-nft nftables}; do
  ours=$(jq -r --arg b "$b" '.results[] | select(.backend == $b) | .steps[] | select(.step == "full") | .wall_seconds' "$work/bench.json")
  if [ -z "$ours" ]; then
    echo "$b: not measured by bench here ($(jq -r --arg b "$b" '.skipped[]? | select(.backend == $b) | .reason' "$work/bench.json"))"
    continue
  fi
  unshare -n "$0" --oracle "$b" "$n" "$oracle" "$work/$b.prom"
  theirs=$(awk '/^kubeproxy_sync_full_proxy_rules_duration_seconds_sum/ {s += $2} END {printf "%.3f", s}' "$work/$b.prom")
  verdict=$(awk -v a="$theirs" -v o="$ours" -v f="$factor" 'BEGIN {
    r = a / o; printf "%.2f %s", r, (r <= f && r >= 1 / f) ? "ok" : "OUTSIDE" }')
  printf '%-16s %10.3f s %10.3f s %12s\n' "$b" "$ours" "$theirs" "$verdict"
  case $verdict in *OUTSIDE) bad=1 ;; esac
done
echo "agreement: kube-proxy / bench within ${factor}x either way"
exit $bad
