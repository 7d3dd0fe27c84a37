# Sourced INSIDE the boot test's guest by boot-test (guest-assert.sh) for the
# watch and switch boots of packaging/test/boot.sh (installed as
# /usr/local/lib/boot-test/guest-watch.sh). Uses guest-prelude.sh's ok, bad,
# check, prop and wait_for, and guest-assert.sh's $verify.

watch_unit=rke2-proxy-backend-watch.service
watch_prom=/var/lib/prometheus/node-exporter/rke2_proxy_backend_watch.prom

# watch_log SINCE_EPOCH PATTERN: the watch unit logged PATTERN since then.
watch_log() {
	journalctl -u $watch_unit --since "@$1" --no-pager -o cat 2>/dev/null | grep -q "$2"
}

# firewall_reload: what a firewall reload on an iptables backend does to
# IPv4 (rke2#10469): every rule flushed and every chain deleted in mangle,
# nat and filter, kube-proxy's canary chains with them.
firewall_reload() {
	local t
	for t in mangle nat filter; do
		iptables-nft -t "$t" -F && iptables-nft -t "$t" -X || return 1
	done
}

kube_services_rules() { iptables-nft-save -t nat 2>/dev/null | grep -c -- '-A KUBE-SERVICES'; }

# flush_drift: kube-proxy (the stand-in's oracle with --resync) keeps
# running; a firewall reload removes its rules; watch (short grace from the
# boot test's drop-in) must log the drift, kube-proxy's canary monitor must
# write the rules again at its next resync, and watch must log the recovery
# and put the drift metric back to 0. kube-proxy may resync before the
# grace ends (then it is no drift, rightly): the reload is injected again,
# up to 5 times.
flush_drift() {
	local before try t0 drifted=0
	check "watch: $watch_unit is active (enabled by the package)" test "$(prop $watch_unit ActiveState)" = active
	check "watch: kube-proxy stays running (stand-in with --resync)" grep -q staying /var/lib/rke2-standin/kube-proxy
	check "watch: the test's short grace is in effect" sh -c "systemctl show -P ExecStart $watch_unit | grep -q -- '--grace'"
	wait_for 30 watch_log 0 'first verify: ok' || bad "watch: no 'first verify: ok' in the journal"
	before=$(kube_services_rules)
	[ "${before:-0}" -gt 0 ] && ok "watch: $before KUBE-SERVICES rules in iptables-nft before the reload" || bad "watch: no KUBE-SERVICES rules before the reload"
	for try in 1 2 3 4 5; do
		t0=$(date +%s)
		sleep 1 # journalctl --since has 1s resolution
		if ! firewall_reload; then
			bad "watch: the injected firewall reload (iptables-nft -F/-X) failed"
			return
		fi
		t0=$((t0 + 1))
		echo "INFO reload $try injected: $(kube_services_rules) KUBE-SERVICES rules left" >>"$result"
		# kube-proxy resyncs within its period (10s) and watch confirms
		# after its grace: 30s bounds both.
		if wait_for 30 watch_log "$t0" 'watch: drift: '; then
			drifted=1
			break
		fi
		wait_for 30 sh -c "[ \$(iptables-nft-save -t nat | grep -c -- '-A KUBE-SERVICES') -ge $before ]"
		echo "INFO reload $try: kube-proxy resynced before watch's grace ended (no drift, as designed)" >>"$result"
		sleep 3
	done
	if [ $drifted = 0 ]; then
		bad "watch: no drift logged after 5 injected reloads"
		return
	fi
	ok "watch: drift logged after reload $try: $(journalctl -u $watch_unit --since "@$t0" --no-pager -o cat | grep -m1 'watch: drift: ' | cut -c1-160)"
	# watch logs the drift, then writes the textfile: wait for it.
	check "watch: drift metric is 1 while drifting (or already recovered)" wait_for 10 sh -c "grep -qx 'rke2_proxy_backend_drift 1' $watch_prom || journalctl -u $watch_unit --since @$t0 -o cat | grep -q 'watch: recovered: '"
	if wait_for 60 watch_log "$t0" 'watch: recovered: '; then
		ok "watch: $(journalctl -u $watch_unit --since "@$t0" --no-pager -o cat | grep -m1 'watch: recovered: ')"
	else
		bad "watch: no recovery logged within 60s of the drift"
	fi
	local after
	after=$(kube_services_rules)
	[ "${after:-0}" -ge "$before" ] && ok "watch: kube-proxy wrote its rules again ($after KUBE-SERVICES rules)" || bad "watch: $after KUBE-SERVICES rules after recovery, want $before"
	check "watch: drift metric back to 0" wait_for 10 grep -qx 'rke2_proxy_backend_drift 0' $watch_prom
	check "watch: $watch_unit still active" test "$(prop $watch_unit ActiveState)" = active
}

# legacy_left / nft_left: kube-proxy's objects left in an iptables backend;
# kubelet owns KUBE-IPTABLES-HINT and KUBE-KUBELET-CANARY and shares
# KUBE-FIREWALL, which cleanup leaves on purpose.
kube_proxy_left() {
	(iptables-$1-save; ip6tables-$1-save) 2>/dev/null | grep KUBE- |
		grep -v -e KUBE-IPTABLES-HINT -e KUBE-KUBELET-CANARY -e KUBE-FIREWALL | tr '\n' ';'
}

# switch_to BACKEND: run switch (bounded, so a hang fails this boot rather
# than the nspawn timeout) and log its output; sets rc.
switch_to() {
	local t0=$SECONDS
	cp /etc/rke2-proxy-backend/config.yaml "$out/config.before"
	/usr/bin/rke2-proxy-backend switch --to "$1" --timeout 90s >"$out/switch.log" 2>&1
	rc=$?
	echo "INFO switch --to $1: exit $rc in $((SECONDS - t0))s" >>"$result"
	cut -c1-220 "$out/switch.log" | sed 's/^/INFO   | /' >>"$result"
}

# switched FROM TO: the assertions after a switch that exited 0.
switched() {
	local from=$1 to=$2 cfg=/etc/rke2-proxy-backend/config.yaml changed got left findings
	check "switch --to $to logged [finished] steps" grep -q '\[finished\]' "$out/switch.log"
	check "switch --to $to logged no [failed] step" sh -c "! grep -q '\[failed\]' $out/switch.log"
	got=$(cat /var/lib/rke2-standin/backend 2>/dev/null)
	[ "$got" = "$to" ] && ok "switch: kube-proxy (stand-in) now on $to" || bad "switch: kube-proxy on '$got', want $to"
	changed=$(diff "$out/config.before" $cfg | grep '^[<>]' | tr '\n' ';')
	[ "$changed" = "< backend: $from;> backend: $to;" ] && ok "switch: only the backend: line changed in $cfg ($from -> $to)" || bad "switch: $cfg changed: $changed"
	left=$(kube_proxy_left "${from#iptables-}")
	[ -z "$left" ] && ok "switch: no kube-proxy rules stranded in $from" || bad "switch: left in $from: $left"
	/usr/bin/rke2-proxy-backend verify >"$out/verify-after-switch" 2>&1
	rc=$?
	echo "INFO verify after the switch: exit $rc" >>"$result"
	cut -c1-220 "$out/verify-after-switch" | sed 's/^/INFO   | /' >>"$result"
	check "verify after the switch: kube-proxy complete in $to, nothing in $from" sh -c "grep -q '$to: .*skeleton complete' $out/verify-after-switch && grep -q '$from: no kube-proxy rules' $out/verify-after-switch"
	check "verify's status file reports nothing stranded" sh -c "! grep -qi stranded /run/rke2-proxy-backend/status.json"
	# kubelet wrote its hint chains into $from when the node booted; the
	# restarted kubelet wrote them in $to (the alternative was moved first),
	# so switch removed the old ones: verify passes outright, and switch ran
	# the verify unit again, so it has not failed either.
	findings=$(grep -o '^[0-9]*\. \[[a-z-]*\]' "$out/verify-after-switch" | sed 's/^[0-9]*\. //' | sort -u | tr '\n' ' ')
	[ $rc = 0 ] && ok "verify after the switch: exit 0" || bad "verify after the switch exited $rc with findings: $findings"
	check "switch removed the previous kubelet's hint chains from $from" sh -c "grep -q 'removed .* chain(s) the previous kubelet left' $out/switch.log && ! (iptables-${from#iptables-}-save; ip6tables-${from#iptables-}-save) 2>/dev/null | grep -q -e KUBE-IPTABLES-HINT -e KUBE-KUBELET-CANARY"
	check "switch ran $verify again after its cleanup" grep -q "\[finished\] run $verify again" "$out/switch.log"
	check "$verify succeeded after the switch (no failed unit to reset)" test "$(prop $verify Result)" = success
}

# switch_node: rke2-proxy-backend switch on a running node, from legacy to
# iptables-nft, with the host's alternative moved first as verify advises.
# (switch --to nftables is not exercised: switch does not refuse it on the
# stand-in's RKE2 v1.34.4, and the stand-in's kube-proxy did not come up in
# nftables within 90s there; switch rolled back cleanly. See the report.)
switch_node() {
	update-alternatives --quiet --set iptables /usr/sbin/iptables-nft
	update-alternatives --quiet --set ip6tables /usr/sbin/ip6tables-nft
	switch_to iptables-nft
	if [ $rc = 0 ]; then
		ok "switch --to iptables-nft exits 0"
		switched iptables-legacy iptables-nft
	else
		bad "switch --to iptables-nft exited $rc"
	fi
}
