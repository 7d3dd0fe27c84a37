#!/bin/sh
# Runs before the files are unpacked (deb: preinst install|upgrade; rpm:
# %pre 1|2).
#
# One copy at a time: when the release tarball's install.sh installed the
# tool (its manifest under /usr/local, or its generator link in
# /etc/systemd/system-generators for another prefix), installing the
# package too would put a second generator and a second pair of units
# beside it, and systemd would quietly run the tarball's (earlier in its
# search path). So the package refuses, naming the tarball's uninstaller,
# before dpkg or rpm unpack anything. (The tarball's install.sh refuses the
# other way round.)
#
# deb: "install <old-version>" means the package was removed but not
# purged (its config files stayed): a reinstall, which postinst sees as
# "configure <old-version>" just like an upgrade. The removal disabled the
# watch service, so postinst must enable it again as on a first install;
# this marker tells it so. A real upgrade is "upgrade <old-version>" here
# and keeps the administrator's enable/disable choice. rpm needs nothing:
# an erase followed by an install is %post 1, a first install.
set -e

name=rke2-proxy-backend
state_dir=/var/lib/$name
reinstall_marker=$state_dir/reinstall

# tarball_prefix prints the prefix of a tarball install, if there is one.
tarball_prefix() {
	if [ -f /usr/local/share/$name/install.manifest ]; then
		echo /usr/local
		return
	fi
	link=/etc/systemd/system-generators/$name-generator
	if [ -L "$link" ]; then
		t=$(readlink "$link")
		dirname "$(dirname "$t")"
	fi
}

case $1 in
install | upgrade | 1 | 2) prefix=$(tarball_prefix) ;;
*) prefix="" ;; # abort-upgrade: put back what was there
esac
if [ -n "$prefix" ]; then
	echo "$name: refusing to install: $name is installed from its release tarball under $prefix, and two installs would run two generators for RKE2's units." >&2
	echo "$name: uninstall that one first ($prefix/bin/$name-uninstall.sh; it keeps /etc/$name/config.yaml and RKE2's drop-in), then install the package again." >&2
	exit 1
fi

case "$1:${2:-}" in
install:?*)
	mkdir -p "$state_dir"
	: >"$reinstall_marker"
	;;
esac
exit 0
