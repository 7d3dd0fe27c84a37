#!/usr/bin/env bash
# certify --root IMAGE on image roots built from a real Debian kernel: the
# linux-image-*-cloud-ARCH package Debian's archive serves today
# (apt-get download, dpkg-deb -x, depmod -b), three ways:
#   stock          every backend's modules: exit 0, auto picks the image's
#                  iptables flavour (nft), the verdict is recorded in the image
#   no nf_tables   nf_tables.ko deleted, depmod run (issue 30's NAS image):
#                  a config asking for iptables-nft exits 1 naming the module
#                  and the package that ships it; auto exits 0 on legacy
#   no ip_tables   the legacy tables' ip_tables.ko deleted: a config asking
#                  for iptables-legacy exits 1; auto exits 0 on iptables-nft
# The image's RKE2 is the stand-in built for the OTHER architecture, so it
# cannot run here: its version must come from its bytes. Its nft and
# iptables versions come from the image's dpkg status (bookworm's), then
# from an RPM database made with this machine's rpm. Last, the image booted
# on another kernel (a /proc/sys/kernel/osrelease planted under the root)
# makes detect say the machine differs from its certificate.
#
# Needs: apt-get, dpkg-deb, depmod (kmod), rpm, rpmbuild, go; no root.
# About 60 MB downloaded once into .cache/kernels.
source "$(dirname "$0")/lib/common.sh"
need_tools dpkg-deb depmod rpm rpmbuild go timeout
arch=$(host_arch)
other=arm64
[ "$arch" = arm64 ] && other=amd64
work=$(mktemp -d /tmp/rke2pb-certify.XXXXXX)
trap 'rm -rf "$work"' EXIT

# The kernel: whatever linux-image-cloud-ARCH depends on now, cached.
meta=linux-image-cloud-$arch
pkg=$(apt-cache depends "$meta" 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9].*\)$/\1/p' | head -n 1)
[ -n "$pkg" ] || { apt-get update -qq >/dev/null 2>&1 || true; pkg=$(apt-cache depends "$meta" 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9].*\)$/\1/p' | head -n 1); }
[ -n "$pkg" ] || skip "apt-cache knows no $meta (apt-get update, with Debian bookworm in apt's sources)"
release=${pkg#linux-image-}
mkdir -p "$CACHE/kernels"
deb=$(ls "$CACHE/kernels/${pkg}_"*.deb 2>/dev/null | head -n 1 || true)
if [ -z "$deb" ]; then
	log "downloading $pkg (once, into $CACHE/kernels)"
	(cd "$work" && apt-get download "$pkg" >"$work/download.log" 2>&1) || {
		cat "$work/download.log" >&2
		fail "apt-get download $pkg failed"
	}
	mv "$work/${pkg}_"*.deb "$CACHE/kernels/"
	deb=$(ls "$CACHE/kernels/${pkg}_"*.deb | head -n 1)
fi
log "kernel $release from $(basename "$deb")"

IMG=$work/image
dpkg-deb -x "$deb" "$IMG"
[ -f "$IMG/boot/config-$release" ] && [ -d "$IMG/lib/modules/$release" ] || fail "$(basename "$deb") has no /boot/config-$release or /lib/modules/$release"
depmod -b "$IMG" "$release" || fail "depmod -b on the stock image failed"

# Userspace as a bookworm image has it: dpkg's status, the nft alternative.
if [ -f "$CACHE/bookworm-root/var/lib/dpkg/status" ]; then
	install -D -m 0644 "$CACHE/bookworm-root/var/lib/dpkg/status" "$IMG/var/lib/dpkg/status"
else
	install -d "$IMG/var/lib/dpkg"
	printf 'Package: iptables\nStatus: install ok installed\nVersion: 1.8.9-2\n\nPackage: nftables\nStatus: install ok installed\nVersion: 1.0.6-2+deb12u2\n\n' >"$IMG/var/lib/dpkg/status"
fi
want_nft=$(sed -n '/^Package: nftables$/,/^$/s/^Version: \([0-9.]*\).*/\1/p' "$IMG/var/lib/dpkg/status")
mkdir -p "$IMG/usr/sbin" "$IMG/etc/alternatives"
touch "$IMG/usr/sbin/xtables-nft-multi"
ln -s xtables-nft-multi "$IMG/usr/sbin/iptables-nft"
ln -s /usr/sbin/iptables-nft "$IMG/etc/alternatives/iptables"
ln -s /etc/alternatives/iptables "$IMG/usr/sbin/iptables"

# RKE2 as its tarball installs it, built for the other architecture.
install -D -m 0644 "$REPO/internal/testkit/testhost/units/rke2-server.service" "$IMG/usr/local/lib/systemd/system/rke2-server.service"
(cd "$REPO" && CGO_ENABLED=0 GOARCH=$other go build -trimpath -ldflags "-X main.Version=v1.34.4+rke2r1" -o "$IMG/usr/local/bin/rke2" ./packaging/test/standin) ||
	fail "go build of the stand-in for $other failed"
(cd "$REPO" && CGO_ENABLED=0 go build -trimpath -o "$work/rke2-proxy-backend" ./cmd/rke2-proxy-backend) || fail "go build of rke2-proxy-backend failed"
tool=$work/rke2-proxy-backend
record=$IMG/usr/lib/rke2-proxy-backend/certified.json

# certify_expect WHAT CODE [ARGS...]: certify the image, expect exit CODE;
# the text is in $work/out, the record's JSON in $work/json.
certify_expect() {
	local what=$1 code=$2 rc=0
	shift 2
	"$tool" --root "$IMG" certify "$@" >"$work/out" 2>"$work/err" || rc=$?
	if [ "$rc" != "$code" ]; then
		cat "$work/out" "$work/err" >&2
		fail "$what: certify exited $rc, want $code"
	fi
	"$tool" --root "$IMG" certify --no-record -o json "$@" >"$work/json" 2>/dev/null || true
	log "$what: exit $rc: $(head -n 1 "$work/out")"
}
json_has() { grep -qF -- "$1" "$work/json" || { cat "$work/json" >&2; fail "$2: the verdict's JSON lacks $1"; }; }
set_config() {
	mkdir -p "$IMG/etc/rke2-proxy-backend"
	if [ -n "$1" ]; then echo "backend: $1" >"$IMG/etc/rke2-proxy-backend/config.yaml"; else rm -f "$IMG/etc/rke2-proxy-backend/config.yaml"; fi
}
# without MODULE: delete its file and run depmod, as a minimal image does;
# the file is kept aside for the next case.
without() {
	local f
	f=$(find "$IMG/lib/modules/$release" -name "$1.ko*" | head -n 1)
	[ -n "$f" ] || fail "the kernel package has no $1 module file"
	mkdir -p "$work/aside"
	mv "$f" "$work/aside/" && echo "$f" >"$work/aside/$1.path"
	depmod -b "$IMG" "$release" 2>/dev/null || fail "depmod after deleting $1 failed"
	grep -q "/$1\.ko" "$IMG/lib/modules/$release/modules.dep" && fail "modules.dep still lists $1 after depmod"
	return 0
}
restore() {
	mv "$work/aside/$(basename "$(cat "$work/aside/$1.path")")" "$(cat "$work/aside/$1.path")"
	depmod -b "$IMG" "$release" || fail "depmod after restoring $1 failed"
}

# 1. stock
set_config ""
certify_expect "stock kernel" 0
assert_contains "$work/out" "verdict: runnable (exit 0): the image can run iptables-nft (auto-detection picks it) on kernel $release" "stock kernel"
[ -f "$record" ] || fail "certify recorded nothing at /usr/lib/rke2-proxy-backend/certified.json"
cmp -s "$record" "$work/json" || fail "the record differs from certify -o json"
json_has '"version": "v1.34.4+rke2r1"' "stock kernel (the $other stand-in's version, read without running it)"
json_has "\"nft_version\": \"$want_nft\"" "stock kernel (nft from the image's dpkg status)"
for b in iptables-legacy iptables-nft; do
	sed -n "/\"name\": \"$b\"/,/}/p" "$work/json" | grep -q '"runnable": true' || fail "stock kernel: $b is not runnable"
done
stock=$(sha256sum "$record" | cut -d' ' -f1)
certify_expect "stock kernel, again" 0
[ "$(sha256sum "$record" | cut -d' ' -f1)" = "$stock" ] || fail "certifying the same image twice gave different records"

# 2. no nf_tables
without nf_tables
set_config iptables-nft
certify_expect "no nf_tables, config iptables-nft" 1
assert_contains "$work/out" "missing (kernel-module): nf_tables" "no nf_tables"
assert_contains "$work/out" "linux-image-$release" "no nf_tables (the package that ships it)"
json_has '"verdict": "not-runnable"' "no nf_tables"
set_config ""
certify_expect "no nf_tables, auto" 0
assert_contains "$work/out" "first boot runs: iptables-legacy" "no nf_tables, auto"
restore nf_tables

# 3. no ip_tables
without ip_tables
set_config iptables-legacy
certify_expect "no ip_tables, config iptables-legacy" 1
assert_contains "$work/out" "missing (kernel-module): legacy iptables (ip_tables)" "no ip_tables"
set_config ""
certify_expect "no ip_tables, auto" 0
assert_contains "$work/out" "first boot runs: iptables-nft" "no ip_tables, auto"
restore ip_tables

# 4. versions from an RPM database (made with this machine's rpm)
mkdir -p "$work/rpmbuild/SPECS"
cat >"$work/rpmbuild/SPECS/nftables.spec" <<'SPEC'
Name: nftables
Version: 1.0.9
Release: 1
Summary: stands in for the image's nftables package (versions only)
License: MIT
BuildArch: noarch
%description
A package of that name and version in the image's RPM database.
%files
SPEC
rpmbuild -bb --quiet --define "_topdir $work/rpmbuild" "$work/rpmbuild/SPECS/nftables.spec" >"$work/rpmbuild.log" 2>&1 || {
	cat "$work/rpmbuild.log" >&2
	fail "rpmbuild of the version stand-in failed"
}
mv "$IMG/var/lib/dpkg/status" "$work/dpkg-status"
mkdir -p "$IMG/usr/lib/sysimage/rpm"
rpm --root "$IMG" --dbpath /usr/lib/sysimage/rpm --initdb || fail "rpm --initdb in the image failed"
rpm --root "$IMG" --dbpath /usr/lib/sysimage/rpm -i --justdb --nodeps --ignorearch "$work"/rpmbuild/RPMS/noarch/nftables-1.0.9-1.noarch.rpm ||
	fail "rpm -i --justdb into the image's database failed"
certify_expect "RPM database" 0 --no-record
json_has '"nft_version": "1.0.9"' "RPM database"
json_has "the image's RPM database /usr/lib/sysimage/rpm (package nftables)" "RPM database"
rm -rf "$IMG/usr/lib/sysimage"
mv "$work/dpkg-status" "$IMG/var/lib/dpkg/status"

# 5. booted on another kernel: detect says so, once
certify_expect "stock kernel, recorded for the boot" 0
mkdir -p "$IMG/proc/sys/kernel"
echo "6.12.0-0-other" >"$IMG/proc/sys/kernel/osrelease"
"$tool" --root "$IMG" detect >"$work/detect" 2>&1 || true
n=$(grep -c "This machine differs from what its image was certified for" "$work/detect" || true)
[ "$n" = 1 ] || { cat "$work/detect" >&2; fail "detect on another kernel said the difference $n times, want once"; }
assert_contains "$work/detect" "it boots kernel 6.12.0-0-other, the image was certified for $release" "detect on another kernel"
pass "certify judged $release stock, without nf_tables and without ip_tables; the record was written, reproducible, and compared at boot"
