#!/bin/sh
# Runs before the files are unpacked (deb: preinst install|upgrade; rpm:
# %pre 1|2).
#
# deb: "install <old-version>" means the package was removed but not
# purged (its config files stayed): a reinstall, which postinst sees as
# "configure <old-version>" just like an upgrade. The removal disabled the
# watch service, so postinst must enable it again as on a first install;
# this marker tells it so. A real upgrade is "upgrade <old-version>" here
# and keeps the administrator's enable/disable choice. rpm needs nothing:
# an erase followed by an install is %post 1, a first install.
set -e

state_dir=/var/lib/rke2-proxy-backend
reinstall_marker=$state_dir/reinstall

case "$1:${2:-}" in
install:?*)
	mkdir -p "$state_dir"
	: >"$reinstall_marker"
	;;
esac
exit 0
