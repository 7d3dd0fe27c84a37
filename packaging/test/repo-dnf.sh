#!/usr/bin/env bash
# The YUM/DNF repository from `make repo`, used as an EL node uses it, with
# Debian's dnf: the .repo file make repo writes (gpgcheck=1,
# repo_gpgcheck=1), the public key imported with rpm --import as the README
# says, then `dnf --installroot install rke2-proxy-backend`. The installroot
# is a scratch copy of a debootstrapped bookworm, so the scriptlets find
# /bin/sh. A repository signed by another key must be refused twice over:
# its repomd.xml signature, and with repo_gpgcheck off, its RPM signature.
# A REPO_GPG_KEY_ID that matches two keys must be refused before anything
# is signed.
# Last, the EL cloud-init examples' .repo file, the way cloud-init runs dnf.
#
# Dependencies: the RPM requires (iptables or iptables-nft), nftables and
# kmod, which no EL repository here provides. A stub RPM built by this test
# (rke2pb-test-deps, Provides: iptables nftables kmod, no files) in a second,
# local repository stands in for them; the Debian root already has the real
# tools. Only our repository is signature-checked; the stub repository is
# test scaffolding with gpgcheck=0.
# Needs: root, dnf, createrepo_c (createrepo-c), rpm, rpmbuild (rpm), gpg
# (gnupg), debootstrap, make, go.
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/repo.sh"
need_root
need_tools dnf createrepo_c rpm rpmbuild rpmsign gpg make
ensure_packages
ensure_bookworm_root

case $(host_arch) in amd64) basearch=x86_64 ;; arm64) basearch=aarch64 ;; esac
work=$(mktemp -d /tmp/rke2pb-repo-dnf.XXXXXX)
trap 'stop_test_repo_agents "$work"/*.gnupg "$work"/*/merged/var/cache/dnf/*/pubring; cleanup_overlays; rm -rf "$work"' EXIT

build_test_repo "$work/trusted"
build_test_repo "$work/other"
for a in x86_64 aarch64; do
	for f in repodata/repomd.xml repodata/repomd.xml.asc; do
		[ -s "$work/trusted/yum/$a/$f" ] || fail "make repo did not write yum/$a/$f"
	done
	rpm -qp --qf '%{RSAHEADER:pgpsig}\n' "$work/trusted/yum/$a"/*.rpm >"$work/sig-$a" 2>/dev/null
	grep -q 'RSA/SHA512' "$work/sig-$a" || fail "yum/$a: the RPM is not signed (rpm says: $(cat "$work/sig-$a"))"
done
pass "make repo: YUM repositories for x86_64 and aarch64, RPMs signed, repomd.xml.asc beside repomd.xml"

# A key rotation's keyring: REPO_GPG_KEY_ID matching both keys is refused;
# with the fingerprint, the RPMs and repomd.xml are that key's and nodes get
# it alone (the .asc is what the README's rpm --import reads).
build_rotated_key_repo "$work/rotated"
want_id=$(tr 'A-F' 'a-f' <<<"${CURRENT_FPR: -16}")
for a in x86_64 aarch64; do
	got=$(rpm -qp --qf '%{RSAHEADER:pgpsig}\n' "$work/rotated/yum/$a"/*.rpm 2>/dev/null)
	[[ $got == *"Key ID $want_id" ]] || fail "yum/$a: the RPM is signed by \"$got\", not by the key REPO_GPG_KEY_ID names ($CURRENT_FPR)"
	[ "$(signer_of "$work/rotated.gnupg" "$work/rotated/yum/$a/repodata/repomd.xml" "$work/rotated/yum/$a/repodata/repomd.xml.asc")" = "$CURRENT_FPR" ] ||
		fail "yum/$a: repomd.xml.asc is not signed by the key REPO_GPG_KEY_ID names ($CURRENT_FPR)"
done
pass "a key ID matching two keys (a rotation's retired and current one) is refused naming both; by fingerprint, the RPMs and repomd.xml are that key's and the exported keys hold it alone"

# The stand-in for the EL dependencies.
el_deps_stub "$work/stub"
mkdir -p "$work/stub/repo"
cp "$work"/stub/build/RPMS/noarch/*.rpm "$work/stub/repo/"
createrepo_c -q "$work/stub/repo" || fail "createrepo_c for the stub repository failed"

# new_node NAME REPO: a bookworm root with an rpm database that trusts the
# "trusted" key (rpm --import, and the gpgkey= file), whose
# /etc/yum.repos.d has make repo's .repo file pointing at $work/REPO/yum.
# dnf --installroot reads gpgkey= and baseurl= on the host, so those point
# at the files inside the root.
new_node() {
	new_overlay "$work/$1"
	N=$work/$1/merged
	rpm --root "$N" --initdb
	mkdir -p "$N/etc/yum.repos.d" "$N/etc/pki/rpm-gpg" "$N/srv"
	install -m 0644 "$work/trusted/rke2-proxy-backend.asc" "$N/etc/pki/rpm-gpg/RPM-GPG-KEY-rke2-proxy-backend"
	rpm --root "$N" --import "$N/etc/pki/rpm-gpg/RPM-GPG-KEY-rke2-proxy-backend" || fail "rpm --import of the repository key failed"
	cp -a "$work/$2/yum" "$N/srv/yum"
	sed -e "s|https://REPO_URL/yum|file://$N/srv/yum|" -e "s|gpgkey=file://|gpgkey=file://$N|" \
		"$work/trusted/yum/rke2-proxy-backend.repo" >"$N/etc/yum.repos.d/rke2-proxy-backend.repo"
	printf '[rke2pb-test-deps]\nname=test scaffolding, not signed\nbaseurl=file://%s\ngpgcheck=0\n' "$work/stub/repo" \
		>"$N/etc/yum.repos.d/rke2pb-test-deps.repo"
}
assert_contains "$work/trusted/yum/rke2-proxy-backend.repo" "gpgcheck=1" "the .repo file make repo writes"
assert_contains "$work/trusted/yum/rke2-proxy-backend.repo" "repo_gpgcheck=1" "the .repo file make repo writes"
assert_contains "$work/trusted/yum/rke2-proxy-backend.repo" 'baseurl=https://REPO_URL/yum/$basearch' "the .repo file make repo writes"

# node_dnf ROOT ARGS...: dnf on ROOT with its own repositories only.
node_dnf() {
	local root=$1
	shift
	timeout 300 dnf -y --installroot="$root" --releasever=9 --setopt=reposdir="$root/etc/yum.repos.d" \
		--setopt=cachedir="$root/var/cache/dnf" --setopt=install_weak_deps=False --nodocs "$@"
}

# 1. Signed by another key: repomd.xml's signature fails first.
new_node other-repomd other
expect_refused "$work/other-repomd.log" 'repomd.xml GPG signature verification error|signature.*(bad|fail|not)' \
	"dnf installed from a repository whose repomd.xml is signed by a key the node does not trust" \
	"dnf refused the wrongly signed repository, but not for repomd.xml's signature" \
	node_dnf "$N" install rke2-proxy-backend
rpm --root "$N" -q rke2-proxy-backend >/dev/null 2>&1 && fail "rke2-proxy-backend got installed from the wrongly signed repository"
pass "repo_gpgcheck: a repository signed by another key is refused ($(grep -oiE 'repomd.xml GPG signature verification error[^:]*' "$work/other-repomd.log" | head -n 1))"

# 2. Same repository with repo_gpgcheck off: the RPM's own signature fails.
new_node other-rpm other
expect_refused "$work/other-rpm.log" 'GPG check FAILED|public key .* is not installed|signature' \
	"dnf installed an RPM signed by a key the node does not trust" \
	"dnf refused the wrongly signed RPM, but not for its signature" \
	node_dnf "$N" --setopt=rke2-proxy-backend.repo_gpgcheck=0 install rke2-proxy-backend
rpm --root "$N" -q rke2-proxy-backend >/dev/null 2>&1 && fail "rke2-proxy-backend got installed from the wrongly signed RPM"
pass "gpgcheck: an RPM signed by another key is refused ($(grep -oiE 'GPG check FAILED|public key for [^ ]+ is not installed' "$work/other-rpm.log" | head -n 1))"

# 3. The real thing.
new_node node trusted
mkdir -p "$N/etc/rke2-proxy-backend"
echo "backend: iptables-legacy  # written by cloud-init before the package" >"$N/etc/rke2-proxy-backend/config.yaml"
run_logged "$work/install.log" "dnf install from the signed repository failed" node_dnf "$N" install rke2-proxy-backend
if grep -qiE 'scriptlet failed|error' "$work/install.log"; then
	cat "$work/install.log" >&2
	fail "dnf install reported an error"
fi
grep -qE "rke2-proxy-backend +$basearch +$VERSION-1 +rke2-proxy-backend" "$work/install.log" || {
	cat "$work/install.log" >&2
	fail "dnf did not take rke2-proxy-backend $VERSION-1 ($basearch) from the rke2-proxy-backend repository"
}
rpm --root "$N" -q --qf '%{RSAHEADER:pgpsig}\n' rke2-proxy-backend | grep -q "Key ID $(gpg --homedir "$work/trusted.gnupg" --batch --with-colons -k 2>/dev/null | awk -F: '$1 == "pub" { print tolower($5); exit }')" ||
	fail "the installed rke2-proxy-backend does not carry the repository key's signature"
out=$(chroot "$N" rke2-proxy-backend version) || fail "the installed binary does not run"
[ "$out" = "rke2-proxy-backend $VERSION" ] || fail "installed binary says \"$out\""
assert_contains "$N/etc/rke2-proxy-backend/config.yaml" "written by cloud-init before the package" "a config written before the install (as the cloud-init examples do) must be kept"
[ "$(ls -A "$N/etc/rke2-proxy-backend")" = config.yaml ] || fail "files beside the kept config: $(ls -A "$N/etc/rke2-proxy-backend")"
[ -f "$N/usr/share/rke2-proxy-backend/config.yaml.example" ] || fail "the package's example config is not /usr/share/rke2-proxy-backend/config.yaml.example"
pass "dnf --installroot (gpgcheck=1, repo_gpgcheck=1, key from rpm --import) installed $out; a config written first is kept"

# 4. The EL cloud-init examples' way: no rpm --import, only the .repo file
# and key path from el-server.yaml; dnf -y makecache, then dnf -y install,
# as cloud-init's package_update and packages run them (dnf imports the key
# from gpgkey= because of -y).
new_overlay "$work/cloudinit"
N=$work/cloudinit/merged
rpm --root "$N" --initdb
mkdir -p "$N/etc/yum.repos.d" "$N/etc/pki/rpm-gpg"
python3 - "$REPO/packaging/cloud-init/el-server.yaml" >"$work/example.repo" <<'PY'
import sys, yaml
for f in yaml.safe_load(open(sys.argv[1]))["write_files"]:
    if f["path"] == "/etc/yum.repos.d/rke2-proxy-backend.repo":
        sys.stdout.write(f["content"])
        sys.exit(0)
sys.exit("el-server.yaml writes no /etc/yum.repos.d/rke2-proxy-backend.repo")
PY
key=$(sed -n 's|^gpgkey=file://||p' "$work/example.repo")
[ -n "$key" ] || fail "el-server.yaml's .repo file has no gpgkey=file://"
install -m 0644 "$work/trusted/rke2-proxy-backend.asc" "$N$key"
mkdir -p "$N/srv"
cp -a "$work/trusted/yum" "$N/srv/yum"
sed -e "s|REPO_URL/yum|file://$N/srv/yum|" -e "s|gpgkey=file://|gpgkey=file://$N|" "$work/example.repo" >"$N/etc/yum.repos.d/rke2-proxy-backend.repo"
printf '[rke2pb-test-deps]\nname=test scaffolding, not signed\nbaseurl=file://%s\ngpgcheck=0\n' "$work/stub/repo" >"$N/etc/yum.repos.d/rke2pb-test-deps.repo"
{ node_dnf "$N" makecache && node_dnf "$N" install rke2-proxy-backend; } >"$work/cloudinit.log" 2>&1 || {
	cat "$work/cloudinit.log" >&2
	fail "dnf makecache + install with el-server.yaml's .repo file failed"
}
assert_contains "$work/cloudinit.log" "Importing GPG key" "dnf must import the key from gpgkey= (none was imported before)"
[ "$(chroot "$N" rke2-proxy-backend version)" = "rke2-proxy-backend $VERSION" ] || fail "the binary installed the cloud-init way does not run"
pass "el-server.yaml's .repo file: dnf -y makecache imported the key from gpgkey= and verified repomd.xml; dnf -y install took the signed RPM"
