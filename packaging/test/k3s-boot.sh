#!/usr/bin/env bash
# Real-boot end-to-end test on k3s (issue 23): the built .deb in a real
# systemd (systemd-nspawn, lib/common.sh's boot helpers) on a guest laid out
# as k3s's install.sh and its first start leave a server:
#
#   /etc/systemd/system/k3s.service   k3s's unit as install.sh writes it
#                                     (the Go fixtures' copy), enabled
#   /etc/systemd/system/k3s.service.env   K3S_* only, as install.sh keeps it
#   /etc/rancher/k3s/config.yaml      the operator's k3s config
#   /usr/local/bin/k3s                the stand-in (packaging/test/standin) in
#                                     its k3s mode: answers `k3s --version` in
#                                     k3s's format and runs kubelet's chains,
#                                     flannel's and kube-router's (shaped as
#                                     theirs: internal/testkit/k3sgroup) and the
#                                     oracle's kube-proxy in-process, with the
#                                     unit's environment and k3s's PATH
#                                     (<data>/bin, host PATH, bin/aux; bin/aux
#                                     before the host with prefer-bundled-bin)
#   <data>/data/current -> <hash>, <hash>/bin/aux: k3s-root's layout: the
#                                     iptables links to iptables-detect.sh, which
#                                     honours IPTABLES_MODE (else counts rules),
#                                     then has xtables-set-mode.sh point the
#                                     links at xtables-<mode>-multi for good
#
# The guest's host alternative stays on iptables-nft (bookworm's default)
# while our config asks for iptables-legacy: kube-proxy's rules land in
# legacy only if apply's prefer-bundled-bin put bin/aux first and the
# generator's IPTABLES_MODE reached the k3s process.
#
#   boot 0  adoption (issue 32 item 7): k3s runs without our package, its
#           kube-proxy on iptables-nft (iptables-detect.sh's choice on an
#           empty node); the guest installs the .deb with dpkg -i: the
#           postinst adopts (plan with iptables-nft, source adopted,
#           "without restarting k3s"), the generator wires k3s.service,
#           verify passes, watch runs, check says ok, k3s's MainPID and
#           kube-proxy's backend unchanged. The package stays for the
#           boots below, which change its config.
#   boot 1  backend: iptables-legacy. The generator's k3s.service drop-in
#           (Environment=IPTABLES_MODE=legacy, ExecStartPre= apply) is part
#           of the unit; apply wrote config.yaml.d/60-proxy-backend.yaml with
#           k3s's keys and the stand-in read it; kube-proxy's, flannel's and
#           kube-router's chains (one k3s PATH) are in legacy and not in nft;
#           the bin/aux links stuck on legacy; verify passed; no unit failed.
#   boot 2  the same, then, in the running guest, `switch --to iptables-nft`
#           with flannel and kube-router running: apply must reset the stuck
#           links (and keep its prefer-bundled-bin), the restarted k3s writes
#           all three writers' chains in nft, the switch sweeps all three
#           from legacy (kubelet's chains as the switch leaves them), verify
#           passes.
#   boot 3  the reboot after the switch, now with flannel-backend: none and
#           disable-network-policy: true: iptables-nft, the links already on
#           nft, no flannel or kube-router chain anywhere (the stand-in
#           honours both keys), verify passes without them, no unit failed.
#   boot 4  the operator's own /etc/systemd/system/k3s.service.d/10-iptables-mode.conf
#           pins Environment=IPTABLES_MODE=legacy with backend: auto on a
#           node auto would put on iptables-nft (host alternative nft, links
#           stuck on nft): systemd loads it before the generator's drop-in,
#           the k3s process (the stand-in, /proc/PID/environ) runs with
#           legacy, the rules are in legacy, detect names the file and line,
#           verify passes, and that file is byte-identical after the boot.
# The operator's files are byte-identical after each boot. The three boots
# take about as long as before (one more iptables call per rule at each
# k3s start; the whole script's time is printed per boot).
#
# What it does not prove: the stand-in is not k3s (no containerd or API
# server; its flannel and kube-router are their chains and jumps, IPv4
# only, with no pods or policies); iptables-detect.sh and
# xtables-set-mode.sh here are small scripts with k3s-root's behaviour, not
# k3s-root's, and its multi-call binaries are links to the guest's own
# iptables 1.8.9; a switch to or from nftables mode (flannel then stays in
# iptables-nft: the Go netns tests), k3s agents, INSTALL_K3S_NAME units, k3s
# releases without prefer-bundled-bin and NAS kernels are left to the Go
# fixtures.
#
# Needs: root, systemd-nspawn (systemd-container), debootstrap, dpkg, make,
# go; overlayfs (falls back to a copy).
source "$(dirname "$0")/lib/common.sh"
boot_test_setup k3s-boot
new_overlay "$work/guest"
R=$work/guest/merged
cp "$deb" "$R/root/pkg.deb"

log "building the stand-in as k3s"
build_standin "$R/usr/local/bin/k3s"
"$R/usr/local/bin/k3s" --version | grep -qE '^k3s version v[0-9.]+\+k3s[0-9]+ \([0-9a-f]{8}\)$' ||
	fail "the stand-in as k3s does not answer --version in k3s's format: $("$R/usr/local/bin/k3s" --version)"
install_kube_proxy_oracle "$R/usr/local/bin/k3s" "$R"

# k3s.service as install.sh writes it, enabled, and its .env.
mkdir -p "$R/etc/systemd/system/multi-user.target.wants"
cp "$REPO/internal/testkit/testhost/units/k3s.service" "$R/etc/systemd/system/k3s.service"
ln -sf /etc/systemd/system/k3s.service "$R/etc/systemd/system/multi-user.target.wants/k3s.service"
echo 'K3S_TOKEN=boot-test-secret' >"$R/etc/systemd/system/k3s.service.env"
cp "$R/etc/systemd/system/k3s.service.env" "$work/k3s-env.orig"
mkdir -p "$R/etc/rancher/k3s"
printf 'write-kubeconfig-mode: "0644"\nnode-label:\n  - "site=nas"\n' >"$R/etc/rancher/k3s/config.yaml"
cp "$R/etc/rancher/k3s/config.yaml" "$work/k3s-config.orig"

# k3s-root's bin/aux, as k3s extracts it on its first start.
aux=$R/var/lib/rancher/k3s/data/5ca1ab1e0b0e/bin/aux
mkdir -p "$aux"
ln -sfn 5ca1ab1e0b0e "$R/var/lib/rancher/k3s/data/current"
for m in legacy nft; do ln -sfn "/usr/sbin/xtables-$m-multi" "$aux/xtables-$m-multi"; done
cat >"$aux/iptables-detect.sh" <<'DETECT'
#!/bin/bash
# k3s-root's iptables-detect.sh's behaviour: IPTABLES_MODE (legacy|nft)
# decides, else the backend with more rules (nft on a tie); the choice is
# made permanent by relinking, then the command runs.
set -e
dir=$(dirname "$(readlink -f "$0")")
name=$(basename "$0")
mode=${IPTABLES_MODE:-}
case $mode in
legacy | nft) ;;
"")
	l=$("$dir/xtables-legacy-multi" iptables-save 2>/dev/null | grep -c '^-' || true)
	n=$("$dir/xtables-nft-multi" iptables-save 2>/dev/null | grep -c '^-' || true)
	mode=nft
	[ "$l" -gt "$n" ] && mode=legacy
	;;
*)
	echo "iptables-detect.sh: IPTABLES_MODE=$mode is not legacy or nft" >&2
	exit 1
	;;
esac
"$dir/xtables-set-mode.sh" "$mode"
exec -a "$name" "$dir/xtables-$mode-multi" "$@"
DETECT
cat >"$aux/xtables-set-mode.sh" <<'SETMODE'
#!/bin/sh
# k3s-root's xtables-set-mode.sh's behaviour: point bin/aux's iptables
# links at xtables-$1-multi, each replaced atomically.
set -e
dir=$(dirname "$0")
for l in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
	ln -sfn "xtables-$1-multi" "$dir/.$l.$$"
	mv -Tf "$dir/.$l.$$" "$dir/$l"
done
SETMODE
chmod 0755 "$aux/iptables-detect.sh" "$aux/xtables-set-mode.sh"
for l in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
	ln -sfn iptables-detect.sh "$aux/$l"
done

chroot "$R" update-alternatives --quiet --set iptables /usr/sbin/iptables-nft || fail "update-alternatives in the guest root failed"

# The in-guest assertions, run by k3s-boot-test.service at every boot.
cat >"$R/usr/local/sbin/k3s-boot-test" <<'GUEST'
#!/bin/bash
# k3s-boot.sh's assertions inside the guest; then power off.
set -u
n=$(cat /etc/boot-test/boot)
expect=$(cat /etc/boot-test/expect)
mode=$(cat /etc/boot-test/mode)
out=/var/lib/boot-test
verify=rke2-proxy-backend-verify.service
aux=/var/lib/rancher/k3s/data/current/bin/aux
drop=/etc/rancher/k3s/config.yaml.d/60-proxy-backend.yaml
. /usr/local/lib/boot-test/guest-prelude.sh
guest_result "$out/result-$n"

# kube_proxy_in B: kube-proxy's own chains are in backend B (IPv4).
kube_proxy_in() { iptables-${1#iptables-}-save 2>/dev/null | grep -q '^:KUBE-SERVICES'; }
# group_left B: the rules of k3s's group in B (kube-proxy's, flannel's,
# kube-router's: KUBE-*, FLANNEL-*), kubelet's chains aside.
group_left() {
	(iptables-${1#iptables-}-save; ip6tables-${1#iptables-}-save) 2>/dev/null | grep -e KUBE- -e FLANNEL- |
		grep -v -e KUBE-IPTABLES-HINT -e KUBE-KUBELET-CANARY -e KUBE-FIREWALL | tr '\n' ';'
}
# has_rule B LINE: iptables-save of B (IPv4, no -t: that would create
# legacy tables) shows LINE exactly.
has_rule() { iptables-${1#iptables-}-save 2>/dev/null | grep -qxF -- "$2"; }
# k3s_key KEY VALUE: the operator's k3s config sets KEY: VALUE.
k3s_key() { grep -qx "$1: $2" /etc/rancher/k3s/config.yaml; }
# on_backend B M: k3s is up on B: what the stand-in saw, the bin/aux links,
# the rules, verify.
on_backend() {
	local b=$1 m=$2 other=iptables-nft
	[ "$b" = iptables-nft ] && other=iptables-legacy
	check "k3s.service is active (stand-in sent READY=1)" test "$(prop k3s.service ActiveState)" = active
	check "k3s's environment has IPTABLES_MODE=$m (the generator's drop-in)" grep -qx "IPTABLES_MODE=$m" /var/lib/rke2-standin/env
	check "apply's drop-in says IPTABLES_MODE's backend in k3s's keys" sh -c "grep -q 'prefer-bundled-bin: true' $drop && grep -q 'proxy-mode=iptables' $drop && ! grep -q kube-proxy-extra-env $drop"
	check "the stand-in (k3s) read $drop" grep -q "$drop" /var/lib/rke2-standin/config.json
	got=$(cat /var/lib/rke2-standin/backend 2>/dev/null)
	[ "$got" = "$b" ] && ok "kube-proxy's iptables (k3s's PATH) went to $b" || bad "kube-proxy's iptables went to '$got', want $b"
	check "bin/aux's iptables link stuck on xtables-$m-multi" test "$(readlink $aux/iptables)" = "xtables-$m-multi"
	check "kube-proxy's rules are in $b" kube_proxy_in "$b"
	if k3s_key flannel-backend none; then
		check "no flannel chain in either backend (flannel-backend: none)" sh -c "! (iptables-legacy-save; iptables-nft-save) | grep -q FLANNEL-"
	else
		check "flannel's chains (same k3s PATH) are in $b" has_rule "$b" ":FLANNEL-FWD - [0:0]"
		check "flannel's masq jump is in $b" has_rule "$b" '-A POSTROUTING -m comment --comment "flanneld masq" -j FLANNEL-POSTRTG'
		check "flannel's forward jump is in $b" has_rule "$b" '-A FORWARD -m comment --comment "flanneld forward" -j FLANNEL-FWD'
	fi
	if k3s_key disable-network-policy true; then
		check "no kube-router chain in either backend (disable-network-policy)" sh -c "! (iptables-legacy-save; iptables-nft-save) | grep -q -e KUBE-ROUTER- -e KUBE-NWPLCY-"
	else
		check "kube-router's chains (same k3s PATH) are in $b" has_rule "$b" ":KUBE-NWPLCY-DEFAULT - [0:0]"
		check "kube-router's INPUT hook is in $b" has_rule "$b" '-A INPUT -m comment --comment "kube-router netpol - 4IA2OSFRMVNDXBVV" -j KUBE-ROUTER-INPUT'
	fi
	left=$(group_left "$other")
	[ -z "$left" ] && ok "no kube-proxy, flannel or kube-router rules in $other" || bad "k3s's group has rules in $other: $left"
	check_settled $verify
}

# boot 0: the package installed on the running k3s node adopts it.
if [ "$mode" = adopt ]; then
	plan=/run/rke2-proxy-backend/plan.json
	watch=rke2-proxy-backend-watch.service
	wait_for 120 sh -c "[ \"\$(systemctl show -P ActiveState k3s.service)\" = active ] && [ -s /var/lib/rke2-standin/backend ]" ||
		bad "k3s (the stand-in) not up with kube-proxy synced within 120s"
	check "our package is not installed yet" test ! -e /usr/bin/rke2-proxy-backend
	pid0=$(prop k3s.service MainPID)
	enter0=$(prop k3s.service ActiveEnterTimestampMonotonic)
	check "kube-proxy (k3s) runs on $expect before the install" test "$(cat /var/lib/rke2-standin/backend)" = "$expect"
	if dpkg -i /root/pkg.deb >"$out/dpkg-0.log" 2>&1; then ok "dpkg -i in the running guest"; else bad "dpkg -i failed: $(tail -n 5 "$out/dpkg-0.log" | tr '\n' ' ')"; fi
	sed 's/^/INFO dpkg | /' "$out/dpkg-0.log" | cut -c1-220 >>"$result"
	check "the postinst adopted: plan with $expect" grep -q "\"backend\": \"$expect\"" $plan
	check "the plan's source is adopted" grep -q '"source": "adopted"' $plan
	check "adopt said it did so without restarting k3s" grep -q "without restarting k3s" "$out/dpkg-0.log"
	check "the generator wired k3s.service (apply at its next start)" sh -c "systemctl cat --no-pager k3s.service | grep -q '^ExecStartPre=/usr/bin/rke2-proxy-backend apply'"
	wait_for 90 sh -c "[ \"\$(systemctl show -P InactiveExitTimestampMonotonic $verify)\" != 0 ] && [ \"\$(systemctl show -P ActiveState $verify)\" != activating ]" ||
		bad "verify did not run within 90s of the install"
	check "$verify passed (Result=success, exit 0)" test "$(prop $verify Result)/$(prop $verify ExecMainStatus)" = success/0
	check "$watch active" wait_for 30 sh -c "[ \"\$(systemctl show -P ActiveState $watch)\" = active ]"
	check "check exit 0" wait_for 60 /usr/bin/rke2-proxy-backend check
	/usr/bin/rke2-proxy-backend check >"$out/check-0" 2>&1
	info "check: $(cat "$out/check-0")"
	check "k3s not restarted (MainPID $pid0, same ActiveEnterTimestamp, NRestarts=0)" test "$(prop k3s.service MainPID)/$(prop k3s.service ActiveEnterTimestampMonotonic)/$(prop k3s.service NRestarts)" = "$pid0/$enter0/0"
	check "kube-proxy still on $expect" test "$(cat /var/lib/rke2-standin/backend)" = "$expect"
	check "no unit failed" sh -c "[ -z \"\$(systemctl --failed --no-legend --plain)\" ]"
	for c in "systemctl --failed --no-pager" "systemctl cat --no-pager k3s.service" "cat $plan" "cat $out/dpkg-0.log" \
		"journalctl -b --no-pager -o short-monotonic | grep -i -e k3s -e rke2 -e adopt | tail -n 80"; do
		echo "== $c"
		sh -c "$c" 2>&1
	done >"$out/diag-$n"
	guest_done
fi

# Wait (bounded) for k3s to be up and a verify run to be over.
wait_for 120 sh -c "[ \"\$(systemctl show -P ActiveState k3s.service)\" = active ] && [ \"\$(systemctl show -P ActiveState $verify)\" != activating ] && [ \"\$(systemctl show -P ExecMainStartTimestampMonotonic $verify)\" != 0 ]" ||
	info "k3s or verify did not settle in 120s"

d=$(ls /run/systemd/generator*/k3s.service.d/50-rke2-proxy-backend.conf 2>/dev/null | head -n 1)
[ -n "$d" ] && ok "generator wrote $d" || bad "generator wrote no drop-in for k3s.service"
m=${expect#iptables-}
check "systemctl cat k3s.service shows the drop-in" sh -c "systemctl cat --no-pager k3s.service | grep -qF '# $d'"
check "the drop-in sets Environment=IPTABLES_MODE=$m" grep -qx "Environment=IPTABLES_MODE=$m" "$d"
check "the drop-in runs apply before k3s" grep -q '^ExecStartPre=/usr/bin/rke2-proxy-backend apply' "$d"
check "systemd gives k3s.service IPTABLES_MODE=$m" sh -c "systemctl show -P Environment k3s.service | tr ' ' '\n' | grep -qx IPTABLES_MODE=$m"
check "watch runs with k3s (WantedBy= k3s.service, PartOf= it)" wait_for 30 sh -c "[ \"\$(systemctl show -P ActiveState rke2-proxy-backend-watch.service)/\$(systemctl show -P PartOf rke2-proxy-backend-watch.service)\" = active/k3s.service ]"
on_backend "$expect" "$m"
if [ -f /etc/boot-test/pin ]; then
	pin=/etc/systemd/system/k3s.service.d/10-iptables-mode.conf
	check "systemd loads the operator's $pin before the generator's" sh -c \
		"systemctl show -P DropInPaths k3s.service | tr ' ' '\n' | grep -e 10-iptables-mode.conf -e 50-rke2-proxy-backend.conf | tr '\n' ' ' | grep -qxF '$pin $d '"
	pid=$(systemctl show -P MainPID k3s.service)
	check "the k3s process ($pid) runs with IPTABLES_MODE=legacy" sh -c "tr '\0' '\n' </proc/$pid/environ | grep -qx IPTABLES_MODE=legacy"
	/usr/bin/rke2-proxy-backend detect >"$out/detect-pin" 2>&1
	cut -c1-220 "$out/detect-pin" | sed 's/^/INFO detect | /' >>"$result"
	check "detect keeps the operator's pin and names its file and line" grep -qF "k3s's settings already pin IPTABLES_MODE=legacy in $pin line 2" "$out/detect-pin"
	check "detect keeps iptables-legacy for it" grep -qF "respect_rke2_config is true, so iptables-legacy is kept" "$out/detect-pin"
	/usr/bin/rke2-proxy-backend verify >"$out/verify-pin" 2>&1
	rc=$?
	cut -c1-220 "$out/verify-pin" | sed 's/^/INFO verify | /' >>"$result"
	[ $rc = 0 ] && ok "verify with the operator's pin exits 0" || bad "verify with the operator's pin exited $rc"
fi

if [ "$mode" = switch ]; then
	/usr/bin/rke2-proxy-backend switch --to iptables-nft --timeout 90s >"$out/switch.log" 2>&1
	rc=$?
	cut -c1-220 "$out/switch.log" | sed 's/^/INFO switch | /' >>"$result"
	[ $rc = 0 ] && ok "switch --to iptables-nft exits 0" || bad "switch --to iptables-nft exited $rc"
	check "switch logged no [failed] step" sh -c "! grep -q '\[failed\]' $out/switch.log"
	check "the switch swept flannel's and kube-router's chains from legacy with kube-proxy's" grep -qE 'removed [0-9]+ kube-proxy, flannel and kube-router object\(s\) from iptables-legacy' "$out/switch.log"
	check "apply reset bin/aux's links stuck on legacy" sh -c "journalctl -b -u k3s.service --no-pager | grep -q 'reset .*bin/aux/iptables (-> xtables-legacy-multi'"
	check "the k3s drop-in now says IPTABLES_MODE=nft" sh -c "systemctl cat --no-pager k3s.service | grep -qx Environment=IPTABLES_MODE=nft"
	on_backend iptables-nft nft
	/usr/bin/rke2-proxy-backend verify >"$out/verify-after-switch" 2>&1
	rc=$?
	cut -c1-220 "$out/verify-after-switch" | sed 's/^/INFO verify | /' >>"$result"
	[ $rc = 0 ] && ok "verify after the switch exits 0" || bad "verify after the switch exited $rc"
	# cleanup finds k3s from its unit: nothing of the group is left to take.
	check "cleanup --backend iptables-legacy on k3s finds none of the group left" sh -c \
		"/usr/bin/rke2-proxy-backend cleanup --backend iptables-legacy --dry-run | grep -qx 'cleanup: no kube-proxy, flannel or kube-router rules in iptables-legacy; nothing to remove'"
fi
for c in "systemctl --failed --no-pager" "systemctl cat --no-pager k3s.service" "cat $drop" "ls -l $aux" \
	"head -n 40 /var/lib/rke2-standin/backend /var/lib/rke2-standin/config.json" \
	"iptables-legacy-save | grep -e '^:KUBE-' -e '^:FLANNEL-' -e '^\*'" "iptables-nft-save | grep -e '^:KUBE-' -e '^:FLANNEL-' -e '^\*'" \
	"head -n 80 /run/rke2-proxy-backend/*" \
	"journalctl -b --no-pager -o short-monotonic | grep -i -e k3s -e rke2 -e generator | tail -n 120"; do
	echo "== $c"
	sh -c "$c" 2>&1
done >"$out/diag-$n"
guest_done
GUEST
chmod 0755 "$R/usr/local/sbin/k3s-boot-test"
guest_test_unit "$R" k3s-boot-test "k3s boot"
mkdir -p "$R/etc/boot-test"

# boot N EXPECTED_BACKEND plain|switch
boot() {
	echo "$1" >"$R/etc/boot-test/boot"
	echo "$2" >"$R/etc/boot-test/expect"
	echo "$3" >"$R/etc/boot-test/mode"
	log "boot $1: expecting $2 ($3)"
	guest_boot "$R" "$R/var/lib/boot-test/result-$1" "$work/console-$1.log" 300 "boot $1"
	guest_verdict "$R/var/lib/boot-test/result-$1" "$R/var/lib/boot-test/diag-$1" "boot $1"
	pass "boot $1 on $2 in ${GUEST_TOOK}s (boot, k3s stand-in ready, verify, poweroff)"
}
# operator_files_untouched WHEN: the operator's k3s config and unit env
# are byte for byte what this script wrote.
operator_files_untouched() {
	cmp -s "$work/k3s-config.orig" "$R/etc/rancher/k3s/config.yaml" || fail "$1: the operator's k3s config.yaml was modified"
	cmp -s "$work/k3s-env.orig" "$R/etc/systemd/system/k3s.service.env" || fail "$1: k3s.service.env was modified"
	pass "$1: the operator's k3s config.yaml and k3s.service.env are untouched"
}
boot 0 iptables-nft adopt
grep -q "k3s is not running\|RKE2 is not running" "$R/var/lib/boot-test/result-0" && fail "boot 0: adopt thought k3s was not running"
cfg=$R/etc/rke2-proxy-backend/config.yaml
grep -q '^backend: auto$' "$cfg" || fail "the shipped example no longer has 'backend: auto' (update this test)"
sed -i 's/^backend: auto$/backend: iptables-legacy/; s/^  wait: .*/  wait: 60s/' "$cfg"
operator_files_untouched "after the adoption in boot 0"
boot 1 iptables-legacy plain
# The switch runs with k3s's flannel and kube-router.
boot 2 iptables-legacy switch
grep -qx 'backend: iptables-nft' "$cfg" || fail "boot 2: the switch did not leave backend: iptables-nft in the config"
operator_files_untouched "after boot 1 and the switch in boot 2"
# The node without flannel and network policy: the stand-in writes
# neither, and verify asks for neither.
printf 'flannel-backend: none\ndisable-network-policy: true\n' >>"$R/etc/rancher/k3s/config.yaml"
cp "$R/etc/rancher/k3s/config.yaml" "$work/k3s-config.orig"
boot 3 iptables-nft plain
operator_files_untouched "after boot 3"
# The operator's own pin: a drop-in of theirs sets IPTABLES_MODE=legacy on
# a node auto would put on iptables-nft (the host alternative is nft, the
# links are stuck on nft). respect_rke2_config keeps it: the generator's
# drop-in sets the same value, so whatever systemd applies last, k3s runs
# with legacy.
sed -i 's/^backend: iptables-nft$/backend: auto/' "$cfg"
grep -qx 'backend: auto' "$cfg" || fail "boot 4: could not put the config back on backend: auto"
mkdir -p "$R/etc/systemd/system/k3s.service.d"
printf '[Service]\nEnvironment=IPTABLES_MODE=legacy\n' >"$R/etc/systemd/system/k3s.service.d/10-iptables-mode.conf"
cp "$R/etc/systemd/system/k3s.service.d/10-iptables-mode.conf" "$work/k3s-pin.orig"
echo pin >"$R/etc/boot-test/pin"
boot 4 iptables-legacy plain
operator_files_untouched "after boot 4"
cmp -s "$work/k3s-pin.orig" "$R/etc/systemd/system/k3s.service.d/10-iptables-mode.conf" ||
	fail "boot 4: the operator's 10-iptables-mode.conf was modified"
pass "boot 4: the operator's 10-iptables-mode.conf is untouched"
