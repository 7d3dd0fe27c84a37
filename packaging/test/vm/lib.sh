# Sourced by packaging/test/vm.sh after lib/common.sh: booting a node image
# under QEMU and reading back what the guest recorded. The guest has no
# network: its probe unit (guest-probe.sh) writes its findings to its own
# root disk and powers off; the host reads them with debugfs, without
# mounting anything.

# vm_step WHAT LOG CMD... runs a long CMD with its output in LOG, saying
# every 30 s that it is still at WHAT, and fails the test with LOG's tail
# when CMD fails.
vm_step() {
	local what=$1 logf=$2 pid start=$SECONDS rc=0 next=$((SECONDS + 30))
	shift 2
	mkdir -p "$(dirname "$logf")"
	"$@" >"$logf" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		sleep 1
		if [ $SECONDS -ge $next ]; then
			log "... still at $what ($((SECONDS - start))s)"
			next=$((SECONDS + 30))
		fi
	done
	wait "$pid" || rc=$?
	if [ "$rc" != 0 ]; then
		tail -n 40 "$logf" >&2
		fail "$what failed (exit $rc; log: $logf)"
	fi
}

# vm_accel prints QEMU's accelerator for this machine: kvm when a bounded
# probe shows /dev/kvm really runs a guest (a kernel booted to its panic
# with no root disk, within 20 s), else tcg. KVM is never required (where
# it is present but broken, as on some nested hosts, QEMU hangs or aborts).
# VM_ACCEL=kvm|tcg skips the probe.
vm_accel() {
	if [ -n "${VM_ACCEL:-}" ]; then
		echo "$VM_ACCEL"
		return
	fi
	[ "$(uname -m)" = x86_64 ] && [ -r /dev/kvm ] && [ -w /dev/kvm ] || {
		echo tcg
		return
	}
	local out
	out=$(mktemp)
	timeout -k 2 20 qemu-system-x86_64 -accel kvm -cpu host -m 256 -smp 1 -display none -nic none -no-reboot \
		-serial "file:$out" -kernel "$1" -append "console=ttyS0 panic=-1" >/dev/null 2>&1 || true
	if grep -q 'Kernel panic' "$out"; then echo kvm; else echo tcg; fi
	rm -f "$out"
}

# vm_disk ROOT DISK makes DISK, a sparse 3 GiB ext4 image holding ROOT.
vm_disk() {
	rm -f "$2"
	truncate -s 3G "$2"
	mkfs.ext4 -q -F -L vm-root -d "$1" "$2" || fail "mkfs.ext4 -d $1 failed"
}

# vm_qemu ARCH IMG DISK LOG [QEMU-ARGS...] prints nothing and runs QEMU for
# ARCH with IMG's kernel and initramfs, DISK as /dev/vda, the serial console
# into LOG, no network, two cores, 1 GiB; more disks or -smbios in
# QEMU-ARGS. It returns when the guest powers off.
vm_qemu() {
	local arch=$1 img=$2 disk=$3 logf=$4
	shift 4
	local common=(-m 1024 -smp 2 -display none -nic none -no-reboot -serial "file:$logf"
		-kernel "$img/vmlinuz" -initrd "$img/initrd.img"
		-drive "file=$disk,if=virtio,format=raw")
	case $arch in
	amd64)
		local accel
		accel=${VM_ACCEL_CHOSEN:-tcg}
		qemu-system-x86_64 -accel "$accel" "${common[@]}" \
			-append "root=/dev/vda rw console=ttyS0 panic=-1" "$@"
		;;
	arm64)
		# pauth-impdef: the same CPU features at a fraction of TCG's cost
		# for pointer authentication (16 s to power-off instead of 41 s).
		qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on -accel tcg "${common[@]}" \
			-append "root=/dev/vda rw console=ttyAMA0 panic=-1" "$@"
		;;
	esac
}

# vm_boot NAME ARCH IMG DISK LIMIT [QEMU-ARGS...] boots DISK once, bounded
# by LIMIT seconds, and reads the guest's records (/var/lib/vm-test) into
# $work/NAME/. BOOT_TOOK is the boot's seconds; a guest that recorded no
# result for this boot is a failure (vm_failed, with its console's tail)
# and vm_boot returns 1.
vm_boot() {
	local name=$1 arch=$2 img=$3 disk=$4 limit=$5 start=$SECONDS out=$work/$1
	shift 5
	rm -rf "$out"
	mkdir -p "$out"
	debugfs -w -R "rm /var/lib/vm-test/result" "$disk" >/dev/null 2>&1 || true
	debugfs -w -R "rm /var/lib/vm-test/diag" "$disk" >/dev/null 2>&1 || true
	log "boot $name ($arch, kernel $(cat "$img/release"), $(vm_accel_name "$arch")): up to ${limit}s"
	timeout -k 10 "$limit" bash -c "$(declare -f vm_qemu); VM_ACCEL_CHOSEN=${VM_ACCEL_CHOSEN:-tcg} vm_qemu \"\$@\"" vm_qemu \
		"$arch" "$img" "$disk" "$out/console.log" "$@" >"$out/qemu.log" 2>&1 || true
	BOOT_TOOK=$((SECONDS - start))
	debugfs -R "rdump /var/lib/vm-test $out" "$disk" >/dev/null 2>&1 || true
	if [ ! -f "$out/vm-test/result" ]; then
		cat "$out/qemu.log" >&2
		tail -n 60 "$out/console.log" >&2
		vm_failed "boot $name: the guest recorded no result in ${BOOT_TOOK}s (timed out at ${limit}s, or its probe never ran; console above)"
		BOOT_LINES+=("  boot $name ($arch, $(cat "$img/release")): no result in ${BOOT_TOOK}s: FAILED")
		return 1
	fi
}

vm_accel_name() {
	case $1 in
	amd64) echo "${VM_ACCEL_CHOSEN:-tcg}" ;;
	*) echo tcg ;;
	esac
}
