#!/usr/bin/env bash
# Package transitions no other test takes (issue 31):
#
#   killed-postinst   a running node (real systemd in nspawn, as lifecycle.sh
#                     boots it): dpkg -i of $VERSION.1 killed with SIGKILL,
#                     with its postinst, while the postinst waits on
#                     `systemctl daemon-reload`; then `dpkg --configure -a`:
#                     the package ends configured, watch runs the new binary,
#                     the generator's drop-ins are written again, RKE2 is not
#                     restarted, verify passes, no unit failed
#   downgrade         the operators' commands on a running node: `apt-get
#                     install -y ./…_$VERSION.1-1_ARCH.deb`, then `apt-get
#                     install -y --allow-downgrades ./…_$VERSION-1_ARCH.deb`:
#                     $VERSION installed, watch on it, verify passes after
#                     RKE2 restarts, no unit failed
#   tarball-over-deb  (chroot) the release tarball's install.sh on a node with
#                     the .deb refuses, naming the package, and writes
#                     nothing; with the package removed but not purged it
#                     refuses too (dpkg's purge would delete the config under
#                     it); after a purge it installs, and one copy of the
#                     units and one generator are left
#   deb-over-tarball  (dpkg --root) the .deb on a node with the tarball's
#                     install refuses in its preinst, naming the tarball's
#                     uninstaller, and unpacks nothing; the tarball's files
#                     are as they were; after its uninstaller the .deb
#                     installs, one copy of the units and one generator
#
# The boot cases run with the config lc_guest edited (it pins legacy): no
# dpkg here asks a question or needs a --force-conf* flag.
# TRANSITIONS_CASES picks cases. Needs: root, systemd-nspawn, debootstrap,
# dpkg, make, go, tar, chroot.
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/lifecycle.sh"
need_root
need_tools systemd-nspawn debootstrap dpkg dpkg-deb make go timeout mountpoint tar chroot
ensure_packages
ensure_bookworm_root

name=rke2-proxy-backend
deb=$(host_package deb)
work=$(mktemp -d /tmp/rke2pb-transitions.XXXXXX)
trap 'cleanup_overlays; rm -rf "$work"' EXIT
cases=${TRANSITIONS_CASES:-tarball-over-deb deb-over-tarball killed-postinst downgrade}

# ours ROOT lists every unit file and generator link of ours under ROOT.
ours() {
	(cd "$1" && find etc/systemd usr/lib/systemd usr/local/lib/systemd -xdev \
		\( -name "$name-*.service" -o -name "$name-generator" \) \( -type f -o -type l \) -print 2>/dev/null | grep -v '\.wants/' | LC_ALL=C sort | tr '\n' ' ')
}

tarball_root() { # tarball_root DIR: an overlay with the release tarball unpacked in /root; sets T and top
	new_overlay "$1"
	T=$1/merged
	top=$name-$VERSION-linux-$(host_arch)
	tar -C "$T/root" -xzf "$DIST/$top.tar.gz" || fail "cannot unpack $top.tar.gz"
}

case_tarball_over_deb() {
	local start=$SECONDS
	tarball_root "$work/t1"
	run_logged "$work/t1-dpkg.log" "dpkg --root -i failed" dpkg --root "$T" -i "$deb"
	expect_refused "$work/t1-refused.log" "/usr/bin/$name exists: $name is installed from a package; remove the package first \(apt-get purge $name" \
		"install.sh went ahead beside the .deb" "install.sh beside the .deb failed for another reason" \
		chroot "$T" sh "/root/$top/install.sh"
	[ "$(ours "$T")" = "usr/lib/systemd/system-generators/$name-generator usr/lib/systemd/system/$name-verify.service usr/lib/systemd/system/$name-watch.service " ] ||
		fail "tarball-over-deb: after the refusal, our units and generators are: $(ours "$T")"
	[ ! -e "$T/usr/local/bin/$name" ] && [ ! -e "$T/usr/local/share/$name" ] || fail "tarball-over-deb: the refused install.sh wrote under /usr/local"
	dpkg --root "$T" -V $name >"$work/t1-verify.log" 2>&1 && [ ! -s "$work/t1-verify.log" ] ||
		fail "tarball-over-deb: the package's files changed: $(cat "$work/t1-verify.log")"
	run_logged "$work/t1-remove.log" "dpkg -r failed" dpkg --root "$T" -r $name
	expect_refused "$work/t1-refused2.log" "dpkg still holds the config files of the removed $name package" \
		"install.sh went ahead while dpkg still owned the config" "install.sh over a removed package failed for another reason" \
		chroot "$T" sh "/root/$top/install.sh"
	run_logged "$work/t1-purge.log" "dpkg -P failed" dpkg --root "$T" -P $name
	run_logged "$work/t1-install.log" "install.sh after the purge failed" chroot "$T" sh "/root/$top/install.sh"
	[ "$(ours "$T")" = "usr/local/lib/systemd/system-generators/$name-generator usr/local/lib/systemd/system/$name-verify.service usr/local/lib/systemd/system/$name-watch.service " ] ||
		fail "tarball-over-deb: after the purge and install.sh, our units and generators are: $(ours "$T")"
	pass "tarball-over-deb: install.sh refused beside the package and beside its config files, naming what to do; after the purge one copy (/usr/local) in $((SECONDS - start))s"
}

case_deb_over_tarball() {
	local start=$SECONDS
	tarball_root "$work/t2"
	run_logged "$work/t2-install.log" "install.sh failed" chroot "$T" sh "/root/$top/install.sh"
	(cd "$T" && find usr/local etc/systemd etc/$name -xdev -printf '%p %y %m %l\n' | LC_ALL=C sort) >"$work/t2-before"
	expect_refused "$work/t2-refused.log" "uninstall that one first \(/usr/local/bin/$name-uninstall.sh" \
		"dpkg -i went ahead beside the tarball's install" "dpkg -i beside the tarball's install failed for another reason" \
		dpkg --root "$T" -i "$deb"
	[ ! -e "$T/usr/bin/$name" ] || fail "deb-over-tarball: the refused package unpacked /usr/bin/$name"
	st=$(dpkg-query --root "$T" -W -f '${db:Status-Status}' $name 2>/dev/null || true)
	[ -z "$st" ] || [ "$st" = not-installed ] || fail "deb-over-tarball: dpkg says $name is '$st' after the refusal"
	(cd "$T" && find usr/local etc/systemd etc/$name -xdev -printf '%p %y %m %l\n' | LC_ALL=C sort) >"$work/t2-after"
	diff -u "$work/t2-before" "$work/t2-after" >&2 || fail "deb-over-tarball: the refused package changed the tarball's install (above)"
	run_logged "$work/t2-uninstall.log" "the tarball's uninstaller failed" chroot "$T" /usr/local/bin/$name-uninstall.sh
	run_logged "$work/t2-dpkg.log" "dpkg -i after the uninstall failed" dpkg --root "$T" -i "$deb"
	[ "$(ours "$T")" = "usr/lib/systemd/system-generators/$name-generator usr/lib/systemd/system/$name-verify.service usr/lib/systemd/system/$name-watch.service " ] ||
		fail "deb-over-tarball: after the uninstall and dpkg -i, our units and generators are: $(ours "$T")"
	pass "deb-over-tarball: the package refused in its preinst naming the tarball's uninstaller, unpacked nothing; after it one copy (/usr/lib) in $((SECONDS - start))s"
}

need_guests=false
for c in $cases; do case $c in killed-postinst | downgrade) need_guests=true ;; esac; done
if [ "$need_guests" = true ]; then
	lc_prepare "$work"
	next=$(build_next_version deb "$work/next")
fi
if [[ " $cases " == *" tarball-"* ]] || [[ " $cases " == *" deb-over-"* ]]; then
	run_logged "$work/make-tarball.log" "make tarball failed" make -s -C "$REPO" tarball
fi
for c in $cases; do
	case $c in
	tarball-over-deb) case_tarball_over_deb ;;
	deb-over-tarball) case_deb_over_tarball ;;
	killed-postinst)
		lc_guest "$c" current server "$deb" "$next"
		lc_boot "$c"
		;;
	downgrade)
		lc_guest "$c" current server "$deb" "$next" "$deb"
		lc_boot "$c"
		;;
	*) fail "unknown case $c (known: tarball-over-deb deb-over-tarball killed-postinst downgrade)" ;;
	esac
done
pass "every case: $cases"
