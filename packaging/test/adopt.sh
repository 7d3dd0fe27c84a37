#!/usr/bin/env bash
# Adoption on a running node, and the broken-config fix path, each a real
# nspawn boot of a Debian bookworm guest whose RKE2 is the stand-in
# (packaging/test/standin) running kube-proxy's real proxier (the oracle):
#
#   running     RKE2 runs without our package; the guest installs the .deb
#               with dpkg -i: its postinst adopts (plan with the running
#               backend, source adopted), verify passes, watch runs, check
#               says ok, RKE2's MainPID and kube-proxy's backend unchanged.
#   differs     the same with rke2.proxy_backend=iptables-legacy on the kernel
#               command line while kube-proxy runs on iptables-nft: adopt's
#               output and the journal say the next start would switch;
#               nothing is switched.
#   broken-fix  the package installed, /etc/rke2-proxy-backend/config.yaml
#               broken (backend: modern): RKE2 does not start; the fix in
#               docs/troubleshooting.md (correct the file, nothing else) lets RKE2's own restart
#               run apply, which starts verify: verify passes without a
#               daemon-reload; after one the drop-in carries the decision.
#
# Each case checks that no unit failed and prints its time.
# Needs: root, systemd-nspawn, debootstrap, dpkg, make, go.
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/adopt.sh"
boot_test_setup adopt

STANDIN=$work/rke2
build_standin "$STANDIN"
mkdir -p "$work/oracle-root"
install_kube_proxy_oracle "$STANDIN" "$work/oracle-root"
ORACLE_BIN=$work/oracle-root/usr/local/lib/rke2-standin/kubeproxy-oracle

# ADOPT_CASES picks cases (default: all three, in this order).
total=$SECONDS
for c in ${ADOPT_CASES:-running differs broken-fix}; do
	case $c in
	running)
		adopt_guest running
		adopt_boot running running
		;;
	differs)
		adopt_guest differs
		adopt_boot differs differs rke2.proxy_backend=iptables-legacy
		;;
	broken-fix)
		adopt_guest broken-fix
		run_logged "$work/dpkg-broken.log" "dpkg --root -i failed" dpkg --root "$R" -i "$deb"
		sed -i 's/^backend: auto$/backend: modern/' "$R/etc/rke2-proxy-backend/config.yaml"
		grep -qx 'backend: modern' "$R/etc/rke2-proxy-backend/config.yaml" || fail "broken-fix: could not break the shipped config (no 'backend: auto' line?)"
		adopt_boot broken-fix broken-fix
		;;
	*) fail "unknown case $c in ADOPT_CASES (running, differs, broken-fix)" ;;
	esac
done
pass "${ADOPT_CASES:-all cases} in $((SECONDS - total))s"
