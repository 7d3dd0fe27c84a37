#!/usr/bin/env bash
# Real-boot test of issue 19 item 5: kube-proxy's metrics server bound where
# an operator binds it for scraping, not on 127.0.0.1:10249.
#
# The .deb in a real systemd (systemd-nspawn, the cached bookworm root, an
# overlay), RKE2's rke2-server.service with the stand-in (packaging/test/
# standin) as /usr/local/bin/rke2 running kube-proxy's real proxier (the
# oracle). RKE2's config carries kube-proxy-arg
# metrics-bind-address=127.0.0.2:10259 (a specific address; the guest has
# only loopback, so a loopback one stands for the node IP), and the stand-in
# serves kube-proxy's /proxyMode there, as kube-proxy does. verify.wait is
# 60s. verify must end ok with kube-proxy's proxy mode checked, quickly: the
# rules are complete within a second of RKE2's start, so verify has nothing
# to wait for. It used to ask 127.0.0.1:10249, meet a refusal and wait all
# of verify.wait, leaving the unit activating and check saying "no status".
#
# METRICS_ADDRESS_BINARY=PATH boots with PATH as /usr/bin/rke2-proxy-backend
# instead of the package's, to measure another build (the time it took is
# printed either way).
#
# Needs: root, systemd-nspawn, debootstrap, dpkg, make, go, overlayfs (else
# a copy).
source "$(dirname "$0")/lib/common.sh"
boot_test_setup metrics
new_overlay "$work/guest"
R=$work/guest/merged

run_logged "$work/dpkg.log" "dpkg --root -i failed" dpkg --root "$R" -i "$deb"
if [ -n "${METRICS_ADDRESS_BINARY:-}" ]; then
	log "booting with $METRICS_ADDRESS_BINARY instead of the package's binary"
	install -m 0755 "$METRICS_ADDRESS_BINARY" "$R/usr/bin/rke2-proxy-backend"
fi
build_standin "$R/usr/local/bin/rke2"
install_kube_proxy_oracle "$R/usr/local/bin/rke2" "$R"

mkdir -p "$R/usr/local/lib/systemd/system" "$R/etc/systemd/system/multi-user.target.wants"
cp "$REPO/internal/testkit/testhost/units/rke2-server.service" "$R/usr/local/lib/systemd/system/rke2-server.service"
ln -sf /usr/local/lib/systemd/system/rke2-server.service "$R/etc/systemd/system/multi-user.target.wants/rke2-server.service"
ln -sf /dev/null "$R/etc/systemd/system/console-getty.service"

addr=127.0.0.2:10259
mkdir -p "$R/etc/rancher/rke2"
printf 'token: boot-test-secret\nkube-proxy-arg:\n  - metrics-bind-address=%s\n' "$addr" >"$R/etc/rancher/rke2/config.yaml"
cfg=$R/etc/rke2-proxy-backend/config.yaml
grep -q '^backend: auto$' "$cfg" || fail "the shipped example no longer has 'backend: auto' (update this test)"
sed -i 's/^backend: auto$/backend: iptables-nft/; s/^  wait: .*/  wait: 60s/' "$cfg"
chroot "$R" update-alternatives --quiet --set iptables /usr/sbin/iptables-nft &&
	chroot "$R" update-alternatives --quiet --set ip6tables /usr/sbin/ip6tables-nft || fail "update-alternatives in the guest root failed"

install -D -m 0755 /dev/stdin "$R/usr/local/sbin/boot-test" <<GUEST
#!/bin/bash
# metrics-address.sh's guest: wait for verify, assert, power off.
set -u
out=/var/lib/boot-test
. /usr/local/lib/boot-test/guest-prelude.sh
guest_result \$out/result
verify=rke2-proxy-backend-verify.service
deadline=\$((SECONDS + 150))
while [ \$SECONDS -lt \$deadline ]; do
	[ "\$(prop rke2-server.service ActiveState)" = failed ] && break
	if [ "\$(prop \$verify ExecMainExitTimestampMonotonic)" != 0 ] && [ "\$(prop \$verify ActiveState)" != activating ]; then
		break
	fi
	sleep 0.5
done
start=\$(prop \$verify ExecMainStartTimestampMonotonic)
end=\$(prop \$verify ExecMainExitTimestampMonotonic)
if [ "\${start:-0}" != 0 ] && [ "\${end:-0}" != 0 ]; then
	echo "VERIFY_MS \$(( (end - start) / 1000 ))" >>\$result
else
	bad "\$verify did not finish within 150s"
fi
grep -q 'metrics-bind-address=$addr' /var/lib/rke2-standin/config.json && ok "RKE2's merged config binds kube-proxy's metrics to $addr" || bad "the stand-in did not read metrics-bind-address=$addr"
[ "\$(prop \$verify Result)/\$(prop \$verify ExecMainStatus)" = success/0 ] && ok "\$verify passed" || bad "\$verify did not pass"
grep -q '"verdict": "ok"' /run/rke2-proxy-backend/status.json && ok "status.json says ok" || bad "status.json does not say ok"
grep -q '"proxy_mode": "iptables"' /run/rke2-proxy-backend/status.json && ok "verify checked kube-proxy's proxy mode at $addr" || bad "verify did not check kube-proxy's proxy mode"
! grep -q 'proxy mode not checked' /run/rke2-proxy-backend/status.json && ok "no 'proxy mode not checked' note" || bad "verify noted it could not check the proxy mode"
/usr/bin/rke2-proxy-backend check >\$out/check 2>&1 && ok "check answers 0: \$(cat \$out/check)" || bad "check: \$(cat \$out/check)"
failed_units=\$(systemctl list-units --failed --plain --no-legend 2>/dev/null | awk '{print \$1}' | tr '\n' ' ')
[ -z "\$failed_units" ] && ok "no failed units" || bad "failed units: \$failed_units"
{
	systemctl status --no-pager rke2-server.service \$verify
	journalctl -b --no-pager | grep -i -e rke2 -e verify | tail -n 60
	cat /run/rke2-proxy-backend/status.json
} >\$out/diag 2>&1
guest_done
GUEST
guest_test_unit "$R" boot-test "metrics address"

log "booting: kube-proxy's metrics on $addr, verify.wait 60s"
result=$R/var/lib/boot-test/result
guest_boot "$R" "$result" "$work/console.log" 300 "metrics address"
took=$GUEST_TOOK
ms=$(sed -n 's/^VERIFY_MS //p' "$result")
guest_verdict "$result" "$R/var/lib/boot-test/diag" "metrics address"
[ -n "$ms" ] || fail "the guest did not measure verify"
log "verify took ${ms} ms (verify.wait 60s), the boot ${took}s"
[ "$ms" -lt 20000 ] || fail "verify took ${ms} ms with kube-proxy's rules complete at once: it waited for an endpoint instead of asking where kube-proxy listens"
pass "kube-proxy's metrics on $addr: verify ok with the proxy mode checked in ${ms} ms"
