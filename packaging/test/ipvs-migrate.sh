#!/usr/bin/env bash
# A real `rke2-proxy-backend switch --to nftables` migrating an ipvs node off
# ipvs, in a real systemd booted with systemd-nspawn (issue 21, item 3).
#
#   setup  as switch-interrupt.sh: the built .deb installed with dpkg --root
#          into an overlay of the cached bookworm root, RKE2's real
#          rke2-server.service, the RKE2 stand-in playing v1.36.3+rke2r1 (a
#          release that documents nftables mode) with kube-proxy's real
#          proxier (the oracle) for 1.36, RKE2's config.yaml with
#          proxy-mode=ipvs, ipvs-scheduler=sh and ipvs-strict-arp=true,
#          backend: auto. kube-proxy's ipvs proxier writes its real ipsets and
#          iptables chains; this kernel has no IPVS and no dummy links, so the
#          oracle fakes only the virtual servers, kube-ipvs0 and the vs
#          sysctls (it says so in RKE2's journal). The bookworm root is
#          minbase without ipset: the host's (the same bookworm package) is
#          copied into the overlay, as kube-proxy's image carries its own.
#   boot   the plan says ipvs, kube-proxy's KUBE-* ipsets are there, kubelet's
#          KUBE-FIREWALL too (the stand-in runs the real kubelet code of its
#          minor through the oracle), and verify under ipvs passes every check
#          but the kube-ipvs0 dummy link this kernel cannot make; a switch
#          while config.yaml still sets proxy-mode=ipvs exits 2 with the
#          translation report and the item to remove, changing nothing; the
#          guest removes the item (the operator's step, RKE2 not restarted)
#          and runs the switch as a transient unit, so its report is in the
#          journal. It must end with kube-proxy in nftables mode, no KUBE-*
#          ipset and no ipvs chain in either iptables backend, the journal
#          holding the report and the sweep, `verify --expect nftables`
#          passing, no switch journal left and no unit failed.
#
# Needs: root, systemd-nspawn (systemd-container), debootstrap, dpkg, make,
# go, ipset; overlayfs (falls back to a copy). Network only for the first
# debootstrap (Debian mirror).
source "$(dirname "$0")/lib/common.sh"
need_tools ipset
boot_test_setup ipvs-migrate guest

log "building the RKE2 stand-in (v1.36.3+rke2r1)"
build_standin "$R/usr/local/bin/rke2" "v1.36.3+rke2r1"
install_kube_proxy_oracle "$R/usr/local/bin/rke2" "$R"

ipset_bin=$(command -v ipset)
install -D -m 0755 "$ipset_bin" "$R/usr/sbin/ipset"
for lib in $(ldd "$ipset_bin" | awk '/libipset/ {print $3}'); do
	install -D -m 0644 "$lib" "$R$lib"
done
chroot "$R" /usr/sbin/ipset version >/dev/null || fail "the host's ipset does not run in the guest root"

mkdir -p "$R/usr/local/lib/systemd/system" "$R/etc/systemd/system/multi-user.target.wants"
cp "$REPO/internal/testkit/testhost/units/rke2-server.service" "$R/usr/local/lib/systemd/system/rke2-server.service"
ln -sf /usr/local/lib/systemd/system/rke2-server.service "$R/etc/systemd/system/multi-user.target.wants/rke2-server.service"
mkdir -p "$R/etc/rancher/rke2"
cat >"$R/etc/rancher/rke2/config.yaml" <<'YAML'
token: ipvs-migrate-secret
kube-proxy-arg:
  - proxy-mode=ipvs
  - ipvs-scheduler=sh
  - ipvs-strict-arp=true
YAML
cfg=$R/etc/rke2-proxy-backend/config.yaml
grep -q '^backend: auto$' "$cfg" || fail "the shipped example no longer has 'backend: auto' (update this test)"
sed -i 's/^  wait: .*/  wait: 60s/' "$cfg"

# The guest's part, run by ipvs-migrate.service at boot.
cat >"$R/usr/local/sbin/ipvs-migrate" <<'GUEST'
#!/bin/bash
set -u
out=/var/lib/boot-test
. /usr/local/lib/boot-test/guest-prelude.sh
guest_result "$out/result-1"
verify=rke2-proxy-backend-verify.service
plan=/run/rke2-proxy-backend/plan.json
finish() {
	{
		systemctl --no-pager --failed
		journalctl -b --no-pager -u rke2-server.service -u $verify -u ipvs-migration | tail -n 80
	} >>"$out/diag-1" 2>&1
	guest_done
}
wait_for 120 grep -q '"proxy_mode": "ipvs"' $plan || { bad "the plan never said ipvs"; finish; }
ok "apply planned ipvs mode (kept from RKE2's config)"
wait_for 120 grep -qx iptables-nft /var/lib/rke2-standin/backend || { bad "kube-proxy (the stand-in) never ran"; finish; }
wait_for 60 sh -c 'ipset list -n | grep -qx KUBE-CLUSTER-IP' && ok "kube-proxy's ipvs proxier made its KUBE-* ipsets" || bad "no KUBE-CLUSTER-IP ipset under ipvs"
info "ipsets under ipvs: $(ipset list -n | tr '\n' ' ')"
# Under ipvs, before any migration: kubelet (the stand-in runs the real
# kubelet code of 1.36 through the oracle) wrote KUBE-FIREWALL and its
# jumps, and verify holds the ipvs node to every check this kernel allows:
# the skeleton (kube-proxy's and kubelet's chains and jumps) and the ipsets
# pass. This kernel has no dummy links (the oracle fakes kube-ipvs0 and says
# so), so verify's one finding is that the link is absent, which is true.
check "kubelet wrote KUBE-FIREWALL and its INPUT jump (iptables-nft)" sh -c 'iptables-nft-save | grep -qx -- "-A INPUT -j KUBE-FIREWALL"'
wait_for 120 sh -c "[ \"\$(systemctl show -P ExecMainStartTimestampMonotonic $verify)\" != 0 ] && [ \"\$(systemctl show -P ActiveState $verify)\" != activating ]" ||
	bad "the verify unit did not finish within 120s under ipvs"
/usr/bin/rke2-proxy-backend verify >/run/verify-ipvs.out 2>&1
sed 's/^/    verify under ipvs: /' /run/verify-ipvs.out | cut -c1-220 >>"$result"
check "verify under ipvs: the iptables-nft skeleton is complete (kube-proxy's ipvs chains and kubelet's)" grep -q 'iptables-nft: *kube-proxy skeleton complete' /run/verify-ipvs.out
findings=$(grep -o '^[0-9]*\. \[[a-z-]*\]' /run/verify-ipvs.out | sed 's/^[0-9]*\. //' | tr '\n' ' ')
[ "$findings" = "[ipvs-missing-link] " ] && ok "verify under ipvs: no finding but the kube-ipvs0 link this kernel cannot make" ||
	bad "verify under ipvs: findings '$findings', want only [ipvs-missing-link] (no dummy links in this kernel)"
check "the oracle says it faked kube-ipvs0 (this kernel has no dummy links)" grep -q 'ipvs mode: faked: .*kube-ipvs0' /var/lib/rke2-standin/kube-proxy
systemctl reset-failed $verify
# What the oracle faked (this kernel has no IPVS and no dummy links).
grep -m1 'ipvs mode: faked' /var/lib/rke2-standin/kube-proxy | sed 's/^/INFO /' >>"$result"
cp /etc/rke2-proxy-backend/config.yaml /run/config.orig
# cleanup --ipvs-leftovers alone cannot take the sets ipvs chains still use.
/usr/bin/rke2-proxy-backend cleanup --ipvs-leftovers --dry-run --force 2>&1 | grep -e 'would remove' -e 'stays:' | head -n 3 | sed 's/^/INFO before the switch: /' >>"$result"

# Pinned: refused with the report, nothing changed.
/usr/bin/rke2-proxy-backend switch --to nftables --timeout 120s >/run/pinned.out 2>&1
rc=$?
sed 's/^/    pinned: /' /run/pinned.out >>"$result"
[ $rc = 2 ] && ok "switch refuses (exit 2) while config.yaml sets proxy-mode=ipvs" || bad "pinned switch exited $rc, want 2"
check "the refusal names the item to remove" grep -q 'kube-proxy-arg item "proxy-mode=ipvs"), the mode kube-proxy would come back in' /run/pinned.out
check "the refusal comes with the translation report" grep -q 'kube-proxy-arg "ipvs-scheduler=sh": nftables mode has no hashing scheduler' /run/pinned.out
check "the refused switch changed nothing" cmp /run/config.orig /etc/rke2-proxy-backend/config.yaml

# The operator's step: remove the item, RKE2 not restarted.
sed -i '/proxy-mode=ipvs/d' /etc/rancher/rke2/config.yaml
systemd-run --wait --collect --quiet --unit=ipvs-migration -p StandardOutput=journal -p StandardError=journal \
	/usr/bin/rke2-proxy-backend switch --to nftables --timeout 120s
rc=$?
journalctl -b --no-pager -o cat -u ipvs-migration >/run/migration.log
sed 's/^/    switch: /' /run/migration.log >>"$result"
[ $rc = 0 ] && ok "switch --to nftables migrated the node (exit 0)" || bad "the migration exited $rc"
check "the journal holds the translation report" grep -q 'ipvs-only settings and what each becomes in nftables mode' /run/migration.log
check "the report says what ipvs-scheduler=sh becomes" grep -q '"ipvs-scheduler=sh": nftables mode has no hashing scheduler: the Services that relied on a client keeping its endpoint need sessionAffinity: ClientIP' /run/migration.log
check "the report says ipvs-strict-arp is not needed" grep -q '"ipvs-strict-arp=true": not needed' /run/migration.log
check "the journal holds the sweep" grep -q '\[finished\] remove what ipvs mode left' /run/migration.log
check "the sweep says IPVS is not in this kernel" grep -q 'IPVS not in this kernel' /run/migration.log
check "the journal says kube-proxy left ipvs mode" grep -q 'kube-proxy left ipvs mode: it runs nftables mode on nftables, verified' /run/migration.log
check "the plan says nftables mode" grep -q '"proxy_mode": "nftables"' $plan
check "kube-proxy (the stand-in) runs nftables" grep -qx nftables /var/lib/rke2-standin/backend
check "no KUBE-* ipset is left" sh -c '! ipset list -n | grep -q "^KUBE-"'
for b in iptables-nft iptables-legacy; do
	check "no ipvs chain is left in $b" sh -c "! $b-save | grep -e KUBE-IPVS -e KUBE-LOAD-BALANCER -e KUBE-NODE-PORT -e KUBE-SERVICES"
done
check "no switch journal is left" test ! -e /var/lib/rke2-proxy-backend/switch.json
check "rke2-proxy-backend verify --expect nftables passes" /usr/bin/rke2-proxy-backend verify --expect nftables
check_settled $verify
finish
GUEST

log "booting: an ipvs node migrated to nftables"
start=$SECONDS
boot_guest_test "$R" ipvs-migrate 500 "ipvs node migrated to nftables"
pass "ipvs node migrated to nftables: translation report and sweep in the journal, verify passing, no unit failed ($((SECONDS - start))s)"
