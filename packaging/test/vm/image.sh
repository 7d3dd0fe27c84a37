# Sourced by packaging/test/vm.sh (after lib/common.sh and vm/lib.sh): the
# node images the VM tier boots, one per architecture, cached in
# .cache/vm/<arch>-<key>/ where the key covers the architecture's recipe
# here, Debian's current cloud kernel and the architecture (vm_image_key),
# so a new kernel in the archive or an edit to the recipe builds a new
# image and an unchanged one is reused. Each image is
# a directory tree (root/, made into an ext4 disk per case by vm_disk) with
# the kernel and initramfs beside it for QEMU's -kernel/-initrd.
#
# amd64 starts from the cached bookworm root the nspawn boot tests use
# (ensure_bookworm_root); arm64, a foreign architecture here, from
# mmdebstrap with qemu-user. Both get Debian's cloud kernel
# (linux-image-cloud-<arch>, resolved by apt at build time), udev and
# initramfs-tools; amd64 also cloud-init (one image for every amd64
# case). The initramfs holds only what mounting the root needs
# (MODULES=list: virtio and ext4), and the build checks it holds no
# netfilter module: deleting a module from root/lib/modules then makes a
# kernel that really lacks it, without rebuilding the initramfs.

VM_PACKAGES="systemd,systemd-sysv,dbus,udev,kmod,iptables,nftables,initramfs-tools"

# vm_kernel_version prints the version of Debian's cloud kernel metapackage
# apt would install now from this machine's sources, which the images are
# built from too (vm_host_sources): the amd64 one, as both architectures
# are built from the same linux source; part of the image key.
vm_kernel_version() {
	local v
	v=$(apt-cache show --no-all-versions linux-image-cloud-amd64 2>/dev/null | sed -n 's/^Version: //p' | head -n 1)
	[ -n "$v" ] || fail "apt-cache knows no linux-image-cloud-amd64: run apt-get update (the VM images use Debian's cloud kernel)"
	echo "$v"
}

# vm_image ARCH sets IMG (the cached image directory: root/, vmlinuz,
# initrd.img, release) for ARCH, building it first when the cache has no
# image for the current inputs.
vm_image() {
	local arch=$1
	IMG=$CACHE/vm/$arch-$(vm_image_key "$arch")
	if [ -f "$IMG/.complete" ]; then
		log "image $arch: cached ($IMG, kernel $(cat "$IMG/release"))"
		return 0
	fi
	mkdir -p "$CACHE/vm"
	rm -rf "$IMG.tmp"
	mkdir -p "$IMG.tmp"
	local start=$SECONDS
	case $arch in
	amd64) vm_root_amd64 "$IMG.tmp/root" ;;
	arm64) vm_root_arm64 "$IMG.tmp/root" ;;
	*) fail "vm_image: no image recipe for $arch" ;;
	esac
	vm_finish_root "$IMG.tmp"
	touch "$IMG.tmp/.complete"
	# Older images of this architecture are superseded by this one.
	rm -rf "$CACHE/vm/$arch"-*[!p]
	mv "$IMG.tmp" "$IMG"
	log "image $arch: built in $((SECONDS - start))s ($IMG, kernel $(cat "$IMG/release"))"
}

# vm_image_key ARCH is ARCH's image key: the recipe of ARCH's image (the
# functions and the package list that build it, not this whole file, so
# editing one architecture's recipe does not rebuild the other's: arm64's
# costs 8 minutes), the architecture, and Debian's current cloud kernel.
vm_image_key() {
	local arch=$1 fns="vm_image vm_root_$1 vm_finish_root vm_initramfs_conf vm_host_sources"
	[ "$arch" = arm64 ] && fns="$fns vm_binfmt_arm64"
	# shellcheck disable=SC2086 # one function name per word
	{ declare -f $fns || fail "vm_image_key: no image recipe for $arch"; echo "$VM_PACKAGES $arch $(vm_kernel_version)"; } | sha256sum | cut -c1-12
}

# vm_initramfs_conf ROOT makes update-initramfs build a small initramfs:
# what mounts /dev/vda and nothing more. Neither file is a conffile, so
# both can be laid before the packages install (arm64, where every
# initramfs built under qemu-user costs minutes) or after (amd64).
vm_initramfs_conf() {
	local r=$1
	mkdir -p "$r/etc/initramfs-tools/conf.d" "$r/usr/share/initramfs-tools/modules.d"
	echo MODULES=list >"$r/etc/initramfs-tools/conf.d/vm-test.conf"
	printf 'virtio_pci\nvirtio_mmio\nvirtio_blk\next4\n' >"$r/usr/share/initramfs-tools/modules.d/vm-test"
}

# vm_host_sources prints this machine's apt source files (deb822 or
# one-line), which the images use: the same archive view, point releases
# and security updates included, as vm_kernel_version's.
vm_host_sources() {
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		[ -s "$f" ] && echo "$f"
	done
	return 0
}

# vm_root_amd64 DIR: a copy of the cached bookworm root with the cloud
# kernel installed by apt inside it (systemd-nspawn as the chroot, as
# cloudinit-boot.sh's root does), and Debian's cloud-init with the locales
# package, as cloud images have them: the cloud-init case boots this image
# too, and every other case disables cloud-init (vm_case_root).
vm_root_amd64() {
	local r=$1
	ensure_bookworm_root
	log "image amd64: copying the bookworm root and installing linux-image-cloud-amd64 (about a minute)"
	cp -a "$BOOKWORM_ROOT" "$r"
	rm -f "$r/.complete" "$r/etc/apt/sources.list"
	local f
	for f in $(vm_host_sources); do
		cp "$f" "$r/etc/apt/sources.list.d/host-$(basename "$f")"
	done
	vm_step "apt-get install of the cloud kernel into the amd64 image" "$CACHE/vm/amd64-build.log" \
		timeout 900 systemd-nspawn -q --register=no --keep-unit -D "$r" sh -c \
		"apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends linux-image-cloud-amd64 udev initramfs-tools cloud-init locales && apt-get clean"
	vm_initramfs_conf "$r"
	vm_step "update-initramfs in the amd64 image" "$CACHE/vm/amd64-initramfs.log" \
		systemd-nspawn -q --register=no --keep-unit -D "$r" update-initramfs -u -k all
}

# vm_root_arm64 DIR: an arm64 bookworm root from mmdebstrap, its
# maintainer scripts run by qemu-user through binfmt_misc.
vm_root_arm64() {
	local r=$1
	vm_binfmt_arm64
	[ -n "$(vm_host_sources)" ] || fail "no apt sources on this machine (/etc/apt/sources.list, /etc/apt/sources.list.d): the arm64 image is built from them"
	log "image arm64: mmdebstrap --architectures=arm64 from this machine's apt sources (a few minutes once: qemu-user runs its scripts)"
	vm_step "mmdebstrap of the arm64 image" "$CACHE/vm/arm64-build.log" \
		timeout 2400 mmdebstrap --architectures=arm64 --variant=minbase --skip=cleanup/tmp \
		--setup-hook="$(declare -f vm_initramfs_conf); vm_initramfs_conf \"\$1\"" \
		--include="$VM_PACKAGES,linux-image-cloud-arm64" bookworm "$r" $(vm_host_sources)
}

# vm_binfmt_arm64 lets this machine run arm64 programs in a chroot: the
# binfmt_misc filesystem mounted and qemu-user-static's handler enabled.
vm_binfmt_arm64() {
	need_tools qemu-aarch64-static update-binfmts
	[ -e /proc/sys/fs/binfmt_misc/register ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc ||
		fail "cannot mount binfmt_misc on /proc/sys/fs/binfmt_misc (needed to build the arm64 image with qemu-user)"
	[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 || true
	grep -qx enabled /proc/sys/fs/binfmt_misc/qemu-aarch64 2>/dev/null ||
		fail "binfmt_misc has no enabled qemu-aarch64 handler (apt-get install qemu-user-static binfmt-support; update-binfmts --enable qemu-aarch64)"
}

# vm_finish_root DIR: what every image needs whatever its architecture: the
# root on /dev/vda, no first-boot prompt on the serial console, a fixed
# machine id and host name, no login prompt, the kernel and initramfs
# beside the root, and the check that the initramfs loads no netfilter.
vm_finish_root() {
	local d=$1 r=$1/root rel
	echo '/dev/vda / ext4 defaults 0 1' >"$r/etc/fstab"
	echo vm-node >"$r/etc/hostname"
	echo 5ca1ab1e0b0e4b1d8c0ffee000000001 >"$r/etc/machine-id"
	ln -sf /dev/null "$r/etc/systemd/system/systemd-firstboot.service"
	ln -sf /dev/null "$r/etc/systemd/system/serial-getty@ttyS0.service"
	ln -sf /dev/null "$r/etc/systemd/system/serial-getty@ttyAMA0.service"
	ln -sf /dev/null "$r/etc/systemd/system/console-getty.service"
	ln -sf /dev/null "$r/etc/systemd/system/getty@tty1.service"
	mkdir -p "$r/var/log/journal"
	rel=$(ls "$r/lib/modules")
	[ "$(echo "$rel" | wc -l)" = 1 ] && [ -n "$rel" ] || fail "the image has not exactly one kernel in /lib/modules: $rel"
	[ -f "$r/boot/config-$rel" ] || fail "the image's kernel $rel has no /boot/config-$rel"
	cp "$r/boot/vmlinuz-$rel" "$d/vmlinuz"
	cp "$r/boot/initrd.img-$rel" "$d/initrd.img"
	echo "$rel" >"$d/release"
	local list nf
	list=$(chroot "$r" lsinitramfs "/boot/initrd.img-$rel") || fail "lsinitramfs of the image's initramfs failed"
	nf=$(grep -E '/netfilter/|nf_tables|ip_tables' <<<"$list" || true)
	[ -z "$nf" ] || fail "the image's initramfs carries netfilter modules, so deleting them from the root would not take them from the kernel: $nf"
	grep -q '/virtio_blk\.ko' <<<"$list" || grep -q '^CONFIG_VIRTIO_BLK=y' "$r/boot/config-$rel" ||
		fail "the image's initramfs has no virtio_blk: the kernel could not find its root disk"
}
