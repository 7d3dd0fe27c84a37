#!/usr/bin/env bash
# A node's life under real systemd (issue 18): each case is its own nspawn
# boot of the cached Debian bookworm root with the built .deb, RKE2's unit
# files (rke2-server and rke2-agent, as RKE2's tarball installs both), the
# RKE2 stand-in and kube-proxy's real proxier, as in boot.sh. In the guest,
# lib/guest-lifecycle.sh waits for RKE2, verify and watch, runs the case,
# and checks that verify ends ok and that no unit failed.
#
#   restart-legacy   RKE2's pre-2025 units (each Conflicts= the other),
#                    watch active: `systemctl restart rke2-server` succeeds
#                    and watch restarts with it; stop/start follow RKE2
#   restart-legacy-agent  the same on an agent (rke2-agent enabled)
#   restart-current  the same with RKE2's current units
#   switch-legacy    `rke2-proxy-backend switch --to iptables-nft` on the
#                    older units (it restarts RKE2): boot.sh's switch checks
#   upgrade          the package built from the base commit (BASE_COMMIT,
#                    whose config was a conffile), its config edited, then
#                    exactly `apt-get install -y ./…_$VERSION.1-1_ARCH.deb`
#                    on the running node (no flag, stdin /dev/null): no
#                    question, the config byte for byte the same, watch on
#                    the new binary (new PID, /proc/PID/exe not deleted),
#                    the generator's drop-ins written again, RKE2 untouched
#                    (same MainPID and InvocationID)
#   rke2-later       the node boots without RKE2; RKE2 installed as its
#                    install.sh does (units in /usr/local/lib/systemd/system,
#                    nothing enabled), daemon-reload, enable --now
#                    rke2-server: the generator wired the drop-in at the
#                    daemon-reload, apply and verify ran at that first start
#   reinstall        apt-get remove, apt-get install: watch enabled again
#   purge            custom verify.textfile_dir, bench's and switch's state:
#                    apt-get purge leaves nothing of ours and no warning
# (The RPM scriptlets' equivalents run in rpm.sh, with rpm --root.)
#
# LIFECYCLE_CASES="upgrade purge" runs some cases only. Needs: root,
# systemd-nspawn, debootstrap, dpkg, make, go; network only for the first
# debootstrap.
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/lifecycle.sh"
need_root
need_tools systemd-nspawn debootstrap dpkg make go timeout mountpoint
ensure_packages
ensure_bookworm_root

deb=$(host_package deb)
work=$(mktemp -d /tmp/rke2pb-lifecycle.XXXXXX)
trap 'cleanup_overlays; rm -rf "$work"' EXIT
lc_prepare "$work"
next=$(build_next_version deb "$work/next")
ensure_base_packages "$BASE_COMMIT"
cases=${LIFECYCLE_CASES:-restart-legacy restart-legacy-agent restart-current switch-legacy upgrade rke2-later reinstall purge}

for c in $cases; do
	case $c in
	restart-legacy) lc_guest "$c" legacy server "$deb" ;;
	restart-legacy-agent) lc_guest "$c" legacy agent "$deb" ;;
	restart-current) lc_guest "$c" current server "$deb" ;;
	switch-legacy)
		# boot.sh's switch boot (lib/guest-watch.sh), on the older units:
		# switch restarts RKE2, and rolls back by restarting it again.
		lc_guest "$c" legacy server "$deb"
		install -D -m 0644 "$LC_LIB/guest-watch.sh" "$R/usr/local/lib/boot-test/guest-watch.sh"
		echo 10s >"$R/usr/local/lib/rke2-standin/kube-proxy-resync"
		;;
	upgrade)
		lc_guest "$c" current server "$BASE_DEB" "$next"
		# The operator's edit (lc_guest pinned legacy in it), kept to compare.
		cp -p "$R/etc/rke2-proxy-backend/config.yaml" "$R/etc/boot-test/config.before"
		;;
	rke2-later)
		# What RKE2's install.sh puts there comes later, in the guest.
		lc_guest "$c" current server "$deb"
		mkdir -p "$R/root/rke2-install"
		mv "$R/usr/local/bin/rke2" "$R/usr/local/lib/systemd/system/rke2-server.service" "$R/usr/local/lib/systemd/system/rke2-agent.service" "$R/root/rke2-install/"
		rm "$R/etc/systemd/system/multi-user.target.wants/rke2-server.service"
		;;
	reinstall) lc_guest "$c" legacy server "$deb" "$deb" ;;
	purge)
		lc_guest "$c" legacy server "$deb"
		mkdir -p "$R/srv/metrics"
		sed -i 's|^  textfile_dir: .*|  textfile_dir: /srv/metrics|' "$R/etc/rke2-proxy-backend/config.yaml"
		grep -qx '  textfile_dir: /srv/metrics' "$R/etc/rke2-proxy-backend/config.yaml" || fail "purge: could not set verify.textfile_dir"
		# What `bench` (hostfs.BenchFile) and `switch` (its copy of the
		# config, switchover.BackupSuffix) leave; bench takes minutes and
		# switch is boot.sh's, so their files are laid down here.
		mkdir -p "$R/var/lib/rke2-proxy-backend"
		echo '{"schema":"bench/v1"}' >"$R/var/lib/rke2-proxy-backend/bench.json"
		cp "$R/etc/rke2-proxy-backend/config.yaml" "$R/etc/rke2-proxy-backend/config.yaml.before-switch"
		;;
	*) fail "unknown case $c (known: restart-legacy restart-legacy-agent restart-current switch-legacy upgrade rke2-later reinstall purge)" ;;
	esac
	lc_boot "$c"
done
log "matrix: ${LC_TIMES[*]}"
pass "every case: ${LC_TIMES[*]}"
