#!/usr/bin/env bash
# Real-boot end-to-end test: the built .deb in a real systemd, booted twice
# with systemd-nspawn from a minimal Debian bookworm root.
#
#   setup   debootstrap once (.cache/bookworm-root), an overlay per run,
#           `dpkg --root` installs the .deb, fake-but-faithful RKE2 in the
#           tarball layout: RKE2's real rke2-server.service text in
#           /usr/local/lib/systemd/system, /usr/local/bin/rke2 = the stand-in
#           (packaging/test/standin) that records what RKE2 would read, plays
#           kubelet, runs kube-proxy's real proxier (the oracle,
#           test/kubeproxy, built for the stand-in's Kubernetes minor) in the
#           guest's own network namespace and then sends READY=1.
#   boot 1  config backend: iptables-legacy (the NAS case)
#   boot 2  same disk, kernel command line rke2.proxy_backend=iptables-nft
#   boot 3  legacy again, then a live switch to iptables-nft (config edit,
#           daemon-reload, RKE2 restart, no reboot): stranded legacy rules
#           must be reported by verify and removed by cleanup
#   boot 4  the operator config broken (backend: modern) with the drop-in of
#           boot 3 still on disk: apply exits 2, RKE2 does not start, the
#           stale drop-in stays unused (boot_broken_config, self-contained)
#   boot 5  iptables-nft with kube-proxy resyncing: a firewall reload is
#           injected, watch logs the drift and the recovery (boot_watch_flush)
#   boot 6  iptables-legacy, then `rke2-proxy-backend switch --to
#           iptables-nft`; boot 7 the reboot after it (boot_switch)
#
# In each boot the guest's boot-test.service asserts from inside (generator
# ran, `systemctl cat rke2-server` shows our drop-in, apply wrote the RKE2
# drop-in and the stand-in read it and chose the backend, verify ran and
# passed, no unit failed) and powers the guest off.
#
# A reboot starts with empty netfilter tables: every nspawn boot gets a fresh
# network namespace (--private-network), as a real reboot gets a fresh
# kernel. So boot 2 must find NO kube-proxy rules left in legacy from boot 1
# and verify must pass; stranded rules only arise from switching backends
# without a reboot (restarting RKE2), which verify's own tests cover.
#
# Needs: root, systemd-nspawn (systemd-container), debootstrap, dpkg, make,
# go; overlayfs (falls back to a copy). Network only for the first
# debootstrap (Debian mirror).
source "$(dirname "$0")/lib/common.sh"
boot_test_setup boot
new_overlay "$work/guest"
R=$work/guest/merged

log "installing $(basename "$deb") with dpkg --root"
run_logged "$work/dpkg.log" "dpkg --root -i failed (maintainer scripts must not fail without a running systemd)" \
	dpkg --root "$R" -i "$deb"
[ -x "$R/usr/bin/rke2-proxy-backend" ] || fail "the package did not install /usr/bin/rke2-proxy-backend"

# Name the pieces this test needs from the binary, so a failure below says
# what is missing rather than only what did not happen.
missing=()
for sub in generate apply verify "render expected"; do
	# shellcheck disable=SC2086 # $sub is one or two words on purpose
	"$R/usr/bin/rke2-proxy-backend" $sub --help >/dev/null 2>&1 || missing+=("rke2-proxy-backend $sub")
done
[ "${#missing[@]}" = 0 ] || log "MISSING in the built binary: ${missing[*]} (the boot is run anyway and will fail)"

log "building the RKE2 stand-in"
build_standin "$R/usr/local/bin/rke2"

install_kube_proxy_oracle "$R/usr/local/bin/rke2" "$R"

# RKE2's rke2-server.service as its tarball installs it (rancher/rke2,
# bundle/lib/systemd/system/rke2-server.service), verbatim; the same file
# the Go fixtures embed.
mkdir -p "$R/usr/local/lib/systemd/system" "$R/etc/systemd/system/multi-user.target.wants"
cp "$REPO/internal/testkit/testhost/units/rke2-server.service" "$R/usr/local/lib/systemd/system/rke2-server.service"
ln -sf /usr/local/lib/systemd/system/rke2-server.service "$R/etc/systemd/system/multi-user.target.wants/rke2-server.service"

# The operator's RKE2 config, and our config: the shipped example edited the
# way the NAS agent example does it (forced to iptables-legacy), with a
# shorter verify wait.
mkdir -p "$R/etc/rancher/rke2"
printf 'token: boot-test-secret\nwrite-kubeconfig-mode: "0600"\n' >"$R/etc/rancher/rke2/config.yaml"
cp "$R/etc/rancher/rke2/config.yaml" "$work/rke2-config.orig"
cfg=$R/etc/rke2-proxy-backend/config.yaml
[ -f "$cfg" ] || fail "the package did not install /etc/rke2-proxy-backend/config.yaml"
grep -q '^backend: auto$' "$cfg" || fail "the shipped example no longer has 'backend: auto' (update this test)"
sed -i 's/^backend: auto$/backend: iptables-legacy/; s/^  wait: .*/  wait: 60s/' "$cfg"

# The in-guest assertions, run by boot-test.service at every boot.
install -m 0755 "$(dirname "$0")/lib/guest-assert.sh" "$R/usr/local/sbin/boot-test"
guest_test_unit "$R" boot-test "boot"
mkdir -p "$R/etc/boot-test"

# host_iptables legacy|nft points the guest's iptables alternative (used by
# kubelet) at a backend, as `update-alternatives --set` does on a node.
host_iptables() {
	chroot "$R" update-alternatives --quiet --set iptables "/usr/sbin/iptables-$1" &&
		chroot "$R" update-alternatives --quiet --set ip6tables "/usr/sbin/ip6tables-$1" ||
		fail "update-alternatives in the guest root failed"
}

# boot N EXPECTED_BACKEND MODE [KERNEL-CMDLINE-WORDS...]
boot() {
	local n=$1 expect=$2 mode=$3
	shift 3
	echo "$n" >"$R/etc/boot-test/boot"
	echo "$expect" >"$R/etc/boot-test/expect"
	echo "$mode" >"$R/etc/boot-test/mode"
	log "boot $n: expecting $expect${*:+, kernel command line: $*}"
	local result=$R/var/lib/boot-test/result-$n
	guest_boot "$R" "$result" "$work/console-$n.log" 300 "boot $n" "$@"
	guest_verdict "$result" "$R/var/lib/boot-test/diag-$n" "boot $n" "${missing[*]:+; missing from the binary: ${missing[*]}}"
	pass "boot $n on $expect in ${GUEST_TOOK}s (boot, RKE2 stand-in ready, verify, poweroff)"
}

# kubelet writes its hint chains with the host's iptables, so a node forced
# to legacy has its alternative on legacy too (a NAS has nothing else).
host_iptables legacy
boot 1 iptables-legacy plain
# The operator moves the node to iptables-nft: kernel command line, and the
# host's alternative as verify's advice says.
host_iptables nft
boot 2 iptables-nft plain rke2.proxy_backend=iptables-nft
# Back to the config's legacy (no command line), then switch to iptables-nft
# in the running guest without a reboot: verify must find the stranded
# kube-proxy rules in legacy, cleanup must remove them, and what remains is
# kubelet's hint in legacy (its alternative was not switched).
host_iptables legacy
boot 3 iptables-legacy live-switch

# --- broken operator config (issue 9 item 16), self-contained ---------------
# boot_broken_config: /etc/rke2-proxy-backend/config.yaml gets a bad value
# while the drop-in an earlier boot wrote is still on disk. The generator must
# still wire apply, apply must exit 2 naming the file, key and value, RKE2
# (the stand-in) must not start, the stale drop-in must stay unused and
# byte-identical, and the generator's line must reach the journal even though
# a container has no /dev/kmsg (checked after a daemon-reload, when journald
# listens). Its own guest script replaces boot-test for this one boot.
boot_broken_config() {
	local n=$1 saved_cfg=$work/config.yaml.good saved_assert=$work/boot-test.saved
	local dropin=$R/etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml
	[ -f "$dropin" ] || fail "broken config: no drop-in from the earlier boots to go stale"
	cp "$dropin" "$work/stale-dropin"
	cp "$cfg" "$saved_cfg"
	cp "$R/usr/local/sbin/boot-test" "$saved_assert"
	sed -i 's/^backend: .*/backend: modern/' "$cfg"
	rm -rf "$R/var/lib/rke2-standin"
	cat >"$R/usr/local/sbin/boot-test" <<'GUEST'
#!/bin/bash
# boot.sh's broken-config boot: assert from inside, then power off.
set -u
n=$(cat /etc/boot-test/boot)
out=/var/lib/boot-test
. /usr/local/lib/boot-test/guest-prelude.sh
guest_result "$out/result-$n"
# Wait (bounded) for apply to have refused at least once.
deadline=$((SECONDS + 90))
until journalctl -b -u rke2-server.service --no-pager | grep -q 'RKE2 will not start until this is fixed'; do
	[ $SECONDS -ge $deadline ] && break
	sleep 1
done
check "generated drop-in runs apply without a backend" sh -c "systemctl cat rke2-server.service | grep -qx 'ExecStartPre=/usr/bin/rke2-proxy-backend apply'"
check "no verify is wired" sh -c "! systemctl cat rke2-proxy-backend-verify.service | grep -q 'Generated by rke2-proxy-backend'"
check "apply names the file, key and value" sh -c "journalctl -b -u rke2-server.service --no-pager | grep -q '/etc/rke2-proxy-backend/config.yaml: backend: \"modern\" is not a backend'"
check "apply exited 2" sh -c "journalctl -b -u rke2-server.service --no-pager -o verbose | grep -q 'EXIT_STATUS=2' || journalctl -b -u rke2-server.service --no-pager | grep -q 'status=2/INVALIDARGUMENT'"
check "RKE2 is not running" test "$(systemctl show -P ActiveState rke2-server.service)" != active
check "the stand-in (RKE2) never started" test ! -e /var/lib/rke2-standin/backend
systemctl daemon-reload
sleep 1
check "the generator's line is in the journal without /dev/kmsg" sh -c "journalctl -b -t rke2-proxy-backend-generator --no-pager | grep -q 'exits 2 on this error, so RKE2 does not start until it is fixed'"
{
	echo "== /dev/kmsg: $(ls -l /dev/kmsg 2>&1)"
	systemctl status --no-pager rke2-server.service
	journalctl -b --no-pager | grep -i -e rke2 -e generator | tail -n 60
} >"$out/diag-$n" 2>&1
guest_done
GUEST
	chmod 0755 "$R/usr/local/sbin/boot-test"
	boot "$n" none broken-config
	cp "$saved_assert" "$R/usr/local/sbin/boot-test"
	cp "$saved_cfg" "$cfg"
	cmp -s "$work/stale-dropin" "$dropin" || fail "broken config: the stale drop-in was changed"
	pass "broken config: RKE2 did not start, the stale drop-in stayed unused and unchanged"
}
boot_broken_config 4

# --- watch and switch (issue 12), self-contained ---------------------------
# In these boots kube-proxy stays running as the real one does: the stand-in
# runs the oracle with --resync (kube-proxy's --iptables-sync-period, 30s by
# default, 10s here), so its canary monitor notices a flushed table and
# writes its rules again. The in-guest part is lib/guest-watch.sh.
standin_resync=$R/usr/local/lib/rke2-standin/kube-proxy-resync
watch_dropin=$R/etc/systemd/system/rke2-proxy-backend-watch.service.d/50-boot-test.conf
install -D -m 0644 "$(dirname "$0")/lib/guest-watch.sh" "$R/usr/local/lib/boot-test/guest-watch.sh"

# boot_watch_flush N: on iptables-nft, a firewall reload (every IPv4 chain
# flushed and deleted) is injected after verify passed; watch, with a short
# grace from a drop-in, must log the drift, then the recovery once
# kube-proxy resynced, and put its drift metric back to 0; no unit fails.
boot_watch_flush() {
	local n=$1
	cp "$cfg" "$work/config.yaml.watch"
	sed -i 's/^backend: .*/backend: iptables-nft/' "$cfg"
	host_iptables nft
	echo 10s >"$standin_resync"
	mkdir -p "$(dirname "$watch_dropin")"
	printf '[Service]\nExecStart=\nExecStart=/usr/bin/rke2-proxy-backend watch --poll 500ms --quiet 1s --grace 1s\n' >"$watch_dropin"
	# node_exporter's textfile directory, where the drift metric goes.
	mkdir -p "$R/var/lib/prometheus/node-exporter"
	boot "$n" iptables-nft watch-flush
	rm -rf "$watch_dropin" "$standin_resync" "$R/var/lib/prometheus"
	cp "$work/config.yaml.watch" "$cfg"
}

# boot_switch N: on iptables-legacy, `rke2-proxy-backend switch --to
# iptables-nft` in the running guest (host alternative moved first, as
# verify advises) must exit 0 with its [finished] steps, change only the
# backend: line, leave nothing stranded in legacy, remove the boot-time
# kubelet's hint chains from legacy once the restarted kubelet wrote them in
# nft, and leave verify passing and no unit failed without a reboot; boot
# N+1 on the same disk must come up on iptables-nft, verify passing and no
# unit failed.
boot_switch() {
	local n=$1
	cp "$cfg" "$work/config.yaml.switch"
	sed -i 's/^backend: .*/backend: iptables-legacy/' "$cfg"
	host_iptables legacy
	echo 10s >"$standin_resync"
	boot "$n" iptables-legacy switch
	grep -qx 'backend: iptables-nft' "$cfg" || fail "boot $n: the switch did not leave backend: iptables-nft in the config"
	# The reboot after it: kubelet's hint follows the (switched) host
	# alternative, kube-proxy the recorded backend.
	boot "$((n + 1))" iptables-nft plain
	rm -f "$standin_resync"
	cp "$work/config.yaml.switch" "$cfg"
}
boot_watch_flush 5
boot_switch 6

# The disk after three boots: the operator's RKE2 config untouched, our drop-in
# rewritten for the new backend.
cmp -s "$work/rke2-config.orig" "$R/etc/rancher/rke2/config.yaml" || fail "the operator's RKE2 config.yaml was modified"
pass "the operator's RKE2 config is untouched after three boots"
