#!/bin/bash
# Runs INSIDE a VM tier guest as vm-probe.service (installed by
# packaging/test/vm.sh as /usr/local/sbin/vm-probe), at the end of every
# boot: it waits (bounded) for RKE2 (the stand-in) and the verify unit, or
# for apply's refusal when RKE2 must not start, asserts what the case in
# /etc/vm-test/expect says from the live kernel, writes
# /var/lib/vm-test/result (PASS/FAIL/INFO lines, then DONE), diag and the
# records the host compares across boots, and powers the guest off.
#
# /etc/vm-test/expect sets:
#   CASE      the case's name
#   BACKEND   the backend kube-proxy must end on, or "none": RKE2 must not start
#   GEN       what the generator's line must match (extended regexp)
#   APPLY     what apply's output in rke2-server's journal must match ("" none)
#   REASON    what one of the decision's reasons must match ("" none)
set -u
out=/var/lib/vm-test
. /usr/local/lib/boot-test/guest-prelude.sh
. /etc/vm-test/expect
guest_result "$out/result"
n=$(($(cat "$out/boots" 2>/dev/null || echo 0) + 1))
echo "$n" >"$out/boots"
info "case $CASE, boot $n on this disk, kernel $(uname -r) $(uname -m)"

rke2=rke2-server.service
verify=rke2-proxy-backend-verify.service
tool=/usr/bin/rke2-proxy-backend

finish() {
	{
		echo "== systemctl --failed"
		systemctl --failed --no-pager
		echo "== systemctl cat $rke2"
		systemctl cat --no-pager $rke2
		echo "== /etc/rancher/rke2/config.yaml.d"
		head -n 40 /etc/rancher/rke2/config.yaml.d/* 2>&1
		echo "== /run/rke2-proxy-backend"
		head -n 80 /run/rke2-proxy-backend/* 2>&1
		echo "== modules: before RKE2, after apply, now"
		cat /run/vm-test/modules-before /run/vm-test/modules-after-apply 2>&1 | tr '\n' ' '
		echo
		awk '{print $1}' /proc/modules | sort | tr '\n' ' '
		echo
		echo "== kernel module requests since RKE2's start began (uptime, arguments)"
		cat /run/vm-test/modprobe.log 2>&1
		echo "== kube-proxy chains: legacy / nft"
		legacy_chains
		nft_chains
		echo "== rke2-proxy-backend check"
		$tool check 2>&1
		echo "== journal (generator, rke2-server, verify, watch)"
		journalctl -b --no-pager -o short-monotonic -t rke2-proxy-backend-generator
		journalctl -b --no-pager -o short-monotonic -u $rke2 -u $verify -u rke2-proxy-backend-watch.service | tail -n 120
	} >"$out/diag" 2>&1
	cp /run/rke2-proxy-backend/plan.json "$out/plan.json" 2>/dev/null
	cp /etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml "$out/dropin.yaml" 2>/dev/null
	cat /var/lib/rke2-standin/backend >"$out/standin-backend" 2>/dev/null || : >"$out/standin-backend"
	guest_done
}

# The kube-proxy chains (not kubelet's hint and canary chains, which follow
# the host's iptables alternative) in each iptables backend. Legacy tables
# are read with iptables-legacy-save without -t, which creates none.
kp_filter() { grep -oE '(^:|chain )KUBE-(SERVICES|NODEPORTS|POSTROUTING|MARK-MASQ|PROXY-CANARY|FORWARD|EXTERNAL-SERVICES|PROXY-FIREWALL|SVC-[A-Z0-9]+)' | sort -u | tr '\n' ' '; }
legacy_chains() { { iptables-legacy-save; ip6tables-legacy-save; } 2>/dev/null | kp_filter; }
# nft asks nf_tables, which loads it: no module, no chains.
nft_chains() { grep -q '^nf_tables ' /proc/modules && nft list ruleset 2>/dev/null | kp_filter; }

# Wait (bounded, well inside the host's bound on the boot) for the boot to
# settle: RKE2 up and verify's run over; when RKE2 must not start, apply's
# refusal (a restart); when it crash-loops, three restarts.
deadline=$((SECONDS + 240))
while [ $SECONDS -lt $deadline ]; do
	restarts=$(prop $rke2 NRestarts)
	if [ "$BACKEND" = none ]; then
		[ "${restarts:-0}" -ge 1 ] && break
	else
		st=$(prop $rke2 ActiveState)
		[ "$st" = failed ] || [ "${restarts:-0}" -ge 3 ] && break
		[ "$st" = active ] && [ "$(prop $verify ExecMainStartTimestampMonotonic)" != 0 ] &&
			[ "$(prop $verify ActiveState)" != activating ] && break
	fi
	sleep 1
done
info "settled after ${SECONDS}s of the probe (uptime $(cut -d' ' -f1 /proc/uptime)s); RKE2 restarted ${restarts:-0} times"
# The modules loaded once the node's own units (generator, apply, RKE2,
# verify, watch) settled, before the probe runs any command of ours.
settled=$(awk '{print $1}' /proc/modules | sort)

# 0. A cloud-init first boot: cloud-init finished cleanly, and the package
# came from the signed repository on the media disk (apt verified it, or it
# would not have installed).
if command -v cloud-init >/dev/null 2>&1 && [ ! -e /etc/cloud/cloud-init.disabled ]; then
	timeout 120 cloud-init status --wait >/dev/null 2>&1
	info "cloud-init: $(cloud-init status 2>&1 | tr '\n' ' ')"
	check "cloud-init finished without errors (status: done)" sh -c "cloud-init status 2>/dev/null | grep -qx 'status: done'"
	check "the package came from the signed repository on the media disk" sh -c "apt-cache policy rke2-proxy-backend | grep -q 'file:/opt/rke2-proxy-backend-repo/apt'"
	check "the example's config was written by cloud-init" grep -qx 'backend: auto' /etc/rke2-proxy-backend/config.yaml
fi

# 1. The generator ran at this boot: its line is in this boot's journal
# (from /dev/kmsg on a real kernel) and its drop-in is part of RKE2's unit.
genline=$(journalctl -b -o cat -t rke2-proxy-backend-generator --no-pager 2>/dev/null | tr '\n' ' ')
info "generator: $genline"
check "the generator's line is in this boot's journal" test -n "$genline"
if echo "$genline" | grep -qE -- "$GEN"; then ok "the generator's line matches /$GEN/"; else bad "the generator's line does not match /$GEN/"; fi
check "systemctl cat $rke2 shows the generator's drop-in" sh -c "systemctl cat $rke2 | grep -q '^# /run/systemd/generator.*/rke2-server.service.d/50-rke2-proxy-backend.conf'"

# 2. What apply said, and the decision's reasons.
applylog=$(journalctl -b -o cat -u $rke2 --no-pager 2>/dev/null | grep -v -e '^Started' -e '^Starting' | tr '\n' ' ')
info "apply and RKE2: $(echo "$applylog" | cut -c1-1500)"
if [ -n "$APPLY" ]; then
	if echo "$applylog" | grep -qE -- "$APPLY"; then ok "apply's output matches /$APPLY/"; else bad "apply's output does not match /$APPLY/"; fi
fi
$tool detect -o json >"$out/detect.json" 2>"$out/detect.err"
# What auto would pick on this kernel whatever the config says.
RKE2_PROXY_BACKEND=auto $tool detect -o json >"$out/detect-auto.json" 2>>"$out/detect.err"
# The reasons as the generator logged them at boot (detect's JSON would
# match on its facts, which name every module).
if [ -n "$REASON" ]; then
	if echo "$genline" | grep -qE -- "$REASON"; then
		ok "the generator's reasons match /$REASON/"
	else
		bad "no reason in the generator's line matches /$REASON/"
	fi
fi

# 3. What RKE2 was given and ran with.
got=$(cat /var/lib/rke2-standin/backend 2>/dev/null)
# kubelet's chains, with the host's iptables alternative (nft on Debian):
# on a kernel without nf_tables they fail, logged, as the real kubelet's do.
[ ! -e /var/lib/rke2-standin/kubelet-failed ] || info "kubelet (stand-in): $(cat /var/lib/rke2-standin/kubelet-failed)"
if [ "$BACKEND" = none ]; then
	check "RKE2 did not start (apply refused)" test "$(prop $rke2 ActiveState)" != active
	check "the stand-in (RKE2) never ran kube-proxy" test -z "$got"
	check "no kube-proxy chains in iptables-legacy" test -z "$(legacy_chains)"
	check "no kube-proxy chains in nf_tables" test -z "$(nft_chains)"
	finish
fi
check "$rke2 is active (the stand-in sent READY=1)" test "$(prop $rke2 ActiveState)" = active
if [ "$got" = "$BACKEND" ]; then ok "kube-proxy (stand-in) runs on $BACKEND"; else bad "kube-proxy (stand-in) runs on '${got:-nothing}', want $BACKEND"; fi
case $BACKEND in
iptables-legacy) want_env=IPTABLES_MODE=legacy other=nft ;;
iptables-nft) want_env=IPTABLES_MODE=nft other=legacy ;;
nftables) want_env=proxy-mode=nftables other=legacy ;;
esac
check "apply's drop-in 60-proxy-backend.yaml carries $want_env" grep -qF "$want_env" /etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml
check "plan.json records $BACKEND" grep -q "\"backend\": *\"$BACKEND\"" /run/rke2-proxy-backend/plan.json

# 4. Modules: those apply loaded (new between the snapshots taken just
# before and just after apply, in RKE2's own start) are the backend's, and
# none of the other backend's was loaded after RKE2's start began, by the
# node's units (settled) or by the commands this probe ran (now) (Debian's
# systemd loads ip_tables itself early at every boot, before any of this).
# modprobe.log names every module the kernel asked for from RKE2's start
# on (kernel.modprobe points at a logger then), with its uptime: the
# journal's monotonic times say who was running.
before=$(cat /run/vm-test/modules-before 2>/dev/null)
after=$(cat /run/vm-test/modules-after-apply 2>/dev/null)
now=$(awk '{print $1}' /proc/modules | sort)
# udev's coldplug loads other modules meanwhile: only netfilter's count.
netfilter='^(nf_|nft_|nfnetlink|ip_|ip6_|iptable_|ip6table_|ipt_|ip6t_|xt_|x_tables|br_netfilter)'
applied=$(comm -13 <(echo "$before") <(echo "$after") | grep -E "$netfilter" | tr '\n' ' ')
since=$(comm -13 <(echo "$before") <(echo "$settled") | grep -E "$netfilter" | tr '\n' ' ')
byprobe=$(comm -13 <(echo "$settled") <(echo "$now") | grep -E "$netfilter" | tr '\n' ' ')
info "modules apply loaded: ${applied:-none}; loaded since RKE2's start began: ${since:-none}; loaded by the probe's commands (detect, check): ${byprobe:-none}"
info "kernel module requests since RKE2's start began (uptime, modprobe arguments): $(tr '\n' ';' </run/vm-test/modprobe.log 2>/dev/null)"
check "the module snapshots around apply were taken" test -n "$before" -a -n "$after"
legacy_mods='^(ip_tables|ip6_tables|iptable_[a-z]+|ip6table_[a-z]+)$'
nft_mods='^(nf_tables|nft_[a-z0-9_]+)$'
case $BACKEND in
iptables-legacy) mine=$legacy_mods theirs=$nft_mods key=iptable_nat ;;
*) mine=$nft_mods theirs=$legacy_mods key=nf_tables ;;
esac
if grep -qw "$key" /lib/modules/"$(uname -r)"/modules.builtin 2>/dev/null || echo "$before" | grep -qx "$key"; then
	info "$key was built in or loaded before RKE2's start"
else
	check "apply loaded $BACKEND's module $key" sh -c "echo '$applied' | tr ' ' '\n' | grep -qx $key"
fi
foreign=$(echo "$since" | tr ' ' '\n' | grep -E "$theirs" | tr '\n' ' ')
if [ -z "$foreign" ]; then ok "no module of the other backend loaded after RKE2's start began"; else bad "modules of the other backend loaded after RKE2's start began: $foreign"; fi
foreign=$(echo "$byprobe" | tr ' ' '\n' | grep -E "$theirs" | tr '\n' ' ')
if [ -z "$foreign" ]; then ok "detect and check load no module of the other backend"; else bad "modules of the other backend loaded by detect or check: $foreign"; fi

# 5. The rules: kube-proxy's chains in the chosen backend only.
lc=$(legacy_chains)
nc=$(nft_chains)
info "kube-proxy chains in legacy: ${lc:-none}; in nf_tables: ${nc:-none}"
if [ "$BACKEND" = iptables-legacy ]; then
	check "kube-proxy's chains are in iptables-legacy" test -n "$lc"
	check "no kube-proxy chains in nf_tables" test -z "$nc"
else
	check "kube-proxy's chains are in nf_tables" test -n "$nc"
	check "no kube-proxy chains in iptables-legacy" test -z "$lc"
fi

# 6. verify passed, check agrees, nothing failed.
check "$verify ran and passed" test "$(prop $verify Result)/$(prop $verify ExecMainStatus)" = success/0
check "verify's status file says ok" grep -q '"ok": *true' /run/rke2-proxy-backend/status.json
$tool check >"$out/check.out" 2>&1
rc=$?
info "rke2-proxy-backend check: exit $rc: $(head -n 1 "$out/check.out")"
check "rke2-proxy-backend check exits 0" test "$rc" = 0
failed_units=$(systemctl list-units --failed --plain --no-legend 2>/dev/null | awk '{print $1}' | tr '\n' ' ')
if [ -z "$failed_units" ]; then ok "no failed unit"; else bad "failed units: $failed_units"; fi
finish
