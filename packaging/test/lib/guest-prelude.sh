# Sourced INSIDE a boot test's guest, first thing, by every in-guest
# assertion script (guest_test_unit in lib/common.sh installs it as
# /usr/local/lib/boot-test/guest-prelude.sh): the result file and the verbs
# every guest asserts with, so the host side reads one format.

# guest_result FILE starts the result file the host reads: PASS/FAIL/INFO
# lines, then DONE ok|failed (written by guest_done).
guest_result() {
	result=$1
	mkdir -p "$(dirname "$result")"
	: >"$result"
	failed=0
}

ok() { echo "PASS $*" | tee -a "$result"; }
bad() {
	echo "FAIL $*" | tee -a "$result"
	failed=1
}
info() { echo "INFO $*" >>"$result"; }
check() { # check DESCRIPTION COMMAND...
	local what=$1
	shift
	if "$@" >/dev/null 2>&1; then ok "$what"; else bad "$what"; fi
}
prop() { systemctl show -P "$2" "$1" 2>/dev/null; }

# wait_for SECONDS COMMAND...: poll COMMAND every 0.5s until it succeeds.
wait_for() {
	local d=$((SECONDS + $1))
	shift
	until "$@" >/dev/null 2>&1; do
		[ $SECONDS -ge $d ] && return 1
		sleep 0.5
	done
}
# check_settled UNIT: the node a test left is whole: UNIT's last run (the
# verify unit) succeeded and no unit failed.
check_settled() {
	check "the verify unit's last run succeeded" test "$(prop "$1" Result)" = success
	check "no unit failed" sh -c "[ -z \"\$(systemctl --failed --no-legend --plain)\" ]"
}
now_mono() { awk '{printf "%d", $1 * 1000000}' /proc/uptime; }

# guest_done ends the test whatever happened: the verdict line, then
# poweroff (the host waits for the guest to stop).
guest_done() {
	[ "$failed" = 0 ] && echo "DONE ok" >>"$result" || echo "DONE failed" >>"$result"
	sync
	systemctl --no-block poweroff
	exit 0
}
