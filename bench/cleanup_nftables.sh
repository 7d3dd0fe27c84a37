#!/bin/sh
# Benchmark `rke2-proxy-backend cleanup --backend nftables` against the
# floor, `nft delete table` of the same two tables, at N services, as
# interleaved pairs (A B A B ...) in a throwaway network namespace. Prints
# each pair's wall-time ratio A/B, then the median with min-max and the load.
#
#   sudo bench/cleanup_nftables.sh [BINARY] [SERVICES] [PAIRS]
#
# BINARY defaults to rke2-proxy-backend in PATH; SERVICES to 5000; PAIRS to 3.
# Every run reloads the rules (nft -f), which at 5000 services takes ~25 s.
set -eu
bin=${1:-rke2-proxy-backend}
services=${2:-5000}
pairs=${3:-3}
if [ "${BENCH_IN_NETNS:-}" != 1 ]; then
	BENCH_IN_NETNS=1 exec unshare -n "$0" "$bin" "$services" "$pairs"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/root"   # an empty root: no plan, so cleanup does not refuse
"$bin" render expected --backend nftables --services "$services" >"$work/rules.nft"

now() { date +%s.%N; }
run_a() { RKE2_PROXY_BACKEND_ROOT="$work/root" "$bin" cleanup --backend nftables >/dev/null; }
run_b() { nft delete table ip kube-proxy; nft delete table ip6 kube-proxy; }
timed() {
	nft -f "$work/rules.nft"
	t0=$(now)
	"$1"
	t1=$(now)
	[ -z "$(nft list tables | grep -w kube-proxy || true)" ] || { echo "$1 left kube-proxy tables" >&2; exit 1; }
	echo "$t1 - $t0" | bc -l
}
ratios=""
i=1
while [ "$i" -le "$pairs" ]; do
	a=$(timed run_a)
	b=$(timed run_b)
	r=$(echo "$a / $b" | bc -l)
	printf 'pair %d: cleanup %.3f s, nft delete table %.3f s, ratio %.2f\n' "$i" "$a" "$b" "$r"
	ratios="$ratios $r"
	i=$((i + 1))
done
echo "$ratios" | tr ' ' '\n' | grep . | sort -g | awk -v load="$(cut -d' ' -f1-3 /proc/loadavg)" -v svc="$services" '
	{ v[NR] = $1 }
	END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
	      printf "cleanup/nft-delete at %d services: median %.2f (min %.2f, max %.2f), %d pairs, load %s\n", svc, m, v[1], v[NR], NR, load }'
