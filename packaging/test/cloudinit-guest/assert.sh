#!/bin/sh
# In-guest assertions for packaging/test/cloudinit-boot.sh, run by
# cloudinit-assert.service after cloud-final.service at every boot; writes
# /var/lib/cloudinit-test/result-<boot> and powers the guest off.
# cloudinit-boot.sh leaves, in /etc/cloudinit-test: boot (1, 2), role
# (server or agent: the example's rke2-<role>.service), backend (where
# kube-proxy must end) and config.yaml (the example's rke2-proxy-backend
# config, as its write_files entry has it).
n=$(cat /etc/cloudinit-test/boot)
role=$(cat /etc/cloudinit-test/role)
want=$(cat /etc/cloudinit-test/backend)
unit=rke2-$role.service
out=/var/lib/cloudinit-test/result-$n
mkdir -p /var/lib/cloudinit-test
: >"$out"
ok() { echo "ok   $*" >>"$out"; }
bad() { echo "FAIL $*" >>"$out"; }
check() {
	what=$1
	shift
	if "$@" >/dev/null 2>&1; then ok "$what"; else bad "$what"; fi
}
mtime() { stat -c %Y "$1" 2>/dev/null || echo 0; }

# Wait for RKE2 (Type=notify) and verify to settle.
i=0
while [ $i -lt 120 ]; do
	systemctl is-active --quiet $unit &&
		[ "$(systemctl show -p ActiveState --value rke2-proxy-backend-verify.service)" != activating ] && break
	sleep 1
	i=$((i + 1))
done

check "cloud-init finished without errors (cloud-init status)" cloud-init status
check "rke2-proxy-backend installed (dpkg)" dpkg -s rke2-proxy-backend
check "apt verified the repository (an InRelease in /var/lib/apt/lists)" sh -c 'ls /var/lib/apt/lists/*rke2-proxy-backend-repo*InRelease'
check "our config is the example's, kept by the package install" cmp -s /etc/cloudinit-test/config.yaml /etc/rke2-proxy-backend/config.yaml
check "nothing beside it (no conffile: the example is /usr/share/rke2-proxy-backend/config.yaml.example)" sh -c 'test "$(ls -A /etc/rke2-proxy-backend)" = config.yaml && test -f /usr/share/rke2-proxy-backend/config.yaml.example'
check "RKE2 installed from the artifacts (/usr/local/bin/rke2, images)" sh -c 'test -x /usr/local/bin/rke2 && ls /var/lib/rancher/rke2/agent/images/rke2-images.linux-*.tar.zst'
check "rke2-$role is active" systemctl is-active --quiet $unit
check "rke2-$role is enabled" systemctl is-enabled --quiet $unit
check "our generator's drop-in is part of rke2-$role" sh -c "systemctl cat $unit | grep -q '^ExecStartPre=/usr/bin/rke2-proxy-backend apply'"
check "RKE2 ran as rke2 $role" sh -c "sed -n 2p /var/lib/rke2-standin/args | grep -qx $role"
check "apply wrote RKE2's drop-in" test -f /etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml
check "the RKE2 stand-in read that drop-in" grep -qF '60-proxy-backend.yaml' /var/lib/rke2-standin/config.json
got=$(cat /var/lib/rke2-standin/backend 2>/dev/null)
if [ "$got" = "$want" ]; then ok "kube-proxy (stand-in) ends on $want"; else bad "kube-proxy (stand-in) on '${got:-nothing}', want $want"; fi
check "apply's plan says $want" grep -q "\"backend\": *\"$want\"" /run/rke2-proxy-backend/plan.json
check "verify ran and passed" sh -c '[ "$(systemctl show -p Result --value rke2-proxy-backend-verify.service)" = success ] && [ "$(systemctl show -p ExecMainStatus --value rke2-proxy-backend-verify.service)" = 0 ] && [ "$(systemctl show -p ExecMainStartTimestampMonotonic --value rke2-proxy-backend-verify.service)" != 0 ]'
check "RKE2 read its token from token-file, not inline" sh -c '! grep -q "^token:" /etc/rancher/rke2/config.yaml && grep -q "^token-file: /etc/rancher/rke2/cluster-token" /etc/rancher/rke2/config.yaml'

# Order on the first boot: config written, package installed, RKE2
# installed, RKE2's drop-in written, all before RKE2's first start.
if [ "$n" = 1 ]; then
	cfg=$(mtime /etc/rke2-proxy-backend/config.yaml)
	pkg=$(mtime /var/lib/dpkg/info/rke2-proxy-backend.list)
	rke2=$(stat -c %Z /usr/local/bin/rke2)
	drop=$(mtime /etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml)
	start=$(date -d "$(systemctl show -p ExecMainStartTimestamp --value $unit)" +%s 2>/dev/null || echo 0)
	echo "     times (s): config $cfg, package $pkg, rke2 $rke2, drop-in $drop, rke2 start $start" >>"$out"
	if [ "$cfg" -le "$pkg" ] && [ "$pkg" -le "$rke2" ] && [ "$rke2" -le "$drop" ] && [ "$drop" -le "$start" ] && [ "$start" -gt 0 ]; then
		ok "order: config <= package <= RKE2 install <= our drop-in <= RKE2's start"
	else
		bad "order: config <= package <= RKE2 install <= our drop-in <= RKE2's start"
	fi
	check "RKE2 started once" test "$(systemctl show -p NRestarts --value $unit)" = 0
fi
failed=$(systemctl list-units --failed --plain --no-legend 2>/dev/null | awk '{print $1}' | tr '\n' ' ')
if [ -z "$failed" ]; then ok "no failed unit"; else bad "failed units: $failed"; fi
if grep -q '^FAIL' "$out"; then
	{
		cloud-init status --long
		tail -n 40 /var/log/cloud-init-output.log
		journalctl -b --no-pager -u $unit -u rke2-proxy-backend-verify | tail -n 40
	} >"/var/lib/cloudinit-test/diag-$n" 2>&1
fi
echo DONE >>"$out"
systemctl poweroff
