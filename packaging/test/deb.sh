#!/usr/bin/env bash
# The .deb's life cycle with `dpkg --root` in a scratch copy of a Debian
# root (maintainer scripts run chrooted, with no systemd running, as in an
# image build): install, upgrade over an edited config, remove, purge; the
# upgrade from the base commit's package, which shipped the config as a
# conffile, with an edited and an unedited config, each purged after; and
# a config written before the install (cloud-init's way).
# Checks what the maintainer scripts promise: no upgrade asks a question
# (every dpkg here runs with stdin from /dev/null and no --force-conf*), the
# operator's config is byte for byte the same after upgrades, and so is a
# disabled watch; a reinstall after remove enables
# watch again; remove removes our metrics (custom textfile dir too) and keeps
# the RKE2 and k3s drop-ins (so kube-proxy keeps its backend), which purge removes with
# all our state, without a dpkg warning; the operator's RKE2 config is never
# touched.
# Needs: root, dpkg, debootstrap (for the scratch root), make, go;
# systemd-nspawn (systemd-container) for the README's apt-get install.
source "$(dirname "$0")/lib/common.sh"
need_root
need_tools dpkg dpkg-deb make
ensure_packages

deb=$(host_package deb)
work=$(mktemp -d /tmp/rke2pb-deb.XXXXXX)
trap 'cleanup_overlays; rm -rf "$work"' EXIT

# Both architectures carry the same files, and no conffile.
for p in "$DEB_AMD64" "$DEB_ARM64"; do
	dpkg-deb --fsys-tarfile "$p" | tar -t | sed 's|^\./|/|' | grep -v '/$' |
		grep -v -e '^/usr/share/doc/rke2-proxy-backend/changelog.Debian.gz$' -e '^/usr/share/doc/rke2-proxy-backend/copyright$' \
			-e '^/usr/share/lintian/' -e '^/usr/share/man/man1/' | sort >"$work/files"
	# The generator link is postinst's, not a file of the .deb (see
	# packaging/scripts/postinstall.sh).
	expected_files | grep -v -e '^/usr/share/man/man1/' -e '^/usr/lib/systemd/system-generators/' >"$work/expected"
	diff -u "$work/expected" "$work/files" || fail "$(basename "$p"): file list differs from the expected one (above)"
	if dpkg-deb --ctrl-tarfile "$p" | tar -t | grep -qx './conffiles'; then
		fail "$(basename "$p") has conffiles ($(dpkg-deb --ctrl-tarfile "$p" | tar -xO ./conffiles | tr '\n' ' ')): a changed conffile makes dpkg ask on every node that edited it (packaging/nfpm.yaml)"
	fi
	[ "$(dpkg-deb -f "$p" Version)" = "$VERSION-1" ] || fail "$(basename "$p"): version is not $VERSION-1 (from VERSION)"
	# Every backend needs iptables and kmod; nft only the nftables mode.
	[ "$(dpkg-deb -f "$p" Depends)" = "iptables, kmod" ] || fail "$(basename "$p"): Depends is $(dpkg-deb -f "$p" Depends), want iptables, kmod"
	[ "$(dpkg-deb -f "$p" Recommends)" = "nftables" ] || fail "$(basename "$p"): Recommends is $(dpkg-deb -f "$p" Recommends), want nftables"
	# No directory dpkg would try to remove that the /usr merge aliases
	# with one systemd's package owns under the other spelling.
	dpkg-deb -c "$p" >"$work/contents"
	if grep -e ' \./usr/lib/systemd/system-generators/' -e ' \./lib/' "$work/contents"; then
		fail "$(basename "$p") ships the paths above (postinst makes the generator link; nothing goes under /lib)"
	fi
	# The config's directory is the package's (nfpm.yaml says why).
	grep -q '^d.* \./etc/rke2-proxy-backend/$' "$work/contents" || fail "$(basename "$p") does not own ./etc/rke2-proxy-backend/"
done
pass "file list, no conffile, /etc/rke2-proxy-backend owned, version $VERSION-1, depends (iptables, kmod) and recommends (nftables) of both .deb"

ensure_bookworm_root

# The README's install command, as a new user runs it: apt-get install of
# the local file (the dependencies are already in the base root, so this
# works offline).
if command -v systemd-nspawn >/dev/null 2>&1; then
	new_overlay "$work/readme"
	mkdir -p "$work/readme/merged/root/dist"
	cp "$deb" "$work/readme/merged/root/dist/"
	run_logged "$work/readme.log" "the README's 'apt-get install ./dist/$(basename "$deb")' failed" \
		timeout 120 systemd-nspawn -q --register=no --keep-unit --private-network -D "$work/readme/merged" --chdir=/root \
		sh -c "DEBIAN_FRONTEND=noninteractive apt-get install -y -q ./dist/$(basename "$deb") && rke2-proxy-backend version"
	tr -d '\r' <"$work/readme.log" | grep -qx "rke2-proxy-backend $VERSION" || fail "after apt-get install, 'rke2-proxy-backend version' did not print $VERSION"
	pass "README install: apt-get install ./dist/$(basename "$deb"), then rke2-proxy-backend version"
else
	echo "NOTE: $TEST: systemd-nspawn missing; the README's apt-get install was not tried"
fi

new_overlay "$work/root"
R=$work/root/merged
mkdir -p "$R/etc/rancher/rke2"
echo "token: operator-secret" >"$R/etc/rancher/rke2/config.yaml"
run_logged "$work/install.log" "dpkg -i failed (maintainer scripts must not fail without a running systemd)" \
	dpkg --root "$R" -i "$deb"
out=$("$R/usr/bin/rke2-proxy-backend" version)
[ "$out" = "rke2-proxy-backend $VERSION" ] || fail "installed binary says \"$out\""
"$R/usr/bin/kubectl-proxy_backend" --help 2>&1 | grep -q "^Usage: kubectl proxy-backend" ||
	fail "the kubectl plugin /usr/bin/kubectl-proxy_backend is missing or does not run"
[ "$(readlink "$R/usr/lib/systemd/system-generators/rke2-proxy-backend-generator")" = ../../../libexec/rke2-proxy-backend-generator ] ||
	fail "generator link is not ../../../libexec/rke2-proxy-backend-generator"
systemctl --root="$R" is-enabled --quiet rke2-proxy-backend-watch.service || fail "the first install did not enable rke2-proxy-backend-watch.service"
cfg=$R/etc/rke2-proxy-backend/config.yaml
cmp -s "$cfg" "$R/usr/share/rke2-proxy-backend/config.yaml.example" || fail "the install did not create $cfg from the example"
[ "$(cat "$R/var/lib/rke2-proxy-backend/config.created")" = "$(sha256sum <"$cfg" | cut -d' ' -f1)" ] || fail "the install did not record the config it created"
pass "dpkg --root install; binary says \"$out\"; generator link made; watch enabled; config created from the example"

# Upgrade over an edited config, as unattended upgrades, image builds and
# config management run it: no terminal, no flags.
echo "# operator edit" >>"$cfg"
cp -p "$cfg" "$work/edited"
next=$(build_next_version deb "$work/next")
run_logged "$work/upgrade.log" "dpkg upgrade over an edited config failed (no terminal, no --force-conf*)" dpkg --root "$R" -i "$next" </dev/null
assert_config_kept "$R" "$work/edited" "upgrade"
pass "upgrade over an edited config without a question or a flag: the config byte for byte the same, nothing beside it"

# The administrator's disable survives an upgrade (postinst configure
# <old-version>, preinst upgrade); a remove and a reinstall (preinst
# install <old-version>, postinst configure <old-version>) enable watch
# again, as a first install does.
systemctl --root="$R" disable --quiet rke2-proxy-backend-watch.service
run_logged "$work/upgrade2.log" "dpkg upgrade (again) failed" dpkg --root "$R" -i "$next" </dev/null
! systemctl --root="$R" is-enabled --quiet rke2-proxy-backend-watch.service || fail "an upgrade enabled the watch service the administrator disabled"
run_logged "$work/remove0.log" "dpkg -r failed" dpkg --root "$R" -r rke2-proxy-backend
[ "$(dpkg-query --root "$R" -W -f '${db:Status-Status}' rke2-proxy-backend)" = config-files ] || fail "after dpkg -r the package is not in config-files state"
[ ! -e "$R/usr/lib/systemd/system-generators/rke2-proxy-backend-generator" ] && [ ! -L "$R/usr/lib/systemd/system-generators/rke2-proxy-backend-generator" ] ||
	fail "remove left the generator link"
run_logged "$work/reinstall.log" "dpkg reinstall failed" dpkg --root "$R" -i "$next" </dev/null
assert_config_kept "$R" "$work/edited" "remove and reinstall"
systemctl --root="$R" is-enabled --quiet rke2-proxy-backend-watch.service || fail "a reinstall after remove left rke2-proxy-backend-watch.service disabled"
[ ! -e "$R/var/lib/rke2-proxy-backend/reinstall" ] || fail "postinst left the reinstall marker"
pass "upgrade keeps the administrator's disable; remove then reinstall enables watch again"

# remove: our /run state goes; the RKE2 and k3s drop-ins and config stay.
mkdir -p "$R/etc/rancher/rke2/config.yaml.d" "$R/etc/rancher/k3s/config.yaml.d" "$R/run/rke2-proxy-backend"
for d in rke2 k3s; do
	printf '# Generated by rke2-proxy-backend; do not edit\nkube-proxy-extra-env+:\n- IPTABLES_MODE=legacy\n' \
		>"$R/etc/rancher/$d/config.yaml.d/60-proxy-backend.yaml"
done
echo "kube-proxy-arg+: [proxy-mode=iptables]" >"$R/etc/rancher/rke2/config.yaml.d/70-operator.yaml"
echo '{}' >"$R/run/rke2-proxy-backend/plan.json"
# Metrics, bench's state and switch's backup (switchover.BackupSuffix).
plant_removable_state "$R" "$cfg"
cp "$cfg" "$cfg.before-switch"
run_logged "$work/remove.log" "dpkg -r failed" dpkg --root "$R" -r rke2-proxy-backend
[ ! -e "$R/usr/bin/rke2-proxy-backend" ] || fail "remove left the binary"
[ ! -e "$R/run/rke2-proxy-backend" ] || fail "remove left /run/rke2-proxy-backend"
[ -f "$R/etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml" ] || fail "remove deleted the RKE2 drop-in (documented to stay until purge)"
[ -f "$R/etc/rancher/k3s/config.yaml.d/60-proxy-backend.yaml" ] || fail "remove deleted the k3s drop-in (documented to stay until purge)"
[ -f "$cfg" ] || fail "remove deleted the config"
assert_metrics_removed "$R" remove
[ -f "$R/var/lib/rke2-proxy-backend/bench.json" ] || fail "remove deleted bench.json (kept until purge)"
pass "remove: binary, /run state and metrics (custom and default textfile dir) gone; RKE2 drop-in, our config and state kept"

run_logged "$work/purge.log" "dpkg -P failed" dpkg --root "$R" -P rke2-proxy-backend
assert_contains "$work/purge.log" "removed /etc/rke2-proxy-backend/config.yaml, which the package created and you edited" "purge of an edited config the package created"
[ ! -e "$R/etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml" ] || fail "purge left the RKE2 drop-in"
[ ! -e "$R/etc/rancher/k3s/config.yaml.d/60-proxy-backend.yaml" ] || fail "purge left the k3s drop-in"
[ ! -e "$R/etc/rke2-proxy-backend" ] || fail "purge left /etc/rke2-proxy-backend: $(ls -A "$R/etc/rke2-proxy-backend")"
[ ! -e "$R/var/lib/rke2-proxy-backend" ] || fail "purge left /var/lib/rke2-proxy-backend: $(ls -A "$R/var/lib/rke2-proxy-backend")"
if grep -i warning "$work/purge.log" "$work/remove.log"; then
	fail "dpkg warned on remove or purge (above)"
fi
assert_contains "$R/etc/rancher/rke2/config.yaml" "token: operator-secret" "purge touched the operator's RKE2 config"
[ -f "$R/etc/rancher/rke2/config.yaml.d/70-operator.yaml" ] || fail "purge removed the operator's own RKE2 drop-in"
pass "purge: RKE2 and k3s drop-ins, /etc/rke2-proxy-backend and /var/lib/rke2-proxy-backend gone, no dpkg warning; operator's RKE2 config and drop-ins untouched"

# The upgrade from the base commit's package, whose config was a conffile
# (dpkg asked on an edited one, and failed without a terminal): edited and
# unedited, each purged after.
ensure_base_packages "$BASE_COMMIT"
for edit in edited unedited; do
	new_overlay "$work/base-$edit"
	B=$work/base-$edit/merged
	run_logged "$work/base-$edit.log" "dpkg -i of the base package failed" dpkg --root "$B" -i "$BASE_DEB" </dev/null
	[ "$edit" = unedited ] || echo "backend: iptables-legacy  # operator edit" >>"$B/etc/rke2-proxy-backend/config.yaml"
	cp -p "$B/etc/rke2-proxy-backend/config.yaml" "$work/base-$edit.cfg"
	run_logged "$work/base-$edit-up.log" "the upgrade from $(basename "$BASE_DEB") over an $edit config failed (no terminal, no --force-conf*)" \
		dpkg --root "$B" -i "$next" </dev/null
	[ "$(dpkg-query --root "$B" -W -f '${Version} ${db:Status-Status}' rke2-proxy-backend)" = "$VERSION.1-1 installed" ] || fail "base upgrade ($edit): not installed"
	assert_config_kept "$B" "$work/base-$edit.cfg" "the upgrade from the base package ($edit)"
	run_logged "$work/base-$edit-purge.log" "dpkg -P after the upgrade from the base package failed" dpkg --root "$B" -P rke2-proxy-backend
	[ ! -e "$B/etc/rke2-proxy-backend" ] || fail "purge after the base upgrade ($edit) left /etc/rke2-proxy-backend: $(ls -A "$B/etc/rke2-proxy-backend")"
	if grep -i warning "$work/base-$edit-up.log" "$work/base-$edit-purge.log"; then
		fail "dpkg warned on the upgrade from the base package or the purge ($edit; above)"
	fi
	if [ "$edit" = edited ]; then
		assert_contains "$work/base-$edit-purge.log" "dpkg removed /etc/rke2-proxy-backend/config.yaml, which an older version shipped as a conffile and you edited" "purge after the base upgrade"
	elif grep -q 'config.yaml' "$work/base-$edit-purge.log"; then
		fail "the purge of an unedited config spoke of it: $(grep config.yaml "$work/base-$edit-purge.log")"
	fi
done
pass "upgrade from the base commit's package (config a conffile), edited and unedited: no question, no flag, no warning, the config byte for byte the same; purge removes it, saying so when it held edits"

# A config written before the install (the cloud-init examples do): kept
# byte for byte, and the purge keeps it too, saying so.
new_overlay "$work/first"
F=$work/first/merged
mkdir -p "$F/etc/rke2-proxy-backend"
echo "backend: iptables-legacy  # written by cloud-init" >"$F/etc/rke2-proxy-backend/config.yaml"
cp -p "$F/etc/rke2-proxy-backend/config.yaml" "$work/first.cfg"
run_logged "$work/first.log" "dpkg -i over a config written first failed" dpkg --root "$F" -i "$deb" </dev/null
assert_config_kept "$F" "$work/first.cfg" "the install over a config written first"
run_logged "$work/first-purge.log" "dpkg -P failed" dpkg --root "$F" -P rke2-proxy-backend
cmp -s "$work/first.cfg" "$F/etc/rke2-proxy-backend/config.yaml" || fail "the purge removed or changed a config that was there before the package"
assert_contains "$work/first-purge.log" "kept /etc/rke2-proxy-backend/config.yaml: it was there before the package was installed" "purge of the operator's own config"
pass "a config written before the install: kept by the install and by the purge, which says so"
