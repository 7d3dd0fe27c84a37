#!/usr/bin/env bash
# The systemd system extension booted: a bookworm image whose /usr is
# read-only and holds no rke2-proxy-backend, with
# rke2-proxy-backend-VERSION-ARCH.raw (packaging/sysext/build.sh, as `make
# sysext` builds it) in /var/lib/extensions and /etc as Ignition leaves it
# before the first boot: our config and the reload unit, both taken from
# packaging/cloud-init/sysext/node.yaml (the unit must be the one in
# packaging/sysext/ and in packaging/sysext/butane.yaml). The image was
# certified (certify --root) for Debian's 6.1 cloud kernel; nspawn runs
# this machine's kernel, so the first boot differs from the certificate.
#
# Proven inside the guest, from systemd's own timestamps: systemd-sysext
# merged the extension (pulled in by the reload unit, the only unit the
# image enables), then the reload unit ran daemon-reload, which ran the
# generator from the merged /usr; RKE2 (the stand-in, RKE2's real unit)
# started after that with the generator's drop-in, apply wrote RKE2's
# drop-in, kube-proxy (the oracle) ran on the planned backend and verify
# passed; the first boot's generator said once that the machine differs
# from the certificate. A second boot (no longer the first) repeats the
# order and says nothing of the certificate.
#
# nspawn is enough here: systemd-sysext merges a .raw in the container
# once it is given /dev/loop-control and the loop device nodes (it attaches
# the image itself, with autoclear), and /usr is made read-only with
# --bind-ro (systemd 252 merges over it as on a real image).
# Needs: root, systemd-nspawn, debootstrap, squashfs-tools, cloud-init,
# python3, make, go; loop devices.
source "$(dirname "$0")/lib/common.sh"
need_tools mksquashfs cloud-init python3
boot_test_setup sysext
new_overlay "$work/guest"
R=$work/guest/merged
example=$REPO/packaging/cloud-init/sysext/node.yaml
unit_src=$REPO/packaging/sysext/rke2-proxy-backend-sysext-reload.service
[ -e /dev/loop-control ] || skip "no /dev/loop-control: systemd-sysext needs loop devices for a .raw"

# The examples: cloud-init's schema, and one reload unit everywhere.
cloud-init schema --config-file "$example" >"$work/schema.out" 2>&1 || {
	cat "$work/schema.out" >&2
	fail "cloud-init schema rejects $example"
}
extract() {
	python3 - "$@" <<'PY'
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
if sys.argv[2] == "butane-unit":
    for u in doc["systemd"]["units"]:
        if u["name"] == "rke2-proxy-backend-sysext-reload.service":
            sys.stdout.write(u["contents"]); sys.exit(0)
for f in doc.get("write_files", []):
    if f.get("path") == sys.argv[2]:
        sys.stdout.write(f.get("content", "")); sys.exit(0)
sys.exit("no " + sys.argv[2] + " in " + sys.argv[1])
PY
}
extract "$example" /etc/systemd/system/rke2-proxy-backend-sysext-reload.service >"$work/unit.cloud-init" || fail "no reload unit in $example"
extract "$REPO/packaging/sysext/butane.yaml" butane-unit >"$work/unit.butane" || fail "no reload unit in butane.yaml"
cmp -s "$work/unit.cloud-init" "$unit_src" || fail "the reload unit in $example differs from $unit_src"
cmp -s "$work/unit.butane" "$unit_src" || fail "the reload unit in packaging/sysext/butane.yaml differs from $unit_src"
mkdir -p "$work/units" && cp "$unit_src" "$work/units/"
SYSTEMD_UNIT_PATH="$work/units:" systemd-analyze verify --man=no "$work/units/rke2-proxy-backend-sysext-reload.service" >"$work/verify.out" 2>&1 || true
[ -s "$work/verify.out" ] && { cat "$work/verify.out" >&2; fail "systemd-analyze verify complains about the reload unit"; }

# The extension, for this machine's architecture.
case $arch in amd64) sdarch=x86-64 ;; arm64) sdarch=arm64 ;; esac
raw=$work/rke2-proxy-backend-$VERSION-$sdarch.raw
SOURCE_DATE_EPOCH=$(git -C "$REPO" log -1 --format=%ct) "$REPO/packaging/sysext/build.sh" "$arch" "$VERSION" "$DIST/build" "$raw" ||
	fail "packaging/sysext/build.sh failed"
unsquashfs -l "$raw" >"$work/raw.list" 2>&1 || fail "unsquashfs cannot list $raw"
grep -v -e '^squashfs-root$' -e '^squashfs-root/usr' -e '^Parallel unsquashfs' -e '^[0-9]* inodes' -e '^$' "$work/raw.list" && fail "the extension holds something outside usr/"
for f in usr/bin/rke2-proxy-backend usr/libexec/rke2-proxy-backend-generator usr/lib/systemd/system-generators/rke2-proxy-backend-generator \
	usr/lib/systemd/system/rke2-proxy-backend-verify.service usr/lib/extension-release.d/extension-release.rke2-proxy-backend; do
	grep -qx "squashfs-root/$f" "$work/raw.list" || fail "the extension lacks /$f"
done

# The image: no rke2-proxy-backend in its /usr; the extension in /var.
[ ! -e "$R/usr/bin/rke2-proxy-backend" ] || fail "the base image already has rke2-proxy-backend"
# Installed under the extension's name: systemd-sysext names an image
# by its file name and wants usr/lib/extension-release.d/extension-release.NAME
# inside (the versioned download is linked or copied to this name, as
# packaging/sysext/butane.yaml does).
install -D -m 0644 "$raw" "$R/var/lib/extensions/rke2-proxy-backend.raw"
install -D -m 0644 "$unit_src" "$R/etc/systemd/system/rke2-proxy-backend-sysext-reload.service"
mkdir -p "$R/etc/systemd/system/sysinit.target.wants" "$R/etc/systemd/system/multi-user.target.wants"
ln -sf ../rke2-proxy-backend-sysext-reload.service "$R/etc/systemd/system/sysinit.target.wants/rke2-proxy-backend-sysext-reload.service"
mkdir -p "$R/etc/rke2-proxy-backend"
extract "$example" /etc/rke2-proxy-backend/config.yaml >"$R/etc/rke2-proxy-backend/config.yaml" || fail "no config in $example"
sed -i 's/^  wait: .*/  wait: 60s/' "$R/etc/rke2-proxy-backend/config.yaml"
# A first boot applies systemd's presets, which on Debian enable
# systemd-networkd-wait-online: with no network in the guest it would hold
# network-online.target (and RKE2) for two minutes. No prompt either.
ln -sf /dev/null "$R/etc/systemd/system/systemd-firstboot.service"
ln -sf /dev/null "$R/etc/systemd/system/systemd-networkd-wait-online.service"
printf 'uninitialized\n' >"$R/etc/machine-id"

# RKE2 as its tarball installs it (its real unit), the stand-in and kube-proxy's oracle.
build_standin "$R/usr/local/bin/rke2"
install_kube_proxy_oracle "$R/usr/local/bin/rke2" "$R"
install -D -m 0644 "$REPO/internal/testkit/testhost/units/rke2-server.service" "$R/usr/local/lib/systemd/system/rke2-server.service"
ln -sf /usr/local/lib/systemd/system/rke2-server.service "$R/etc/systemd/system/multi-user.target.wants/rke2-server.service"
mkdir -p "$R/etc/rancher/rke2"
printf 'token: sysext-test-secret\n' >"$R/etc/rancher/rke2/config.yaml"

# The image pipeline certifies it, for Debian's cloud kernel.
kdata=$REPO/internal/testkit/testhost/kernels/6.1.0-57-cloud-amd64
install -D -m 0644 "$kdata/config" "$R/boot/config-6.1.0-57-cloud-amd64"
echo "not a kernel: the certified image's kernel stands here by its config and module tree" >"$R/boot/vmlinuz-6.1.0-57-cloud-amd64"
install -D -m 0644 -t "$R/lib/modules/6.1.0-57-cloud-amd64" "$kdata/modules.dep" "$kdata/modules.builtin"
run_logged "$work/certify.log" "certify --root of the image failed" "$DIST/build/$arch/rke2-proxy-backend" --root "$R" certify
[ -f "$R/usr/lib/rke2-proxy-backend/certified.json" ] || fail "certify left no record in the image"

# The guest's assertions.
cat >"$R/usr/local/sbin/sysext-test" <<'GUEST'
#!/bin/bash
set -u
n=$(cat /etc/boot-test/boot)
out=/var/lib/boot-test
. /usr/local/lib/boot-test/guest-prelude.sh
guest_result "$out/result-$n"
verify=rke2-proxy-backend-verify.service
reload=rke2-proxy-backend-sysext-reload.service
mono() { prop "$1" "$2"; }
wait_for 120 sh -c "[ \"\$(systemctl show -P ActiveState rke2-server.service)\" = active ] && [ -n \"\$(systemctl show -P ExecMainExitTimestampMonotonic $verify | grep -v '^0$')\" ]"
check "systemd-sysext merged rke2-proxy-backend into /usr" sh -c "systemd-sysext status | grep -q '^/usr .*rke2-proxy-backend'"
check "/usr is read-only" sh -c "! touch /usr/.rw-probe 2>/dev/null"
check "/usr/bin/rke2-proxy-backend comes from the extension" test -x /usr/bin/rke2-proxy-backend
sx=$(mono systemd-sysext.service ActiveEnterTimestampMonotonic)
rl_start=$(mono $reload ExecMainStartTimestampMonotonic)
rl_done=$(mono $reload ActiveEnterTimestampMonotonic)
rk=$(mono rke2-server.service InactiveExitTimestampMonotonic)
info "monotonic us: sysext merged $sx, reload started $rl_start, reload done $rl_done, rke2-server activating $rk"
check "the reload unit ran and succeeded" test "$(mono $reload ActiveState)" = active -a "$(mono $reload Result)" = success
check "order: systemd-sysext merged before the reload" test "${sx:-0}" -gt 0 -a "${rl_start:-0}" -ge "${sx:-0}"
check "order: the reload finished before rke2-server began to start" test "${rl_done:-0}" -gt 0 -a "${rk:-0}" -gt "${rl_done:-0}"
check "the generator (from the extension) wired apply into rke2-server" sh -c "systemctl cat rke2-server.service | grep -q '^ExecStartPre=/usr/bin/rke2-proxy-backend apply'"
check "apply wrote RKE2's drop-in" test -s /etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml
planned=$(sed -n 's/^ *"backend": "\([a-z-]*\)",*$/\1/p' /run/rke2-proxy-backend/plan.json | head -n 1)
got=$(cat /var/lib/rke2-standin/backend 2>/dev/null)
if [ -n "$planned" ] && [ "$got" = "$planned" ]; then ok "RKE2 (stand-in) started kube-proxy on the planned $planned"; else bad "kube-proxy on '$got', plan says '$planned'"; fi
check_settled $verify
notices=$(journalctl -b --no-pager -t rke2-proxy-backend-generator | grep -c 'This machine differs from what its image was certified for')
want=$(cat /etc/boot-test/notices)
if [ "$notices" = "$want" ]; then ok "the generator said the machine differs from its certificate $notices time(s)"; else bad "the certificate notice appeared $notices times, want $want"; fi
{
	systemd-sysext status
	systemctl --failed --no-pager
	systemd-analyze critical-chain rke2-server.service --no-pager
	systemctl status --no-pager $reload systemd-sysext.service rke2-server.service $verify
	systemctl cat --no-pager rke2-server.service
	journalctl -b --no-pager -o short-monotonic | grep -i -e sysext -e rke2 -e generator -e reload | tail -n 80
} >"$out/diag-$n" 2>&1
guest_done
GUEST
chmod 0755 "$R/usr/local/sbin/sysext-test"
guest_test_unit "$R" sysext-test "system extension"
mkdir -p "$R/etc/boot-test"

# sysext_boot N NOTICES: one boot with /usr read-only and the loop devices.
sysext_boot() {
	local n=$1 result=$R/var/lib/boot-test/result-$1 start loops=()
	start=$SECONDS
	echo "$n" >"$R/etc/boot-test/boot"
	echo "$2" >"$R/etc/boot-test/notices"
	rm -f "$result"
	# systemd-sysext takes the lowest free loop device: make sure its node
	# exists, then hand the guest the nodes (the guest's systemd detaches
	# no loop device at its shutdown: it is in a container).
	# The previous boot's loop device is released (autoclear) shortly
	# after its guest ended.
	for _ in $(seq 60); do
		[ -z "$(losetup -j "$R/var/lib/extensions/rke2-proxy-backend.raw")" ] && break
		sleep 0.5
	done
	losetup -f >/dev/null || fail "no free loop device for systemd-sysext"
	for l in /dev/loop[0-9]*; do loops+=("--bind=$l"); done
	timeout -k 10 300 systemd-nspawn --boot --private-network --register=no --keep-unit --console=read-only \
		--bind-ro="$R/usr:/usr" --bind=/dev/loop-control "${loops[@]}" -D "$R" >"$work/console-$n.log" 2>&1 || true
	[ -f "$result" ] || {
		tail -n 80 "$work/console-$n.log" >&2
		fail "boot $n: the guest wrote no result in $((SECONDS - start))s"
	}
	guest_verdict "$result" "$R/var/lib/boot-test/diag-$n" "boot $n"
	pass "boot $n in $((SECONDS - start))s: sysext merged, reload, generator, RKE2 with the drop-in, verify"
}
sysext_boot 1 1
sysext_boot 2 0
pass "the system extension on a read-only /usr: merge, reload, generator, RKE2 in that order, twice; the certificate's notice at the first boot only"
