#!/usr/bin/env bash
# The release tarball (make tarball) on a host without a package manager,
# under real systemd (systemd-nspawn from the cached bookworm root, dpkg and
# nft removed from the guest: a legacy-only NAS).
#
#   case 1  the tarball's listing is exactly what is expected (the man pages
#           the .deb ships, numeric 0/0 owners, SOURCE_DATE_EPOCH dates), its
#           .sha256 checks, and a second build gives the same bytes
#   case 2  install.sh (run in the guest root, as an operator would) next
#           to RKE2 in the tarball layout (the stand-in, RKE2's unit, the
#           kube-proxy oracle), then boot: the generator ran from
#           /usr/local/lib/systemd/system-generators (systemd's search path
#           says so) and its drop-ins run /usr/local/bin, apply and verify
#           ok on iptables-legacy, watch active, no unit failed; install.sh
#           again with systemd running changes nothing (watch keeps its PID),
#           a new version replaces the binary, removes what it no longer
#           ships and restarts watch on the new binary
#   case 3  boot, uninstall in the running guest (watch stopped, our units
#           and drop-ins gone, RKE2 not restarted), boot again: nothing of
#           ours left or running, RKE2 still starts (on the drop-in it kept)
#   case 4  installing twice is idempotent (every file, the manifest), an
#           operator config that was there before is kept byte-identical,
#           also by uninstall --purge, which removes k3s's drop-in of ours
#           and keeps one without our header; a prefix systemd does not search
#           (/opt/...) puts the units in /etc/systemd/system
#
# Needs: root, systemd-nspawn, debootstrap, dpkg (to read the .deb's
# listing on the build host), make, go, tar, gzip, sha256sum.
source "$(dirname "$0")/lib/common.sh"
need_root
need_tools systemd-nspawn debootstrap dpkg-deb make go timeout mountpoint tar gzip sha256sum chroot
ensure_packages
ensure_bookworm_root

arch=$(host_arch)
name=rke2-proxy-backend
top=$name-$VERSION-linux-$arch
tarball=$DIST/$top.tar.gz
work=$(mktemp -d /tmp/rke2pb-tarball.XXXXXX)
trap 'cleanup_overlays; rm -rf "$work"' EXIT

# ---- case 1: the listing ----------------------------------------------------
start=$SECONDS
log "case 1: make tarball"
run_logged "$work/make-tarball.log" "make tarball failed" make -s -C "$REPO" tarball
[ -f "$tarball" ] || fail "make tarball did not produce $tarball"
(cd "$DIST" && sha256sum -c --quiet "$top.tar.gz.sha256") || fail "$top.tar.gz.sha256 does not check"

expected_listing() {
	local u deb
	deb=$(host_package deb)
	{
		echo "./ d0755"
		for d in bin libexec lib lib/systemd lib/systemd/system share share/bash-completion \
			share/bash-completion/completions share/doc share/doc/$name share/fish \
			share/fish/vendor_completions.d share/man share/man/man1 share/man/man5 \
			share/$name share/$name/monitoring share/$name/monitoring/grafana share/$name/monitoring/node-problem-detector \
			share/$name/monitoring/prometheus share/zsh share/zsh/site-functions; do
			echo "./$d/ d0755"
		done
		echo "./install.sh -0755"
		echo "./bin/$name -0755"
		echo "./bin/kubectl-proxy_backend -0755"
		echo "./bin/$name-uninstall.sh -0755"
		echo "./libexec/$name-generator -0755"
		for u in "$REPO"/units/*.service; do echo "./lib/systemd/system/$(basename "$u") -0644"; done
		# The man pages are exactly the package's.
		dpkg-deb -c "$deb" | awk '{print $6}' | sed -n 's:^\./usr/share/man/\(man[15]/.*\.gz\)$:./share/man/\1 -0644:p'
		echo "./share/bash-completion/completions/$name -0644"
		echo "./share/zsh/site-functions/_$name -0644"
		echo "./share/fish/vendor_completions.d/$name.fish -0644"
		echo "./share/doc/$name/changelog.gz -0644"
		echo "./share/doc/$name/LICENSE -0644"
		echo "./share/doc/$name/config.yaml.example -0644"
		echo "./share/$name/monitoring/node-problem-detector/$name.json -0644"
		echo "./share/$name/monitoring/prometheus/$name.rules.yaml -0644"
		echo "./share/$name/monitoring/prometheus/$name.prometheusrule.yaml -0644"
		echo "./share/$name/monitoring/grafana/$name-fleet.json -0644"
	} | LC_ALL=C sort
}
# "path type+mode" per entry, the top directory cut to "."; and every
# entry's owner and date.
tar --numeric-owner -tvzf "$tarball" >"$work/tv"
awk -v top="$top" '{ p=$6; sub("^" top, ".", p); t=substr($1,1,1); m=$1;
	mode=(substr(m,2,1)=="r"?4:0)+(substr(m,3,1)=="w"?2:0)+(substr(m,4,1)=="x"?1:0);
	g=(substr(m,5,1)=="r"?4:0)+(substr(m,6,1)=="w"?2:0)+(substr(m,7,1)=="x"?1:0);
	o=(substr(m,8,1)=="r"?4:0)+(substr(m,9,1)=="w"?2:0)+(substr(m,10,1)=="x"?1:0);
	print p, t "0" mode g o }' "$work/tv" | LC_ALL=C sort >"$work/listing"
expected_listing >"$work/listing.want"
diff -u "$work/listing.want" "$work/listing" >"$work/listing.diff" || {
	cat "$work/listing.diff" >&2
	fail "case 1: the tarball's listing differs from the expected one (- expected, + tarball)"
}
sde=$(cd "$REPO" && git log -1 --format=%ct 2>/dev/null || true)
want_date=$(TZ=UTC date -d "@$sde" '+%Y-%m-%d %H:%M')
bad=$(TZ=UTC tar --numeric-owner --utc -tvzf "$tarball" | awk -v d="$want_date" '$2 != "0/0" || ($4 " " $5) != d' | head -n 3)
[ -z "$bad" ] || fail "case 1: entries not owned 0/0 or not dated $want_date (SOURCE_DATE_EPOCH): $bad"
sum1=$(sha256sum <"$tarball")
run_logged "$work/make-tarball2.log" "make tarball (second build) failed" make -s -C "$REPO" tarball
[ "$(sha256sum <"$tarball")" = "$sum1" ] || fail "case 1: a second make tarball gave different bytes (not reproducible)"
pass "case 1: listing exact ($(wc -l <"$work/listing") entries), owners 0/0, dated SOURCE_DATE_EPOCH, reproducible, checksum ok, in $((SECONDS - start))s"

# ---- a guest root without dpkg and nft, with RKE2 ---------------------------
# new_guest DIR: an overlay of the bookworm root whose iptables alternative
# is legacy, then dpkg (and update-alternatives) and nft removed, so the
# install cannot lean on a package manager and the node is legacy-only.
new_guest() {
	local g=$1
	new_overlay "$g"
	local r=$g/merged
	chroot "$r" update-alternatives --quiet --set iptables /usr/sbin/iptables-legacy &&
		chroot "$r" update-alternatives --quiet --set ip6tables /usr/sbin/ip6tables-legacy ||
		fail "update-alternatives in the guest root failed"
	rm -f "$r"/usr/bin/dpkg "$r"/usr/bin/dpkg-* "$r"/usr/bin/update-alternatives "$r"/usr/sbin/nft
	! chroot "$r" sh -c 'command -v dpkg || command -v nft' >/dev/null || fail "dpkg or nft still in the guest"
	cp "$tarball" "$r/root/"
	chroot "$r" tar -C /root -xzf "/root/$top.tar.gz" || fail "tar xzf in the guest failed"
}

# guest_install ROOT LOG [ARGS...] runs install.sh inside ROOT.
guest_install() {
	local r=$1 lg=$2
	shift 2
	run_logged "$lg" "install.sh failed in the guest" chroot "$r" sh "/root/$top/install.sh" "$@"
}

# tree_sums ROOT prints every file, link and directory the install may
# touch with its content hash, link target or mode, for idempotence checks.
tree_sums() {
	(cd "$1" && find usr/local opt etc/systemd etc/rke2-proxy-backend -xdev \( -type f -printf '%p f %m ' -exec sha256sum {} \; \) -o \
		\( -type l -printf '%p l %l\n' \) -o \( -type d -printf '%p d %m\n' \) 2>/dev/null | LC_ALL=C sort)
}

new_guest "$work/guest"
R=$work/guest/merged
log "building the RKE2 stand-in"
build_standin "$R/usr/local/bin/rke2"
install_kube_proxy_oracle "$R/usr/local/bin/rke2" "$R"
# RKE2 first, as its tarball installs it (units in /usr/local/lib/systemd/system).
mkdir -p "$R/usr/local/lib/systemd/system" "$R/etc/systemd/system/multi-user.target.wants" "$R/etc/rancher/rke2"
cp "$REPO/internal/testkit/testhost/units/rke2-server.service" "$R/usr/local/lib/systemd/system/rke2-server.service"
ln -sf /usr/local/lib/systemd/system/rke2-server.service "$R/etc/systemd/system/multi-user.target.wants/rke2-server.service"
printf 'token: tarball-test-secret\n' >"$R/etc/rancher/rke2/config.yaml"
cp "$R/etc/rancher/rke2/config.yaml" "$work/rke2-config.orig"

# The in-guest assertions, one script for every boot (its mode in
# /etc/tarball-test/mode); it powers the guest off whatever happened.
mkdir -p "$R/etc/tarball-test"
cat >"$R/usr/local/sbin/tarball-test" <<'GUEST'
#!/bin/bash
set -u
mode=$(cat /etc/tarball-test/mode)
out=/var/lib/tarball-test
. /usr/local/lib/boot-test/guest-prelude.sh
guest_result "$out/result-$mode"
bin=/usr/local/bin/rke2-proxy-backend
verify=rke2-proxy-backend-verify.service
watch=rke2-proxy-backend-watch.service
gendropin=/run/systemd/generator/rke2-server.service.d/50-rke2-proxy-backend.conf

wait_rke2() { # rke2-server active, and with $1=verify the verify run over
	local d=$((SECONDS + 120))
	while [ $SECONDS -lt $d ]; do
		if [ "$(prop rke2-server.service ActiveState)" = active ]; then
			[ "${1:-}" != verify ] && return 0
			[ "$(prop $verify ActiveState)" != activating ] && [ "$(prop $verify ExecMainStartTimestampMonotonic)" != 0 ] && return 0
		fi
		[ "$(prop rke2-server.service ActiveState)" = failed ] && return 1
		sleep 0.5
	done
	return 1
}
wait_active() { local d=$((SECONDS + 30)); until [ "$(prop "$1" ActiveState)" = active ]; do [ $SECONDS -ge $d ] && return 1; sleep 0.5; done; }
no_failed_units() {
	local f
	f=$(systemctl list-units --failed --plain --no-legend 2>/dev/null | awk '{print $1}' | tr '\n' ' ')
	if [ -z "$f" ]; then ok "no failed units"; else bad "failed units: $f"; fi
}
ours_running() { # any process executing our binary (a deleted one too)
	local p
	for p in /proc/[0-9]*; do
		case $(readlink "$p/exe" 2>/dev/null) in *rke2-proxy-backend*) return 0 ;; esac
	done
	return 1
}
none_of_ours_running() { ! ours_running; }

case $mode in
installed)
	wait_rke2 verify || bad "rke2-server and verify did not settle in 120s"
	check "dpkg is not on this host" sh -c '! command -v dpkg'
	check "nft is not on this host (legacy-only)" sh -c '! command -v nft'
	check "systemd searches /usr/local/lib/systemd/system-generators" sh -c 'systemd-path systemd-search-system-generator | tr : "\n" | grep -qx /usr/local/lib/systemd/system-generators'
	check "systemd searches /usr/local/lib/systemd/system" sh -c 'systemd-analyze unit-paths | grep -qx /usr/local/lib/systemd/system'
	check "the generator is installed only in /usr/local" sh -c 'test -L /usr/local/lib/systemd/system-generators/rke2-proxy-backend-generator && ! ls /usr/lib/systemd/system-generators/rke2-proxy-backend-generator /lib/systemd/system-generators/rke2-proxy-backend-generator /etc/systemd/system-generators/rke2-proxy-backend-generator'
	check "the generator ran: its drop-in runs $bin apply" grep -qx "ExecStartPre=$bin apply --backend=iptables-legacy" $gendropin
	check "systemctl cat rke2-server shows the drop-in" sh -c "systemctl cat --no-pager rke2-server.service | grep -qF '# $gendropin'"
	check "the verify drop-in runs $bin" grep -q "^ExecStart=$bin verify --wait=" /run/systemd/generator/$verify.d/50-rke2-proxy-backend.conf
	check "watch's unit is the one in /usr/local" test "$(prop $watch FragmentPath)" = /usr/local/lib/systemd/system/$watch
	check "watch runs $bin" sh -c "systemctl show -P ExecStart $watch | grep -qF 'path=$bin '"
	check "rke2-server.service is active" test "$(prop rke2-server.service ActiveState)" = active
	check "kube-proxy (stand-in) runs on iptables-legacy" test "$(cat /var/lib/rke2-standin/backend 2>/dev/null)" = iptables-legacy
	check "kube-proxy's real proxier synced" grep -q 'proxier synced' /var/lib/rke2-standin/kube-proxy
	check "apply recorded the plan for iptables-legacy" grep -q '"backend": *"iptables-legacy"' /run/rke2-proxy-backend/plan.json
	check "verify passed (Result=success, exit 0)" test "$(prop $verify Result)/$(prop $verify ExecMainStatus)" = success/0
	check "verify's status file says ok" grep -q '"ok": *true' /run/rke2-proxy-backend/status.json
	check "watch is active (enabled by install.sh)" wait_active $watch
	# install.sh again, systemd running: nothing changes.
	pid=$(prop $watch MainPID)
	before=$(sha256sum /usr/local/share/rke2-proxy-backend/install.manifest /etc/rke2-proxy-backend/config.yaml $gendropin $bin)
	top=$(ls -d /root/rke2-proxy-backend-*/ | head -n 1)
	if sh "$top/install.sh" >$out/reinstall.log 2>&1; then ok "install.sh again (systemd running) exit 0"; else bad "install.sh again failed: $(tail -n 3 $out/reinstall.log)"; fi
	check "it reloaded systemd" grep -q 'reloaded systemd' $out/reinstall.log
	check "it kept the operator's config" grep -q 'kept /etc/rke2-proxy-backend/config.yaml' $out/reinstall.log
	check "manifest, config, drop-in and binary unchanged" test "$(sha256sum /usr/local/share/rke2-proxy-backend/install.manifest /etc/rke2-proxy-backend/config.yaml $gendropin $bin)" = "$before"
	check "watch still active with the same PID $pid (its binary was not replaced)" test "$(prop $watch ActiveState)/$(prop $watch MainPID)" = "active/$pid"
	# An upgrade, systemd running: a binary with other bytes (one byte
	# appended; ELF ignores it) and a man page the new version dropped.
	next=/root/next
	rm -rf $next && cp -a "$top" $next
	printf x >>$next/bin/rke2-proxy-backend
	dropped=$(ls $next/share/man/man1/ | grep -v '^rke2-proxy-backend.1.gz$' | head -n 1)
	rm -f "$next/share/man/man1/$dropped"
	if sh $next/install.sh >$out/upgrade.log 2>&1; then ok "install.sh of a new version exit 0"; else bad "upgrade failed: $(tail -n 3 $out/upgrade.log)"; fi
	check "the upgrade removed the man page it no longer ships ($dropped)" test ! -e "/usr/local/share/man/man1/$dropped"
	check "the upgrade dropped it from the manifest" sh -c "! grep -q '$dropped' /usr/local/share/rke2-proxy-backend/install.manifest"
	check "the new binary is installed" cmp -s $next/bin/rke2-proxy-backend $bin
	check "the upgrade left the operator's config alone" grep -q 'kept /etc/rke2-proxy-backend/config.yaml' $out/upgrade.log
	check "watch was restarted on the new binary (new PID, not a deleted file)" sh -c "p=\$(systemctl show -P MainPID $watch); [ \"\$p\" != $pid ] && [ \"\$p\" != 0 ] && [ \"\$(readlink /proc/\$p/exe)\" = $bin ]"
	no_failed_units
	;;
uninstall)
	wait_rke2 verify || bad "rke2-server and verify did not settle in 120s"
	check "watch is active before the uninstall" wait_active $watch
	rke2pid=$(prop rke2-server.service MainPID)
	if /usr/local/bin/rke2-proxy-backend-uninstall.sh >$out/uninstall.log 2>&1; then ok "uninstall exit 0"; else bad "uninstall failed: $(tail -n 3 $out/uninstall.log)"; fi
	check "it said it kept the RKE2 drop-in" grep -q 'kept /etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml' $out/uninstall.log
	check "watch is stopped and its unit gone" test "$(prop $watch ActiveState)/$(prop $watch LoadState)" = inactive/not-found
	check "verify's unit is gone" test "$(prop $verify LoadState)" = not-found
	check "the generator's drop-ins are gone" sh -c '! ls /run/systemd/generator*/*/50-rke2-proxy-backend.conf'
	check "rke2-server no longer runs apply" sh -c "! systemctl cat --no-pager rke2-server.service | grep -q rke2-proxy-backend"
	check "rke2-server was not restarted (MainPID $rke2pid)" test "$(prop rke2-server.service ActiveState)/$(prop rke2-server.service MainPID)" = "active/$rke2pid"
	check "no process runs our binary" none_of_ours_running
	check "no /run/rke2-proxy-backend" test ! -e /run/rke2-proxy-backend
	no_failed_units
	;;
after)
	wait_rke2 || bad "rke2-server did not become active in 120s"
	check "rke2-server.service is active (RKE2 starts without us)" test "$(prop rke2-server.service ActiveState)" = active
	check "kube-proxy (stand-in) still on iptables-legacy (the kept drop-in)" test "$(cat /var/lib/rke2-standin/backend 2>/dev/null)" = iptables-legacy
	check "no unit of ours is known" sh -c "! systemctl list-unit-files --no-legend 'rke2-proxy-backend*' | grep -q ."
	check "no generator drop-in" sh -c '! ls /run/systemd/generator*/*/50-rke2-proxy-backend.conf'
	check "no process runs our binary" none_of_ours_running
	check "no /run/rke2-proxy-backend" test ! -e /run/rke2-proxy-backend
	no_failed_units
	;;
esac
{
	systemctl --failed --no-pager
	systemctl status --no-pager rke2-server.service $watch $verify
	ls -lR /run/systemd/generator 2>&1 | head -n 40
	cat $out/*.log 2>/dev/null
	journalctl -b --no-pager | grep -i -e rke2 -e generator | tail -n 80
} >"$out/diag-$mode" 2>&1
guest_done
GUEST
chmod 0755 "$R/usr/local/sbin/tarball-test"
guest_test_unit "$R" tarball-test "tarball"

# boot MODE: one nspawn boot; the guest's result must say DONE ok.
boot() {
	local mode=$1 b=$SECONDS
	echo "$mode" >"$R/etc/tarball-test/mode"
	local result=$R/var/lib/tarball-test/result-$mode
	guest_boot "$R" "$result" "$work/console-$mode.log" 300 "boot $mode"
	guest_verdict "$result" "$R/var/lib/tarball-test/diag-$mode" "boot $mode"
	log "boot $mode took $((SECONDS - b))s"
}

# ---- case 2: install, boot ----------------------------------------------------
start=$SECONDS
log "case 2: install.sh in a root without dpkg, then boot"
guest_install "$R" "$work/install.log"
assert_contains "$work/install.log" "enabled rke2-proxy-backend-watch.service" "install.sh"
assert_contains "$work/install.log" "installed the example config as /etc/rke2-proxy-backend/config.yaml" "install.sh"
[ -L "$R/etc/systemd/system/rke2-server.service.wants/rke2-proxy-backend-watch.service" ] ||
	fail "case 2: install.sh did not enable watch (no rke2-server.service.wants link)"
cfg=$R/etc/rke2-proxy-backend/config.yaml
grep -q '^backend: auto$' "$cfg" || fail "the shipped example no longer has 'backend: auto' (update this test)"
# The operator pins the NAS to legacy, with a shorter verify wait.
sed -i 's/^backend: auto$/backend: iptables-legacy/; s/^  wait: .*/  wait: 60s/' "$cfg"
cp "$cfg" "$work/config.edited"
cp "$R/usr/local/share/$name/install.manifest" "$work/manifest"
boot installed
cmp -s "$cfg" "$work/config.edited" || fail "case 2: the operator's config changed"
pass "case 2: installed from the tarball without dpkg, booted: generator from /usr/local, apply and verify ok, watch active, reinstall changed nothing, an upgrade restarted watch on its new binary, no unit failed, in $((SECONDS - start))s"

# ---- case 3: uninstall, boot again ------------------------------------------
start=$SECONDS
log "case 3: boot, uninstall in the running guest, boot again"
boot uninstall
while read -r t p; do
	case $t in
	c) [ -f "$R$p" ] || fail "case 3: uninstall removed $p (the operator's config now)" ;;
	# A directory install made stays only while it holds what was kept.
	d) [ ! -d "$R$p" ] || [ -n "$(ls -A "$R$p")" ] || fail "case 3: uninstall left the empty directory $p" ;;
	*) [ ! -e "$R$p" ] && [ ! -L "$R$p" ] || fail "case 3: uninstall left $p" ;;
	esac
done <"$work/manifest"
boot after
left=$(cd "$R" && find . -xdev -path ./proc -prune -o -path ./root -prune -o -name '*rke2-proxy-backend*' -print | LC_ALL=C sort | tr '\n' ' ')
[ "$left" = "./etc/rke2-proxy-backend " ] && [ "$(ls -A "$R/etc/rke2-proxy-backend")" = config.yaml ] ||
	fail "case 3: left after uninstall (want only the config): $left"
cmp -s "$cfg" "$work/config.edited" || fail "case 3: the operator's config changed"
cmp -s "$work/rke2-config.orig" "$R/etc/rancher/rke2/config.yaml" || fail "case 3: RKE2's config.yaml was modified"
[ -f "$R/usr/local/lib/systemd/system/rke2-server.service" ] && [ -x "$R/usr/local/bin/rke2" ] || fail "case 3: RKE2's files were removed"
pass "case 3: uninstall stopped watch and removed exactly the manifest (config kept); the next boot has nothing of ours and RKE2 starts, in $((SECONDS - start))s"

# ---- case 4: idempotent, existing config, another prefix --------------------
start=$SECONDS
log "case 4: install twice over an operator's config; --prefix /opt/$name"
new_guest "$work/guest4"
R4=$work/guest4/merged
mkdir -p "$R4/etc/rke2-proxy-backend"
printf '# the operator'"'"'s own\nbackend: iptables-legacy\n' >"$R4/etc/rke2-proxy-backend/config.yaml"
cp "$R4/etc/rke2-proxy-backend/config.yaml" "$work/config.operator"
guest_install "$R4" "$work/install4a.log"
tree_sums "$R4" >"$work/tree-a"
cp "$R4/usr/local/share/$name/install.manifest" "$work/manifest4"
guest_install "$R4" "$work/install4b.log"
tree_sums "$R4" >"$work/tree-b"
diff -u "$work/tree-a" "$work/tree-b" >&2 || fail "case 4: a second install changed the tree (above)"
cmp -s "$work/manifest4" "$R4/usr/local/share/$name/install.manifest" || fail "case 4: a second install changed the manifest"
cmp -s "$work/config.operator" "$R4/etc/rke2-proxy-backend/config.yaml" || fail "case 4: install changed the operator's config"
! grep -q '^c ' "$work/manifest4" || fail "case 4: the manifest claims the operator's config as ours"
assert_contains "$work/install4b.log" "kept /etc/rke2-proxy-backend/config.yaml" "install.sh over an operator config"
# The drop-in apply writes, on k3s (ours: the header) and on RKE2 (here
# the operator's own file of that name: no header, so not ours).
mkdir -p "$R4/etc/rancher/k3s/config.yaml.d" "$R4/etc/rancher/rke2/config.yaml.d"
printf '# Generated by rke2-proxy-backend; do not edit\nkube-proxy-arg+:\n- proxy-mode=iptables\n' >"$R4/etc/rancher/k3s/config.yaml.d/60-proxy-backend.yaml"
printf 'kube-proxy-arg+: [proxy-mode=iptables]\n' >"$R4/etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml"
run_logged "$work/purge4.log" "uninstall --purge failed" chroot "$R4" /usr/local/bin/$name-uninstall.sh --purge
cmp -s "$work/config.operator" "$R4/etc/rke2-proxy-backend/config.yaml" || fail "case 4: uninstall --purge removed or changed the config that was there before the install"
[ ! -e "$R4/etc/rancher/k3s/config.yaml.d/60-proxy-backend.yaml" ] || fail "case 4: uninstall --purge left k3s's drop-in of ours"
assert_contains "$work/purge4.log" "removed /etc/rancher/k3s/config.yaml.d/60-proxy-backend.yaml" "uninstall --purge on k3s"
[ -f "$R4/etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml" ] || fail "case 4: uninstall --purge removed a drop-in without our header"
rm -rf "$R4/etc/rancher"
left=$(cd "$R4" && find . -xdev -path ./proc -prune -o -path ./root -prune -o -name '*rke2-proxy-backend*' -print | LC_ALL=C sort | tr '\n' ' ')
[ "$left" = "./etc/rke2-proxy-backend " ] && [ "$(ls -A "$R4/etc/rke2-proxy-backend")" = config.yaml ] || fail "case 4: left after uninstall --purge: $left"
# A prefix systemd does not search: units and the generator link in /etc.
guest_install "$R4" "$work/install4c.log" --prefix /opt/$name
grep -qx "ExecStart=/opt/$name/bin/$name watch" "$R4/etc/systemd/system/$name-watch.service" ||
	fail "case 4: --prefix /opt/$name: the watch unit in /etc/systemd/system does not run /opt/$name/bin/$name"
[ "$(readlink "$R4/etc/systemd/system-generators/$name-generator")" = "/opt/$name/libexec/$name-generator" ] ||
	fail "case 4: --prefix /opt/$name: no generator link in /etc/systemd/system-generators"
run_logged "$work/analyze4.log" "systemd-analyze verify of the /opt units failed" \
	chroot "$R4" systemd-analyze verify --man=no /etc/systemd/system/$name-verify.service /etc/systemd/system/$name-watch.service
expect_refused "$work/install4d.log" "from an install under another prefix: uninstall it first \(/opt/$name/bin/$name-uninstall.sh\)" \
	"case 4: install.sh under /usr/local went ahead beside the /opt install" "case 4: install.sh beside the /opt install failed for another reason" \
	chroot "$R4" sh "/root/$top/install.sh"
[ ! -e "$R4/usr/local/bin/$name" ] || fail "case 4: the refused install wrote /usr/local/bin/$name"
run_logged "$work/uninstall4c.log" "uninstall of the /opt install failed" chroot "$R4" /opt/$name/bin/$name-uninstall.sh
left=$(cd "$R4" && find . -xdev -path ./proc -prune -o -path ./root -prune -o -name '*rke2-proxy-backend*' -print | LC_ALL=C sort | tr '\n' ' ')
[ "$left" = "./etc/rke2-proxy-backend " ] && [ "$(ls -A "$R4/etc/rke2-proxy-backend")" = config.yaml ] || fail "case 4: left after the /opt uninstall: $left"
[ ! -e "$R4/opt/$name" ] || fail "case 4: /opt/$name left after uninstall"
# And the other way round: /usr/local's relative generator link names its uninstaller.
guest_install "$R4" "$work/install4e.log"
expect_refused "$work/install4f.log" "from an install under another prefix: uninstall it first \(/usr/local/bin/$name-uninstall.sh\)" \
	"case 4: install.sh under /opt went ahead beside the /usr/local install" "case 4: install.sh beside the /usr/local install failed for another reason" \
	chroot "$R4" sh "/root/$top/install.sh" --prefix /opt/$name
run_logged "$work/uninstall4e.log" "uninstall of the /usr/local install failed" chroot "$R4" /usr/local/bin/$name-uninstall.sh
[ ! -e "$R4/opt/$name" ] && [ ! -e "$R4/usr/local/bin/$name" ] || fail "case 4: files left after the refused /opt install and the /usr/local uninstall"
pass "case 4: a second install changed nothing, the operator's config stayed byte-identical (install, reinstall, --purge), --prefix /opt/$name used /etc/systemd, in $((SECONDS - start))s"
