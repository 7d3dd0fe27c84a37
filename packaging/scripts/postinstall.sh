#!/bin/sh
# Runs after install and upgrade (deb: postinst configure; rpm: %post 1|2).
# It only asks a running systemd to re-run generators, so the new generator
# writes its drop-ins for rke2-server/rke2-agent. RKE2 is NOT restarted: the
# new decision takes effect at RKE2's next start (or the next boot), never in
# the middle of an upgrade. In a chroot or image build there is no running
# systemd and nothing happens; the generator runs at first boot.
set -e

if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null 2>&1 || true
fi
exit 0
