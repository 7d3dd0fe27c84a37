#!/bin/bash
# Runs INSIDE a lifecycle guest as boot-test.service (installed as
# /usr/local/sbin/boot-test by packaging/test/lib/lifecycle.sh). It waits for
# RKE2 (the stand-in), verify and watch, runs the case named in
# /etc/boot-test/case, writes /var/lib/boot-test/result (PASS/FAIL/INFO
# lines, then DONE) and diagnostics, and powers the guest off whatever
# happened.
set -u

case_name=$(cat /etc/boot-test/case)
version=$(cat /etc/boot-test/version)
out=/var/lib/boot-test
diag=$out/diag
. /usr/local/lib/boot-test/guest-prelude.sh
guest_result "$out/result"
verify=rke2-proxy-backend-verify.service
watch=rke2-proxy-backend-watch.service
status=/run/rke2-proxy-backend/status.json
# The RKE2 unit this node runs (the enabled one): rke2-server or rke2-agent.
rke2=$(cat /etc/boot-test/rke2-unit)

# verify_done_after USEC: a verify run that started after USEC (monotonic)
# has finished.
verify_done_after() {
	[ "$(prop $verify ExecMainStartTimestampMonotonic)" -gt "$1" ] && [ "$(prop $verify ActiveState)" != activating ]
}

# rke2_then_verify CASE VERB: systemctl VERB RKE2, then wait for a verify
# run that started after it and check that it passed.
rke2_then_verify() {
	local m0
	m0=$(now_mono)
	check "$1: systemctl $2 $rke2" timeout 120 systemctl "$2" $rke2
	wait_for 90 verify_done_after "$m0" || bad "$1: verify did not run after the $2"
	verify_ok "$1"
}
verify_ok() { # verify_ok WHEN: the verify unit's last run passed, status.json says ok
	check "$1: $verify passed (Result=success, exit 0)" test "$(prop $verify Result)/$(prop $verify ExecMainStatus)" = success/0
	check "$1: status.json says ok" grep -q '"ok": *true' $status
}
no_failed_units() {
	local f
	f=$(systemctl list-units --failed --plain --no-legend 2>/dev/null | awk '{print $1}' | tr '\n' ' ')
	if [ -z "$f" ]; then ok "$1: no failed units"; else bad "$1: failed units: $f"; fi
}
watch_pid() { prop $watch MainPID; }
watch_running() { [ "$(prop $watch ActiveState)" = active ] && [ "$(watch_pid)" != 0 ]; }
# watch_first_ok SINCE_EPOCH: watch logged a passing first verify since then.
watch_first_ok() { journalctl -u $watch --since "@$1" --no-pager -o cat | grep -q 'first verify: ok'; }

finish() {
	{
		echo "== systemctl --failed"
		systemctl --failed --no-pager
		echo "== systemctl status $rke2 watch verify"
		systemctl status --no-pager $rke2 $watch $verify
		echo "== systemctl cat $watch"
		systemctl cat --no-pager $watch
		echo "== /run/rke2-proxy-backend"
		head -n 40 /run/rke2-proxy-backend/* 2>&1
		echo "== journal"
		journalctl -b --no-pager -o short-monotonic | grep -i -e rke2 -e dpkg -e generator | tail -n 100
	} >"$diag" 2>&1
	guest_done
}

# rke2-later: the node booted without RKE2 (Rancher's node drivers,
# system-agent and CAPI bootstrap install it after the first boot); RKE2
# is then installed as its install.sh does (the binary, both units in
# /usr/local/lib/systemd/system, nothing enabled), `systemctl daemon-reload`
# and `systemctl enable --now rke2-server`, as cloud-init's runcmd does
# (issue 32 item 6): the daemon-reload runs the generator, which wires the
# drop-in, so that first start is applied and verified.
case_rke2_later() {
	local m0
	check "rke2-later: no RKE2 unit at boot" sh -c "[ \"\$(systemctl show -P LoadState $rke2)\" = not-found ]"
	check "rke2-later: the generator wired nothing at boot" test ! -e /run/systemd/generator/$rke2.d
	check "rke2-later: no plan yet" test ! -e /run/rke2-proxy-backend/plan.json
	install -m 0755 /root/rke2-install/rke2 /usr/local/bin/rke2
	install -m 0644 /root/rke2-install/rke2-server.service /root/rke2-install/rke2-agent.service /usr/local/lib/systemd/system/
	check "rke2-later: systemctl daemon-reload" systemctl daemon-reload
	check "rke2-later: the generator wired the drop-in at that daemon-reload" sh -c "systemctl cat --no-pager $rke2 | grep -q '^ExecStartPre=/usr/bin/rke2-proxy-backend apply --backend=iptables-legacy'"
	check "rke2-later: and watch's PartOf= waits for an enabled unit" test -z "$(prop $watch PartOf)"
	m0=$(now_mono)
	check "rke2-later: systemctl enable --now $rke2" timeout 120 systemctl enable --now $rke2
	check "rke2-later: $rke2 active" test "$(prop $rke2 ActiveState)" = active
	check "rke2-later: apply recorded the plan (iptables-legacy, applied)" sh -c "grep -q '\"backend\": \"iptables-legacy\"' /run/rke2-proxy-backend/plan.json && grep -q '\"by\": \"apply\"' /run/rke2-proxy-backend/plan.json"
	check "rke2-later: apply wrote RKE2's drop-in before RKE2 read its config" grep -qF 60-proxy-backend.yaml /var/lib/rke2-standin/config.json
	check "rke2-later: kube-proxy on iptables-legacy" test "$(cat /var/lib/rke2-standin/backend)" = iptables-legacy
	wait_for 90 verify_done_after "$m0" || bad "rke2-later: verify did not run after the start"
	verify_ok rke2-later
	check "rke2-later: watch runs with RKE2, PartOf= it" wait_for 30 sh -c "[ \"\$(systemctl show -P ActiveState $watch)/\$(systemctl show -P PartOf $watch)\" = active/$rke2 ]"
	check "rke2-later: check exit 0" wait_for 60 /usr/bin/rke2-proxy-backend check
	no_failed_units rke2-later
	finish
}
[ "$case_name" = rke2-later ] && case_rke2_later

# The boot: RKE2 up, the first verify over, watch running its first verify.
wait_for 120 sh -c "[ \"\$(systemctl show -P ActiveState $rke2)\" = active ] && [ \"\$(systemctl show -P ExecMainStartTimestampMonotonic $verify)\" != 0 ] && [ \"\$(systemctl show -P ActiveState $verify)\" != activating ]" ||
	bad "boot: $rke2 active and verify run within 120s ($rke2 $(prop $rke2 ActiveState), verify $(prop $verify ActiveState))"
check "boot: $rke2 is active" test "$(prop $rke2 ActiveState)" = active
verify_ok boot
check "boot: $watch is active (enabled by the package)" watch_running
wait_for 60 watch_first_ok 0 || bad "boot: watch logged no 'first verify: ok'"
info "boot: watch PartOf=$(prop $watch PartOf) StopWhenUnneeded=$(prop $watch StopWhenUnneeded)"

# restart: RKE2 restarted with watch active (issue 18 item 1): the restart
# succeeds, watch restarts with it; stopping RKE2 stops watch, starting it
# starts watch again; verify passes after each start.
case_restart() {
	local pid0 pid1 t0 m0
	pid0=$(watch_pid)
	t0=$(date +%s)
	m0=$(now_mono)
	sleep 1
	if timeout 120 systemctl restart $rke2 >"$out/restart.log" 2>&1; then
		ok "restart: systemctl restart $rke2 succeeded"
	else
		bad "restart: systemctl restart $rke2 failed: $(tr '\n' ' ' <"$out/restart.log" | cut -c1-300)"
	fi
	check "restart: $rke2 active again" test "$(prop $rke2 ActiveState)" = active
	wait_for 90 verify_done_after "$m0" || bad "restart: verify did not run again after the restart"
	verify_ok restart
	check "restart: watch is PartOf= $rke2 only (the enabled unit)" test "$(prop $watch PartOf)" = "$rke2"
	check "restart: watch is running again" wait_for 30 watch_running
	pid1=$(watch_pid)
	[ "$pid1" != "$pid0" ] && ok "restart: watch restarted with RKE2 (PID $pid0 -> $pid1)" || bad "restart: watch was not restarted with RKE2 (PID still $pid0)"
	wait_for 60 watch_first_ok "$t0" && ok "restart: watch's first verify after the restart: ok" || bad "restart: watch logged no 'first verify: ok' after the restart"
	systemctl stop $rke2
	check "stop: watch stops when RKE2 stops" wait_for 15 sh -c "[ \"\$(systemctl show -P ActiveState $watch)\" = inactive ]"
	systemctl start $watch
	check "stop: watch started by hand with RKE2 down stops again (StopWhenUnneeded=)" wait_for 15 sh -c "[ \"\$(systemctl show -P ActiveState $watch)\" = inactive ]"
	rke2_then_verify start start
	check "start: watch runs again" wait_for 30 watch_running
}

# upgrade: the next version installed on the running node (issue 18 item
# 2) over the base commit's package, whose config was a conffile, with the
# config edited, by exactly `apt-get install -y` with no terminal (issue 32
# item 1: dpkg asked and failed there): no question, the config byte for
# byte the same, watch runs the new binary (new PID, /proc/PID/exe not
# deleted), the generator's drop-ins are written again, RKE2 keeps running
# untouched (same MainPID and InvocationID).
case_upgrade() {
	local pid0 pid1 rpid0 rinv0 dropin ino0 t0 exe
	dropin=/run/systemd/generator/$rke2.d/50-rke2-proxy-backend.conf
	pid0=$(watch_pid)
	rpid0=$(prop $rke2 MainPID)
	rinv0=$(prop $rke2 InvocationID)
	ino0=$(stat -c %i "$dropin" 2>/dev/null)
	t0=$(date +%s)
	sleep 1
	if apt-get install -y /root/pkgs/rke2-proxy-backend_"$version".1-1_*.deb >"$out/upgrade.log" 2>&1 </dev/null; then
		ok "upgrade: apt-get install -y of $version.1 on the running node, over the base package with an edited config"
	else
		bad "upgrade: apt-get install -y exited $?: $(tail -n 5 "$out/upgrade.log" | tr '\n' ' ')"
	fi
	sed 's/^/INFO   | /' "$out/upgrade.log" >>"$result"
	check "upgrade: no conffile question" sh -c "! grep -q -i -e 'conffile' -e 'Configuration file' $out/upgrade.log"
	check "upgrade: the edited config is byte for byte the same" cmp /etc/boot-test/config.before /etc/rke2-proxy-backend/config.yaml
	check "upgrade: nothing beside the config" test "$(ls -A /etc/rke2-proxy-backend)" = config.yaml
	check "upgrade: dpkg has $version.1-1 installed" sh -c "dpkg-query -W -f '\${Version} \${db:Status-Status}' rke2-proxy-backend | grep -qx '$version.1-1 installed'"
	check "upgrade: watch is running" wait_for 30 watch_running
	pid1=$(watch_pid)
	[ "$pid1" != "$pid0" ] && ok "upgrade: watch restarted (PID $pid0 -> $pid1)" || bad "upgrade: watch not restarted (PID still $pid0)"
	exe=$(readlink /proc/"$pid1"/exe 2>/dev/null)
	[ "$exe" = /usr/bin/rke2-proxy-backend ] && ok "upgrade: watch's /proc/$pid1/exe is $exe" || bad "upgrade: watch's /proc/$pid1/exe is '$exe'"
	# build_next_version packages the same build again, so the new binary
	# is told from the old by its file, not its version string.
	check "upgrade: watch runs the installed file (same inode as /usr/bin/rke2-proxy-backend)" test "$(stat -L -c %i /proc/"$pid1"/exe 2>&1)" = "$(stat -c %i /usr/bin/rke2-proxy-backend)"
	[ -n "$ino0" ] && [ "$(stat -c %i "$dropin" 2>/dev/null)" != "$ino0" ] && ok "upgrade: the generator wrote $dropin again (daemon-reload)" || bad "upgrade: $dropin not written again (inode $ino0 -> $(stat -c %i "$dropin" 2>&1))"
	check "upgrade: no unit needs a daemon-reload" test "$(prop $rke2 NeedDaemonReload)/$(prop $watch NeedDaemonReload)" = no/no
	[ "$(prop $rke2 MainPID)/$(prop $rke2 InvocationID)" = "$rpid0/$rinv0" ] &&
		ok "upgrade: RKE2 not restarted (MainPID $rpid0, InvocationID $rinv0)" || bad "upgrade: RKE2 was restarted (MainPID $rpid0 -> $(prop $rke2 MainPID))"
	wait_for 90 watch_first_ok "$t0" && ok "upgrade: the new watch's first verify: ok" || bad "upgrade: the new watch logged no 'first verify: ok'"
	check "upgrade: status.json says ok" grep -q '"ok": *true' $status
}

# reinstall: apt-get remove, then apt-get install of the same package
# (issue 18 item 3): watch is enabled again, and runs with RKE2's next start.
case_reinstall() {
	local deb
	deb=$(ls /root/pkgs/rke2-proxy-backend_"$version"-1_*.deb)
	check "reinstall: apt-get remove" sh -c "DEBIAN_FRONTEND=noninteractive apt-get remove -y -q rke2-proxy-backend >$out/remove.log 2>&1"
	check "reinstall: watch disabled and stopped by the removal" sh -c "! systemctl is-enabled --quiet $watch && ! systemctl is-active --quiet $watch"
	check "reinstall: dpkg says config-files" sh -c "dpkg-query -W -f '\${db:Status-Status}' rke2-proxy-backend | grep -qx config-files"
	check "reinstall: apt-get install $deb" sh -c "DEBIAN_FRONTEND=noninteractive apt-get install -y -q $deb >$out/install.log 2>&1"
	sed 's/^/INFO   | /' "$out/install.log" >>"$result"
	check "reinstall: $watch is enabled again" systemctl is-enabled --quiet $watch
	rke2_then_verify reinstall restart
	check "reinstall: watch runs with RKE2 again" wait_for 30 watch_running
}

# purge: apt-get purge with a custom textfile dir and the state bench and
# switch leave (issue 18 item 6): nothing of ours left, no dpkg warning,
# RKE2 keeps running.
case_purge() {
	local p left="" m=/srv/metrics
	check "purge: verify wrote its metrics in the custom textfile dir" grep -qx 'rke2_proxy_backend_verify_ok 1' $m/rke2_proxy_backend.prom
	check "purge: watch wrote its metrics there" test -s $m/rke2_proxy_backend_watch.prom
	info "purge: before: $(ls -A /var/lib/rke2-proxy-backend /etc/rke2-proxy-backend $m 2>&1 | tr '\n' ' ')"
	DEBIAN_FRONTEND=noninteractive apt-get purge -y -q rke2-proxy-backend >"$out/purge.log" 2>&1
	check "purge: apt-get purge exited 0" test $? = 0
	sed 's/^/INFO   | /' "$out/purge.log" >>"$result"
	if grep -qi 'warning' "$out/purge.log"; then bad "purge: dpkg warned: $(grep -i warning "$out/purge.log" | tr '\n' ' ')"; else ok "purge: no warning from apt or dpkg"; fi
	for p in /usr/bin/rke2-proxy-backend /usr/libexec/rke2-proxy-backend-generator /usr/lib/systemd/system-generators/rke2-proxy-backend-generator \
		/usr/lib/systemd/system/rke2-proxy-backend-verify.service /usr/lib/systemd/system/rke2-proxy-backend-watch.service \
		/etc/rke2-proxy-backend /var/lib/rke2-proxy-backend /run/rke2-proxy-backend \
		/etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml \
		$m/rke2_proxy_backend.prom $m/rke2_proxy_backend_watch.prom $m/rke2_proxy_backend_fleet.prom \
		/var/lib/prometheus/node-exporter/rke2_proxy_backend.prom /var/lib/prometheus/node-exporter/rke2_proxy_backend_watch.prom \
		/var/lib/prometheus/node-exporter/rke2_proxy_backend_fleet.prom /etc/kubernetes/node-feature-discovery/features.d/rke2-proxy-backend \
		/usr/share/doc/rke2-proxy-backend /usr/share/rke2-proxy-backend /usr/share/man/man1/rke2-proxy-backend.1.gz; do
		[ -e "$p" ] || [ -L "$p" ] && left="$left $p"
	done
	left="$left $(find /etc/systemd/system /run/systemd/generator /run/systemd/generator.early /run/systemd/generator.late $m -name '*rke2-proxy-backend*' -o -name '*rke2_proxy_backend*' 2>/dev/null | tr '\n' ' ')"
	left=$(echo $left | tr " " "\n" | sort -u | tr "\n" " ")
	left=$(echo $left)
	[ -z "$left" ] && ok "purge: nothing of ours left (binary, generator link, units, enablement links, generator drop-ins, /etc/rke2-proxy-backend, /var/lib/rke2-proxy-backend, /run/rke2-proxy-backend, the RKE2 drop-in, metrics in $m and the default dir, docs)" ||
		bad "purge: left: $left"
	check "purge: dpkg no longer knows the package" sh -c "! dpkg-query -W rke2-proxy-backend 2>/dev/null | grep -q ."
	# systemd unloads an unreferenced unit from its garbage-collection
	# queue, soon after the reload rather than within it.
	wait_for 15 sh -c "! systemctl list-units --all --plain --no-legend 'rke2-proxy-backend*' | grep -q ."
	loaded=$(systemctl list-units --all --plain --no-legend 'rke2-proxy-backend*' | tr '\n' ';')
	[ -z "$loaded" ] && ok "purge: no rke2-proxy-backend unit loaded" || bad "purge: units still loaded 15s after the purge: $loaded"
	check "purge: RKE2 keeps running" test "$(prop $rke2 ActiveState)" = active
	check "purge: the operator's RKE2 config untouched" grep -qx 'token: lifecycle-test-secret' /etc/rancher/rke2/config.yaml
}

# watch_on_installed WHEN: watch runs, on the installed file (not a
# deleted one), started since PID $1 ran.
watch_on_installed() {
	local when=$1 pid0=$2 pid1
	check "$when: watch is running" wait_for 30 watch_running
	pid1=$(watch_pid)
	[ "$pid1" != "$pid0" ] && ok "$when: watch restarted (PID $pid0 -> $pid1)" || bad "$when: watch not restarted (PID still $pid0)"
	check "$when: watch runs the installed file (same inode as /usr/bin/rke2-proxy-backend)" test "$(stat -L -c %i /proc/"$pid1"/exe 2>&1)" = "$(stat -c %i /usr/bin/rke2-proxy-backend)"
}

# killed-postinst: dpkg -i of the next version killed (SIGKILL, its whole
# process group) while the postinst waits on systemctl daemon-reload, then
# `dpkg --configure -a`, as an operator recovers a node whose upgrade died.
case_killed_postinst() {
	local deb pid0 rpid0 rinv0 dropin ino0 t0 dpkg_pid pgid st
	deb=$(ls /root/pkgs/rke2-proxy-backend_"$version".1-1_*.deb)
	dropin=/run/systemd/generator/$rke2.d/50-rke2-proxy-backend.conf
	pid0=$(watch_pid)
	rpid0=$(prop $rke2 MainPID)
	rinv0=$(prop $rke2 InvocationID)
	ino0=$(stat -c %i "$dropin" 2>/dev/null)
	t0=$(date +%s)
	# A systemctl first on PATH that holds the postinst's daemon-reload
	# (dpkg names the script running in DPKG_MAINTSCRIPT_NAME).
	mkdir -p /run/boot-test
	cat >/usr/local/sbin/systemctl <<'HOLD'
#!/bin/sh
if [ "${DPKG_MAINTSCRIPT_NAME:-}" = postinst ] && [ "$1" = daemon-reload ] && [ -e /run/boot-test/hold ]; then
	: >/run/boot-test/held
	exec sleep 600
fi
exec /usr/bin/systemctl "$@"
HOLD
	chmod 0755 /usr/local/sbin/systemctl
	: >/run/boot-test/hold
	setsid dpkg -i "$deb" >"$out/killed.log" 2>&1 &
	dpkg_pid=$!
	if wait_for 120 test -e /run/boot-test/held; then
		pgid=$(awk '{print $5}' /proc/$dpkg_pid/stat)
		kill -KILL -- -"$pgid"
		ok "killed-postinst: dpkg (PID $dpkg_pid) and its postinst killed while the postinst waited on daemon-reload"
	else
		bad "killed-postinst: the postinst never reached daemon-reload: $(tail -n 3 "$out/killed.log" | tr '\n' ' ')"
		kill -KILL -- -"$dpkg_pid" 2>/dev/null
	fi
	wait $dpkg_pid 2>/dev/null
	rm -f /run/boot-test/hold /usr/local/sbin/systemctl
	st=$(dpkg-query -W -f '${Version} ${db:Status-Status}' rke2-proxy-backend)
	[ "$st" = "$version.1-1 half-configured" ] && ok "killed-postinst: dpkg says $st" || bad "killed-postinst: dpkg says '$st', want $version.1-1 half-configured"
	if dpkg --configure -a >"$out/configure.log" 2>&1; then ok "killed-postinst: dpkg --configure -a exit 0"; else bad "killed-postinst: dpkg --configure -a failed: $(tail -n 5 "$out/configure.log" | tr '\n' ' ')"; fi
	sed 's/^/INFO   | /' "$out/configure.log" >>"$result"
	check "killed-postinst: dpkg has $version.1-1 installed" sh -c "dpkg-query -W -f '\${Version} \${db:Status-Status}' rke2-proxy-backend | grep -qx '$version.1-1 installed'"
	watch_on_installed killed-postinst "$pid0"
	[ -n "$ino0" ] && [ "$(stat -c %i "$dropin" 2>/dev/null)" != "$ino0" ] && ok "killed-postinst: the generator wrote $dropin again" || bad "killed-postinst: $dropin not written again"
	check "killed-postinst: the generator link is there" test -L /usr/lib/systemd/system-generators/rke2-proxy-backend-generator
	check "killed-postinst: no unit needs a daemon-reload" test "$(prop $rke2 NeedDaemonReload)/$(prop $watch NeedDaemonReload)" = no/no
	[ "$(prop $rke2 MainPID)/$(prop $rke2 InvocationID)" = "$rpid0/$rinv0" ] &&
		ok "killed-postinst: RKE2 not restarted" || bad "killed-postinst: RKE2 was restarted (MainPID $rpid0 -> $(prop $rke2 MainPID))"
	wait_for 90 watch_first_ok "$t0" && ok "killed-postinst: the new watch's first verify: ok" || bad "killed-postinst: the new watch logged no 'first verify: ok'"
	rke2_then_verify killed-postinst restart
}

# downgrade: the next version, then this one, with the commands operators
# run (apt-get install -y of the file; --allow-downgrades for the way back).
case_downgrade() {
	local next this pid0
	next=$(ls /root/pkgs/rke2-proxy-backend_"$version".1-1_*.deb)
	this=$(ls /root/pkgs/rke2-proxy-backend_"$version"-1_*.deb)
	pid0=$(watch_pid)
	check "downgrade: apt-get install -y $next (the upgrade)" sh -c "DEBIAN_FRONTEND=noninteractive apt-get install -y -q $next >$out/up.log 2>&1 </dev/null"
	check "downgrade: dpkg has $version.1-1 installed" sh -c "dpkg-query -W -f '\${Version} \${db:Status-Status}' rke2-proxy-backend | grep -qx '$version.1-1 installed'"
	watch_on_installed upgrade "$pid0"
	pid0=$(watch_pid)
	if DEBIAN_FRONTEND=noninteractive apt-get install -y -q --allow-downgrades "$this" >"$out/down.log" 2>&1 </dev/null; then
		ok "downgrade: apt-get install -y --allow-downgrades $this exit 0"
	else
		bad "downgrade: apt-get install -y --allow-downgrades failed: $(tail -n 5 "$out/down.log" | tr '\n' ' ')"
	fi
	sed 's/^/INFO   | /' "$out/down.log" >>"$result"
	check "downgrade: dpkg has $version-1 installed" sh -c "dpkg-query -W -f '\${Version} \${db:Status-Status}' rke2-proxy-backend | grep -qx '$version-1 installed'"
	watch_on_installed downgrade "$pid0"
	check "downgrade: the generator link is there" test -L /usr/lib/systemd/system-generators/rke2-proxy-backend-generator
	check "downgrade: watch still enabled" systemctl is-enabled --quiet $watch
	rke2_then_verify downgrade restart
	check "downgrade: watch runs with RKE2 again" wait_for 30 watch_running
}

case $case_name in
restart-*) case_restart ;;
switch-*)
	. /usr/local/lib/boot-test/guest-watch.sh
	switch_node
	verify_ok switch
	check "switch: watch runs after the switch's RKE2 restart" wait_for 30 watch_running
	;;
upgrade) case_upgrade ;;
reinstall) case_reinstall ;;
purge) case_purge ;;
killed-postinst) case_killed_postinst ;;
downgrade) case_downgrade ;;
*) bad "unknown case $case_name" ;;
esac
no_failed_units "$case_name"
finish
