#!/usr/bin/env bash
# build.sh ARCH VERSION BUILD OUT: the systemd system extension of one
# architecture (ARCH as Go names it: amd64, arm64) as a squashfs image at
# OUT, from what `make packages` staged in BUILD (the binaries per
# architecture, the man pages). Run by `make sysext`.
#
# usr/ only, as an extension merges /usr (and /opt): the binary, the
# generator link, the units, the man pages, the example config (the node's
# /etc comes from Ignition or cloud-init: packaging/cloud-init/sysext/,
# packaging/sysext/butane.yaml), and usr/lib/extension-release.d's release
# file:
#   ID=_any            the binary is static (CGO_ENABLED=0) and reads the
#                      node through files and netlink: it runs on any
#                      distribution's /usr, so the extension is not tied to
#                      one OS's ID or SYSEXT_LEVEL (Flatcar, SLE Micro /
#                      Elemental, Fedora CoreOS, Debian alike); systemd 252+
#                      accepts _any
#   ARCHITECTURE=      systemd's name (x86-64, arm64): systemd refuses to
#                      merge another architecture's extension
#   EXTENSION_RELOAD_MANAGER=1  systemd 255+ reloads itself after merging
#                      it, which runs the generator; 252-254 need the
#                      reload unit the examples install in /etc
#
# Reproducible: every file dated SOURCE_DATE_EPOCH, owned by root, modes
# set here; mksquashfs with SOURCE_DATE_EPOCH, one processor, no xattrs.
set -euo pipefail
arch=$1 version=$2 build=$3 out=$4
repo=$(cd "$(dirname "$0")/../.." && pwd)
: "${SOURCE_DATE_EPOCH:?SOURCE_DATE_EPOCH must be set (the last commit time; the Makefile sets it)}"
case $arch in
amd64) sdarch=x86-64 ;;
arm64) sdarch=arm64 ;;
*) echo "build.sh: no systemd architecture name for $arch" >&2 && exit 2 ;;
esac
command -v mksquashfs >/dev/null || { echo "build.sh: mksquashfs is not installed (apt-get install squashfs-tools)" >&2 && exit 1; }
[ -x "$build/$arch/rke2-proxy-backend" ] || { echo "build.sh: no $build/$arch/rke2-proxy-backend: run make packages first" >&2 && exit 1; }

tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
u=$tree/usr
install -D -m 0755 "$build/$arch/rke2-proxy-backend" "$u/bin/rke2-proxy-backend"
install -D -m 0755 "$build/$arch/kubectl-proxy_backend" "$u/bin/kubectl-proxy_backend"
install -D -m 0755 "$build/$arch/rke2-proxy-backend-generator" "$u/libexec/rke2-proxy-backend-generator"
mkdir -p "$u/lib/systemd/system-generators"
ln -s ../../../libexec/rke2-proxy-backend-generator "$u/lib/systemd/system-generators/rke2-proxy-backend-generator"
install -D -m 0644 -t "$u/lib/systemd/system" "$repo"/units/*.service
install -D -m 0644 -t "$u/share/man/man1" "$build"/docs/man1/*.1.gz
install -D -m 0644 -t "$u/share/man/man5" "$build"/docs/man5/*.5.gz
install -D -m 0644 "${CONFIG:-$repo/packaging/config.yaml}" "$u/share/doc/rke2-proxy-backend/config.yaml.example"
install -D -m 0644 "$repo/LICENSE" "$u/share/doc/rke2-proxy-backend/LICENSE"
install -D -m 0644 "$repo/packaging/sysext/rke2-proxy-backend-sysext-reload.service" "$u/share/rke2-proxy-backend/sysext/rke2-proxy-backend-sysext-reload.service"
mkdir -p "$u/lib/extension-release.d"
printf 'ID=_any\nARCHITECTURE=%s\nEXTENSION_RELOAD_MANAGER=1\nVERSION_ID=%s\n' "$sdarch" "$version" \
	>"$u/lib/extension-release.d/extension-release.rke2-proxy-backend"
chmod 0644 "$u/lib/extension-release.d/extension-release.rke2-proxy-backend"
find "$tree" -type d -exec chmod 0755 {} +
find "$tree" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

mkdir -p "$(dirname "$out")"
rm -f "$out"
# mksquashfs takes SOURCE_DATE_EPOCH (exported) for every time it writes.
SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH mksquashfs "$tree" "$out" -quiet -no-progress -noappend -all-root -no-xattrs -comp xz -processors 1 >/dev/null
touch -d "@$SOURCE_DATE_EPOCH" "$out"
