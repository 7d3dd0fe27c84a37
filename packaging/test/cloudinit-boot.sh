#!/usr/bin/env bash
# cloud-init run by real cloud-init: packaging/cloud-init/airgap-server.yaml
# as NoCloud user-data in a systemd-nspawn guest (debootstrapped bookworm plus
# Debian's cloud-init, cached in .cache/bookworm-cloudinit-root), with what
# the example expects on the node put at the paths it names:
#   /opt/rke2-proxy-backend-repo   `make repo` (throwaway key; the example's
#                                  key block replaced by that key)
#   /opt/rke2-artifacts            a stand-in install.sh (cloudinit-guest/)
#                                  and rke2.linux-<arch>.tar.gz holding the
#                                  RKE2 stand-in (packaging/test/standin) and
#                                  RKE2's real rke2-server.service, with
#                                  sha256sum-<arch>.txt
# Boot 1: inside, cloudinit-guest/assert.sh checks after cloud-final that
# cloud-init finished cleanly, the package came from the verified repository
# with the example's config kept, RKE2 was installed and enabled, our
# generator's drop-in and apply's RKE2 drop-in were in place before RKE2's
# first start (file times against the unit's start time), verify passed, no
# unit failed. Boot 2, same instance: cloud-init re-runs and must change
# nothing (the same files, byte for byte and by mtime).
# Needs: root, systemd-nspawn, debootstrap, make, go, and make repo's tools
# (apt-ftparchive, createrepo_c, rpmsign, gpg); the Debian mirror once, to
# install cloud-init into the cached root.
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/repo.sh"
need_root
need_tools systemd-nspawn debootstrap make go apt-ftparchive createrepo_c rpmsign gpg sha256sum
ensure_packages
ensure_bookworm_root

arch=$(host_arch)
work=$(mktemp -d /tmp/rke2pb-cloudinit-boot.XXXXXX)
trap 'stop_test_repo_agents "$work"/*.gnupg; cleanup_overlays; rm -rf "$work"' EXIT
guest=$(dirname "$0")/cloudinit-guest

# The bookworm root with cloud-init, made once from the cached root; locales
# because cloud images have it and cloud-init's locale module needs it.
CLOUDINIT_ROOT=$CACHE/bookworm-cloudinit-root
guest_pkgs="cloud-init locales"
if [ "$(cat "$CLOUDINIT_ROOT/.complete" 2>/dev/null)" != "$guest_pkgs" ]; then
	log "installing cloud-init into a copy of the bookworm root (once): $CLOUDINIT_ROOT"
	rm -rf "$CLOUDINIT_ROOT.tmp"
	cp -a "$BOOKWORM_ROOT" "$CLOUDINIT_ROOT.tmp"
	rm -f "$CLOUDINIT_ROOT.tmp/.complete"
	timeout 900 systemd-nspawn -q --register=no --keep-unit -D "$CLOUDINIT_ROOT.tmp" sh -c \
		"apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $guest_pkgs && apt-get clean" \
		>"$CACHE/cloudinit-root.log" 2>&1 || {
		tail -n 30 "$CACHE/cloudinit-root.log" >&2
		fail "apt-get install $guest_pkgs in the guest root failed (log: $CACHE/cloudinit-root.log)"
	}
	echo "$guest_pkgs" >"$CLOUDINIT_ROOT.tmp/.complete"
	rm -rf "$CLOUDINIT_ROOT"
	mv "$CLOUDINIT_ROOT.tmp" "$CLOUDINIT_ROOT"
fi
BOOKWORM_ROOT=$CLOUDINIT_ROOT new_overlay "$work/guest"
R=$work/guest/merged

# The repository, at the example's path.
build_test_repo "$work/repo"
mkdir -p "$R/opt/rke2-proxy-backend-repo"
cp -a "$work/repo/." "$R/opt/rke2-proxy-backend-repo/"
chmod -R a+rX "$R/opt/rke2-proxy-backend-repo"

# RKE2's artifacts, stand-ins in the release's names and layout.
mkdir -p "$work/tar/bin" "$work/tar/lib/systemd/system" "$R/opt/rke2-artifacts"
(cd "$REPO" && CGO_ENABLED=0 GOARCH=$arch go build -trimpath -o "$work/tar/bin/rke2" ./packaging/test/standin) ||
	fail "go build of packaging/test/standin failed"
cp "$REPO/internal/testhost/units/rke2-server.service" "$work/tar/lib/systemd/system/"
A=$R/opt/rke2-artifacts
tar czf "$A/rke2.linux-$arch.tar.gz" -C "$work/tar" bin lib
echo "stand-in: no images" >"$A/rke2-images.linux-$arch.tar.zst"
(cd "$A" && sha256sum "rke2.linux-$arch.tar.gz" "rke2-images.linux-$arch.tar.zst" >"sha256sum-$arch.txt")
install -m 0755 "$guest/install.sh" "$A/install.sh"

# The example as user-data, its key block replaced by the repository's key;
# nothing else changed.
mkdir -p "$R/var/lib/cloud/seed/nocloud" "$R/etc/cloud/cloud.cfg.d"
python3 - "$REPO/packaging/cloud-init/airgap-server.yaml" "$work/repo/rke2-proxy-backend.asc" \
	>"$R/var/lib/cloud/seed/nocloud/user-data" <<'PY' || fail "could not put the key into airgap-server.yaml"
import re, sys
text, key = open(sys.argv[1]).read(), open(sys.argv[2]).read()
block = re.compile(r"^( +)-----BEGIN PGP PUBLIC KEY BLOCK-----\n.*?\n +-----END PGP PUBLIC KEY BLOCK-----\n", re.M | re.S)
m = block.search(text)
if not m:
    sys.exit("airgap-server.yaml has no PGP key block")
indent = m.group(1)
sys.stdout.write(text[:m.start()] + "".join(indent + l if l.strip() else l for l in key.splitlines(True)) + text[m.end():])
PY
printf 'instance-id: rke2pb-cloudinit-test-1\nlocal-hostname: rke2pb-node\n' >"$R/var/lib/cloud/seed/nocloud/meta-data"
# Image settings, not user-data: NoCloud only, and the C.UTF-8 locale that
# Debian's cloud images use (the minimal root has no en_US.UTF-8 to switch to).
printf 'datasource_list: [NoCloud, None]\nlocale: C.UTF-8\n' >"$R/etc/cloud/cloud.cfg.d/90-rke2pb-test.cfg"
cloud-init schema --config-file "$R/var/lib/cloud/seed/nocloud/user-data" >/dev/null || fail "the user-data with the real key is not valid cloud-config"

# The in-guest assertions, after cloud-init's last stage.
install -m 0755 "$guest/assert.sh" "$R/usr/local/sbin/cloudinit-assert"
cat >"$R/etc/systemd/system/cloudinit-assert.service" <<'UNIT'
[Unit]
Description=rke2-proxy-backend cloud-init test (asserts, then powers off)
After=cloud-final.service multi-user.target

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/cloudinit-assert
StandardOutput=journal+console

[Install]
WantedBy=multi-user.target
UNIT
mkdir -p "$R/etc/systemd/system/multi-user.target.wants" "$R/etc/cloudinit-test"
ln -sf /etc/systemd/system/cloudinit-assert.service "$R/etc/systemd/system/multi-user.target.wants/"
ln -sf /dev/null "$R/etc/systemd/system/console-getty.service"

boot() {
	local n=$1 start=$SECONDS
	echo "$n" >"$R/etc/cloudinit-test/boot"
	timeout -k 10 600 systemd-nspawn --boot --private-network --register=no --keep-unit \
		--console=read-only -D "$R" >"$work/console-$n.log" 2>&1 || true
	local result=$R/var/lib/cloudinit-test/result-$n
	if [ ! -f "$result" ]; then
		tail -n 60 "$work/console-$n.log" >&2
		tail -n 40 "$R/var/log/cloud-init-output.log" >&2 2>/dev/null || true
		fail "boot $n: the guest wrote no result in $((SECONDS - start))s"
	fi
	sed 's/^/    /' "$result"
	if grep -q '^FAIL' "$result" || ! grep -q '^DONE' "$result"; then
		[ -f "$R/var/lib/cloudinit-test/diag-$n" ] && sed 's/^/    | /' "$R/var/lib/cloudinit-test/diag-$n" >&2
		fail "boot $n: assertions failed inside the guest (above)"
	fi
	pass "boot $n: airgap-server.yaml through real cloud-init in $((SECONDS - start))s"
}

# snapshot: what cloud-init and the installs left, by content and mtime.
snapshot() {
	(cd "$R" && for f in etc/rke2-proxy-backend/config.yaml etc/rancher/rke2/config.yaml etc/rancher/rke2/cluster-token \
		etc/apt/sources.list.d/rke2-proxy-backend.list etc/apt/keyrings/rke2-proxy-backend.asc \
		var/lib/dpkg/info/rke2-proxy-backend.list usr/local/bin/rke2 usr/local/lib/systemd/system/rke2-server.service \
		etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml; do
		echo "$f $(stat -c %Y "$f") $(sha256sum <"$f" | cut -c1-16)"
	done)
}

boot 1
snapshot >"$work/after-1"
finished1=$(stat -c %Y "$R/var/lib/cloud/instances/rke2pb-cloudinit-test-1/boot-finished")
sleep 1
boot 2
snapshot >"$work/after-2"
[ "$(stat -c %Y "$R/var/lib/cloud/instances/rke2pb-cloudinit-test-1/boot-finished")" != "$finished1" ] || fail "boot 2: cloud-init did not run again (boot-finished unchanged)"
diff -u "$work/after-1" "$work/after-2" || fail "boot 2 (cloud-init again, same instance) changed the files above"
pass "boot 2: cloud-init on the same instance changed nothing ($(wc -l <"$work/after-1") files compared by content and mtime)"
