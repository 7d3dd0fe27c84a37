#!/usr/bin/env bash
# cloud-init run by real cloud-init: packaging/cloud-init/airgap-server.yaml,
# debian-server.yaml and debian-agent.yaml (the NAS agent, on iptables-legacy)
# as NoCloud user-data in a systemd-nspawn guest
# (debootstrapped bookworm plus Debian's cloud-init, cached in
# .cache/bookworm-cloudinit-root), with what each example expects put at the
# paths or URLs it names:
#   the repository     `make repo` (throwaway key) in /opt/rke2-proxy-backend-repo:
#                      airgap-server.yaml's path; for debian-server.yaml REPO_URL
#                      becomes file:/opt/rke2-proxy-backend-repo and the guest has
#                      no other apt source. Each example's key block is replaced
#                      by the key; nothing else in it changes.
#   RKE2's installer   a stand-in install.sh (cloudinit-guest/) at
#                      /opt/rke2-artifacts (air-gapped) or served as
#                      https://get.rke2.io (online), with rke2.linux-<arch>.tar.gz
#                      (the RKE2 stand-in, packaging/test/standin, and RKE2's real
#                      rke2-server.service and rke2-agent.service), the images
#                      archive and sha256sum-<arch>.txt in /opt/rke2-artifacts or under
#                      https://github.com/rancher/rke2/releases/download/<pinned
#                      version>/: /etc/hosts points both names at a local HTTPS
#                      server (cloudinit-guest/https-standin.py) whose test CA
#                      the guest trusts.
# Boot 1: inside, cloudinit-guest/assert.sh checks after cloud-final that
# cloud-init finished cleanly, the package came from the verified repository
# with the example's config kept, RKE2 was installed and the example's
# rke2-server or rke2-agent enabled, our generator's drop-in and apply's RKE2
# drop-in were in place before RKE2's first start (file times against the
# unit's start time), kube-proxy ended on the backend the example means
# (iptables-nft for the servers; iptables-legacy for the NAS agent, whose
# runcmd points the host's iptables at legacy: the guest's DMI matches none
# of its NAS triggers, so auto follows that alternative), verify passed, no
# unit failed. Boot 2, same instance: cloud-init re-runs and must change
# nothing (the same files, byte for byte and by mtime, and the alternative).
# Needs: root, systemd-nspawn, debootstrap, make, go, openssl, python3, and
# make repo's tools (apt-ftparchive, createrepo_c, rpmsign, gpg); the Debian
# mirror once, to install cloud-init, locales, curl and ca-certificates into
# the cached root.
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/repo.sh"
need_root
need_tools systemd-nspawn debootstrap make go apt-ftparchive createrepo_c rpmsign gpg sha256sum openssl python3
ensure_packages
ensure_bookworm_root

arch=$(host_arch)
work=$(mktemp -d /tmp/rke2pb-cloudinit-boot.XXXXXX)
trap 'stop_test_repo_agents "$work"/*.gnupg; cleanup_overlays; rm -rf "$work"' EXIT
guest=$(dirname "$0")/cloudinit-guest

# The bookworm root with cloud-init, made once from the cached root; locales,
# curl and ca-certificates because cloud images have them (cloud-init's
# locale module and RKE2's online installer need them).
ensure_derived_root bookworm-cloudinit-root "cloud-init locales curl ca-certificates"
CLOUDINIT_ROOT=$CACHE/bookworm-cloudinit-root

# The stand-in artifacts and the HTTPS certificate, shared by both examples.
mkdir -p "$work/tar/bin" "$work/tar/lib/systemd/system" "$work/artifacts"
build_standin "$work/tar/bin/rke2"
cp "$REPO/internal/testkit/testhost/units/rke2-server.service" "$REPO/internal/testkit/testhost/units/rke2-agent.service" "$work/tar/lib/systemd/system/"
tar czf "$work/artifacts/rke2.linux-$arch.tar.gz" -C "$work/tar" bin lib
echo "stand-in: no images" >"$work/artifacts/rke2-images.linux-$arch.tar.zst"
(cd "$work/artifacts" && sha256sum "rke2.linux-$arch.tar.gz" "rke2-images.linux-$arch.tar.zst" >"sha256sum-$arch.txt")
build_test_repo "$work/repo"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=rke2pb test CA" \
	-keyout "$work/ca.key" -out "$work/ca.crt" >/dev/null 2>&1 || fail "openssl could not make the test CA"
openssl req -newkey rsa:2048 -nodes -subj "/CN=get.rke2.io" -keyout "$work/server.key" -out "$work/server.csr" >/dev/null 2>&1 &&
	printf 'subjectAltName=DNS:get.rke2.io,DNS:github.com\n' >"$work/san.ext" &&
	openssl x509 -req -in "$work/server.csr" -CA "$work/ca.crt" -CAkey "$work/ca.key" -CAcreateserial -days 2 \
		-extfile "$work/san.ext" -out "$work/server.crt" >/dev/null 2>&1 || fail "openssl could not make the server certificate"

# prepare EXAMPLE: a fresh guest with the example as user-data.
prepare() {
	local ex=$1
	BOOKWORM_ROOT=$CLOUDINIT_ROOT new_overlay "$work/guest-${ex%.yaml}"
	R=$work/guest-${ex%.yaml}/merged
	mkdir -p "$R/opt/rke2-proxy-backend-repo"
	cp -a "$work/repo/." "$R/opt/rke2-proxy-backend-repo/"
	chmod -R a+rX "$R/opt/rke2-proxy-backend-repo"
	# The stand-in's kube-proxy, which RKE2's real artifacts would bring.
	install_kube_proxy_oracle "$work/tar/bin/rke2" "$R"
	case $ex in
	airgap-*)
		mkdir -p "$R/opt/rke2-artifacts"
		cp "$work/artifacts"/* "$R/opt/rke2-artifacts/"
		install -m 0755 "$guest/install.sh" "$R/opt/rke2-artifacts/install.sh"
		;;
	*)
		local pin web=$R/srv/standin-web
		pin=$(grep -o 'INSTALL_RKE2_VERSION=[^ ]*' "$REPO/packaging/cloud-init/$ex" | head -n 1 | cut -d= -f2)
		[ -n "$pin" ] || fail "$ex pins no INSTALL_RKE2_VERSION"
		mkdir -p "$web/get.rke2.io" "$web/github.com/rancher/rke2/releases/download/$pin" "$R/etc/standin-web"
		install -m 0644 "$guest/install.sh" "$web/get.rke2.io/index.html"
		cp "$work/artifacts"/* "$web/github.com/rancher/rke2/releases/download/$pin/"
		install -m 0600 "$work/server.key" "$R/etc/standin-web/server.key"
		install -m 0644 "$work/server.crt" "$R/etc/standin-web/server.crt"
		install -m 0644 "$guest/https-standin.py" "$R/usr/local/sbin/https-standin.py"
		cat >"$R/etc/systemd/system/https-standin.service" <<'UNIT'
[Unit]
Description=HTTPS stand-in for get.rke2.io and github.com (cloudinit-boot.sh)
Before=cloud-final.service

[Service]
ExecStart=/usr/bin/python3 /usr/local/sbin/https-standin.py

[Install]
WantedBy=multi-user.target
UNIT
		mkdir -p "$R/etc/systemd/system/multi-user.target.wants"
		ln -sf /etc/systemd/system/https-standin.service "$R/etc/systemd/system/multi-user.target.wants/"
		printf '127.0.0.1 get.rke2.io github.com\n' >>"$R/etc/hosts"
		install -m 0644 "$work/ca.crt" "$R/usr/local/share/ca-certificates/rke2pb-test-ca.crt"
		chroot "$R" update-ca-certificates >/dev/null 2>&1 || fail "update-ca-certificates in the guest failed"
		# The image's only apt source is ours (the Debian mirror is unreachable
		# from the guest, and package_update would report it).
		: >"$R/etc/apt/sources.list"
		;;
	esac

	# The example as user-data: its key block replaced by the repository's
	# key, REPO_URL by the copy of the repository.
	mkdir -p "$R/var/lib/cloud/seed/nocloud" "$R/etc/cloud/cloud.cfg.d"
	python3 "$(dirname "$0")/lib/cloudinit_fill.py" "$REPO/packaging/cloud-init/$ex" "$work/repo/rke2-proxy-backend.asc" file:/opt/rke2-proxy-backend-repo \
		>"$R/var/lib/cloud/seed/nocloud/user-data" || fail "could not fill in $ex"
	printf 'instance-id: rke2pb-cloudinit-test-1\nlocal-hostname: rke2pb-node\n' >"$R/var/lib/cloud/seed/nocloud/meta-data"
	# Image settings, not user-data: NoCloud only, and the C.UTF-8 locale that
	# Debian's cloud images use (the minimal root has no en_US.UTF-8).
	printf 'datasource_list: [NoCloud, None]\nlocale: C.UTF-8\n' >"$R/etc/cloud/cloud.cfg.d/90-rke2pb-test.cfg"
	cloud-init schema --config-file "$R/var/lib/cloud/seed/nocloud/user-data" >/dev/null || fail "$ex filled in is not valid cloud-config"
	if grep -v '^ *#' "$R/var/lib/cloud/seed/nocloud/user-data" | grep -qE 'REPO_URL|Replace this block'; then
		fail "$ex: a repository placeholder was left in the user-data"
	fi

	# What the in-guest assertions expect of this example: its RKE2 role, the
	# backend kube-proxy ends on, and our config as its write_files has it.
	mkdir -p "$R/etc/cloudinit-test"
	local role=server backend=iptables-nft
	case $ex in *-agent.yaml) role=agent backend=iptables-legacy ;; esac
	echo "$role" >"$R/etc/cloudinit-test/role"
	echo "$backend" >"$R/etc/cloudinit-test/backend"
	python3 - "$R/var/lib/cloud/seed/nocloud/user-data" >"$R/etc/cloudinit-test/config.yaml" <<'PY' || fail "$ex writes no /etc/rke2-proxy-backend/config.yaml"
import sys, yaml
files = yaml.safe_load(open(sys.argv[1])).get("write_files", [])
sys.stdout.write(next(f["content"] for f in files if f["path"] == "/etc/rke2-proxy-backend/config.yaml"))
PY

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
}

# boot EXAMPLE N
boot() {
	local ex=$1 n=$2 start=$SECONDS
	echo "$n" >"$R/etc/cloudinit-test/boot"
	nspawn_boot "$R" "$work/console-${ex%.yaml}-$n.log" 600
	local result=$R/var/lib/cloudinit-test/result-$n
	if [ ! -f "$result" ]; then
		tail -n 60 "$work/console-${ex%.yaml}-$n.log" >&2
		tail -n 40 "$R/var/log/cloud-init-output.log" >&2 2>/dev/null || true
		fail "$ex boot $n: the guest wrote no result in $((SECONDS - start))s"
	fi
	guest_verdict "$result" "$R/var/lib/cloudinit-test/diag-$n" "$ex boot $n"
	pass "$ex boot $n: through real cloud-init in $((SECONDS - start))s"
}

# snapshot ROLE: what cloud-init and the installs left, by content and mtime.
snapshot() {
	local role=$1
	(cd "$R" && for f in etc/rke2-proxy-backend/config.yaml etc/rancher/rke2/config.yaml etc/rancher/rke2/cluster-token \
		etc/apt/sources.list.d/rke2-proxy-backend.list etc/apt/keyrings/rke2-proxy-backend.asc \
		var/lib/dpkg/info/rke2-proxy-backend.list usr/local/bin/rke2 usr/local/lib/systemd/system/rke2-$role.service \
		etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml; do
		echo "$f $(stat -c %Y "$f") $(sha256sum <"$f" | cut -c1-16)"
	done
	echo "etc/alternatives/iptables -> $(readlink etc/alternatives/iptables)")
}

for ex in airgap-server.yaml debian-server.yaml debian-agent.yaml; do
	prepare "$ex"
	role=$(cat "$R/etc/cloudinit-test/role")
	boot "$ex" 1
	snapshot "$role" >"$work/after-1"
	finished=$R/var/lib/cloud/instances/rke2pb-cloudinit-test-1/boot-finished
	finished1=$(stat -c %Y "$finished")
	sleep 1
	boot "$ex" 2
	snapshot "$role" >"$work/after-2"
	[ "$(stat -c %Y "$finished")" != "$finished1" ] || fail "$ex boot 2: cloud-init did not run again (boot-finished unchanged)"
	diff -u "$work/after-1" "$work/after-2" || fail "$ex boot 2 (cloud-init again, same instance) changed the files above"
	pass "$ex boot 2: cloud-init on the same instance changed nothing ($(($(wc -l <"$work/after-1") - 1)) files by content and mtime, and the iptables alternative)"
done
