#!/bin/sh
# Benchmark the idle cost of `rke2-proxy-backend watch` on a large ruleset,
# in a throwaway network namespace: SERVICES synthetic Services are loaded
# into nftables (both families, so verify passes), watch starts, and once
# its first verify is done the CPU it uses over SECONDS (utime + stime from
# /proc/PID/stat) is printed as a share of one core. Goal: < 0.5%.
# Runs binaries A and B interleaved (A B A B ...) when both are given.
#
#   sudo bench/watch_idle.sh BIN_A [BIN_B] [SERVICES]
#
# Measured 2026-11-30 on a shared 2-core VM (load 4-12): 0.045% of a core
# over 600 s, 0.017% over 120 s; first verify 4-6 s (polling every stamp).
# With nftables change events (A) against the polling build before them (B),
# one pair of 600 s each at 10k Services, load 18-25: A 0.15 s = 0.025%,
# B 0.16 s = 0.027% of a core. Both far under the goal; events remove the
# 3s netlink GETGEN, the rest is the legacy stamp poll and the heartbeat.
# The line starting "started:" says which way each binary watches.
#
# WATCH_IDLE_SECONDS (default 600, the issue's 10 minutes) shortens a quick
# run; WATCH_IDLE_PAIRS (default 1) repeats.
set -eu
bin_a=$1 bin_b=${2:-} services=${3:-10000}
seconds=${WATCH_IDLE_SECONDS:-600} pairs=${WATCH_IDLE_PAIRS:-1}
if [ "${BENCH_IN_NETNS:-}" != 1 ]; then
	BENCH_IN_NETNS=1 exec unshare -n "$0" "$@"
fi
work=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
t0=$(date +%s)
"$bin_a" render expected --backend nftables --services "$services" | nft -f -
echo "loaded $services services into nftables (IPv4 and IPv6) in $(($(date +%s) - t0)) s"
hz=$(getconf CLK_TCK)

# cpu_ticks PID: utime + stime (fields 14 and 15; the command name in
# field 2 has no spaces here).
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

one() {
	"$1" watch --expect nftables --no-status --proxy-mode-url '' --wait 60s 2>"$work/stderr" &
	pid=$!
	i=0
	until grep -q "first verify:" "$work/stderr"; do
		i=$((i + 1))
		if [ "$i" -gt 1200 ] || ! kill -0 "$pid" 2>/dev/null; then
			cat "$work/stderr" >&2
			echo "watch did not finish its first verify" >&2
			exit 1
		fi
		sleep 0.1
	done
	first=$(grep "first verify:" "$work/stderr" | sed 's/.*first verify: //')
	# How this binary notices changes (events, or polling every stamp).
	grep -m1 "watch: started:" "$work/stderr" | sed "s/^/$2: /"
	start=$(cpu_ticks "$pid")
	sleep "$seconds"
	end=$(cpu_ticks "$pid")
	events=$(grep -c "look wrong\|watch: drift:\|recovered:" "$work/stderr" || true)
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	pid=""
	awk -v s="$start" -v e="$end" -v hz="$hz" -v n="$seconds" -v name="$2" -v first="$first" -v ev="$events" \
		'BEGIN { printf "%s: idle cpu %.2f s = %.3f%% of a core over %d s (first verify %s; %d drift events)\n", name, (e - s) / hz, 100 * (e - s) / hz / n, n, first, ev }'
}
i=1
while [ "$i" -le "$pairs" ]; do
	one "$bin_a" "A $(basename "$bin_a")"
	[ -n "$bin_b" ] && one "$bin_b" "B $(basename "$bin_b")"
	i=$((i + 1))
done
echo "load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
