#!/usr/bin/env bash
# The APT repository from `make repo`, used as a node uses it: in a scratch
# copy of a debootstrapped bookworm (systemd-nspawn, no network), the
# repository is a file: source with signed-by=, apt-get update must verify
# InRelease, apt-get install must take the package from it (no
# --allow-unauthenticated), and the installed binary must run. A repository
# signed by another key, and one whose Packages was changed after signing,
# must be refused. A REPO_GPG_KEY_ID that matches two keys must be refused
# before anything is signed.
# Needs: root, apt-ftparchive (apt-utils), gpg (gnupg), systemd-nspawn
# (systemd-container), debootstrap, make, go.
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/repo.sh"
need_root
need_tools apt-ftparchive gpg systemd-nspawn make
ensure_packages
ensure_bookworm_root

work=$(mktemp -d /tmp/rke2pb-repo-apt.XXXXXX)
trap 'stop_test_repo_agents "$work"/*.gnupg; cleanup_overlays; rm -rf "$work"' EXIT

build_test_repo "$work/trusted"
build_test_repo "$work/other"
for f in dists/stable/InRelease dists/stable/Release.gpg dists/stable/main/binary-amd64/Packages.gz dists/stable/main/binary-arm64/Packages.gz; do
	[ -s "$work/trusted/apt/$f" ] || fail "make repo did not write apt/$f"
done
pass "make repo: APT repository with InRelease, Release.gpg and Packages for amd64 and arm64"

# A key rotation's keyring: REPO_GPG_KEY_ID matching both keys is refused;
# with the fingerprint, the signatures are that key's and nodes get it alone.
build_rotated_key_repo "$work/rotated"
rel=$work/rotated/apt/dists/stable
[ "$(signer_of "$work/rotated.gnupg" "$rel/InRelease")" = "$CURRENT_FPR" ] || fail "InRelease is not signed by the key REPO_GPG_KEY_ID names ($CURRENT_FPR)"
[ "$(signer_of "$work/rotated.gnupg" "$rel/Release" "$rel/Release.gpg")" = "$CURRENT_FPR" ] || fail "Release.gpg is not signed by the key REPO_GPG_KEY_ID names ($CURRENT_FPR)"
pass "a key ID matching two keys (a rotation's retired and current one) is refused naming both; by fingerprint, InRelease and Release.gpg are that key's and the exported keys hold it alone"

# A bookworm root that trusts the "trusted" key only, at the path the README
# gives, with the source line make repo wrote (URL pointed at the copy).
new_overlay "$work/node"
R=$work/node/merged
install -m 0644 "$work/trusted/rke2-proxy-backend.gpg" "$R/usr/share/keyrings/rke2-proxy-backend.gpg"
assert_contains "$work/trusted/apt/rke2-proxy-backend.list" "deb [signed-by=/usr/share/keyrings/rke2-proxy-backend.gpg] " "the source line make repo writes"
sed 's|https://REPO_URL/apt|file:/srv/repo/apt|' "$work/trusted/apt/rke2-proxy-backend.list" >"$R/etc/apt/sources.list.d/rke2-proxy-backend.list"
mkdir -p "$R/srv"

# in_node CMD: run CMD in the root with only our source (the Debian mirror
# is not reachable from inside, and its failure would hide ours).
in_node() {
	timeout 300 systemd-nspawn -q --register=no --keep-unit --private-network -D "$R" \
		env DEBIAN_FRONTEND=noninteractive sh -c "$1"
}
apt_only_ours='-o Dir::Etc::sourcelist=/etc/apt/sources.list.d/rke2-proxy-backend.list -o Dir::Etc::sourceparts=-'

# use_repo NAME: serve $work/NAME/apt as /srv/repo/apt and forget old lists.
use_repo() {
	rm -rf "$R/srv/repo" "$R/var/lib/apt/lists"
	mkdir -p "$R/srv/repo" "$R/var/lib/apt/lists/partial"
	cp -a "$work/$1/apt" "$R/srv/repo/apt"
	chmod -R a+rX "$R/srv/repo"
}

# 1. Signed by another key: update must fail, naming the signature.
use_repo other
expect_refused "$work/other.log" 'NO_PUBKEY|not signed|signatures were invalid|signatures couldn.t be verified' \
	"apt-get update accepted a repository signed by a key the node does not trust" \
	"apt-get update failed on the wrongly signed repository, but not for its signature" \
	in_node "apt-get $apt_only_ours update"
pass "a repository signed by another key is refused: $(grep -oE 'NO_PUBKEY [0-9A-F]+|is not signed' "$work/other.log" | head -n 1)"

# 2. Packages changed after signing: the hash in the signed Release fails.
use_repo trusted
printf '\n' >>"$R/srv/repo/apt/dists/stable/main/binary-amd64/Packages"
rm "$R/srv/repo/apt/dists/stable/main/binary-amd64/Packages.gz"
expect_refused "$work/tampered.log" 'hash sum mismatch|unexpected size' \
	"apt-get update accepted a Packages file changed after signing" \
	"apt-get update failed on the tampered repository, but not for the hash" \
	in_node "apt-get $apt_only_ours update"
pass "a Packages file changed after signing is refused (hash mismatch)"

# 3. The real thing: update verifies, install takes our package from it.
use_repo trusted
run_logged "$work/install.log" "apt-get update + install from the signed repository failed" \
	in_node "apt-get $apt_only_ours update && apt-cache policy rke2-proxy-backend &&
	apt-get $apt_only_ours install -y rke2-proxy-backend && rke2-proxy-backend version"
tr -d '\r' <"$work/install.log" >"$work/install.txt"
grep -q 'InRelease' "$work/install.txt" || fail "apt-get update did not fetch InRelease"
if grep -qiE 'not signed|unauthenticated|insecure' "$work/install.txt"; then
	cat "$work/install.txt" >&2
	fail "apt treated the repository as unsigned"
fi
assert_contains "$work/install.txt" "500 file:/srv/repo/apt stable/main" "apt-cache policy: the candidate comes from our repository"
grep -qx "rke2-proxy-backend $VERSION" "$work/install.txt" || fail "'rke2-proxy-backend version' after apt-get install did not print $VERSION"
ls "$R"/var/lib/apt/lists/*InRelease >/dev/null 2>&1 || fail "apt kept no verified InRelease"
pass "apt-get update verified InRelease (signed-by keyring), apt-get install rke2-proxy-backend $VERSION-1, binary runs"

# 4. The armored key the cloud-init examples write (/etc/apt/keyrings/*.asc)
# works as signed-by too.
rm "$R/usr/share/keyrings/rke2-proxy-backend.gpg"
mkdir -p "$R/etc/apt/keyrings"
install -m 0644 "$work/trusted/rke2-proxy-backend.asc" "$R/etc/apt/keyrings/rke2-proxy-backend.asc"
sed -i 's|/usr/share/keyrings/rke2-proxy-backend.gpg|/etc/apt/keyrings/rke2-proxy-backend.asc|' "$R/etc/apt/sources.list.d/rke2-proxy-backend.list"
use_repo trusted
run_logged "$work/asc.log" "apt-get update with the armored key at /etc/apt/keyrings/rke2-proxy-backend.asc failed" \
	in_node "apt-get $apt_only_ours update"
pass "signed-by=/etc/apt/keyrings/rke2-proxy-backend.asc (armored, as in the cloud-init examples) verifies too"
