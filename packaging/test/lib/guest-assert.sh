#!/bin/bash
# Runs INSIDE the boot test's guest as boot-test.service (installed as
# /usr/local/sbin/boot-test by packaging/test/boot.sh). It waits for RKE2
# (the stand-in) and the verify unit, asserts, writes
# /var/lib/boot-test/result-N (PASS/FAIL lines, then DONE) and diagnostics,
# and powers the guest off whatever happened.
set -u

n=$(cat /etc/boot-test/boot)
expect=$(cat /etc/boot-test/expect)
out=/var/lib/boot-test
diag=$out/diag-$n
. /usr/local/lib/boot-test/guest-prelude.sh
guest_result "$out/result-$n"

finish() {
	{
		echo "== /proc/1/cmdline"
		tr '\0' ' ' </proc/1/cmdline
		echo
		echo "== systemctl --failed"
		systemctl --failed --no-pager
		echo "== systemctl cat rke2-server.service"
		systemctl cat --no-pager rke2-server.service
		echo "== generator dirs"
		ls -lR /run/systemd/generator /run/systemd/generator.early /run/systemd/generator.late 2>&1 | grep -i -B2 -A2 rke2
		echo "== /etc/rancher/rke2/config.yaml.d"
		head -n 50 /etc/rancher/rke2/config.yaml.d/* 2>&1
		echo "== stand-in records"
		head -n 60 /var/lib/rke2-standin/backend /var/lib/rke2-standin/config.json 2>&1
		echo "== iptables-legacy-save / iptables-nft-save (KUBE-)"
		iptables-legacy-save 2>&1 | grep -e KUBE- -e '^\*'
		iptables-nft-save 2>&1 | grep -e KUBE- -e '^\*' | head -n 40
		echo "== /run/rke2-proxy-backend"
		head -n 80 /run/rke2-proxy-backend/* 2>&1
		echo "== journal (rke2-proxy-backend, rke2-server, verify)"
		journalctl -b --no-pager -o short-monotonic | grep -i -e rke2 -e generator | tail -n 120
	} >"$diag" 2>&1
	guest_done
}

# wait_verify_after START_MONOTONIC: wait (bounded) for a verify run that
# started after START_MONOTONIC to finish.
wait_verify_after() {
	local since=$1 d=$((SECONDS + 90)) st
	while [ $SECONDS -lt $d ]; do
		st=$(prop $verify ExecMainStartTimestampMonotonic)
		if [ "${st:-0}" -gt "$since" ] && [ "$(prop $verify ActiveState)" != activating ]; then
			return 0
		fi
		sleep 0.5
	done
	return 1
}

live_switch() {
	local before from=$expect to=iptables-nft
	before=$(prop $verify ExecMainStartTimestampMonotonic)
	sed -i "s/^backend: .*/backend: $to/" /etc/rke2-proxy-backend/config.yaml
	systemctl daemon-reload
	if ! timeout 60 systemctl restart rke2-server.service; then
		bad "live switch: rke2-server did not restart"
		return
	fi
	wait_verify_after "${before:-0}" || bad "live switch: verify did not run again after the RKE2 restart"
	got=$(cat /var/lib/rke2-standin/backend 2>/dev/null)
	[ "$got" = "$to" ] && ok "live switch: kube-proxy (stand-in) now on $to" || bad "live switch: kube-proxy on '$got', want $to"
	check "live switch: RKE2 drop-in now says IPTABLES_MODE=nft" grep -q 'IPTABLES_MODE=nft' /etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml
	check "live switch: kube-proxy's old chains are still in $from (stranded)" sh -c "iptables-legacy-save | grep -q KUBE-"
	check "live switch: verify fails" test "$(prop $verify Result)" != success
	check "live switch: verify reports rules stranded in $from" sh -c "grep -i stranded /run/rke2-proxy-backend/status.json | grep -q . && grep -q '\"$from\"' /run/rke2-proxy-backend/status.json"
	systemctl reset-failed $verify
	if /usr/bin/rke2-proxy-backend cleanup --help >/dev/null 2>&1; then
		before=$(prop $verify ExecMainStartTimestampMonotonic)
		check "live switch: rke2-proxy-backend cleanup --backend $from" /usr/bin/rke2-proxy-backend cleanup --backend $from
		# kubelet owns KUBE-IPTABLES-HINT, KUBE-KUBELET-CANARY and shares
		# KUBE-FIREWALL with kube-proxy; cleanup must leave exactly those.
		left=$( (iptables-legacy-save; ip6tables-legacy-save) 2>/dev/null | grep KUBE- |
			grep -v -e KUBE-IPTABLES-HINT -e KUBE-KUBELET-CANARY -e KUBE-FIREWALL | tr '\n' ';')
		if [ -z "$left" ]; then ok "live switch: only kubelet's chains left in $from"; else bad "live switch: left in $from after cleanup: $left"; fi
		systemctl start $verify
		check "live switch: verify no longer reports stranded rules" sh -c "! grep -qi stranded /run/rke2-proxy-backend/status.json"
		check "live switch: verify still reports kubelet's hint in $from (host alternative not switched)" grep -q '"kubelet-hint"' /run/rke2-proxy-backend/status.json
		systemctl reset-failed $verify
	else
		bad "live switch: the binary has no cleanup command to remove the stranded rules"
	fi
}

# Wait (bounded) for rke2-server to be up and the verify run to be over.
verify=rke2-proxy-backend-verify.service
deadline=$((SECONDS + 90))
while [ $SECONDS -lt $deadline ]; do
	state=$(prop rke2-server.service ActiveState)
	vstate=$(prop $verify ActiveState)
	vstarted=$(prop $verify ExecMainStartTimestampMonotonic)
	if [ "$state" = active ] && [ "$vstate" != activating ] && [ "${vstarted:-0}" != 0 ]; then
		break
	fi
	if [ "$state" = failed ]; then
		break
	fi
	sleep 0.5
done

# 1. The generator ran and its drop-in is part of rke2-server.service.
dropins=$(ls /run/systemd/generator*/rke2-server.service.d/*rke2-proxy-backend* 2>/dev/null | head -n 1)
if [ -n "$dropins" ]; then ok "generator wrote $dropins"; else bad "generator wrote no drop-in for rke2-server.service"; fi
if [ -n "$dropins" ] && systemctl cat --no-pager rke2-server.service | grep -qF "# $dropins"; then
	ok "systemctl cat rke2-server shows $dropins"
else
	bad "systemctl cat rke2-server does not show the generator's drop-in"
fi

# 2. RKE2 (the stand-in) started: it was notified READY only after loading
# kube-proxy's rules for the backend it read from its config.
check "rke2-server.service is active (stand-in sent READY=1)" test "$(prop rke2-server.service ActiveState)" = active

# 3. apply wrote the RKE2 drop-in, and it is what the stand-in read.
rke2drop=/etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml
check "apply wrote $rke2drop" test -s $rke2drop
check "$rke2drop carries the generated-file header" grep -q '^# Generated by rke2-proxy-backend' $rke2drop
check "the stand-in read $rke2drop" grep -qF "\"$rke2drop\"" /var/lib/rke2-standin/config.json
got=$(cat /var/lib/rke2-standin/backend 2>/dev/null)
if [ "$got" = "$expect" ]; then
	ok "kube-proxy (stand-in) runs on $expect, from RKE2's merged config"
else
	bad "kube-proxy (stand-in) runs on '${got:-nothing}', want $expect"
fi
check "kube-proxy's real proxier (the oracle) synced its rules" grep -q 'proxier synced' /var/lib/rke2-standin/kube-proxy
case $expect in
iptables-legacy) want_env=IPTABLES_MODE=legacy ;;
iptables-nft) want_env=IPTABLES_MODE=nft ;;
*) want_env=proxy-mode=nftables ;;
esac
check "RKE2's merged config carries $want_env" grep -qF "$want_env" /var/lib/rke2-standin/config.json

check "apply recorded the plan for $expect" grep -q "\"backend\": *\"$expect\"" /run/rke2-proxy-backend/plan.json
# apply's decision as a structured journal entry with its fixed MESSAGE_ID
# (internal/apply/journal.go), which operators query by field.
check "apply logged the decision to the journal (MESSAGE_ID, RKE2_PROXY_BACKEND=$expect)" \
	sh -c "journalctl -b --no-pager -o verbose MESSAGE_ID=1b14b41052e045ea98937833f439b4e5 | grep -qx '    RKE2_PROXY_BACKEND=$expect'"

# 4. verify ran after RKE2 was ready, and passed.
vstarted=$(prop $verify ExecMainStartTimestampMonotonic)
if [ "${vstarted:-0}" = 0 ]; then
	bad "$verify never ran (the generator's drop-in should pull it in with Wants=)"
else
	ok "$verify ran"
	check "$verify passed (Result=success, exit 0)" test "$(prop $verify Result)/$(prop $verify ExecMainStatus)" = success/0
	check "verify's status file says ok" grep -q '"ok": *true' /run/rke2-proxy-backend/status.json
fi

# 5. A fresh boot has no kube-proxy rules in the other iptables backend.
case $expect in
iptables-nft) other=legacy ;;
*) other=nft ;;
esac
if iptables-$other-save 2>/dev/null | grep -q 'KUBE-'; then
	bad "kube-proxy chains found in iptables-$other after boot $n"
else
	ok "no kube-proxy chains in iptables-$other (fresh network namespace per boot)"
fi
if [ "$expect" != iptables-legacy ] && iptables-legacy-save 2>/dev/null | grep -q 'KUBE-'; then
	bad "rules stranded in iptables-legacy"
fi

# 6. Optionally, switch backends WITHOUT a reboot (config edit, daemon-reload,
# RKE2 restart): kube-proxy cleans only the backend it now uses, so its old
# rules are stranded in the previous one, and verify must say so.
if [ "$(cat /etc/boot-test/mode 2>/dev/null)" = live-switch ]; then
	live_switch
fi
# The watch and switch boots (boot_watch_flush, boot_switch in boot.sh).
case $(cat /etc/boot-test/mode 2>/dev/null) in
watch-flush)
	. /usr/local/lib/boot-test/guest-watch.sh
	flush_drift
	;;
switch)
	. /usr/local/lib/boot-test/guest-watch.sh
	switch_node
	;;
esac

# 7. Nothing failed.
failed_units=$(systemctl list-units --failed --plain --no-legend 2>/dev/null | awk '{print $1}' | tr '\n' ' ')
if [ -z "$failed_units" ]; then ok "no failed units"; else bad "failed units: $failed_units"; fi

finish
