#!/usr/bin/env bash
# packaging/examples/suc-install-plan.yaml's upgrade container, run as
# system-upgrade-controller runs it, in a real nspawn boot of a Debian
# bookworm node whose RKE2 (the stand-in, kube-proxy's real proxier) runs
# without our package: the host's / at /host (SUC's host mount, in the
# node's own namespaces as SUC's hostPID/hostNetwork pods are), the
# Secret's files (what `make repo` wrote: the key and the .list, pointed at
# the repository copied into the node) at the Secret's mount path, and
# SYSTEM_UPGRADE_PLAN_LATEST_VERSION the version built here. The Job's
# script installs the package with apt-get from that signed repository, the
# package's postinst adopts, and the script's adopt and verify pass: the
# plan says adopted, verify and check pass, watch runs, RKE2's MainPID is
# unchanged and kube-proxy stayed on its backend. Run again (a Job retried,
# or the Plan applied once more), it changes nothing and passes again.
# Needs: root, systemd-nspawn, debootstrap, dpkg, make, go, apt-ftparchive,
# gpg, python3 with yaml (cloud-init's dependency).
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/repo.sh"
need_tools apt-ftparchive gpg python3
python3 -c 'import yaml' 2>/dev/null || skip "needs python3's yaml module (apt-get install python3-yaml)"
boot_test_setup suc-install
trap 'stop_test_repo_agents "$work"/*.gnupg; cleanup_overlays; rm -rf "$work"' EXIT

plan=$REPO/packaging/examples/suc-install-plan.yaml
build_standin "$work/rke2"
mkdir -p "$work/oracle-root"
install_kube_proxy_oracle "$work/rke2" "$work/oracle-root"
build_test_repo "$work/repo"

# The node: RKE2 installed the tarball way and enabled, our package absent.
new_overlay "$work/node"
R=$work/node/merged
cp "$work/rke2" "$R/usr/local/bin/rke2"
install -D -m 0755 "$work/oracle-root/usr/local/lib/rke2-standin/kubeproxy-oracle" "$R/usr/local/lib/rke2-standin/kubeproxy-oracle"
mkdir -p "$R/usr/local/lib/systemd/system" "$R/etc/systemd/system/multi-user.target.wants" "$R/etc/rancher/rke2"
cp "$REPO/internal/testkit/testhost/units/rke2-server.service" "$R/usr/local/lib/systemd/system/"
ln -sf /usr/local/lib/systemd/system/rke2-server.service "$R/etc/systemd/system/multi-user.target.wants/rke2-server.service"
printf 'token: suc-install-test\n' >"$R/etc/rancher/rke2/config.yaml"

# The repository where the node reaches it, and the Secret's files as the
# plan's header (and the README's NAS rollout) kubectl create secret makes them (the .list pointed there).
mkdir -p "$R/srv/repo" "$R/var/lib/boot-test/secret"
cp -a "$work/repo/apt" "$R/srv/repo/apt"
chmod -R a+rX "$R/srv/repo"
secret=$R/var/lib/boot-test/secret
cp "$work/repo/rke2-proxy-backend.gpg" "$work/repo/rke2-proxy-backend.asc" "$work/repo/yum/rke2-proxy-backend.repo" "$secret/"
sed 's|https://REPO_URL/apt|file:/srv/repo/apt|' "$work/repo/apt/rke2-proxy-backend.list" >"$secret/rke2-proxy-backend.list"
grep -q 'file:/srv/repo/apt stable main' "$secret/rke2-proxy-backend.list" || fail "could not point the .list make repo wrote at the node's copy"

# The Job's container command and script, from the Plan itself.
python3 - "$plan" "$R/var/lib/boot-test/upgrade.sh" <<'PY' || fail "cannot read the upgrade container from $plan"
import sys, yaml
up = yaml.safe_load(open(sys.argv[1]))["spec"]["upgrade"]
assert up["command"] == ["sh", "-c"], up["command"]
open(sys.argv[2], "w").write(up["args"][0])
PY
echo "$VERSION" >"$R/var/lib/boot-test/version"

cat >"$R/usr/local/sbin/suc-install" <<'GUEST'
#!/bin/bash
# suc-install.sh's in-guest part: RKE2 up, then the Plan's Job twice.
set -u
out=/var/lib/boot-test
. /usr/local/lib/boot-test/guest-prelude.sh
guest_result "$out/result-1"
verify=rke2-proxy-backend-verify.service
watch=rke2-proxy-backend-watch.service
plan=/run/rke2-proxy-backend/plan.json
finish() {
	{
		for n in 1 2; do echo "== job $n"; cat "$out/job-$n.log"; done
		echo "== systemctl status"
		systemctl status --no-pager rke2-server.service $verify $watch
		echo "== $plan"
		cat $plan
		echo "== journal"
		journalctl -b --no-pager -o short-monotonic | grep -i -e rke2 -e adopt | tail -n 80
	} >"$out/diag-1" 2>&1
	check "no unit failed" sh -c "[ -z \"\$(systemctl --failed --no-legend --plain)\" ]"
	guest_done
}
rke2_up() { [ "$(prop rke2-server.service ActiveState)" = active ] && grep -q 'proxier synced' /var/lib/rke2-standin/kube-proxy 2>/dev/null; }
verify_done() { [ "$(prop $verify InactiveExitTimestampMonotonic)" != 0 ] && [ "$(prop $verify ActiveState)" != activating ]; }

wait_for 90 rke2_up && ok "rke2-server active, kube-proxy synced" || { bad "rke2-server with kube-proxy synced within 90s"; finish; }
check "our package is not installed yet" test ! -e /usr/bin/rke2-proxy-backend
pid0=$(prop rke2-server.service MainPID)
enter0=$(prop rke2-server.service ActiveEnterTimestampMonotonic)
backend0=$(cat /var/lib/rke2-standin/backend)

# SUC's Job pod: the node's / at /host, the Secret at its path, the
# Plan's version in the environment.
mkdir -p /host /run/system-upgrade/secrets/rke2-proxy-backend-repo
mount --rbind / /host
cp $out/secret/* /run/system-upgrade/secrets/rke2-proxy-backend-repo/
job() {
	env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		SYSTEM_UPGRADE_PLAN_LATEST_VERSION="$(cat $out/version)" \
		timeout 600 sh -c "$(cat $out/upgrade.sh)" </dev/null >"$out/job-$1.log" 2>&1
}
if job 1; then ok "the Job's script exits 0"; else bad "the Job's script failed (exit $?)"; fi
check "it installed with apt-get from the signed repository" grep -q "rke2-proxy-backend install: apt-get: rke2-proxy-backend=$(cat $out/version)-1 from deb \[signed-by=/usr/share/keyrings/rke2-proxy-backend.gpg\] file:/srv/repo/apt stable main" $out/job-1.log
check "the package is installed at the Plan's version" test "$(dpkg-query -W -f '${Status} ${Version}' rke2-proxy-backend)" = "install ok installed $(cat $out/version)-1"
check "the Job left nothing in the host's /run" test ! -e /run/rke2-proxy-backend-install
check "the plan records the running backend ($backend0), adopted" sh -c "grep -q '\"backend\": \"$backend0\"' $plan && grep -q '\"source\": \"adopted\"' $plan"
check "the Job's verify passed" grep -q 'verify: OK' $out/job-1.log
wait_for 90 verify_done && check "$verify passed" test "$(prop $verify Result)/$(prop $verify ExecMainStatus)" = success/0 || bad "$verify did not finish"
wait_for 30 test "$(prop $watch ActiveState)" = active && ok "$watch runs" || bad "$watch is not active"
wait_for 60 /usr/bin/rke2-proxy-backend check && ok "check exits 0" || bad "check does not pass"
check "rke2-server was not restarted (MainPID $pid0, same ActiveEnterTimestamp, NRestarts=0)" test "$(prop rke2-server.service MainPID)/$(prop rke2-server.service ActiveEnterTimestampMonotonic)/$(prop rke2-server.service NRestarts)" = "$pid0/$enter0/0"
check "kube-proxy still on $backend0" test "$(cat /var/lib/rke2-standin/backend)" = "$backend0"

# SUC runs the Job again when it is retried or the Plan re-applied.
if job 2; then ok "the Job run again exits 0"; else bad "the Job run again failed (exit $?)"; fi
check "run again, apt-get installs nothing new" grep -q 'rke2-proxy-backend is already the newest version' $out/job-2.log
check "run again, adopt has nothing to do (a plan is recorded)" sh -c "grep -q '\"source\": \"adopted\"' $plan"
check "run again, verify passes" grep -q 'verify: OK' $out/job-2.log
check "rke2-server still not restarted" test "$(prop rke2-server.service MainPID)/$(prop rke2-server.service NRestarts)" = "$pid0/0"
finish
GUEST

boot_guest_test "$R" suc-install 600 "the SUC install Plan's Job"
pass "the install Plan's Job installed from the signed APT repository and adopted a running node, twice, in ${GUEST_TOOK}s"
