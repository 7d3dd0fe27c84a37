# Sourced by packaging/test/lifecycle.sh (after lib/common.sh): one nspawn
# guest per case, set up as boot.sh sets up its guest (the .deb installed
# with dpkg --root, the RKE2 stand-in and kube-proxy's real proxier, RKE2's
# unit files as its tarball installs them), and the in-guest assertions of
# lib/guest-lifecycle.sh run by boot-test.service.

LC_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# lc_prepare WORK builds what every guest shares once: the stand-in and the
# oracle (into WORK/stage), and sets LC_WORK.
lc_prepare() {
	LC_WORK=$1
	local stage=$LC_WORK/stage
	mkdir -p "$stage"
	log "building the RKE2 stand-in"
	build_standin "$stage/rke2"
	install_kube_proxy_oracle "$stage/rke2" "$stage"
}

# lc_guest NAME UNITS ROLE DEB [PACKAGES...] makes the guest root of case
# NAME (sets R): DEB installed with dpkg --root, RKE2's rke2-server and
# rke2-agent units both installed (UNITS: "current" or "legacy", the
# pre-2025 text whose units Conflicts= each other) with rke2-ROLE enabled
# (an agent gets a server URL and token, which RKE2's agent insists on),
# backend iptables-legacy, and PACKAGES copied to /root/pkgs/ for the guest
# to install.
lc_guest() {
	local name=$1 kind=$2 role=$3 deb=$4 server
	shift 4
	new_overlay "$LC_WORK/$name"
	R=$LC_WORK/$name/merged
	run_logged "$LC_WORK/$name.dpkg.log" "$name: dpkg --root -i $(basename "$deb") failed" \
		dpkg --root "$R" -i "$deb"
	install -D -m 0755 "$LC_WORK/stage/rke2" "$R/usr/local/bin/rke2"
	install -D -m 0755 "$LC_WORK/stage/usr/local/lib/rke2-standin/kubeproxy-oracle" "$R/usr/local/lib/rke2-standin/kubeproxy-oracle"
	case $kind in
	current) server=$REPO/internal/testkit/testhost/units/rke2-server.service ;;
	legacy) server=$REPO/internal/testkit/testhost/units/rke2-server.legacy.service ;;
	*) fail "lc_guest: units $kind: want current or legacy" ;;
	esac
	# RKE2's tarball puts both units on every node; the agent unit differs
	# from the server's by the two words (internal/testkit/testhost.UnitText).
	mkdir -p "$R/usr/local/lib/systemd/system" "$R/etc/systemd/system/multi-user.target.wants"
	cp "$server" "$R/usr/local/lib/systemd/system/rke2-server.service"
	if [ "$kind" = current ]; then
		cp "$REPO/internal/testkit/testhost/units/rke2-agent.service" "$R/usr/local/lib/systemd/system/rke2-agent.service"
	else
		sed 's/server/@@/g; s/agent/server/g; s/@@/agent/g' "$server" >"$R/usr/local/lib/systemd/system/rke2-agent.service"
	fi
	ln -sf "/usr/local/lib/systemd/system/rke2-$role.service" "$R/etc/systemd/system/multi-user.target.wants/rke2-$role.service"
	mkdir -p "$R/etc/rancher/rke2"
	printf 'token: lifecycle-test-secret\n' >"$R/etc/rancher/rke2/config.yaml"
	[ "$role" = server ] || echo 'server: https://192.0.2.10:9345' >>"$R/etc/rancher/rke2/config.yaml"
	local cfg=$R/etc/rke2-proxy-backend/config.yaml
	grep -q '^backend: auto$' "$cfg" || fail "the shipped example no longer has 'backend: auto' (update this test)"
	sed -i 's/^backend: auto$/backend: iptables-legacy/; s/^  wait: .*/  wait: 60s/' "$cfg"
	chroot "$R" update-alternatives --quiet --set iptables /usr/sbin/iptables-legacy &&
		chroot "$R" update-alternatives --quiet --set ip6tables /usr/sbin/ip6tables-legacy ||
		fail "update-alternatives in the guest root failed"
	mkdir -p "$R/root/pkgs" "$R/etc/boot-test"
	[ $# = 0 ] || cp "$@" "$R/root/pkgs/"
	echo "$name" >"$R/etc/boot-test/case"
	echo "rke2-$role.service" >"$R/etc/boot-test/rke2-unit"
	echo "$VERSION" >"$R/etc/boot-test/version"
	install -m 0755 "$LC_LIB/guest-lifecycle.sh" "$R/usr/local/sbin/boot-test"
	guest_test_unit "$R" boot-test "lifecycle"
}

# lc_boot NAME boots case NAME's guest once and judges its result file.
LC_TIMES=()
lc_boot() {
	local name=$1 result=$R/var/lib/boot-test/result
	log "case $name: booting"
	guest_boot "$R" "$result" "$LC_WORK/$name.console.log" 400 "case $name"
	guest_verdict "$result" "$R/var/lib/boot-test/diag" "case $name"
	LC_TIMES+=("$name ${GUEST_TOOK}s")
	pass "case $name in ${GUEST_TOOK}s"
}
