#!/bin/sh
# Runs before removal and before an upgrade replaces the files
# (deb: prerm remove|upgrade|...; rpm: %preun 0 on erase, 1 on upgrade).
# On a real removal stop a verify run that may still be waiting for
# kube-proxy, so it does not fire against a half-removed package, and stop
# and disable the watch service (the package enabled it).
set -e

case "$1" in
remove | 0)
	if [ -d /run/systemd/system ]; then
		systemctl stop rke2-proxy-backend-verify.service rke2-proxy-backend-watch.service >/dev/null 2>&1 || true
	fi
	systemctl disable rke2-proxy-backend-watch.service >/dev/null 2>&1 || true
	;;
esac
exit 0
