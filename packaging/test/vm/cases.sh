# Sourced by packaging/test/vm.sh: how a case's guest is made (vm_arch,
# vm_case_root, vm_set, vm_expect, vm_drop_modules), predicted
# (vm_predict) and booted (vm_run), then the cases themselves.

BOOT_LINES=()

# vm_arch ARCH prepares ARCH once: its image (IMG_amd64 / IMG_arm64) and
# its payload, what every guest of ARCH gets besides the .deb: RKE2's real
# rke2-server.service (tarball layout, enabled), the RKE2 stand-in as
# /usr/local/bin/rke2 and kube-proxy's real proxier (the oracle) built for
# ARCH, the probe unit, and the snapshots of loaded modules taken just
# before and just after apply in RKE2's own start.
vm_arch() {
	local arch=$1 p=$work/payload-$1
	[ -d "$p" ] && return 0
	vm_image "$arch"
	printf -v "IMG_$arch" %s "$IMG"
	if [ "$arch" = amd64 ]; then
		VM_ACCEL_CHOSEN=$(vm_accel "$IMG/vmlinuz")
		log "accelerator for amd64 guests: $VM_ACCEL_CHOSEN"
	fi
	mkdir -p "$p/usr/local/bin" "$p/usr/local/lib/rke2-standin" "$p/usr/local/sbin" "$p/etc/systemd/system/multi-user.target.wants" \
		"$p/etc/systemd/system/rke2-server.service.d" "$p/usr/local/lib/systemd/system"
	log "building the RKE2 stand-in and the kube-proxy oracle for $arch (minutes when the oracle is not cached)"
	(cd "$REPO" && CGO_ENABLED=0 GOARCH=$arch go build -trimpath -o "$p/usr/local/bin/rke2" ./packaging/test/standin) ||
		fail "go build of packaging/test/standin for $arch failed"
	local minor oracle
	[ -x "$work/standin-host" ] || build_standin "$work/standin-host"
	minor=$("$work/standin-host" --version | sed -n 's/^rke2 version \(v[0-9]*\.[0-9]*\)\..*/\1/p')
	[ -n "$minor" ] || fail "cannot read the Kubernetes minor from the stand-in's --version"
	vm_step "the kube-proxy oracle $minor for $arch" "$work/oracle-$arch.log" \
		env ORACLE_GOARCH="$arch" go test -C "$REPO" -count=1 -timeout 0 -v -run "^TestBinaries\$/^$minor\$" ./internal/testkit/oracle
	oracle=$(sed -n "s/.*binary $minor \([^ ]*\) .*/\1/p" "$work/oracle-$arch.log")
	[ -x "$oracle" ] || fail "no kube-proxy oracle $minor for $arch (log: $work/oracle-$arch.log)"
	install -m 0755 "$oracle" "$p/usr/local/lib/rke2-standin/kubeproxy-oracle"
	cp "$REPO/internal/testkit/testhost/units/rke2-server.service" "$p/usr/local/lib/systemd/system/rke2-server.service"
	install -m 0755 "$REPO/packaging/test/vm/guest-probe.sh" "$p/usr/local/sbin/vm-probe"
	install -D -m 0644 "$REPO/packaging/test/lib/guest-prelude.sh" "$p/usr/local/lib/boot-test/guest-prelude.sh"
	cat >"$p/usr/local/sbin/vm-modules-snapshot" <<'SH'
#!/bin/sh
# vm-modules-snapshot NAME: the loaded modules into /run/vm-test/NAME, once
# per boot (RKE2's restarts must not move the first snapshot). The first
# (modules-before) also points kernel.modprobe at vm-modprobe-log, so every
# module the kernel asks for from RKE2's start on is logged.
mkdir -p /run/vm-test
[ -e "/run/vm-test/$1" ] || awk '{print $1}' /proc/modules | sort >"/run/vm-test/$1"
[ "$1" != modules-before ] || echo /usr/local/sbin/vm-modprobe-log >/proc/sys/kernel/modprobe
SH
	cat >"$p/usr/local/sbin/vm-modprobe-log" <<'SH'
#!/bin/sh
# kernel.modprobe from RKE2's start on: the kernel's request_module()
# (nfnetlink asked about nf_tables: "nfnetlink-subsys-10") and the
# iptables tools' own loads come here; log them with the uptime, then load.
echo "$(cut -d' ' -f1 /proc/uptime) $*" >>/run/vm-test/modprobe.log
exec /sbin/modprobe "$@"
SH
	chmod 0755 "$p/usr/local/sbin/vm-modules-snapshot" "$p/usr/local/sbin/vm-modprobe-log"
	# Drop-ins sort by name with the generator's 50-rke2-proxy-backend.conf:
	# 00- runs before apply, 99- after it (both after the unit's own lines).
	printf '[Service]\nExecStartPre=-/usr/local/sbin/vm-modules-snapshot modules-before\n' \
		>"$p/etc/systemd/system/rke2-server.service.d/00-vm-test.conf"
	printf '[Service]\nExecStartPre=-/usr/local/sbin/vm-modules-snapshot modules-after-apply\n' \
		>"$p/etc/systemd/system/rke2-server.service.d/99-vm-test.conf"
	cat >"$p/etc/systemd/system/vm-probe.service" <<'UNIT'
[Unit]
Description=rke2-proxy-backend VM tier probe (asserts, records, powers off)
# Not After=cloud-final.service: Debian orders cloud-final after
# multi-user.target, which wants this unit; the probe waits for cloud-init
# itself (cloud-init status --wait).
After=basic.target

[Service]
# exec, not oneshot: cloud-init's final stage waits for multi-user.target,
# which a oneshot still running would hold back.
Type=exec
ExecStart=/usr/local/sbin/vm-probe
StandardOutput=journal+console
StandardError=journal+console

[Install]
WantedBy=multi-user.target
UNIT
	ln -sf /etc/systemd/system/vm-probe.service "$p/etc/systemd/system/multi-user.target.wants/vm-probe.service"
}

# vm_case_root NAME ARCH [cloud-init]: a fresh guest root for case NAME at
# R (an overlay of ARCH's image) with the payload, the .deb, RKE2's unit
# enabled and a minimal RKE2 config; REL is its kernel release and CFG our
# config. The image's cloud-init is disabled (/etc/cloud/cloud-init.disabled,
# so it costs no boot time) unless the third word is cloud-init: then the
# root gets neither the .deb nor RKE2's config (cloud-init installs both).
vm_case_root() {
	local name=$1 arch=$2 img
	vm_arch "$arch"
	img=IMG_$arch
	img=${!img}
	BOOKWORM_ROOT=$img/root new_overlay "$work/$name-root"
	R=$work/$name-root/merged
	REL=$(cat "$img/release")
	CFG=$R/etc/rke2-proxy-backend/config.yaml
	cp -a "$work/payload-$arch/." "$R/"
	mkdir -p "$R/var/lib/vm-test" "$R/etc/vm-test"
	[ "${3:-}" = cloud-init ] && return 0
	[ ! -d "$R/etc/cloud" ] || touch "$R/etc/cloud/cloud-init.disabled"
	local deb=$DEB_AMD64
	[ "$arch" = arm64 ] && deb=$DEB_ARM64
	if [ "$arch" = "$(host_arch)" ]; then
		run_logged "$work/$name-dpkg.log" "$name: dpkg --root -i $(basename "$deb") failed" dpkg --root "$R" -i "$deb"
	else
		# A foreign root: its own dpkg runs under qemu-user.
		cp "$deb" "$R/tmp/pkg.deb"
		run_logged "$work/$name-dpkg.log" "$name: dpkg -i $(basename "$deb") in the $arch root failed" chroot "$R" dpkg -i /tmp/pkg.deb
		rm -f "$R/tmp/pkg.deb"
	fi
	ln -sf /usr/local/lib/systemd/system/rke2-server.service "$R/etc/systemd/system/multi-user.target.wants/rke2-server.service"
	mkdir -p "$R/etc/rancher/rke2"
	printf 'token: vm-test-secret\nwrite-kubeconfig-mode: "0600"\n' >"$R/etc/rancher/rke2/config.yaml"
	[ -f "$CFG" ] || fail "$name: the package did not install /etc/rke2-proxy-backend/config.yaml"
	vm_set wait 90s
}

# vm_set KEY VALUE sets one key of our config in the guest (the shipped
# example edited as an operator would): backend, on_failure, wait
# (verify.wait), dmi (legacy_triggers.dmi), device_tree
# (legacy_triggers.device_tree, added under dmi when the example lacks it).
vm_set() {
	case $1 in
	backend | on_failure) sed -i "s/^$1: .*/$1: $2/" "$CFG" ;;
	wait) sed -i "s/^  wait: .*/  wait: $2/" "$CFG" ;;
	dmi) sed -i "s/^  dmi: .*/  dmi: $2/" "$CFG" ;;
	device_tree)
		if grep -q '^  device_tree:' "$CFG"; then
			sed -i "s/^  device_tree: .*/  device_tree: $2/" "$CFG"
		else
			sed -i "/^  dmi: /a\\  device_tree: $2" "$CFG"
		fi
		;;
	*) fail "vm_set: no key $1" ;;
	esac
	grep -qF -- "$2" "$CFG" || fail "vm_set: could not set $1 to $2 in $CFG"
}

# vm_alternative legacy|nft points the guest's iptables alternative (which
# kubelet writes its hint chains with) at a backend.
vm_alternative() {
	chroot "$R" update-alternatives --quiet --set iptables "/usr/sbin/iptables-$1" &&
		chroot "$R" update-alternatives --quiet --set ip6tables "/usr/sbin/ip6tables-$1" ||
		fail "update-alternatives in the guest root failed"
}

# vm_expect CASE BACKEND GEN APPLY REASON: what guest-probe.sh asserts (see
# its header).
vm_expect() {
	printf 'CASE=%q\nBACKEND=%q\nGEN=%q\nAPPLY=%q\nREASON=%q\n' "$@" >"$R/etc/vm-test/expect"
}

# vm_drop_modules MODULE...: the guest's kernel loses MODULE and every
# module that needs it (per modules.dep): their files are deleted and
# modules.dep rebuilt, as on a kernel whose package ships them elsewhere
# (Ubuntu's linux-modules-extra, EL's kernel-modules-extra) or not at all.
# The config still says =m. The initramfs never held them (vm/image.sh).
vm_drop_modules() {
	local dir=$R/lib/modules/$REL m files
	for m in "$@"; do
		files=$(awk -F: -v m="/$m.ko" 'index($1, m) || index($2, m) {print $1}' "$dir/modules.dep")
		[ -n "$files" ] || fail "the image's kernel has no module $m to remove"
		(cd "$dir" && echo "$files" | xargs rm -f)
	done
	depmod -a -b "$R" "$REL" || fail "depmod -b $R $REL failed"
	for m in "$@"; do
		! grep -q "/$m.ko" "$dir/modules.dep" || fail "$m is still in $dir/modules.dep"
	done
}

# vm_put DISK PATH... copies each PATH (relative to /) from R onto the
# guest's powered-off DISK, replacing the file there: what an operator
# changes between two boots of one node.
vm_put() {
	local disk=$1 f
	shift
	for f in "$@"; do
		printf 'cd /%s\nrm %s\nwrite %s %s\n' "$(dirname "$f")" "$(basename "$f")" "$R/$f" "$(basename "$f")" |
			debugfs -w -f - "$disk" >/dev/null 2>&1
		debugfs -R "cat /$f" "$disk" 2>/dev/null | cmp -s - "$R/$f" || fail "could not write /$f onto $disk"
	done
}

# vm_predict NAME WANT: before the boot, `detect --root` on the case's root
# (the image as a node-image build has it, not booted) must name WANT,
# the backend the boot is expected to pick.
vm_predict() {
	local name=$1 want=$2 got
	"$DIST/build/$(host_arch)/rke2-proxy-backend" detect --root "$R" -o json >"$work/$name-predict.json" 2>"$work/$name-predict.err" || true
	"$DIST/build/$(host_arch)/rke2-proxy-backend" detect --root "$R" >"$work/$name-predict.txt" 2>&1 || true
	got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["decision"]["backend"])' "$work/$name-predict.json" 2>/dev/null || echo "no decision")
	PREDICTED=$got
	if [ "$got" != "$want" ]; then
		sed 's/^/    | /' "$work/$name-predict.txt" "$work/$name-predict.err" | head -n 60 >&2
		PREDICT_FAIL+=("$name: detect --root on the image predicted $got, the boot must pick $want")
		log "FAIL prediction: detect --root on the image says $got, want $want"
	else
		log "prediction: detect --root on the image says $got"
	fi
}
PREDICT_FAIL=()

# vm_run NAME ARCH LIMIT [QEMU-ARGS...]: R becomes a disk and boots once;
# the guest's verdict (and the prediction's) decides. The disk stays as
# $work/NAME.img for a later boot of the same node (vm_reboot).
vm_run() {
	local name=$1 arch=$2 limit=$3 img
	shift 3
	img=IMG_$arch
	img=${!img}
	vm_disk "$R" "$work/$name.img"
	vm_boot "$name" "$arch" "$img" "$work/$name.img" "$limit" "$@" || return 0
	vm_verdict "$name" "$arch" "$img"
}

# vm_reboot NAME FROM ARCH LIMIT: boots FROM's disk again as case NAME.
vm_reboot() {
	local name=$1 from=$2 arch=$3 limit=$4 img
	img=IMG_$arch
	img=${!img}
	vm_boot "$name" "$arch" "$img" "$work/$from.img" "$limit" || return 0
	vm_verdict "$name" "$arch" "$img"
}

# vm_verdict NAME ARCH IMG: the boot's line, and its verdict: a failed boot
# or prediction is recorded (vm_failed) and the tier goes on, so one run
# shows every case.
vm_verdict() {
	local name=$1 arch=$2 img=$3 out=$work/$1/vm-test picked verdict=ok
	picked=$(cat "$out/standin-backend" 2>/dev/null || true)
	if ! (guest_verdict "$out/result" "$out/diag" "boot $name"); then
		verdict=FAILED
		FAILED+=("boot $name: assertions failed inside the guest (above)")
	fi
	if [ ${#PREDICT_FAIL[@]} -gt 0 ]; then
		verdict=FAILED
		vm_failed "${PREDICT_FAIL[@]}"
		PREDICT_FAIL=()
	fi
	local line="boot $name ($arch, $(cat "$img/release")): RKE2 on ${picked:-nothing (not started)} in ${BOOT_TOOK}s: $verdict"
	BOOT_LINES+=("  $line")
	log "$line"
}

# vm_failed WHAT...: a failure the tier reports at its end.
FAILED=()
vm_failed() {
	local w
	for w in "$@"; do
		echo "FAIL: $TEST: $w" >&2
		FAILED+=("$w")
	done
}

# ---------------------------------------------------------------- cases

# stock: Debian's cloud kernel as shipped, auto, the host's alternative on
# iptables-nft (Debian's default): iptables-nft; then the same disk booted
# again: the same backend, the same drop-in, verify ok.
case_stock() {
	vm_case_root stock amd64
	vm_expect stock iptables-nft 'kube-proxy backend iptables-nft \(source auto\)' '' ''
	vm_predict stock iptables-nft
	vm_run stock amd64 420
	vm_expect reboot iptables-nft 'kube-proxy backend iptables-nft \(source auto\)' '' ''
	vm_put "$work/stock.img" etc/vm-test/expect
	vm_reboot reboot stock amd64 420
	local a=$work/stock/vm-test b=$work/reboot/vm-test
	if ! cmp -s "$a/dropin.yaml" "$b/dropin.yaml"; then
		vm_failed "reboot: RKE2's drop-in changed across the reboot: $(diff "$a/dropin.yaml" "$b/dropin.yaml" 2>&1 | tr '\n' ' ')"
	elif [ "$(cat "$b/boots")" != 2 ]; then
		vm_failed "reboot: the guest counts $(cat "$b/boots") boots on the stock disk, want 2"
	else
		pass "reboot: the same backend ($(cat "$b/standin-backend")) and the same drop-in, byte for byte"
	fi
}

# The NAS kernel, shape (a): the nf_tables module files are absent while
# /boot/config still says CONFIG_NF_TABLES=m (a minimal or NAS image, or
# linux-modules-extra / kernel-modules-extra not installed). The userspace
# is Debian's as shipped, its iptables alternative on nft: the generator
# alone must choose legacy, its reason naming nf_tables (kubelet's chains
# fail there, logged, as the real kubelet logs them).
case_nas_absent() {
	vm_case_root nas-absent amd64
	vm_drop_modules nf_tables
	grep -q '^CONFIG_NF_TABLES=m' "$R/boot/config-$REL" || fail "nas-absent: the image's config no longer says CONFIG_NF_TABLES=m"
	vm_expect nas-absent iptables-legacy 'kube-proxy backend iptables-legacy \(source auto\)' '' 'nf_tables'
	vm_predict nas-absent iptables-legacy
	vm_run nas-absent amd64 420
}

# The NAS kernel, shape (b): a kernel built without nf_tables: its config
# says "# CONFIG_NF_TABLES is not set" (and has no NFT_* symbols, which
# depend on it) and its module tree has no nf_tables modules. (The running
# kernel binary is Debian's, whose nf_tables is a module: with the files
# gone it cannot have it either, so the image is such a kernel's.) The
# userspace is Debian's as shipped, as in nas-absent.
case_nas_notset() {
	vm_case_root nas-notset amd64
	vm_drop_modules nf_tables
	sed -i -E 's/^CONFIG_NF_TABLES=m$/# CONFIG_NF_TABLES is not set/; /^CONFIG_(NFT_|NF_TABLES_|NF_FLOW_TABLE|NF_DUP_NETDEV)/d' "$R/boot/config-$REL"
	grep -qx '# CONFIG_NF_TABLES is not set' "$R/boot/config-$REL" || fail "nas-notset: could not unset CONFIG_NF_TABLES"
	vm_expect nas-notset iptables-legacy 'kube-proxy backend iptables-legacy \(source auto\)' '' 'nf_tables'
	vm_predict nas-notset iptables-legacy
	vm_run nas-notset amd64 420
}

# A stock kernel on a box whose DMI says Synology (QEMU's -smbios), with
# the README's NAS dmi trigger: legacy. The host's alternative is on legacy, as
# on such a node (kubelet's hint chains follow it), so the image predicts
# legacy too; the reason must be the trigger, and the prediction must say
# that an image cannot know the machine's DMI.
case_nas_dmi() {
	vm_case_root nas-dmi amd64
	vm_set dmi '["Synology*"]'
	vm_alternative legacy
	vm_expect nas-dmi iptables-legacy 'kube-proxy backend iptables-legacy \(source auto\)' '' 'legacy trigger.*Synology'
	vm_predict nas-dmi iptables-legacy
	grep -qi dmi "$work/nas-dmi-predict.txt" || PREDICT_FAIL+=("nas-dmi: detect --root does not say that an image cannot know the machine's DMI")
	vm_run nas-dmi amd64 420 -smbios 'type=1,manufacturer=Synology Inc.,product=DS920+'
}

# A kernel without the legacy tables (ip_tables, ip6_tables and every
# iptable_* / ip6table_* file absent: RHEL 10, kernels without
# XTABLES_LEGACY): auto never picks legacy; the operator's explicit
# backend: iptables-legacy is refused at the generator naming the module,
# and with on_failure: warn RKE2 starts on the backend that works
# (iptables-nft, proven by apply's trial) with a warning naming the refused
# one; with on_failure: block (the same disk, booted again) apply exits 1
# and RKE2 does not start. Never on legacy.
case_nolegacy_warn() {
	vm_case_root nolegacy-warn amd64
	vm_drop_modules ip_tables ip6_tables
	vm_set backend iptables-legacy
	vm_set on_failure warn
	vm_expect nolegacy-warn iptables-nft 'ip_tables.*iptables-nft|iptables-nft.*ip_tables' 'iptables-legacy.*ip_tables' ''
	vm_predict nolegacy-warn iptables-nft
	vm_run nolegacy-warn amd64 420
	vm_set on_failure block
	vm_expect nolegacy-block none 'ip_tables.*iptables-nft|iptables-nft.*ip_tables' 'iptables-nft' ''
	vm_put "$work/nolegacy-warn.img" etc/vm-test/expect etc/rke2-proxy-backend/config.yaml
	# The stand-in's record of the warn boot must not pass for this boot's.
	debugfs -w -R "rm /var/lib/rke2-standin/backend" "$work/nolegacy-warn.img" >/dev/null 2>&1
	! debugfs -R "stat /var/lib/rke2-standin/backend" "$work/nolegacy-warn.img" 2>/dev/null | grep -q Inode ||
		fail "could not remove the warn boot's stand-in record from the nolegacy disk"
	vm_reboot nolegacy-block nolegacy-warn amd64 420
	# auto on this kernel, asked in the guest (detect of the booted kernel):
	python3 - "$work/nolegacy-block/vm-test/detect-auto.json" <<'PY' || vm_failed "nolegacy-block: detect with backend auto on a kernel without legacy tables did not pick iptables-nft (see above)"
import json, sys
d = json.load(open(sys.argv[1]))["decision"]
print("    detect (auto, booted kernel without legacy): %s" % d["backend"])
sys.exit(d["backend"] != "iptables-nft")
PY
}

# cloudinit: a first boot as a cloud node gets it: the amd64 image (which
# has Debian's cloud-init, disabled in the other cases) without our package
# or RKE2; a NoCloud seed on a vfat disk labelled CIDATA carries the
# air-gapped example (packaging/cloud-init/airgap-server.yaml, its key
# block filled in by lib/cloudinit_fill.py as cloudinit-boot.sh fills it)
# plus a bootcmd that mounts a third disk with the project's signed APT
# repository (`make repo`) and RKE2's artifacts (the stand-in's tarball and
# install.sh) at the paths the example names. No network. The first boot
# must end with RKE2 on iptables-nft and verify ok.
case_cloudinit() {
	vm_case_root cloudinit amd64 cloud-init
	# RKE2 comes from the example's installer, not the image.
	rm -f "$R/usr/local/bin/rke2" "$R/usr/local/lib/systemd/system/rke2-server.service"
	printf 'datasource_list: [NoCloud, None]\n' >"$R/etc/cloud/cloud.cfg.d/90-vm-test.cfg"
	vm_expect cloudinit iptables-nft 'kube-proxy backend iptables-nft \(source auto\)' '' ''

	local media=$work/cloudinit-media seed=$work/cloudinit-seed
	mkdir -p "$media/rke2-artifacts" "$seed" "$work/cloudinit-tar/bin" "$work/cloudinit-tar/lib/systemd/system"
	build_test_repo "$work/cloudinit-repo"
	cp -a "$work/cloudinit-repo" "$media/repo"
	cp "$work/payload-amd64/usr/local/bin/rke2" "$work/cloudinit-tar/bin/rke2"
	cp "$REPO/internal/testkit/testhost/units/rke2-server.service" "$REPO/internal/testkit/testhost/units/rke2-agent.service" \
		"$work/cloudinit-tar/lib/systemd/system/"
	tar czf "$media/rke2-artifacts/rke2.linux-amd64.tar.gz" -C "$work/cloudinit-tar" bin lib
	echo "stand-in: no images" >"$media/rke2-artifacts/rke2-images.linux-amd64.tar.zst"
	(cd "$media/rke2-artifacts" && sha256sum rke2.linux-amd64.tar.gz rke2-images.linux-amd64.tar.zst >sha256sum-amd64.txt)
	install -m 0755 "$REPO/packaging/test/cloudinit-guest/install.sh" "$media/rke2-artifacts/install.sh"
	chmod -R a+rX "$media"
	truncate -s 256M "$work/cloudinit-media.img"
	mkfs.ext4 -q -F -L RKE2PB -d "$media" "$work/cloudinit-media.img" || fail "mkfs.ext4 of the media disk failed"

	local example=$REPO/packaging/cloud-init/airgap-server.yaml
	! grep -q '^bootcmd:' "$example" || fail "airgap-server.yaml has a bootcmd of its own: the VM case's bootcmd (the media disk) would replace it"
	python3 "$REPO/packaging/test/lib/cloudinit_fill.py" "$example" "$work/cloudinit-repo/rke2-proxy-backend.asc" file:/opt/rke2-proxy-backend-repo \
		>"$seed/user-data" || fail "could not fill in airgap-server.yaml"
	# The image build's part: the disk with the repository and the artifacts.
	cat >>"$seed/user-data" <<'YAML'

bootcmd:
  - [sh, -c, 'mkdir -p /media/rke2pb && mount -o ro LABEL=RKE2PB /media/rke2pb && ln -sfn /media/rke2pb/repo /opt/rke2-proxy-backend-repo && ln -sfn /media/rke2pb/rke2-artifacts /opt/rke2-artifacts']
locale: C.UTF-8
YAML
	if command -v cloud-init >/dev/null; then
		cloud-init schema --config-file "$seed/user-data" >/dev/null || fail "the filled-in user-data is not valid cloud-config"
	fi
	printf 'instance-id: vm-cloudinit-1\nlocal-hostname: vm-node\n' >"$seed/meta-data"
	rm -f "$work/cloudinit-seed.img"
	mkfs.vfat -n CIDATA -C "$work/cloudinit-seed.img" 8192 >/dev/null || fail "mkfs.vfat of the seed failed"
	mcopy -i "$work/cloudinit-seed.img" "$seed/user-data" "$seed/meta-data" ::/ || fail "mcopy of the seed failed"
	vm_predict cloudinit iptables-nft
	vm_run cloudinit amd64 420 \
		-drive "file=$work/cloudinit-seed.img,if=virtio,format=raw" -drive "file=$work/cloudinit-media.img,if=virtio,format=raw"
}

# arm64: the arm64 .deb in an arm64 Debian guest on Debian's arm64 cloud
# kernel (QEMU's virt board, TCG), one boot: a device-tree legacy trigger
# matching the virt board's compatible string picks legacy, the trigger its
# reason; apply preloads legacy's modules and nothing loads nf_tables after
# (the alternative is on legacy, as on such a node; the prediction must say
# that an image cannot know the board). The arm64 auto path (iptables-nft)
# is the amd64 stock case's on the same Debian kernel source, and a second
# arm64 boot for it cost 70-120 s of TCG while proving nothing new.
case_arm64() {
	vm_case_root arm64-dt arm64
	vm_set device_tree '["linux,dummy-virt"]'
	vm_alternative legacy
	vm_expect arm64-dt iptables-legacy 'kube-proxy backend iptables-legacy \(source auto\)' '' 'linux,dummy-virt'
	vm_predict arm64-dt iptables-legacy
	grep -qi 'device.tree' "$work/arm64-dt-predict.txt" || PREDICT_FAIL+=("arm64-dt: detect --root does not say that an image cannot know the machine's device tree")
	vm_run arm64-dt arm64 600
}
