#!/usr/bin/env bash
# build.sh DIST OUT (run by `make repo`): the APT and YUM/DNF repositories
# for the packages in DIST, signed with the builder's key, into OUT:
#   OUT/apt/                          the APT repository (apt.sh)
#   OUT/yum/{x86_64,aarch64}/         the YUM/DNF repositories (yum.sh)
#   OUT/rke2-proxy-backend.gpg        public key, binary: a node's
#                                     /usr/share/keyrings/rke2-proxy-backend.gpg
#   OUT/rke2-proxy-backend.asc        public key, armored: rpm --import, gpgkey=
#   OUT/yum/rke2-proxy-backend.repo   the .repo file for /etc/yum.repos.d/
#   OUT/apt/rke2-proxy-backend.list   the APT source line
# Publish OUT at a URL and replace REPO_URL in the last two (or set
# REPO_URL when building).
source "$(dirname "$0")/lib.sh"
[ $# = 2 ] || die "usage: build.sh DIST OUT"
dist=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$dist/.stamp" ] || die "$dist has no finished build: run make packages first"
need gpg gnupg
check_key
url=${REPO_URL:-https://REPO_URL}

rm -rf "$out"
mkdir -p "$out"
"$here/apt.sh" "$dist" "$out/apt"
"$here/yum.sh" "$dist" "$out/yum"
export_key "$out/rke2-proxy-backend.gpg"
export_key "$out/rke2-proxy-backend.asc" --armor
cp "$out/rke2-proxy-backend.asc" "$out/yum/RPM-GPG-KEY-rke2-proxy-backend"

echo "deb [signed-by=/usr/share/keyrings/rke2-proxy-backend.gpg] $url/apt stable main" >"$out/apt/rke2-proxy-backend.list"
# $basearch is x86_64 or aarch64 on the node: dnf picks the architecture.
cat >"$out/yum/rke2-proxy-backend.repo" <<REPO
[rke2-proxy-backend]
name=rke2-proxy-backend
baseurl=$url/yum/\$basearch
enabled=1
gpgcheck=1
repo_gpgcheck=1
gpgkey=file:///etc/pki/rpm-gpg/RPM-GPG-KEY-rke2-proxy-backend
REPO
echo "repo: done: $out (public key $out/rke2-proxy-backend.gpg, fingerprint $REPO_GPG_FPR)"
