#!/usr/bin/env bash
# apt.sh DIST OUT: a signed APT repository in OUT from the .deb files in
# DIST, in Debian's layout so a node needs one line:
#   deb [signed-by=/usr/share/keyrings/rke2-proxy-backend.gpg] <URL of OUT> stable main
# OUT/pool/main/r/rke2-proxy-backend/*.deb, OUT/dists/stable/Release with
# InRelease (clearsigned) and Release.gpg (detached), and per architecture
# dists/stable/main/binary-<arch>/Packages(.gz) and Release.
source "$(dirname "$0")/lib.sh"
[ $# = 2 ] || die "usage: apt.sh DIST OUT"
dist=$1 out=$2
need apt-ftparchive apt-utils
need gpg gnupg
check_key

arches=(amd64 arm64)
shopt -s nullglob
debs=("$dist"/*.deb)
[ ${#debs[@]} -gt 0 ] || die "no .deb in $dist: run make packages first"

pool=pool/main/r/rke2-proxy-backend
rm -rf "$out"
mkdir -p "$out/$pool"
cp "${debs[@]}" "$out/$pool/"
cd "$out"
for a in "${arches[@]}"; do
	ls "$pool"/*_"$a".deb >/dev/null 2>&1 || die "no _$a.deb in $dist: make packages builds one per architecture"
	d=dists/stable/main/binary-$a
	mkdir -p "$d"
	# Paths in Packages are relative to the repository root, as apt wants.
	apt-ftparchive -o APT::FTPArchive::MD5=false -o APT::FTPArchive::SHA1=false --arch "$a" packages "$pool" >"$d/Packages"
	gzip -9nk "$d/Packages"
	printf 'Archive: stable\nComponent: main\nOrigin: rke2-proxy-backend\nLabel: rke2-proxy-backend\nArchitecture: %s\n' "$a" >"$d/Release"
done

# No MD5/SHA-1 sums: apt ignores them, and they only invite weak checks.
apt-ftparchive -o APT::FTPArchive::MD5=false -o APT::FTPArchive::SHA1=false \
	-o APT::FTPArchive::Release::Origin=rke2-proxy-backend \
	-o APT::FTPArchive::Release::Label=rke2-proxy-backend \
	-o APT::FTPArchive::Release::Suite=stable \
	-o APT::FTPArchive::Release::Codename=stable \
	-o APT::FTPArchive::Release::Architectures="${arches[*]}" \
	-o APT::FTPArchive::Release::Components=main \
	-o APT::FTPArchive::Release::Description="rke2-proxy-backend packages" \
	release dists/stable >dists/stable/Release.tmp
mv dists/stable/Release.tmp dists/stable/Release
gpg_batch --clearsign --output dists/stable/InRelease dists/stable/Release
gpg_batch --armor --detach-sign --output dists/stable/Release.gpg dists/stable/Release
echo "repo: APT repository in $out (${arches[*]}), signed by $REPO_GPG_FPR"
