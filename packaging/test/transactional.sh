#!/usr/bin/env bash
# Transactional installs (SLE Micro's transactional-update, issue 32 item 5):
# the .rpm installed with `rpm --root` into a node root whose RKE2 (the
# stand-in, kube-proxy's real proxier, rke2-server enabled) is set up as on a
# running node, with TRANSACTIONAL_UPDATE=true as transactional-update sets
# it, /run/systemd/system present (transactional-update's chroot sees the
# running system's /run) and a systemctl first on the scriptlets' PATH that
# records every call:
#
#   install  the scriptlets call systemctl only for the offline enable of
#            watch; nothing under /run changes; every path that changed is
#            the package's, under /var, or watch's enablement links
#   boot     the root's first boot (nspawn, real systemd): the generator
#            wires rke2-server, whose start runs apply (plan.json, the RKE2
#            drop-in), verify passes, watch runs, check says ok: the
#            runtime work the scriptlets left to it, adoption's result
#   upgrade  (after the boot) rpm -U of $VERSION.1 the same way: systemctl
#            only asked offline (is-enabled, reenable), /run untouched
#   erase    rpm -e the same way: only the offline disable, /run untouched
#
# Costs one nspawn boot (a few seconds in the guest) and three rpm runs.
# Needs: root, rpm, systemd-nspawn, debootstrap, make, go.
source "$(dirname "$0")/lib/common.sh"
need_root
need_tools rpm systemd-nspawn debootstrap make go timeout mountpoint chroot
ensure_packages
ensure_bookworm_root

pkg=$(host_package rpm)
work=$(mktemp -d /tmp/rke2pb-transactional.XXXXXX)
trap 'cleanup_overlays; rm -rf "$work"' EXIT
calls=/var/tmp/systemctl.calls
# rpm's database in the root (SUSE: usr/lib/sysimage/rpm; Debian's rpm
# keeps it in root/.rpmdb): rpm's own, not the scriptlets'.
rpmdb=$(rpm -E '%{_dbpath}' | sed "s|^~|/root|; s|^$HOME|/root|; s|^/||")

new_overlay "$work/node"
R=$work/node/merged

# A running RKE2 node, as its tarball installs it (lib/lifecycle.sh's way).
build_standin "$R/usr/local/bin/rke2"
install_kube_proxy_oracle "$R/usr/local/bin/rke2" "$R"
mkdir -p "$R/usr/local/lib/systemd/system" "$R/etc/systemd/system/multi-user.target.wants" "$R/etc/rancher/rke2"
cp "$REPO/internal/testkit/testhost/units/rke2-server.service" "$REPO/internal/testkit/testhost/units/rke2-agent.service" "$R/usr/local/lib/systemd/system/"
ln -sf /usr/local/lib/systemd/system/rke2-server.service "$R/etc/systemd/system/multi-user.target.wants/rke2-server.service"
printf 'token: transactional-test-secret\n' >"$R/etc/rancher/rke2/config.yaml"
rpm --root "$R" --initdb

# What transactional-update's chroot shows the scriptlets: the running
# system's /run (systemd runs there, so systemctl would talk to it unless
# told SYSTEMD_OFFLINE=1, which the scriptlets set), and a recording
# systemctl first on the PATH rpm gives scriptlets (/usr/sbin before
# /usr/bin). It runs the real systemctl only for what works offline on the
# snapshot's files, with the scriptlet's environment.
record_systemctl() {
	mkdir -p "$R/run/systemd/system"
	cat >"$R/usr/sbin/systemctl" <<REC
#!/bin/sh
echo "\$*" >>$calls
case \$1 in
enable | disable | reenable | is-enabled | preset) exec /usr/bin/systemctl "\$@" ;;
esac
exit 1
REC
	chmod 0755 "$R/usr/sbin/systemctl"
}
record_systemctl

# tree ROOT prints every path under ROOT with what tells a change (type,
# mode, size, mtime, link target), /proc, /sys and /dev aside.
tree() {
	(cd "$1" && find . -xdev \( -path ./proc -o -path ./sys -o -path ./dev \) -prune -o -printf '%P %y %m %s %T@ %l\n') | LC_ALL=C sort
}

# transactional WHAT RPM-ARGS...: rpm --root with TRANSACTIONAL_UPDATE=true;
# fails unless systemctl was called exactly as $want (calls joined by ;),
# and unless every path that changed is the package's (rpm -ql, before or
# after), under /var, one of watch's enablement links, or a directory
# holding one of those.
transactional() {
	local what=$1 owned changed bad
	shift
	rm -f "$R$calls"
	tree "$R" >"$work/before"
	rpm --root "$R" -qla 2>/dev/null | sort -u >"$work/owned-before"
	run_logged "$work/$what.log" "TRANSACTIONAL_UPDATE=true rpm $* failed" env TRANSACTIONAL_UPDATE=true rpm --root "$R" "$@"
	tree "$R" >"$work/after"
	got=$(tr '\n' ';' <"$R$calls" 2>/dev/null || true)
	rm -f "$R$calls"
	[ "$got" = "$want" ] || fail "$what: the scriptlets called systemctl: '$got', want '$want' (nothing but offline enablement may run in a transactional update)"
	owned=$( (cat "$work/owned-before"; rpm --root "$R" -qla 2>/dev/null) | sed 's|^/||' | sort -u)
	changed=$({ diff "$work/before" "$work/after" || true; } | sed -n 's/^[<>] \([^ ]*\) .*/\1/p' | sort -u)
	bad=""
	for p in $changed; do
		case $p in
		var | var/* | "$rpmdb" | "$rpmdb"/*) continue ;;
		etc/systemd/system/*.wants/rke2-proxy-backend-watch.service) continue ;;
		esac
		grep -qxF "$p" <<<"$owned" && continue
		# A directory whose entries changed, when one of them is allowed.
		if [ -d "$R/$p" ] || grep -q "^$p d " "$work/before"; then
			grep -q "^$p/" <<<"$changed" && continue
		fi
		bad="$bad $p"
	done
	[ -z "$bad" ] || fail "$what changed paths outside the package, /var and watch's enablement:$bad"
	! grep -q '^run/' <<<"$changed" || fail "$what changed /run (the running system's): $(grep '^run/' <<<"$changed" | tr '\n' ' ')"
	pass "$what with TRANSACTIONAL_UPDATE=true: systemctl '${got:-nothing}'; changed only the package's files, /var and watch's enablement ($(wc -w <<<"$changed") paths)"
}

want="enable rke2-proxy-backend-watch.service;"
transactional install -i --nodeps "$pkg"
cmp -s "$R/etc/rke2-proxy-backend/config.yaml" "$R/usr/share/rke2-proxy-backend/config.yaml.example" || fail "install: the config was not created in the snapshot"
[ -L "$R/etc/systemd/system/rke2-server.service.wants/rke2-proxy-backend-watch.service" ] || fail "install: watch not enabled offline"

# The first boot of the new snapshot. The recorder and the fake /run are
# the harness's, not the snapshot's (nspawn mounts a fresh /run anyway).
rm -f "$R/usr/sbin/systemctl"
rm -rf "$R/run/systemd"
cat >"$R/usr/local/sbin/first-boot" <<'GUEST'
#!/bin/bash
# transactional.sh's first boot: the runtime work the scriptlets left.
set -u
. /usr/local/lib/boot-test/guest-prelude.sh
guest_result /var/lib/boot-test/result-1
verify=rke2-proxy-backend-verify.service
watch=rke2-proxy-backend-watch.service
plan=/run/rke2-proxy-backend/plan.json
wait_for 120 sh -c "[ \"\$(systemctl show -P ActiveState rke2-server.service)\" = active ] && [ \"\$(systemctl show -P ExecMainStartTimestampMonotonic $verify)\" != 0 ] && [ \"\$(systemctl show -P ActiveState $verify)\" != activating ]" ||
	bad "rke2-server active and verify run within 120s"
check "the generator wired rke2-server (apply before it starts)" sh -c "systemctl cat --no-pager rke2-server.service | grep -q '^ExecStartPre=/usr/bin/rke2-proxy-backend apply --backend='"
check "apply recorded this boot's plan, applied" sh -c "grep -q '\"schema\": 2' $plan && grep -q '\"by\": \"apply\"' $plan"
check "apply wrote RKE2's drop-in" test -f /etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml
check "$verify passed (Result=success, exit 0)" test "$(prop $verify Result)/$(prop $verify ExecMainStatus)" = success/0
check "$watch runs with RKE2" wait_for 30 sh -c "[ \"\$(systemctl show -P ActiveState $watch)\" = active ]"
check "check exit 0" wait_for 60 /usr/bin/rke2-proxy-backend check
check "no unit failed" sh -c "[ -z \"\$(systemctl --failed --no-legend --plain)\" ]"
{
	systemctl --failed --no-pager
	systemctl status --no-pager rke2-server.service $verify $watch
	cat $plan
	journalctl -b --no-pager -o short-monotonic | grep -i -e rke2 -e generator | tail -n 80
} >/var/lib/boot-test/diag-1 2>&1
guest_done
GUEST
boot_guest_test "$R" first-boot 300 "the first boot after the transactional install"
pass "first boot: the generator wired rke2-server, apply recorded the plan and wrote the drop-in, verify passed, watch runs, check ok (in ${GUEST_TOOK}s)"

# An upgrade and an erase the same way, in the root as the boot left it.
record_systemctl
next=$(build_next_version rpm "$work/next")
want="is-enabled --quiet rke2-proxy-backend-watch.service;reenable rke2-proxy-backend-watch.service;"
transactional upgrade -U --nodeps "$next"
want="disable rke2-proxy-backend-watch.service;"
transactional erase -e rke2-proxy-backend
