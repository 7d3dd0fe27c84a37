#!/usr/bin/env bash
# Benchmark, not a test: the generator sits on every boot's critical path
# and runs at every daemon-reload, so it is timed against systemd's own C
# generator, systemd-getty-generator, with the same three output dirs, and
# against the generator of the previous release (a regression check).
# Targets (issue 35): <= 0.5x getty on an RKE2 root, <= 0.4x on a host with
# neither RKE2 nor k3s (an empty static Go program is about 0.3x), and no
# slower than the previous release's; apply without module loading <= 20 ms.
# Every figure is the median of paired ratios (A B A B ...: the shared
# machine's load falls on both halves of a pair alike) with its min-max and
# the load average; run it when `uptime` says less than 2. Instruction
# counts (callgrind), which no load changes, follow when valgrind is there.
# Env: RUNS=200 (pairs per comparison), WARMUP=10, BASE=fc5f35d (the
# previous release's commit: its build is cached in .cache/base-bin/COMMIT),
# CALLGRIND=auto|0. Needs python3 (the timer); root for the RKE2 root at
# "/" on this kernel (a chroot in a mount namespace), timed and counted: the
# row a node's boot pays, where the fixture row reads fixture files; strace
# for the floor row under it (bench/genfloor: the file operations alone).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
export PATH="$PATH:/usr/local/go/bin"
runs=${RUNS:-200}
warmup=${WARMUP:-10}
base_commit=${BASE:-fc5f35d}

getty=""
for g in /usr/lib/systemd/system-generators/systemd-getty-generator /lib/systemd/system-generators/systemd-getty-generator; do
  [ -x "$g" ] && getty=$g && break
done
if [ -z "$getty" ]; then
  echo "bench/generator.sh: skipped: systemd-getty-generator not installed (Debian package systemd)"
  exit 0
fi

work=$(mktemp -d)
# systemd hands generators directories on tmpfs (/run/systemd/generator*).
out=$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d)
trap 'rm -rf "$work" "$out"' EXIT
make -s build >/dev/null
bin=$work/new/rke2-proxy-backend
mkdir -p "$work/new"
cp bin/rke2-proxy-backend bin/rke2-proxy-backend-generator "$work/new/"
gen=$work/new/rke2-proxy-backend-generator

# base_build COMMIT prints the directory holding COMMIT's rke2-proxy-backend
# and its generator (its own program, or the tool under the generator's
# name before there was one): `make build` in a throwaway worktree, once
# per commit, kept in .cache/base-bin/COMMIT under a lock.
base_build() {
  local commit dir tree
  commit=$(git rev-parse --verify "$1^{commit}") || { echo "bench/generator.sh: BASE=$1 is no commit here" >&2; exit 1; }
  dir=.cache/base-bin/$commit
  if [ ! -f "$dir/.complete" ]; then
    mkdir -p .cache
    (
      flock 9
      [ -f "$dir/.complete" ] && exit 0
      tree=$(mktemp -d /tmp/rke2pb-base-bin.XXXXXX)
      trap 'git worktree remove --force "$tree" >/dev/null 2>&1; rm -rf "$tree"; git worktree prune' EXIT
      echo "bench/generator.sh: building ${commit:0:12} (once; git worktree in $tree)" >&2
      git worktree add --detach "$tree" "$commit" >/dev/null 2>&1
      make -s -C "$tree" build >&2
      rm -rf "$dir" && mkdir -p "$dir"
      cp "$tree"/bin/* "$dir/"
      [ -e "$dir/rke2-proxy-backend-generator" ] || ln -s rke2-proxy-backend "$dir/rke2-proxy-backend-generator"
      touch "$dir/.complete"
    ) 9>.cache/base-bin.lock
  fi
  echo "$PWD/$dir"
}
base_gen=$(base_build "$base_commit")/rke2-proxy-backend-generator

# A Debian 12 RKE2 server as the generator sees it at boot: kernel config in
# /boot, loaded and available modules, sysfs PCI and DMI, the iptables
# alternative, RKE2's unit (tarball layout), its config and a Rancher drop-in.
fixture() { # ROOT [KERNEL-RELEASE]
  local r=$1 rel=${2:-6.1.0-18-amd64} m
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
# cluster later): the generator stops after the few stats that prove it.
bare=$work/bare
cp -a "$fix" "$bare"
rm -f "$bare"/usr/local/lib/systemd/system/rke2-server.* "$bare"/usr/local/bin/rke2
n=$out/normal e=$out/early l=$out/late
mkdir -p "$n" "$e" "$l"

# Paired runs: each comparison's A then B, back to back, for every pair;
# the figure is the median of the per-pair ratios B/A, with their min and
# max (a ratio of two unpaired medians hides a steady few percent under
# the noise). Each command is spawned directly (no shell) and timed by
# wall clock and by the CPU time the kernel charged it (user + system,
# from wait4).
pairs() { # runs warmup json-comparisons -> per comparison: name, medians, pair ratios, loads
  python3 - "$@" <<'PY'
import json, os, statistics, sys, time
runs, warmup, comps = int(sys.argv[1]), int(sys.argv[2]), json.loads(sys.argv[3])
null = os.open(os.devnull, os.O_WRONLY)
def run(c):
    env = dict(os.environ, **c.get("env", {}))
    t = time.perf_counter()
    pid = os.posix_spawn(c["argv"][0], c["argv"], env,
                         file_actions=[(os.POSIX_SPAWN_DUP2, null, 1), (os.POSIX_SPAWN_DUP2, null, 2)])
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t
    if status != 0:
        sys.exit("%s exited with status %d" % (c["argv"][0], status))
    return wall * 1000, (ru.ru_utime + ru.ru_stime) * 1000
for _ in range(warmup):
    for c in comps:
        run(c["a"]); run(c["b"])
load0 = open("/proc/loadavg").read().split()[0]
res = [{"aw": [], "bw": [], "bc": [], "rw": [], "rc": [], "cw": [], "cc": [], "rcw": [], "rcc": [], "rcb": []} for _ in comps]
for k in range(runs):
    for c, r in zip(comps, res):
        aw, ac = run(c["a"])
        # A comparison with a C (the floor) runs it in the same round as
        # B, each first in turn, so both are paired with the same A.
        if "c" in c and k % 2:
            cw, cc = run(c["c"])
            bw, bc = run(c["b"])
        else:
            bw, bc = run(c["b"])
            if "c" in c:
                cw, cc = run(c["c"])
        r["aw"].append(aw); r["bw"].append(bw); r["bc"].append(bc)
        r["rw"].append(bw / aw)
        # CPU is charged in scheduler ticks on some kernels: a 0 ms
        # A cannot be a denominator.
        if ac > 0:
            r["rc"].append(bc / ac)
        if "c" in c:
            r["cw"].append(cw); r["cc"].append(cc); r["rcw"].append(cw / aw); r["rcb"].append(cw / bw)
            if ac > 0:
                r["rcc"].append(cc / ac)
load1 = open("/proc/loadavg").read().split()[0]
def rng(v):
    return "%.3f %.3f %.3f" % (statistics.median(v), min(v), max(v)) if v else "nan nan nan"
for c, r in zip(comps, res):
    print(c["name"], "%.3f %.3f %.3f" % (statistics.median(r["aw"]), statistics.median(r["bw"]), statistics.median(r["bc"])),
          rng(r["rw"]), rng(r["rc"]), load0, load1)
    if "c" in c:
        print(c["name"] + ":c", "%.3f %.3f %.3f" % (statistics.median(r["aw"]), statistics.median(r["cw"]), statistics.median(r["cc"])),
              rng(r["rcw"]), rng(r["rcc"]), load0, load1)
        print(c["name"] + ":cb", "%.3f %.3f %.3f" % (statistics.median(r["bw"]), statistics.median(r["cw"]), statistics.median(r["cc"])),
              rng(r["rcb"]), "nan nan nan", load0, load1)
PY
}

echo "bench/generator.sh: $runs pairs per comparison, same three temp dirs (tmpfs); the previous release is ${base_commit} ($(git log -1 --format=%cs "$base_commit"))"
# Sanity: the fixture really generates drop-ins, with both builds.
for g in "$gen" "$base_gen"; do
  rm -rf "${n:?}"/*
  RKE2_PROXY_BACKEND_ROOT=$fix "$g" "$n" "$e" "$l" 2>/dev/null
  [ -f "$n/rke2-server.service.d/50-rke2-proxy-backend.conf" ] || { echo "$g: the fixture produced no drop-in" >&2; exit 1; }
done

# The floor (bench/genfloor): a Go program doing only the file operations
# strace saw the generator do, timed in the same rounds as the generator
# against the same getty; here for this host, and under the RKE2 root at /
# further down. (The fixture rows read through --root, whose openat2 calls
# name paths relative to the root: no floor for them.)
floor="" host_ops=$work/host.ops
if command -v strace >/dev/null; then
  floor=$work/genfloor
  CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$floor" ./bench/genfloor
  RKE2_PROXY_BACKEND_ROOT=/ strace -f -qq -e trace=execve,openat,newfstatat,readlinkat,renameat,renameat2 \
    -o "$work/host.strace" "$gen" "$n" "$e" "$l" 2>/dev/null
  python3 bench/genfloor/ops.py "$work/host.strace" "$gen" "$n" >"$host_ops"
fi
comps=$(python3 -c 'import json, sys
getty, gen, base, fix, bare, n, e, l, floor, ops = sys.argv[1:]
def cmd(g, root): return {"argv": [g, n, e, l], "env": {"RKE2_PROXY_BACKEND_ROOT": root}}
G = {"argv": [getty, n, e, l]}
out = []
for name, root in (("fixture", fix), ("bare", bare), ("host", "/")):
    out.append({"name": name + ":getty", "a": G, "b": cmd(gen, root)})
    if name == "host" and floor:
        out[-1]["c"] = {"argv": [floor] + open(ops).read().split()}
    out.append({"name": name + ":base", "a": cmd(base, root), "b": cmd(gen, root)})
    out.append({"name": name + ":base-getty", "a": G, "b": cmd(base, root)})
print(json.dumps(out))' "$getty" "$gen" "$base_gen" "$fix" "$bare" "$n" "$e" "$l" "$floor" "$host_ops")
pairs "$runs" "$warmup" "$comps" >"$work/t.txt"
read -r _ _ _ _ _ _ _ _ _ _ load0 load1 < <(head -n 1 "$work/t.txt")
printf '  load average (1 min) %s at the start, %s at the end (%s cores)\n' "$load0" "$load1" "$(nproc)"
printf '  %-34s %-22s %7s %7s %7s  %-30s %s\n' "generator (B)" "against (A)" "A ms" "B ms" "B cpu" "B/A wall (min-max), cpu" "target"
for name in fixture bare host; do
  case $name in
  fixture) label="RKE2 root (fixture, --root)" target="<= 0.5x" ;;
  bare) label="neither installed (fixture)" target="<= 0.4x" ;;
  host) label="this host (/)" target="<= 0.4x without RKE2 or k3s" ;;
  esac
  for against in getty base base-getty; do
    read -r _ aw bw bc rw rwmin rwmax rc _ _ _ _ < <(grep "^$name:$against " "$work/t.txt")
    case $against in
    getty) who="getty" t=$target ;;
    base) who="${base_commit:0:7}'s generator" t="<= 1.0x" ;;
    base-getty) who="getty (B: ${base_commit:0:7}'s)" t="" ;;
    esac
    printf '  %-34s %-22s %7s %7s %7s  %-30s %s\n' "$label" "$who" "$aw" "$bw" "$bc" "${rw}x ($rwmin-$rwmax), ${rc}x" "$t"
    if [ "$name:$against" = host:getty ] && [ -n "$floor" ]; then
      read -r _ aw bw bc rw rwmin rwmax rc _ _ _ _ < <(grep "^host:getty:c " "$work/t.txt")
      printf '  %-34s %-22s %7s %7s %7s  %-30s %s\n' "  floor: its file operations alone" "getty" "$aw" "$bw" "$bc" "${rw}x ($rwmin-$rwmax), ${rc}x" "($(wc -l <"$host_ops"), bench/genfloor)"
      read -r _ aw bw _ rw rwmin rwmax _ < <(grep "^host:getty:cb " "$work/t.txt")
      printf '  %-34s %-22s %7s %7s %7s  %-30s\n' "  floor against the generator" "(same rounds)" "$aw" "$bw" "" "${rw}x ($rwmin-$rwmax)"
    fi
  done
done

# The RKE2 root as a boot sees it: "/" on this kernel's own /proc, /sys and
# /dev. The fixture above is read through --root, from fixture files; a
# node's generator reads the kernel's (its config from /proc/config.gz
# where the kernel has one, the real PCI and DMI trees). kernel_root ROOT
# (in a private mount namespace) mounts them into the fixture; the timer
# below and the instruction count further down run the generator there.
kernel_root() {
  local r=$1
  mount --make-rprivate /
  rm -rf "$r/proc" "$r/sys"
  mkdir -p "$r/proc" "$r/sys" "$r/dev" "$r/tmp" "$r/run/g"
  mount -t proc proc "$r/proc"
  mount --rbind /sys "$r/sys"
  mount --rbind /dev "$r/dev"
  mount -t tmpfs tmpfs "$r/run/g" # systemd's generator dirs are tmpfs
  mkdir -p "$r/run/g/n" "$r/run/g/e" "$r/run/g/l"
}
chr=""
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
  chr=$work/chroot
  fixture "$chr" "$(uname -r)"
  mkdir -p "$chr/vg/base" "$chr/vg/new"
  cp "$base_gen" "$chr/vg/base/rke2-proxy-backend-generator"
  cp "$gen" "$chr/vg/new/rke2-proxy-backend-generator"
  # Paired as above, one timer for both: it enters the chroot to spawn the
  # generator and leaves it (a descriptor kept on the real "/") to spawn
  # getty, so each starts from its own "/" and the chroot calls stay out of
  # the timed window. The floor row (bench/genfloor) is a Go program doing
  # only this generator's file operations on this root, listed by strace:
  # the goal is within Go's reach here only if it sits above this row.
  chr_ops=""
  if [ -n "$floor" ]; then
    cp "$floor" "$chr/vg/floor"
    chr_ops=$chr/tmp/floor.ops
  fi
  unshare -m bash -c "$(declare -f kernel_root)"'
    set -e
    kernel_root "$1"
    if [ -n "$8" ]; then
      strace -f -qq -e trace=execve,openat,newfstatat,readlinkat,renameat,renameat2 -o "$1/tmp/gen.strace" \
        chroot "$1" /vg/new/rke2-proxy-backend-generator /run/g/n /run/g/e /run/g/l
      python3 bench/genfloor/ops.py "$1/tmp/gen.strace" /vg/new/rke2-proxy-backend-generator /run/g/n >"$8"
    fi
    python3 - "$@" <<"PY"
import os, resource, statistics, sys, time  # resource: os.wait4 imports it, and the chroot has no Python
r, getty, n, e, l, runs, warmup, floor = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6]), int(sys.argv[7]), sys.argv[8]
null = os.open(os.devnull, os.O_WRONLY)
real = os.open("/", os.O_RDONLY)
def spawn(argv):
    t = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
                         file_actions=[(os.POSIX_SPAWN_DUP2, null, 1), (os.POSIX_SPAWN_DUP2, null, 2)])
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t
    if status != 0:
        sys.exit("%s exited with status %d" % (argv[0], status))
    return wall * 1000, (ru.ru_utime + ru.ru_stime) * 1000
def in_chroot(argv):
    os.chroot(r)
    os.chdir("/")
    try:
        return spawn(argv)
    finally:
        os.fchdir(real)
        os.chroot(".")
        os.chdir("/")
def getty_():
    return spawn([getty, n, e, l])
gen_argv = ["/vg/new/rke2-proxy-backend-generator", "/run/g/n", "/run/g/e", "/run/g/l"]
in_chroot(gen_argv)
if not os.path.exists(r + "/run/g/n/rke2-server.service.d/50-rke2-proxy-backend.conf"):
    sys.exit("bench/generator.sh: the generator wrote no drop-in in the chroot")
rows = [("RKE2 root at / (chroot, this kernel)", gen_argv, "<= 0.5x")]
if floor:
    ops = open(floor).read().split()
    rows.append(("  floor: its file operations alone", ["/vg/floor"] + ops, "(%d, bench/genfloor)" % len(ops)))
def rng(v):
    return "%.3f (%.3f-%.3f)" % (statistics.median(v), min(v), max(v)) if v else "nan"
# One getty run per round, then the program of every row, in turn first:
# the time getty takes moves with the program it alternates with (seen: 4.2
# against 5.6 ms), so rows timed in separate loops would not share a yardstick.
for _ in range(warmup):
    getty_()
    for _, argv, _ in rows:
        in_chroot(argv)
load0 = open("/proc/loadavg").read().split()[0]
aw, bw, bc, rw, rc = [], [[] for _ in rows], [[] for _ in rows], [[] for _ in rows], [[] for _ in rows]
for k in range(runs):
    a = getty_()
    aw.append(a[0])
    order = list(enumerate(rows))
    for i, (_, argv, _) in (order if k % 2 == 0 else order[::-1]):
        b = in_chroot(argv)
        bw[i].append(b[0]); bc[i].append(b[1]); rw[i].append(b[0] / a[0])
        if a[1] > 0:
            rc[i].append(b[1] / a[1])
load1 = open("/proc/loadavg").read().split()[0]
for i, (label, _, target) in enumerate(rows):
    print("  %-34s %-22s %7.3f %7.3f %7.3f  %-30s %s" % (label, "getty", statistics.median(aw), statistics.median(bw[i]),
          statistics.median(bc[i]), rng(rw[i]).replace(" (", "x (") + ", " + (("%.3fx" % statistics.median(rc[i])) if rc[i] else "nan"), "%s (load %s -> %s)" % (target, load0, load1)))
if len(rows) > 1:
    fr = [f / g for f, g in zip(bw[1], bw[0])]
    print("  %-34s %-22s %7.3f %7.3f %7s  %-30s" % ("  floor against the generator", "(same rounds)", statistics.median(bw[0]), statistics.median(bw[1]), "", rng(fr).replace(" (", "x (")))
PY' x "$chr" "$getty" "$n" "$e" "$l" "$runs" "$warmup" "$chr_ops"
else
  echo "  RKE2 root at / (chroot, this kernel): skipped: needs root and unshare (a private mount namespace)"
fi

# Instruction counts: repeatable whatever the load, for the before/after
# and the profile (callgrind_annotate on the files left in .cache/callgrind).
# Go's asynchronous preemption signals trip callgrind, hence the GODEBUG,
# the same for both builds. valgrind before 3.20 has no openat2, so the
# RKE2 root is counted at "/" as the boot sees it: the fixture in a chroot
# in a private mount namespace, with the real /proc, /sys and /dev (callgrind
# needs /proc/self), so the kernel's own files are this machine's.
callgrind=${CALLGRIND:-auto}
if [ "$callgrind" != 0 ] && command -v valgrind >/dev/null; then
  cg=.cache/callgrind && mkdir -p "$cg"
  count() { grep -E '^==[0-9]+== (I|Collected)' "$1" | awk '{print $NF}' | tail -n 1 | tr -d ,; }
  declare -A ir
  for side in base new; do
    g=$gen && [ $side = base ] && g=$base_gen
    GODEBUG=asyncpreemptoff=1 RKE2_PROXY_BACKEND_ROOT=/ valgrind --tool=callgrind --log-file="$work/vg.log" \
      --callgrind-out-file="$cg/host.$side" "$g" "$n" "$e" "$l" >/dev/null 2>&1 || true
    ir[host.$side]=$(count "$work/vg.log")
  done
  if [ -n "$chr" ] && [ -x /usr/bin/valgrind.bin ]; then
    vglib=$(dirname "$(readlink -f "$(ldd /usr/bin/valgrind.bin | awk '/ld-linux/ {print $1}')")")
    unshare -m bash -c "$(declare -f kernel_root)"'
      set -e
      r=$1 vglib=$2
      kernel_root "$r"
      mkdir -p "$r/usr/libexec/valgrind" "$r/vg/lib" "$r/vg/bin"
      mount --bind /usr/libexec/valgrind "$r/usr/libexec/valgrind"
      mount --bind "$vglib" "$r/vg/lib"
      cp /usr/bin/valgrind.bin "$r/vg/bin/valgrind"
      for side in base new; do
        rm -rf "$r"/run/g/n/*
        GODEBUG=asyncpreemptoff=1 VALGRIND_LIB=/usr/libexec/valgrind chroot "$r" /vg/lib/ld-linux-x86-64.so.2 --library-path /vg/lib \
          /vg/bin/valgrind --tool=callgrind --log-file=/tmp/vg.$side.log --callgrind-out-file=/tmp/cg.$side \
          /vg/$side/rke2-proxy-backend-generator /run/g/n /run/g/e /run/g/l >/dev/null 2>&1 || true
        [ -f "$r/run/g/n/rke2-server.service.d/50-rke2-proxy-backend.conf" ] || echo "bench/generator.sh: the $side generator wrote no drop-in in the chroot" >&2
      done' x "$chr" "$vglib"
    for side in base new; do
      cp "$chr/tmp/cg.$side" "$cg/rke2.$side" 2>/dev/null || true
      ir[rke2.$side]=$(count "$chr/tmp/vg.$side.log")
    done
  fi
  echo "  instructions (callgrind; no load changes them), ${base_commit:0:7} -> this tree:"
  for k in rke2 host; do
    b=${ir[$k.base]:-} a=${ir[$k.new]:-}
    [ -n "$b" ] && [ -n "$a" ] || continue
    label="RKE2 root at / (chroot, this kernel)" && [ $k = host ] && label="this host (/)"
    printf '  %-44s %12s -> %12s  %sx   (%s/%s.{base,new})\n' "$label" "$b" "$a" "$(python3 -c "print('%.3f' % ($a / $b))")" "$cg" "$k"
  done
fi

# apply as ExecStartPre, every module already loaded (no modprobe runs);
# the first run writes, the timed ones find everything up to date.
for m in x_tables ip_tables iptable_filter iptable_nat iptable_mangle ip6_tables ip6table_filter ip6table_nat \
  ip6table_mangle ipt_REJECT ip6t_REJECT nft_chain_nat nft_counter xt_comment xt_mark xt_addrtype xt_statistic \
  xt_recent xt_nat xt_MASQUERADE xt_tcpudp; do
  echo "$m 16384 0 - Live 0x0000000000000000" >>"$fix/proc/modules"
done
"$bin" --root "$fix" apply --backend=iptables-nft 2>/dev/null
acmd=$(python3 -c 'import json, sys; c = {"argv": [sys.argv[1], "--root", sys.argv[2], "apply", "--backend=iptables-nft"]}; print(json.dumps([{"name": "apply", "a": c, "b": c}]))' "$bin" "$fix")
read -r _ _ a_ms a_cpu _ < <(pairs "$runs" "$warmup" "$acmd")
printf '  %-44s %7s ms wall %7s ms cpu  (target <= 20 ms)\n' "apply --backend=iptables-nft, no modprobe" "$a_ms" "$a_cpu"
