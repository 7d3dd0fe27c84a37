#!/bin/sh
# Runs after install and upgrade (deb: postinst configure <old-version>;
# rpm: %post 1 on install, 2 on upgrade). RKE2 is never restarted: a new
# decision takes effect at RKE2's next start (or the next boot), never in
# the middle of an upgrade. In a chroot or image build there is no running
# systemd and only the files change; the generator runs at first boot.
#
# - deb: the generator link. The .deb does not ship it as a file: on
#   Debian 12 and Ubuntu 22.04 systemd's generators are dpkg's
#   /lib/systemd/system-generators, the same directory as
#   /usr/lib/systemd/system-generators through the /usr merge, so a package
#   owning the /usr/lib spelling alone makes dpkg try to remove that
#   directory on purge ("not empty so not removed"); owning the /lib
#   spelling breaks the same way on Debian 13 and Ubuntu 24.04, where
#   systemd moved to /usr/lib. postrm removes the link again. (The .rpm
#   ships it: RPM distributions have one spelling.)
# - A first install (deb: configure with no old version; rpm: 1), and a
#   deb reinstall after "remove" (preinst left the marker) enable
#   rke2-proxy-backend-watch.service: WantedBy= the RKE2 units, so it starts
#   with RKE2's next start; nothing starts now. `systemctl enable` only makes
#   symlinks, so it also works in a chroot. An upgrade leaves the
#   administrator's enable/disable choice alone.
# - With systemd running: daemon-reload re-runs the generators, so the new
#   generator writes its drop-ins and the new unit files are read; on an
#   upgrade, try-restart puts a running watch on the new binary (the old one
#   is deleted; a stopped or disabled watch stays so).
set -e

watch_unit=rke2-proxy-backend-watch.service
reinstall_marker=/var/lib/rke2-proxy-backend/reinstall
generator_dir=/usr/lib/systemd/system-generators

enable=no
case "$1:${2:-}" in
configure: | 1:) enable=yes ;;
configure:*) [ -e "$reinstall_marker" ] && enable=yes ;;
esac
rm -f "$reinstall_marker"

if [ "$1" = configure ]; then
	mkdir -p "$generator_dir"
	ln -sfn ../../../bin/rke2-proxy-backend "$generator_dir/rke2-proxy-backend-generator"
fi

if [ "$enable" = yes ]; then
	systemctl enable "$watch_unit" >/dev/null 2>&1 || true
fi

if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null 2>&1 || true
	case "$1:${2:-}" in
	configure:?* | 2:)
		systemctl try-restart "$watch_unit" >/dev/null 2>&1 || true
		;;
	esac
fi

# Adoption (README: "Adopting on a running node"): RKE2 already runs and this
# boot has no plan, so nothing would verify until RKE2's next start. adopt
# records the backend kube-proxy runs on now, re-runs the generator and starts
# verify and watch; it never restarts RKE2. It waits up to 60s for
# kube-proxy's first sync and says what to do when it cannot tell.
if [ -d /run/systemd/system ] && [ ! -e /run/rke2-proxy-backend/plan.json ] &&
	{ systemctl is-active --quiet rke2-server.service || systemctl is-active --quiet rke2-agent.service; }; then
	/usr/bin/rke2-proxy-backend adopt --wait=60s || true
fi
exit 0
