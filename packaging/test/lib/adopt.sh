# Helpers of packaging/test/adopt.sh (sourced after lib/common.sh): a guest
# root with RKE2 (the stand-in, kube-proxy's real proxier) and, for the
# adoption cases, WITHOUT our package, which the guest then installs itself
# with dpkg -i while RKE2 runs.

# adopt_guest NAME: a fresh overlay of the bookworm root at $work/NAME with
# the RKE2 stand-in in the tarball layout, RKE2's current rke2-server.service
# enabled, the kube-proxy oracle, the package's .deb at /root/pkg.deb, and
# boot-test.service running the in-guest part (adopt_guest_script). Sets R.
adopt_guest() {
	local name=$1
	new_overlay "$work/$name"
	R=$work/$name/merged
	cp "$STANDIN" "$R/usr/local/bin/rke2"
	install -D -m 0755 "$ORACLE_BIN" "$R/usr/local/lib/rke2-standin/kubeproxy-oracle"
	mkdir -p "$R/usr/local/lib/systemd/system" "$R/etc/systemd/system/multi-user.target.wants" "$R/etc/rancher/rke2" "$R/etc/boot-test"
	cp "$REPO/internal/testkit/testhost/units/rke2-server.service" "$R/usr/local/lib/systemd/system/rke2-server.service"
	ln -sf /usr/local/lib/systemd/system/rke2-server.service "$R/etc/systemd/system/multi-user.target.wants/rke2-server.service"
	printf 'token: adopt-test-secret\n' >"$R/etc/rancher/rke2/config.yaml"
	cp "$deb" "$R/root/pkg.deb"
	adopt_guest_script >"$R/usr/local/sbin/boot-test"
	chmod 0755 "$R/usr/local/sbin/boot-test"
	guest_test_unit "$R" boot-test "adoption"
}

# adopt_boot NAME CASE [KERNEL-CMDLINE-WORDS...] boots the guest at $R once;
# its boot-test runs CASE and writes /var/lib/boot-test/result.
adopt_boot() {
	local name=$1 case=$2
	shift 2
	echo "$case" >"$R/etc/boot-test/case"
	log "$name: booting${*:+ with kernel command line: $*}"
	guest_boot "$R" "$R/var/lib/boot-test/result" "$work/console-$name.log" 300 "$name" "$@"
	guest_verdict "$R/var/lib/boot-test/result" "$R/var/lib/boot-test/diag" "$name"
	pass "$name in ${GUEST_TOOK}s (boot, RKE2 up, the case, poweroff)"
}

# adopt_guest_script prints the in-guest part: common waits and checks, then
# the case named in /etc/boot-test/case.
adopt_guest_script() {
	cat <<'GUEST'
#!/bin/bash
# adopt.sh's in-guest part: waits for RKE2, runs one case, asserts, powers off.
set -u
case=$(cat /etc/boot-test/case)
out=/var/lib/boot-test
. /usr/local/lib/boot-test/guest-prelude.sh
guest_result "$out/result"
verify=rke2-proxy-backend-verify.service
watch=rke2-proxy-backend-watch.service
plan=/run/rke2-proxy-backend/plan.json

finish() {
	failed_units=$(systemctl list-units --failed --plain --no-legend 2>/dev/null | awk '{print $1}' | tr '\n' ' ')
	if [ -z "$failed_units" ]; then ok "no failed units"; else bad "failed units: $failed_units"; fi
	{
		echo "== systemctl status"
		systemctl status --no-pager rke2-server.service $verify $watch
		echo "== systemctl cat rke2-server.service"
		systemctl cat --no-pager rke2-server.service
		echo "== $plan"
		cat $plan
		echo "== status.json"
		head -c 3000 /run/rke2-proxy-backend/status.json
		echo "== dpkg -i"
		cat $out/dpkg.log
		echo "== journal"
		journalctl -b --no-pager -o short-monotonic | grep -i -e rke2 -e generator -e adopt | tail -n 120
	} >"$out/diag" 2>&1
	guest_done
}

# ok_within WHAT SECONDS CMD...: poll CMD until it succeeds, and say so.
ok_within() {
	local what=$1 d=$((SECONDS + $2))
	shift 2
	until "$@" >/dev/null 2>&1; do
		if [ $SECONDS -ge $d ]; then bad "timed out waiting: $what"; return 1; fi
		sleep 0.5
	done
	ok "$what"
}
# A oneshot that never ran has InactiveExitTimestamp 0; one that ran keeps it.
verify_done() {
	local left
	left=$(prop $verify InactiveExitTimestampMonotonic)
	[ "${left:-0}" != 0 ] && [ "$(prop $verify ActiveState)" != activating ]
}
rke2_up() { [ "$(prop rke2-server.service ActiveState)" = active ] && grep -q 'proxier synced' /var/lib/rke2-standin/kube-proxy 2>/dev/null; }

# install_running: RKE2 runs without our package; dpkg -i installs it in
# the running node. Its postinst runs adopt. Nothing may restart RKE2.
install_running() {
	local want=$1
	ok_within "rke2-server active with kube-proxy synced" 90 rke2_up || finish
	check "our package is not installed yet" test ! -e /usr/bin/rke2-proxy-backend
	local pid0 enter0 backend0 args0
	pid0=$(prop rke2-server.service MainPID)
	enter0=$(prop rke2-server.service ActiveEnterTimestampMonotonic)
	backend0=$(cat /var/lib/rke2-standin/backend)
	args0=$(stat -c %Y.%n /var/lib/rke2-standin/args)
	[ "$backend0" = "$want" ] && ok "kube-proxy (stand-in) runs on $want before the install" || bad "kube-proxy runs on '$backend0' before the install, want $want"
	if dpkg -i /root/pkg.deb >$out/dpkg.log 2>&1; then ok "dpkg -i in the running guest"; else bad "dpkg -i failed"; fi
	check "plan recorded with the running backend $want" grep -q "\"backend\": \"$want\"" $plan
	check "the plan's source is adopted" grep -q '"source": "adopted"' $plan
	check "the plan carries schema 2" grep -q '"schema": 2' $plan
	ok_within "verify finished" 90 verify_done
	check "$verify passed (Result=success, exit 0)" test "$(prop $verify Result)/$(prop $verify ExecMainStatus)" = success/0
	check "verify's status file says ok" grep -q '"ok": *true' /run/rke2-proxy-backend/status.json
	ok_within "$watch active" 30 test "$(prop $watch ActiveState)" = active
	ok_within "check exit 0 (watch's status)" 60 /usr/bin/rke2-proxy-backend check
	check "rke2-server's MainPID unchanged ($pid0)" test "$(prop rke2-server.service MainPID)" = "$pid0"
	check "rke2-server was not restarted (same ActiveEnterTimestamp, NRestarts=0)" test "$(prop rke2-server.service ActiveEnterTimestampMonotonic)/$(prop rke2-server.service NRestarts)" = "$enter0/0"
	check "the stand-in did not start again" test "$(stat -c %Y.%n /var/lib/rke2-standin/args)" = "$args0"
	check "kube-proxy still on $want" test "$(cat /var/lib/rke2-standin/backend)" = "$want"
	check "no RKE2 drop-in written (nothing changed for RKE2)" test ! -e /etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml
	check "the generator wired the next start with the same backend" sh -c "systemctl cat rke2-server.service | grep -q 'ExecStartPre=/usr/bin/rke2-proxy-backend apply --backend=$next_backend'"
}

case $case in
running)
	next_backend=iptables-nft
	install_running iptables-nft
	check "adopt said the next start and boot keep it" grep -q "RKE2's next start and the next boot keep iptables-nft" $out/dpkg.log
	# Later, the operator restarts RKE2 (an RKE2 upgrade does): apply runs
	# with the generator's backend, kube-proxy stays on it, verify follows.
	local_before=$(prop $verify InactiveExitTimestampMonotonic)
	if timeout 90 systemctl restart rke2-server.service; then ok "a later systemctl restart rke2-server"; else bad "a later restart of rke2-server failed"; fi
	ok_within "verify ran again after the restart" 90 sh -c "[ \"\$(systemctl show -P InactiveExitTimestampMonotonic $verify)\" -gt ${local_before:-0} ] && [ \"\$(systemctl show -P ActiveState $verify)\" != activating ]"
	check "after the restart kube-proxy is still on iptables-nft" test "$(cat /var/lib/rke2-standin/backend)" = iptables-nft
	check "after the restart apply recorded the plan (iptables-nft, source auto)" sh -c "grep -q '\"backend\": \"iptables-nft\"' $plan && grep -q '\"source\": \"auto\"' $plan"
	check "after the restart verify passed" test "$(prop $verify Result)/$(prop $verify ExecMainStatus)" = success/0
	ok_within "check exit 0 after the restart" 60 /usr/bin/rke2-proxy-backend check
	;;
differs)
	# rke2.proxy_backend=iptables-legacy is on the kernel command line.
	next_backend=iptables-legacy
	install_running iptables-nft
	check "adopt's output says the next start would switch" grep -q 'would switch kube-proxy from iptables-nft to iptables-legacy (source cmdline' $out/dpkg.log
	check "adopt's output says how to keep it" grep -q 'remove rke2.proxy_backend= from the kernel command line' $out/dpkg.log
	check "the journal says it (MESSAGE_ID entry, warning)" sh -c "journalctl -b --no-pager MESSAGE_ID=1b14b41052e045ea98937833f439b4e5 -p warning | grep -q 'would switch kube-proxy from iptables-nft to iptables-legacy'"
	check "nothing switched: no kube-proxy chains in iptables-legacy" sh -c "! iptables-legacy-save 2>/dev/null | grep -q KUBE-"
	;;
broken-fix)
	ok_within "apply refused the broken config" 90 sh -c "journalctl -b -u rke2-server.service --no-pager | grep -q 'RKE2 will not start until this is fixed'"
	check "RKE2 is not running" test "$(prop rke2-server.service ActiveState)" != active
	# docs/troubleshooting.md's fix: correct the file. Nothing else: RKE2's unit retries
	# every 5s (Restart=always) with the drop-in the generator wrote.
	sed -i 's/^backend: .*/backend: auto/' /etc/rke2-proxy-backend/config.yaml
	ok_within "rke2-server active after the fix" 60 rke2_up
	check "RKE2 started on the drop-in wired without a decision (no daemon-reload happened)" sh -c "systemctl cat rke2-server.service | grep -qx 'ExecStartPre=/usr/bin/rke2-proxy-backend apply'"
	# Nothing references the verify unit in this wiring (no Wants=), so
	# systemd unloads it once it finished and its properties read as never
	# run: its journal is the record.
	ok_within "verify finished" 90 sh -c "journalctl -b -u $verify --no-pager | grep -q 'Finished rke2-proxy-backend-verify.service'"
	check "$verify ran and passed after the fix (verify: OK, no failure)" sh -c "journalctl -b -u $verify --no-pager | grep -q 'verify: OK' && ! journalctl -b -u $verify --no-pager | grep -q -e 'Failed with result' -e 'verify: FAILED'"
	check "apply started verify itself" sh -c "journalctl -b -u rke2-server.service --no-pager | grep -q 'finished.*start --no-block $verify'"
	check "verify's status file says ok" grep -q '"ok": *true' /run/rke2-proxy-backend/status.json
	ok_within "check exit 0" 60 /usr/bin/rke2-proxy-backend check
	# Its second step, at any time: the decided wiring.
	systemctl daemon-reload
	check "after daemon-reload the drop-in carries the decision" sh -c "systemctl cat rke2-server.service | grep -q 'ExecStartPre=/usr/bin/rke2-proxy-backend apply --backend=iptables-nft'"
	;;
*) bad "unknown case $case" ;;
esac
finish
GUEST
}
