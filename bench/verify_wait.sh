#!/bin/sh
# Benchmark the cost of `rke2-proxy-backend verify --wait` on a large
# ruleset that never completes (only IPv4 is loaded, so the IPv6 skeleton
# stays missing and verify waits the whole time), in a throwaway network
# namespace. Runs binaries A and B interleaved (A B A B ...) and prints, per
# run, the CPU it used as a share of one core over the wait, and how long
# after the deadline it exited.
#
#   sudo bench/verify_wait.sh BACKEND SERVICES WAIT PAIRS BIN_A BIN_B [churn]
#
# e.g. bench/verify_wait.sh nftables 10000 60s 2 ./old ./new
# With "churn", the ruleset changes every second while verify waits (a
# table added and removed, in the backend's own family of tools), as when
# kube-proxy keeps syncing: that exercises the back-off, not the stamp.
set -eu
backend=$1 services=$2 wait=$3 pairs=$4 bin_a=$5 bin_b=$6 churn=${7:-}
if [ "${BENCH_IN_NETNS:-}" != 1 ]; then
	BENCH_IN_NETNS=1 exec unshare -n "$0" "$@"
fi
work=$(mktemp -d)
churner=""
trap '[ -n "$churner" ] && kill "$churner" 2>/dev/null; rm -rf "$work"' EXIT
case $backend in
nftables) load="nft -f -" touch_rules="nft add table ip churn; nft delete table ip churn" ;;
iptables-nft) load="iptables-nft-restore -w 5" touch_rules="iptables-nft -w 5 -t raw -A PREROUTING -j ACCEPT; iptables-nft -w 5 -t raw -D PREROUTING -j ACCEPT" ;;
iptables-legacy) load="iptables-legacy-restore -w 5" touch_rules="iptables-legacy -w 5 -t filter -A INPUT -j ACCEPT; iptables-legacy -w 5 -t filter -D INPUT -j ACCEPT" ;;
*) echo "unknown backend $backend" >&2; exit 2 ;;
esac
t0=$(date +%s)
"$bin_b" render expected --backend "$backend" --family ipv4 --services "$services" | sh -c "$load"
echo "loaded $services services into $backend (IPv4 only) in $(($(date +%s) - t0)) s"
if [ "$churn" = churn ]; then
	(while :; do sh -c "$touch_rules"; sleep 1; done) >/dev/null 2>&1 &
	churner=$!
fi
wait_s=$(echo "$wait" | sed 's/s$//')
mkdir -p "$work/root"
one() {
	RKE2_PROXY_BACKEND_ROOT=/ /usr/bin/time -f "%e %U %S" -o "$work/time" \
		"$1" verify --expect "$backend" --wait "$wait" --no-status --proxy-mode-url '' >/dev/null 2>"$work/stderr" || true
	# GNU time writes "Command exited with non-zero status 1" first.
	tail -n 1 "$work/time" | awk -v w="$wait_s" -v name="$2" \
		'{ printf "%s: cpu %.2f s = %.1f%% of a core over the %d s wait, exited %.2f s after the deadline\n", name, $2 + $3, 100 * ($2 + $3) / w, w, $1 - w }'
}
i=1
while [ "$i" -le "$pairs" ]; do
	one "$bin_a" "A $(basename "$bin_a")"
	one "$bin_b" "B $(basename "$bin_b")"
	i=$((i + 1))
done
echo "load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
