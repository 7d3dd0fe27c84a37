#!/usr/bin/env bash
# The real-kernel tier: the packages on Debian's own kernels, booted under
# QEMU, where modprobe really loads modules and a kernel can really lack
# nf_tables or the legacy tables (the nspawn boot tests share this host's
# kernel, which has both built in and no loadable modules).
#
#   images  per architecture, Debian 12 with its cloud kernel
#           (linux-image-cloud-<arch>), cached in .cache/vm by their inputs
#           (vm/image.sh); per case an overlay of it gets the .deb, RKE2's
#           real unit, the RKE2 stand-in (packaging/test/standin) and
#           kube-proxy's real proxier (the oracle) built for the guest's
#           architecture, the case's config and kernel changes, and becomes
#           an ext4 disk
#   boots   QEMU (TCG; KVM only where a bounded probe shows it works), no
#           network, every boot bounded; vm-probe.service (vm/guest-probe.sh)
#           asserts from inside at the end of boot, records onto the disk
#           and powers off; the host reads the records with debugfs
#   predict before each boot, `rke2-proxy-backend detect --root` on the
#           case's image root must name the backend that boot then picks
#
# Cases (VM_CASES="stock nas-absent ..." runs some; all by default):
#   stock         stock kernel, auto: iptables-nft, then a reboot of the
#                 same disk (nothing flips)
#   nas-absent    nf_tables module files absent, config still =m, Debian's
#                 userspace as shipped (iptables alternative on nft)
#   nas-notset    a kernel built without nf_tables (config "is not set")
#   nas-dmi       stock kernel, Synology's DMI strings, a dmi trigger
#   nolegacy-warn legacy module files absent, backend: iptables-legacy,
#                 on_failure: warn; then the same disk with on_failure: block
#   cloudinit     first boot from a NoCloud seed, the .deb from the signed
#                 repository on another disk
#   arm64         the arm64 .deb on Debian's arm64 kernel (QEMU virt) with a
#                 device-tree legacy trigger matching QEMU's virt board
#
# Needs: root, qemu-system-x86 and qemu-system-arm, e2fsprogs (mkfs.ext4
# -d, debugfs), mmdebstrap, arch-test, qemu-user-static and binfmt-support
# (the arm64 image), dosfstools and mtools (the cloud-init seed), plus what
# the nspawn boot tests need. Network only to build the images (Debian's
# archive) and the oracles (the Go module proxy).
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/repo.sh"
source "$(dirname "$0")/vm/lib.sh"
source "$(dirname "$0")/vm/image.sh"
source "$(dirname "$0")/vm/cases.sh"

need_root
need_tools qemu-system-x86_64 qemu-system-aarch64 mkfs.ext4 debugfs mmdebstrap arch-test mkfs.vfat mcopy \
	systemd-nspawn debootstrap dpkg make go timeout python3
tier_start=$SECONDS
ensure_packages
work=$(mktemp -d /tmp/rke2pb-vm.XXXXXX)
# VM_KEEP=1 keeps the guests' consoles and records (not the roots).
trap 'stop_test_repo_agents "$work"/*.gnupg; cleanup_overlays; [ -n "${VM_KEEP:-}" ] && log "kept $work" || rm -rf "$work"' EXIT

cases=${VM_CASES:-stock nas-absent nas-notset nas-dmi nolegacy-warn cloudinit arm64}
for c in $cases; do
	declare -F "case_${c//-/_}" >/dev/null || fail "VM_CASES: no case $c (cases: stock nas-absent nas-notset nas-dmi nolegacy-warn cloudinit arm64)"
done
for c in $cases; do
	"case_${c//-/_}"
done
log "boots:"
printf '%s\n' "${BOOT_LINES[@]}"
[ ${#FAILED[@]} = 0 ] || fail "the VM tier ($cases) in $((SECONDS - tier_start))s: ${#FAILED[@]} failure(s): $(printf '%s; ' "${FAILED[@]}")"
pass "the VM tier ($cases) in $((SECONDS - tier_start))s"
