#!/usr/bin/env bash
# unattended-upgrades upgrades a node whose config was edited (issue 32 item
# 1), run as Debian's own unattended-upgrade in a bookworm root (nspawn, no
# boot) from a local APT repository whose origin it is told to upgrade:
#
#   control  the base commit's package (its config a conffile), the config
#            edited, then a next version of that same layout whose example
#            differs: unattended-upgrade finds the conffile prompt and skips
#            the package, the node stays on the old version. This is what
#            every fleet on unattended upgrades got, and it shows the check
#            below can fail.
#   upgrade  the same base package and edit, then this tree's package
#            ($VERSION.1): unattended-upgrade installs it, no prompt, the
#            config byte for byte the same.
#
# The repository is unsigned ([trusted=yes]): test scaffolding, the signed
# repositories are repo-apt.sh's. Needs: root, systemd-nspawn, debootstrap,
# apt-ftparchive (apt-utils), dpkg-deb, make, go; network once, to add
# unattended-upgrades to a copy of the cached bookworm root.
source "$(dirname "$0")/lib/common.sh"
need_root
need_tools systemd-nspawn debootstrap apt-ftparchive dpkg-deb make go timeout mountpoint
ensure_packages
ensure_bookworm_root
ensure_base_packages "$BASE_COMMIT"

work=$(mktemp -d /tmp/rke2pb-unattended.XXXXXX)
trap 'cleanup_overlays; rm -rf "$work"' EXIT
name=rke2-proxy-backend

# The bookworm root with unattended-upgrades, made once from the cached one.
ensure_derived_root bookworm-uu-root unattended-upgrades
UU_ROOT=$CACHE/bookworm-uu-root

# in_root ROOT CMD: CMD (a shell line) in ROOT, as root, without a network.
in_root() {
	timeout 300 systemd-nspawn -q --register=no --keep-unit --private-network -D "$1" sh -c "$2"
}

# publish ROOT DEB...: ROOT's local repository (/srv/repo, origin
# rke2pb-test) holds exactly DEB...; apt-get update reads it.
publish() {
	local r=$1
	shift
	rm -rf "$r/srv/repo"
	mkdir -p "$r/srv/repo"
	cp "$@" "$r/srv/repo/"
	(cd "$r/srv/repo" && apt-ftparchive packages . >Packages &&
		apt-ftparchive -o APT::FTPArchive::Release::Origin=rke2pb-test -o APT::FTPArchive::Release::Label=rke2pb-test \
			-o APT::FTPArchive::Release::Suite=stable -o APT::FTPArchive::Release::Codename=bookworm release . >Release) ||
		fail "apt-ftparchive failed"
}

# node NAME: an overlay of the unattended-upgrades root with the base
# package installed from its repository and the config edited, as an
# operator leaves a node; unattended-upgrade told to upgrade the
# repository's origin. Sets N.
node() {
	new_overlay "$work/$1" "$UU_ROOT"
	N=$work/$1/merged
	echo 'deb [trusted=yes] file:/srv/repo ./' >"$N/etc/apt/sources.list.d/rke2pb-test.list"
	printf 'Unattended-Upgrade::Origins-Pattern { "origin=rke2pb-test"; };\n' >"$N/etc/apt/apt.conf.d/51rke2pb-test"
	publish "$N" "$BASE_DEB"
	run_logged "$work/$1-install.log" "$1: apt-get install of the base package failed" in_root "$N" \
		"apt-get update -q -o Dir::Etc::sourcelist=sources.list.d/rke2pb-test.list -o Dir::Etc::sourceparts=- && apt-get install -y -q $name </dev/null"
	echo "backend: iptables-legacy  # operator edit" >>"$N/etc/$name/config.yaml"
	cp -p "$N/etc/$name/config.yaml" "$work/$1.cfg"
}

# unattended NAME: apt-get update, then unattended-upgrade as its timer
# runs it; the node's installed version.
unattended() {
	in_root "$N" "apt-get update -q -o Dir::Etc::sourcelist=sources.list.d/rke2pb-test.list -o Dir::Etc::sourceparts=- >/dev/null && unattended-upgrade -v </dev/null" \
		>"$work/$1-uu.log" 2>&1 || true
	cat "$N"/var/log/unattended-upgrades/unattended-upgrades.log >>"$work/$1-uu.log" 2>/dev/null || true
	dpkg-query --root "$N" -W -f '${Version} ${db:Status-Abbrev}' $name
}

# control: the old layout's next version, repacked from the base package
# with one line more in its conffile.
dpkg-deb -R "$BASE_DEB" "$work/old-next"
echo "# a line only the next version's example has" >>"$work/old-next/etc/$name/config.yaml"
(cd "$work/old-next" && find . -type f ! -path './DEBIAN/*' -printf '%P\n' | LC_ALL=C sort | xargs md5sum >DEBIAN/md5sums)
sed -i "s/^Version: .*/Version: $VERSION.0.1-1/" "$work/old-next/DEBIAN/control"
dpkg-deb -b "$work/old-next" "$work/old-next.deb" >/dev/null || fail "dpkg-deb could not repack the base package"
node control
base=$(dpkg-query --root "$N" -W -f '${Version}' $name)
publish "$N" "$BASE_DEB" "$work/old-next.deb"
got=$(unattended control)
[ "$got" = "$base ii " ] || { cat "$work/control-uu.log" >&2; fail "control: unattended-upgrade left '$got', want the base package kept ($base ii): the old layout no longer meets the prompt, so this test proves nothing"; }
grep -q 'conffile prompt' "$work/control-uu.log" || { cat "$work/control-uu.log" >&2; fail "control: unattended-upgrade did not say why it skipped the package"; }
pass "control: with the config a conffile, unattended-upgrade skipped the edited node ($(grep -o 'Package [^ ]* has conffile prompt[^.]*' "$work/control-uu.log" | head -n 1))"

next=$(build_next_version deb "$work/next")
node upgrade
publish "$N" "$BASE_DEB" "$next"
got=$(unattended upgrade)
[ "$got" = "$VERSION.1-1 ii " ] || { cat "$work/upgrade-uu.log" >&2; fail "upgrade: unattended-upgrade left '$got', want $VERSION.1-1 installed"; }
! grep -q 'conffile prompt' "$work/upgrade-uu.log" || fail "upgrade: unattended-upgrade met a conffile prompt"
assert_config_kept "$N" "$work/upgrade.cfg" "unattended-upgrade"
pass "upgrade: unattended-upgrade installed $VERSION.1 over the base package on the edited node, no prompt, the config byte for byte the same"
