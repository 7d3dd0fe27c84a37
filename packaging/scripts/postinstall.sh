#!/bin/sh
# Runs after install and upgrade (deb: postinst configure; rpm: %post 1|2).
# It only asks a running systemd to re-run generators, so the new generator
# writes its drop-ins for rke2-server/rke2-agent. RKE2 is NOT restarted: the
# new decision takes effect at RKE2's next start (or the next boot), never in
# the middle of an upgrade. In a chroot or image build there is no running
# systemd and nothing happens; the generator runs at first boot.
#
# On a first install (deb: configure with no old version; rpm: 1) it also
# enables rke2-proxy-backend-watch.service (WantedBy= the RKE2 units, so it
# starts with RKE2's next start; nothing starts now). An upgrade leaves the
# administrator's enable/disable choice alone. `systemctl enable` only makes
# symlinks, so it also works in a chroot or image build.
set -e

watch_unit=rke2-proxy-backend-watch.service

case "$1:${2:-}" in
configure: | 1:)
	systemctl enable "$watch_unit" >/dev/null 2>&1 || true
	;;
esac

if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null 2>&1 || true
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
