#!/usr/bin/env bash
# Benchmark, not a test: apply runs as rke2-server's ExecStartPre on every
# boot, and since issue 11 it proves the backend first by loading kube-proxy's
# one-service footprint into a throwaway network namespace (the trial).
# Interleaved pairs A B A B: apply --no-trial, then apply with the trial, on
# the same fixture root (everything up to date, modules loaded, so only the
# trial differs); the figure is the median of the per-pair ratios and the
# median wall time with the trial, per backend. Target: apply <= 50 ms with
# the trial. Needs root (network namespaces), python3, nft and the iptables loaders.
# Env: RUNS=100 (pairs per backend), WARMUP=5.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
runs=${RUNS:-100}
warmup=${WARMUP:-5}
. bench/lib.sh
need_root_or_skip "the trial needs root to make a network namespace"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=$work/rke2-proxy-backend
go build -o "$bin" ./cmd/rke2-proxy-backend

# A Debian 12 RKE2 v1.35.7 server before its start (bench/lib.sh), every
# module loaded and a fake rke2 binary that answers --version.
r=$work/root rel=6.1.0-18-amd64
debian12_rke2_root "$r" "$rel"
for m in $debian12_modules; do echo "$m 16384 0 - Live 0x0000000000000000"; done >"$r/proc/modules"
touch "$r/lib/modules/$rel/modules.builtin"
printf '#!/bin/sh\necho "rke2 version v1.35.7+rke2r1 (0123abcd)"\n' >"$r/usr/local/bin/rke2"
chmod 755 "$r/usr/local/bin/rke2"

echo "bench/apply.sh: $runs pairs per backend (apply --no-trial, then apply with the trial), fixture root $r"
for b in iptables-nft iptables-legacy nftables; do
  # Under --root the trial is skipped unless asked for: the fixture is
  # timed with this machine's trial, which is what a boot pays.
  "$bin" --root "$r" apply --backend="$b" --trial-under-root 2>"$work/log" || { cat "$work/log"; exit 1; }
  grep -q "trial of $b: kube-proxy's rules for one service loaded" "$work/log" || { echo "no trial ran:"; cat "$work/log"; exit 1; }
  python3 - "$runs" "$warmup" "$bin" "$r" "$b" <<'PY'
import os, statistics, sys, time
runs, warmup, bin, root, b = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
null = os.open(os.devnull, os.O_WRONLY)
def run(argv):
    t = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, dict(os.environ),
                         file_actions=[(os.POSIX_SPAWN_DUP2, null, 1), (os.POSIX_SPAWN_DUP2, null, 2)])
    _, status, ru = os.wait4(pid, 0)
    if status != 0:
        sys.exit("%s exited with status %d" % (argv, status))
    return (time.perf_counter() - t) * 1000, (ru.ru_utime + ru.ru_stime) * 1000
without = [bin, "--root", root, "apply", "--backend=" + b, "--no-trial"]
with_ = [bin, "--root", root, "apply", "--backend=" + b, "--trial-under-root"]
for _ in range(warmup):
    run(without); run(with_)
load0 = open("/proc/loadavg").read().split()[0]
a, bw, ratio, cpu = [], [], [], []
for _ in range(runs):
    x, _ = run(without)
    y, c = run(with_)
    a.append(x); bw.append(y); ratio.append(y / x); cpu.append(c)
load1 = open("/proc/loadavg").read().split()[0]
print("  %-15s without trial %6.1f ms, with trial %6.1f ms wall (min %.1f, max %.1f), %5.1f ms cpu (children included);"
      " pair ratio %.2fx (min %.2f, max %.2f); load %s -> %s on %d cores; target <= 50 ms"
      % (b, statistics.median(a), statistics.median(bw), min(bw), max(bw), statistics.median(cpu),
         statistics.median(ratio), min(ratio), max(ratio), load0, load1, os.cpu_count()))
PY
done
