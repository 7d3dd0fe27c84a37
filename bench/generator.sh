#!/usr/bin/env bash
# Benchmark, not a test: the generator sits on every boot's critical path
# and runs at every daemon-reload, so it is timed against systemd's own C
# generator, systemd-getty-generator, with the same three output dirs.
# Targets (issues 3, 9): generator / systemd-getty-generator < 1.0 as the
# median of paired ratios, wall and CPU, on this host and on a realistic
# fixture root; apply without module loading <= 20 ms.
# Env: RUNS=200 (pairs per command), WARMUP=10. Needs python3 (the timer).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
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
  debian12_rke2_root "$r" "$rel"
  mkdir -p "$r"/sys/class/dmi/id "$r"/sys/bus/pci/drivers/virtio-pci
  echo "BOOT_IMAGE=/boot/vmlinuz-$rel root=UUID=0b1c ro quiet" >"$r/proc/cmdline"
  for m in nf_tables nft_compat nf_conntrack nf_nat xt_conntrack virtio_net ext4 overlay br_netfilter; do
    echo "$m 315392 1 - Live 0x0000000000000000"
  done >"$r/proc/modules"
  printf 'kernel/net/unix/unix.ko\nkernel/net/packet/af_packet.ko\n' >"$r/lib/modules/$rel/modules.builtin"
  echo QEMU >"$r/sys/class/dmi/id/sys_vendor"
  echo "Standard PC (Q35 + ICH9, 2009)" >"$r/sys/class/dmi/id/product_name"
  for d in 00:01.0 00:02.0 00:03.0 00:1f.2; do
    mkdir -p "$r/sys/bus/pci/devices/0000:$d"
    echo 0x1af4 >"$r/sys/bus/pci/devices/0000:$d/vendor"
    echo 0x1041 >"$r/sys/bus/pci/devices/0000:$d/device"
    ln -s ../../../bus/pci/drivers/virtio-pci "$r/sys/bus/pci/devices/0000:$d/driver"
  done
  echo "HOME=/root" >"$r/usr/local/lib/systemd/system/rke2-server.env"
  echo "#!fake rke2" >"$r/usr/local/bin/rke2"
  printf 'token: secret\nwrite-kubeconfig-mode: "0644"\ntls-san: [k8s.example.com]\n' >"$r/etc/rancher/rke2/config.yaml"
  printf 'node-label+:\n  - rancher=managed\nkube-proxy-arg+:\n  - metrics-bind-address=0.0.0.0:10249\n' \
    >"$r/etc/rancher/rke2/config.yaml.d/50-rancher.yaml"
}

fix=$work/root
fixture "$fix"
# The same host before RKE2 or k3s is installed (the package first, the
# cluster later): the generator must stop before probing (issue 23 item 5),
# so its target is <= 0.5x (a static Go binary doing nothing is ~0.3x).
bare=$work/bare
cp -a "$fix" "$bare"
rm -f "$bare"/usr/local/lib/systemd/system/rke2-server.* "$bare"/usr/local/bin/rke2
# systemd hands generators directories on tmpfs (/run/systemd/generator*).
out=$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d)
trap 'rm -rf "$work" "$out"' EXIT
n=$out/normal e=$out/early l=$out/late
mkdir -p "$n" "$e" "$l"

# Paired runs. Each pair is systemd-getty-generator then ours, back to
# back, so load from other processes (this machine is shared) hits both
# halves of a pair alike; the figure is the median of the per-pair ratios,
# with their min and max. A ratio of two unpaired medians hides a steady
# few percent under the noise. Each command is spawned directly (no shell)
# and timed by wall clock and by the CPU time the kernel charged it
# (user + system, from wait4).
pairs() { # runs warmup json-commands -> per command: name, medians, pair ratios
  python3 - "$@" <<'PY'
import json, os, statistics, sys, time
runs, warmup, cmds = int(sys.argv[1]), int(sys.argv[2]), json.loads(sys.argv[3])
null = os.open(os.devnull, os.O_WRONLY)
def run(c):
    env = dict(os.environ, **c.get("env", {}))
    t = time.perf_counter()
    pid = os.posix_spawn(c["argv"][0], c["argv"], env,
                         file_actions=[(os.POSIX_SPAWN_DUP2, null, 1), (os.POSIX_SPAWN_DUP2, null, 2)])
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t
    if status != 0:
        sys.exit("%s exited with status %d" % (c["name"], status))
    return wall * 1000, (ru.ru_utime + ru.ru_stime) * 1000
base, others = cmds[0], cmds[1:]
for _ in range(warmup):
    for c in cmds:
        run(c)
load0 = open("/proc/loadavg").read().split()[0]
res = {c["name"]: {"wall": [], "cpu": [], "rwall": [], "rcpu": []} for c in cmds}
for _ in range(runs if others else 0):
    for c in others:           # A B A B ...: a fresh baseline run per pair
        bw, bc = run(base)
        w, u = run(c)
        for name, (x, y) in ((base["name"], (bw, bc)), (c["name"], (w, u))):
            res[name]["wall"].append(x)
            res[name]["cpu"].append(y)
        res[c["name"]]["rwall"].append(w / bw)
        # CPU is charged in scheduler ticks on some kernels: a 0 ms
        # baseline cannot be a denominator.
        if bc > 0:
            res[c["name"]]["rcpu"].append(u / bc)
for _ in range(0 if others else runs):  # one command alone: just time it
    w, u = run(base)
    res[base["name"]]["wall"].append(w)
    res[base["name"]]["cpu"].append(u)
load1 = open("/proc/loadavg").read().split()[0]
def rng(v):
    return "%.3f %.3f %.3f" % (statistics.median(v), min(v), max(v)) if v else "nan nan nan"
for c in cmds:
    r = res[c["name"]]
    print(c["name"], "%.3f %.3f" % (statistics.median(r["wall"]), statistics.median(r["cpu"])),
          rng(r["rwall"]), rng(r["rcpu"]), len(r["rwall"]), load0, load1)
PY
}

echo "bench/generator.sh: $runs pairs per command (systemd-getty-generator, then ours), same three temp dirs (tmpfs)"
# Sanity: the fixture really generates drop-ins.
RKE2_PROXY_BACKEND_ROOT=$fix "$gen" "$n" "$e" "$l" 2>/dev/null
[ -f "$n/rke2-server.service.d/50-rke2-proxy-backend.conf" ] || { echo "fixture produced no drop-in" >&2; exit 1; }

cmds=$(python3 -c 'import json, sys
getty, gen, fix, n, e, l, bare = sys.argv[1:]
print(json.dumps([
  {"name": "getty", "argv": [getty, n, e, l]},
  {"name": "host", "argv": [gen, n, e, l], "env": {"RKE2_PROXY_BACKEND_ROOT": "/"}},
  {"name": "fixture", "argv": [gen, n, e, l], "env": {"RKE2_PROXY_BACKEND_ROOT": fix}},
  {"name": "bare", "argv": [gen, n, e, l], "env": {"RKE2_PROXY_BACKEND_ROOT": bare}},
]))' "$getty" "$gen" "$fix" "$n" "$e" "$l" "$bare")
pairs "$runs" "$warmup" "$cmds" >"$work/t.txt"
read -r _ g_ms g_cpu _ _ _ _ _ _ _ load0 load1 < <(grep '^getty ' "$work/t.txt")
printf '  load average (1 min) %s at the start, %s at the end (%s cores)\n' "$load0" "$load1" "$(nproc)"
printf '  %-44s %7s ms wall %7s ms cpu (medians)\n' "systemd-getty-generator" "$g_ms" "$g_cpu"
for name in host fixture bare; do
  read -r _ ms cpu rw rwmin rwmax rc rcmin rcmax _ _ _ < <(grep "^$name " "$work/t.txt")
  label="rke2-proxy-backend-generator, this host" target="< 1.0x"
  [ "$name" = fixture ] && label="rke2-proxy-backend-generator, fixture root"
  [ "$name" = bare ] && label="rke2-proxy-backend-generator, neither installed" target="<= 0.5x"
  printf '  %-44s %7s ms wall %7s ms cpu (medians)\n' "$label" "$ms" "$cpu"
  printf '  %-44s median pair ratio %sx wall (min %s, max %s), %sx cpu (min %s, max %s); target %s\n' \
    "" "$rw" "$rwmin" "$rwmax" "$rc" "$rcmin" "$rcmax" "$target"
done

# apply as ExecStartPre, every module already loaded (no modprobe runs);
# the first run writes, the timed ones find everything up to date.
for m in x_tables ip_tables iptable_filter iptable_nat iptable_mangle ip6_tables ip6table_filter ip6table_nat \
  ip6table_mangle ipt_REJECT ip6t_REJECT nft_chain_nat nft_counter xt_comment xt_mark xt_addrtype xt_statistic \
  xt_recent xt_nat xt_MASQUERADE xt_tcpudp; do
  echo "$m 16384 0 - Live 0x0000000000000000" >>"$fix/proc/modules"
done
"$bin" --root "$fix" apply --backend=iptables-nft 2>/dev/null
acmd=$(python3 -c 'import json, sys; print(json.dumps([{"name": "apply", "argv": [sys.argv[1], "--root", sys.argv[2], "apply", "--backend=iptables-nft"]}]))' "$bin" "$fix")
read -r _ a_ms a_cpu _ < <(pairs "$runs" "$warmup" "$acmd")
printf '  %-44s %7s ms wall %7s ms cpu  (target <= 20 ms)\n' "apply --backend=iptables-nft, no modprobe" "$a_ms" "$a_cpu"
