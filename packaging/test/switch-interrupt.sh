#!/usr/bin/env bash
# A real `rke2-proxy-backend switch` killed mid-wait by SIGTERM, in a real
# systemd booted with systemd-nspawn (issue 19, item 1): what
# system-upgrade-controller's activeDeadlineSeconds, or Ctrl-C, does.
#
#   setup  as boot.sh: the built .deb installed with dpkg --root into an
#          overlay of the cached bookworm root, RKE2's real rke2-server.service,
#          the RKE2 stand-in with kube-proxy's real proxier (the oracle) kept
#          running (resync 10s), the host's iptables alternative on legacy,
#          backend: iptables-legacy.
#   hold   a drop-in gives rke2-server an ExecStartPost that, while the guest
#          holds /run/switch-interrupt/hold and kube-proxy runs on
#          iptables-nft, deletes kube-proxy's nat PREROUTING jump once RKE2 is
#          ready: kube-proxy's skeleton is then incomplete (the stand-in's
#          kube-proxy does not notice a missing jump), as on a node whose
#          kube-proxy is slow after the restart, so the switch really waits
#          in its wait step until --timeout.
#   boot   verify passes on legacy; `switch --to iptables-nft` runs; once it
#          logs its wait step (its journal saying step "wait", and still
#          waiting a second later) the guest sends SIGTERM. The switch must roll back: exit 1 saying so and
#          naming the signal, /etc/rke2-proxy-backend/config.yaml byte for
#          byte the original, no journal left, kube-proxy (the stand-in) back
#          on iptables-legacy, `verify --expect iptables-legacy` passing, the
#          verify unit's last run successful, no failed unit.
#   then   (issue 31 items 13, 14) the alternative moved to nft first, as the
#          docs/switching.md says, and a switch interrupted by SIGINT mid-wait: the
#          rollback holds, but its last line says the node still fails
#          verify, naming the alternative and the command that restores it,
#          and check agrees; the dry run said so first. The fix the line
#          names (alternative back, restart RKE2, cleanup --kubelet-hints)
#          leaves the verify unit succeeded and check 0 with no other start.
#
# Needs: root, systemd-nspawn (systemd-container), debootstrap, dpkg, make,
# go; overlayfs (falls back to a copy). Network only for the first
# debootstrap (Debian mirror).
source "$(dirname "$0")/lib/common.sh"
boot_test_setup switch-interrupt
new_overlay "$work/guest"
R=$work/guest/merged

log "installing $(basename "$deb") with dpkg --root"
run_logged "$work/dpkg.log" "dpkg --root -i failed" dpkg --root "$R" -i "$deb"
"$R/usr/bin/rke2-proxy-backend" switch --help 2>/dev/null | grep -q -- '--rollback' ||
	log "MISSING in the built binary: switch --rollback (the boot is run anyway and will fail)"

log "building the RKE2 stand-in"
build_standin "$R/usr/local/bin/rke2"
install_kube_proxy_oracle "$R/usr/local/bin/rke2" "$R"
echo 10s >"$R/usr/local/lib/rke2-standin/kube-proxy-resync"

mkdir -p "$R/usr/local/lib/systemd/system" "$R/etc/systemd/system/multi-user.target.wants"
cp "$REPO/internal/testkit/testhost/units/rke2-server.service" "$R/usr/local/lib/systemd/system/rke2-server.service"
ln -sf /usr/local/lib/systemd/system/rke2-server.service "$R/etc/systemd/system/multi-user.target.wants/rke2-server.service"
mkdir -p "$R/etc/rancher/rke2"
printf 'token: switch-interrupt-secret\n' >"$R/etc/rancher/rke2/config.yaml"
cfg=$R/etc/rke2-proxy-backend/config.yaml
grep -q '^backend: auto$' "$cfg" || fail "the shipped example no longer has 'backend: auto' (update this test)"
sed -i 's/^backend: auto$/backend: iptables-legacy/; s/^  wait: .*/  wait: 60s/' "$cfg"
chroot "$R" update-alternatives --quiet --set iptables /usr/sbin/iptables-legacy
chroot "$R" update-alternatives --quiet --set ip6tables /usr/sbin/ip6tables-legacy

# The hold: kube-proxy incomplete in iptables-nft right after RKE2 is ready.
mkdir -p "$R/etc/systemd/system/rke2-server.service.d"
printf '[Service]\nExecStartPost=-/usr/local/sbin/kube-proxy-late\n' >"$R/etc/systemd/system/rke2-server.service.d/90-switch-interrupt.conf"
cat >"$R/usr/local/sbin/kube-proxy-late" <<'HOLD'
#!/bin/sh
# switch-interrupt.sh: while held, leave kube-proxy's nft skeleton short of
# one base-chain jump.
[ -e /run/switch-interrupt/hold ] || exit 0
[ "$(cat /var/lib/rke2-standin/backend 2>/dev/null)" = iptables-nft ] || exit 0
rule=$(iptables-nft-save -t nat | grep -m1 -e '^-A PREROUTING .*-j KUBE-SERVICES') || exit 0
# shellcheck disable=SC2086 # the rule's words are iptables arguments
eval "iptables-nft -t nat $(echo "$rule" | sed 's/^-A /-D /')"
echo held >/run/switch-interrupt/held
HOLD
chmod 0755 "$R/usr/local/sbin/kube-proxy-late"

# The guest's part, run by switch-interrupt.service at boot.
cat >"$R/usr/local/sbin/switch-interrupt" <<'GUEST'
#!/bin/bash
set -u
out=/var/lib/boot-test
. /usr/local/lib/boot-test/guest-prelude.sh
guest_result "$out/result-1"
mkdir -p /run/switch-interrupt
verify=rke2-proxy-backend-verify.service
journal=/var/lib/rke2-proxy-backend/switch.json
finish() {
	{
		systemctl --no-pager --failed
		journalctl -b --no-pager -u rke2-server.service -u $verify | tail -n 60
	} >>"$out/diag-1" 2>&1
	guest_done
}
d=$((SECONDS + 120))
# Result is "success" before a unit ever ran: wait for a finished run.
until [ "$(prop $verify ExecMainStartTimestampMonotonic)" -gt 0 ] 2>/dev/null &&
	[ "$(prop $verify ActiveState)" != activating ] && [ "$(prop $verify Result)" = success ]; do
	[ $SECONDS -ge $d ] && { bad "verify did not pass on iptables-legacy after boot"; finish; }
	sleep 0.5
done
ok "verify passed on iptables-legacy after boot"
cp /etc/rke2-proxy-backend/config.yaml /run/switch-interrupt/config.orig

touch /run/switch-interrupt/hold
/usr/bin/rke2-proxy-backend switch --to iptables-nft --timeout 120s >/run/switch-interrupt/stdout 2>/run/switch-interrupt/stderr &
pid=$!
d=$((SECONDS + 120))
until grep -q "\[started\]  wait for kube-proxy's rules in iptables-nft" /run/switch-interrupt/stderr; do
	if [ $SECONDS -ge $d ] || ! kill -0 $pid 2>/dev/null; then
		bad "the switch never reached its wait step (exit: $(wait $pid 2>/dev/null; echo $?))"
		sed 's/^/    switch: /' /run/switch-interrupt/stderr /run/switch-interrupt/stdout >>"$result"
		finish
	fi
	sleep 0.1
done
sleep 1
check "RKE2 restarted onto iptables-nft before the signal" grep -qx iptables-nft /var/lib/rke2-standin/backend
check "kube-proxy's nft skeleton was held incomplete" test -e /run/switch-interrupt/held
check "the config says iptables-nft before the signal" grep -q '^backend: iptables-nft' /etc/rke2-proxy-backend/config.yaml
check "the switch's journal says step wait" grep -q '"step": "wait"' $journal
if ! grep -q "\[finished\] wait for kube-proxy's rules in iptables-nft" /run/switch-interrupt/stderr && kill -0 $pid 2>/dev/null; then
	ok "the switch is still in its wait step a second later"
else
	bad "the switch left its wait step before the signal"
fi
rm -f /run/switch-interrupt/hold
kill -TERM $pid
wait $pid
rc=$?
sed 's/^/    switch: /' /run/switch-interrupt/stderr >>"$result"
[ $rc = 1 ] && ok "switch exits 1 after SIGTERM" || bad "switch exited $rc after SIGTERM, want 1 (rolled back)"
check "switch says it rolled back because of the signal" sh -c "grep -q 'rolled back to the previous backend: iptables-legacy: .*interrupted by terminated' /run/switch-interrupt/stderr"
check "the config is the original byte for byte" cmp /run/switch-interrupt/config.orig /etc/rke2-proxy-backend/config.yaml
check "no switch journal is left" test ! -e $journal
check "kube-proxy (the stand-in) is back on iptables-legacy" grep -qx iptables-legacy /var/lib/rke2-standin/backend
check "rke2-proxy-backend verify --expect iptables-legacy passes" /usr/bin/rke2-proxy-backend verify --expect iptables-legacy
check "no kube-proxy rules left in iptables-nft" sh -c "! iptables-nft-save | grep -e KUBE-SERVICES -e KUBE-PROXY-CANARY"
check_settled $verify

# Phase 2: docs/switching.md's order, the alternative moved first, then Ctrl-C.
# The rollback holds but leaves the alternative on nft: kubelet writes its
# hints there, so the node fails verify, and the switch must say so.
update-alternatives --quiet --set iptables /usr/sbin/iptables-nft
update-alternatives --quiet --set ip6tables /usr/sbin/ip6tables-nft
/usr/bin/rke2-proxy-backend switch --to iptables-nft --dry-run >/run/switch-interrupt/dry 2>&1
check "the dry run says a rollback would leave the alternative on nft" grep -q "should the switch roll back to iptables-legacy, verify fails" /run/switch-interrupt/dry
touch /run/switch-interrupt/hold
rm -f /run/switch-interrupt/held
/usr/bin/rke2-proxy-backend switch --to iptables-nft --timeout 120s >/run/switch-interrupt/stdout2 2>/run/switch-interrupt/stderr2 &
pid=$!
d=$((SECONDS + 120))
until grep -q "\[started\]  wait for kube-proxy's rules in iptables-nft" /run/switch-interrupt/stderr2; do
	if [ $SECONDS -ge $d ] || ! kill -0 $pid 2>/dev/null; then
		bad "the second switch never reached its wait step"
		sed 's/^/    switch: /' /run/switch-interrupt/stderr2 >>"$result"
		finish
	fi
	sleep 0.1
done
sleep 1
rm -f /run/switch-interrupt/hold
kill -INT $pid
wait $pid
rc=$?
sed 's/^/    switch: /' /run/switch-interrupt/stderr2 >>"$result"
tail -n 1 /run/switch-interrupt/stderr2 >/run/switch-interrupt/last2
[ $rc = 1 ] && ok "switch exits 1 after SIGINT" || bad "switch exited $rc after SIGINT, want 1"
check "its last line says it rolled back" grep -q "rolled back to the previous backend: iptables-legacy: .*interrupted by interrupt" /run/switch-interrupt/last2
check "its last line says the node still fails verify, naming the alternative" grep -q "the node still fails verify: the host's iptables alternative points at iptables-nft while kube-proxy uses iptables-legacy" /run/switch-interrupt/last2
check "its last line names the command that restores it" grep -q "update-alternatives --set iptables /usr/sbin/iptables-legacy" /run/switch-interrupt/last2
check "no one-boot override text without an override" sh -c "! grep -q 'one-boot override' /run/switch-interrupt/stderr2"
check "the config is the original byte for byte again" cmp /run/switch-interrupt/config.orig /etc/rke2-proxy-backend/config.yaml
check "check agrees the node fails (exit 1)" sh -c "/usr/bin/rke2-proxy-backend check; [ \$? = 1 ]"

# The fix the line names: the alternative back, RKE2 restarted (its
# verify fails on kubelet's hints left in nft), cleanup --kubelet-hints:
# the verify unit must not stay failed until RKE2's next start.
update-alternatives --quiet --set iptables /usr/sbin/iptables-legacy
update-alternatives --quiet --set ip6tables /usr/sbin/ip6tables-legacy
systemctl restart rke2-server.service
info "verify unit after the restart: $(prop $verify ActiveState) (last result $(prop $verify Result))"
/usr/bin/rke2-proxy-backend cleanup --kubelet-hints >/run/switch-interrupt/cleanup 2>&1
sed 's/^/    cleanup: /' /run/switch-interrupt/cleanup >>"$result"
check "cleanup --kubelet-hints says verify passes now" grep -q "cleanup: verify passes now" /run/switch-interrupt/cleanup
wait_for 60 sh -c "[ \"\$(systemctl show -P ActiveState $verify)\" != activating ] && [ \"\$(systemctl show -P Result $verify)\" = success ]"
check "check exits 0 after the fix" /usr/bin/rke2-proxy-backend check
check_settled $verify
finish
GUEST

log "booting: switch --to iptables-nft, SIGTERM in its wait step"
start=$SECONDS
boot_guest_test "$R" switch-interrupt 400 "switch interrupted by SIGTERM mid-wait"
pass "switch killed by SIGTERM mid-wait rolled back: the original config, no journal, verify passing ($((SECONDS - start))s)"
