# Shared by packaging/test/*.sh (sourced, not run: the Makefile's e2e target
# runs only packaging/test/*.sh, not this subdirectory).
#
# CI installs what these need: see .ci/run's apt-get line.

set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
VERSION=$(cat "$REPO/VERSION")
DIST=$REPO/dist
CACHE=$REPO/.cache
TEST=$(basename "$0" .sh)
export PATH="$PATH:/usr/local/go/bin:/usr/sbin:/sbin"

# shellcheck source=../../../test/kubeproxy/oracle.sh
. "$REPO/test/kubeproxy/oracle.sh"

log() { echo "[$TEST] $*"; }
fail() {
	echo "FAIL: $TEST: $*" >&2
	exit 1
}
pass() { echo "PASS: $TEST: $*"; }

# skip ends the test successfully but loudly: only for a missing
# prerequisite (not root, tool absent), never to hide a failure. The one
# rule: under CI (CI=true, which CI systems set) a skip is a failure, since
# CI runs as root with every tool installed (.ci/run) and must not pass
# green by skipping.
skip() {
	[ "${CI:-}" = true ] && fail "$* (CI=true: CI must meet every prerequisite rather than skip)"
	echo "SKIP: $TEST: $*"
	exit 0
}

need_root() { [ "$(id -u)" = 0 ] || skip "needs root"; }

# tool_package TOOL prints the Debian package that installs TOOL.
tool_package() {
	case $1 in
	apt-ftparchive) echo apt-utils ;;
	createrepo_c) echo createrepo-c ;;
	debootstrap | dnf | lintian | make | openssl | python3 | cloud-init) echo "$1" ;;
	dpkg | dpkg-deb) echo dpkg ;;
	go) echo "golang-go (or Go from go.dev in /usr/local/go)" ;;
	gpg) echo gnupg ;;
	gpgconf) echo gpgconf ;;
	mountpoint | unshare) echo util-linux ;;
	promtool) echo prometheus ;;
	mksquashfs | unsquashfs) echo squashfs-tools ;;
	depmod) echo kmod ;;
	rpm | rpmbuild | rpmsign) echo rpm ;;
	chroot | sha256sum | timeout) echo coreutils ;;
	gzip | tar | ipset | m4 | strace) echo "$1" ;;
	checkmodule | semodule_package) echo checkpolicy ;;
	systemd-nspawn) echo systemd-container ;;
	qemu-system-x86_64) echo qemu-system-x86 ;;
	qemu-system-aarch64) echo qemu-system-arm ;;
	qemu-aarch64-static) echo qemu-user-static ;;
	update-binfmts) echo binfmt-support ;;
	mkfs.ext4 | debugfs) echo e2fsprogs ;;
	mkfs.vfat) echo dosfstools ;;
	mcopy) echo mtools ;;
	mmdebstrap | arch-test) echo "$1" ;;
	*) return 1 ;;
	esac
}

# need_tools TOOL...: skip (see skip) unless every TOOL is installed, naming
# the Debian package to install for each missing one.
need_tools() {
	local t pkg missing=()
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 && continue
		pkg=$(tool_package "$t") || fail "need_tools: no Debian package known for $t: add it to tool_package in packaging/test/lib/common.sh"
		missing+=("$t (apt-get install $pkg)")
	done
	[ ${#missing[@]} = 0 ] || skip "needs $(printf '%s, ' "${missing[@]}" | sed 's/, $//')"
}

# ensure_packages runs `make packages` when dist/ is missing or older than
# any file the packages are made of, so a test never checks stale packages.
ensure_packages() {
	local stamp=$DIST/.stamp newer=""
	if [ -f "$stamp" ]; then
		newer=$(cd "$REPO" && find . \( -path ./dist -o -path ./.cache -o -path ./.git -o -path ./packaging/test \) -prune \
			-o -type f -newer "$stamp" -print 2>/dev/null | head -n 1 || true)
	fi
	if [ ! -f "$stamp" ] || [ -n "$newer" ]; then
		log "building packages (make packages)${newer:+: $newer changed}"
		mkdir -p "$CACHE"
		make -s -C "$REPO" packages >"$CACHE/make-packages.log" 2>&1 || {
			cat "$CACHE/make-packages.log" >&2
			fail "make packages failed"
		}
	fi
	DEB_AMD64=$DIST/rke2-proxy-backend_${VERSION}-1_amd64.deb
	DEB_ARM64=$DIST/rke2-proxy-backend_${VERSION}-1_arm64.deb
	RPM_AMD64=$DIST/rke2-proxy-backend-${VERSION}-1.x86_64.rpm
	RPM_ARM64=$DIST/rke2-proxy-backend-${VERSION}-1.aarch64.rpm
	local f
	for f in "$DEB_AMD64" "$DEB_ARM64" "$RPM_AMD64" "$RPM_ARM64"; do
		[ -f "$f" ] || fail "make packages did not produce $f"
	done
}

# ensure_bookworm_root debootstraps a minimal Debian bookworm once into
# .cache/bookworm-root (about a minute), from the mirror apt uses here.
BOOKWORM_ROOT=$CACHE/bookworm-root
ensure_bookworm_root() {
	need_tools debootstrap
	[ -f "$BOOKWORM_ROOT/.complete" ] && return 0
	local mirror
	mirror=$(apt_mirror)
	log "debootstrap bookworm from $mirror into $BOOKWORM_ROOT (once)"
	mkdir -p "$CACHE"
	rm -rf "$BOOKWORM_ROOT.tmp"
	debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus,iptables,nftables,kmod \
		bookworm "$BOOKWORM_ROOT.tmp" "$mirror" >"$CACHE/debootstrap.log" 2>&1 || {
		tail -n 30 "$CACHE/debootstrap.log" >&2
		fail "debootstrap failed (log: $CACHE/debootstrap.log)"
	}
	touch "$BOOKWORM_ROOT.tmp/.complete"
	rm -rf "$BOOKWORM_ROOT"
	mv "$BOOKWORM_ROOT.tmp" "$BOOKWORM_ROOT"
}

# ensure_derived_root NAME PKGS: .cache/NAME, a copy of the bookworm root
# with PKGS (one space-separated list) apt-get installed, made once and made
# again when PKGS changes (its .complete holds them).
ensure_derived_root() {
	local root=$CACHE/$1 pkgs=$2
	if [ "$(cat "$root/.complete" 2>/dev/null)" != "$pkgs" ]; then
		log "installing $pkgs into a copy of the bookworm root (once): $root"
		rm -rf "$root.tmp"
		cp -a "$BOOKWORM_ROOT" "$root.tmp"
		rm -f "$root.tmp/.complete"
		timeout 900 systemd-nspawn -q --register=no --keep-unit -D "$root.tmp" sh -c \
			"apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $pkgs && apt-get clean" \
			>"$CACHE/$1.log" 2>&1 || {
			tail -n 30 "$CACHE/$1.log" >&2
			fail "apt-get install $pkgs in the guest root failed (log: $CACHE/$1.log)"
		}
		echo "$pkgs" >"$root.tmp/.complete"
		rm -rf "$root"
		mv "$root.tmp" "$root"
	fi
}

# el_deps_stub DIR: builds, in DIR, a noarch RPM that provides the EL
# package names rke2-proxy-backend requires (the Debian roots the dnf tests
# install into have the real tools): DIR/build/RPMS/noarch/*.rpm.
el_deps_stub() {
	mkdir -p "$1"
	cat >"$1/stub.spec" <<'SPEC'
Name: rke2pb-test-deps
Version: 1
Release: 1
Summary: Test scaffolding providing the names rke2-proxy-backend requires
License: Apache-2.0
BuildArch: noarch
Provides: iptables nftables kmod
%description
Stands in for EL's iptables-nft, nftables and kmod in a Debian root that has the real tools.
%files
SPEC
	run_logged "$1/rpmbuild.log" "rpmbuild of the dependency stub failed" \
		rpmbuild -bb --define "_topdir $1/build" "$1/stub.spec"
}

# apt_mirror prints the Debian mirror apt is configured with (deb822 or
# one-line sources), so debootstrap reaches what this machine can reach; no
# mirror is named here, and a machine without one gets a clear failure.
apt_mirror() {
	local m
	m=$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null |
		awk '{print $2}' | grep -v -- '-security' | grep '/debian/*$' | head -n 1 || true)
	if [ -z "$m" ]; then
		m=$(grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
			awk '{print $2}' | grep -v -- '-security' | grep '/debian/*$' | head -n 1 || true)
	fi
	[ -n "$m" ] || fail "no Debian mirror in /etc/apt/sources.list or /etc/apt/sources.list.d/: configure apt's sources (a deb line or a deb822 URIs: ending in /debian) so debootstrap can fetch bookworm"
	echo "$m"
}

# new_overlay DIR [LOWER] mounts a writable overlay of the cached root (or
# of LOWER) at DIR/merged (changes land in DIR/upper); a copy when overlayfs
# is unavailable. Unmounting and removal happen in cleanup_overlays (set as
# EXIT trap).
OVERLAYS=()
new_overlay() {
	local d=$1 lower=${2:-$BOOKWORM_ROOT}
	mkdir -p "$d/upper" "$d/work" "$d/merged"
	if ! mount -t overlay overlay -o "lowerdir=$lower,upperdir=$d/upper,workdir=$d/work" "$d/merged" 2>/dev/null; then
		log "overlayfs unavailable; copying the root"
		cp -a "$lower/." "$d/merged/"
	fi
	OVERLAYS+=("$d")
}
cleanup_overlays() {
	local d
	for d in "${OVERLAYS[@]}"; do
		mountpoint -q "$d/merged" && umount "$d/merged"
		rm -rf "$d"
	done
	return 0
}

# boot_test_setup NAME [guest]: what every nspawn boot test of the .deb
# needs first: root and the tools, current packages, the cached bookworm
# root. Sets arch (Go's name for this machine), deb (its package) and work
# (a directory removed at exit, after the overlays are unmounted). With
# "guest" it also makes the guest: an overlay at R (work/guest/merged) with
# the .deb installed by `dpkg --root`.
boot_test_setup() {
	need_root
	need_tools systemd-nspawn debootstrap dpkg make go timeout mountpoint
	ensure_packages
	ensure_bookworm_root
	arch=$(host_arch)
	deb=$(host_package deb)
	work=$(mktemp -d "/tmp/rke2pb-$1.XXXXXX")
	trap 'cleanup_overlays; rm -rf "$work"' EXIT
	[ "${2:-}" = guest ] || return 0
	new_overlay "$work/guest"
	R=$work/guest/merged
	log "installing $(basename "$deb") with dpkg --root"
	run_logged "$work/dpkg.log" "dpkg --root -i failed" dpkg --root "$R" -i "$deb"
}

# build_standin OUT [VERSION] builds the RKE2 stand-in (packaging/test/standin)
# for this machine at OUT; VERSION (e.g. v1.36.3+rke2r1) is the RKE2 release
# it plays instead of its default.
build_standin() {
	local ldflags=""
	[ -n "${2:-}" ] && ldflags="-X main.Version=$2"
	(cd "$REPO" && CGO_ENABLED=0 GOARCH=$(host_arch) go build -trimpath -ldflags "$ldflags" -o "$1" ./packaging/test/standin) ||
		fail "go build of packaging/test/standin failed"
}

# nspawn_boot ROOT LOG SECONDS [KERNEL-CMDLINE-WORDS...] boots ROOT once with
# systemd-nspawn as a node boots (its own network namespace, as a reboot gets
# fresh netfilter tables; read-only console; no machined here), the console
# in LOG, ended after SECONDS. It never fails: the guest's result file says
# how the boot went, and a missing one is the caller's failure to report.
nspawn_boot() {
	local root=$1 log=$2 limit=$3
	shift 3
	timeout -k 10 "$limit" systemd-nspawn --boot --private-network --register=no --keep-unit \
		--console=read-only -D "$root" -- "$@" >"$log" 2>&1 || true
}

# guest_boot ROOT RESULT LOG SECONDS WHAT [KERNEL-CMDLINE-WORDS...] is one
# test boot: RESULT (a host path under ROOT, the guest's result file) is
# removed, ROOT boots with nspawn_boot, and a guest that wrote no result
# fails the test with its console's tail. GUEST_TOOK is the boot's seconds;
# the caller reads the verdict (guest_verdict).
guest_boot() {
	local root=$1 result=$2 log=$3 limit=$4 what=$5 start=$SECONDS
	shift 5
	rm -f "$result"
	nspawn_boot "$root" "$log" "$limit" "$@"
	GUEST_TOOK=$((SECONDS - start))
	if [ ! -f "$result" ]; then
		tail -n 80 "$log" >&2
		fail "$what: the guest wrote no result in ${GUEST_TOOK}s (timed out, or its test unit never ran)"
	fi
}

# guest_test_unit ROOT NAME WHAT installs NAME.service in the guest root
# ROOT: a oneshot that runs /usr/local/sbin/NAME (the test's in-guest
# assertions, which write their result and power the guest off) at every
# boot, and masks console-getty so no login prompt waits on the read-only
# console. WHAT names the test in the unit's description. The assertions
# source guest-prelude.sh (installed here) for their result file and verbs.
guest_test_unit() {
	local r=$1 name=$2 what=$3
	install -D -m 0644 "$REPO/packaging/test/lib/guest-prelude.sh" "$r/usr/local/lib/boot-test/guest-prelude.sh"
	mkdir -p "$r/etc/systemd/system/multi-user.target.wants"
	cat >"$r/etc/systemd/system/$name.service" <<UNIT
[Unit]
Description=rke2-proxy-backend $what test (asserts, then powers off)
After=basic.target

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/$name
StandardOutput=journal+console
StandardError=journal+console

[Install]
WantedBy=multi-user.target
UNIT
	ln -sf "/etc/systemd/system/$name.service" "$r/etc/systemd/system/multi-user.target.wants/$name.service"
	ln -sf /dev/null "$r/etc/systemd/system/console-getty.service"
}

# host_arch prints the Go name of this machine's architecture, so tests run
# the package built for it.
host_arch() {
	case "$(uname -m)" in
	x86_64) echo amd64 ;;
	aarch64 | arm64) echo arm64 ;;
	*) skip "no package is built for $(uname -m)" ;;
	esac
}

# host_package deb|rpm prints the package built for this machine's
# architecture.
host_package() {
	case $1-$(host_arch) in
	deb-amd64) echo "$DEB_AMD64" ;;
	deb-arm64) echo "$DEB_ARM64" ;;
	rpm-amd64) echo "$RPM_AMD64" ;;
	rpm-arm64) echo "$RPM_ARM64" ;;
	esac
}

# build_next_version FORMAT OUTDIR packages the already staged dist/build
# again as version $VERSION.1 whose example config has one line more: the
# upgrade that met dpkg's conffile question when the config was a conffile
# (and left .rpmnew files). Prints its path.
build_next_version() {
	local format=$1 out=$2
	mkdir -p "$out"
	cp "${PACKAGING_CONFIG:-$REPO/packaging/config.yaml}" "$out/config.yaml"
	echo "# a line only the next version's example has" >>"$out/config.yaml"
	(cd "$REPO" && ARCH=$(host_arch) VERSION=$VERSION.1 BUILD=dist/build CONFIG=$out/config.yaml \
		.cache/bin/nfpm-v2.45.2/nfpm package --config packaging/nfpm.yaml --packager "$format" --target "$out/" >/dev/null) ||
		fail "nfpm could not build the $format upgrade package"
	ls "$out"/*."$format"
}

# BASE_COMMIT is the tree the lifecycle's upgrade-from-base case upgrades
# from: the last layout whose packages shipped the config as a conffile
# (deb) and %config(noreplace) (rpm), so its nodes carry that ownership.
BASE_COMMIT=fc5f35d444639ef0fb072c77b6dc2007177763b3

# ensure_base_packages COMMIT sets BASE_DEB and BASE_RPM to this machine's
# packages built from COMMIT: a `git worktree add` of it under /tmp, `make
# packages` there (sharing this tree's .cache for nfpm), only the host's
# .deb and .rpm kept in .cache/base-packages/COMMIT. Built once per commit
# (minutes), under a lock so parallel tests build it once.
ensure_base_packages() {
	local commit=$1 dir=$CACHE/base-packages/$1
	if [ ! -f "$dir/.complete" ]; then
		git -C "$REPO" cat-file -e "$commit^{commit}" 2>/dev/null ||
			fail "commit $commit is not in this clone (a shallow clone? git fetch --unshallow): the upgrade-from-base case builds its packages"
		mkdir -p "$CACHE"
		(
			flock 9
			[ -f "$dir/.complete" ] && exit 0
			tree=$(mktemp -d "/tmp/rke2pb-base.XXXXXX")
			trap 'git -C "$REPO" worktree remove --force "$tree" >/dev/null 2>&1; rm -rf "$tree"; git -C "$REPO" worktree prune' EXIT
			log "building the packages of ${commit:0:12} (git worktree in $tree, make packages; once per commit)"
			git -C "$REPO" worktree add --detach "$tree" "$commit" >/dev/null 2>&1 || fail "git worktree add of $commit failed"
			ln -s "$CACHE" "$tree/.cache"
			make -s -C "$tree" packages >"$CACHE/make-packages-base.log" 2>&1 || {
				tail -n 30 "$CACHE/make-packages-base.log" >&2
				fail "make packages at $commit failed (log: $CACHE/make-packages-base.log)"
			}
			rm -rf "$dir"
			mkdir -p "$dir"
			cp "$tree"/dist/*_"$(host_arch)".deb "$tree"/dist/*."$(uname -m)".rpm "$dir/" || fail "make packages at $commit left no $(host_arch) .deb or .rpm"
			touch "$dir/.complete"
		) 9>"$CACHE/base-packages.lock" || exit 1
	fi
	BASE_DEB=$(ls "$dir"/*.deb)
	BASE_RPM=$(ls "$dir"/*.rpm)
}

# expected_files prints, sorted, every path the packages must install
# (besides format-specific license/doc files, the RPM's %ghost config and
# the owned /etc/rke2-proxy-backend directory). The config itself is the
# postinst's, made from the example.
expected_files() {
	local u
	{
		echo /usr/share/rke2-proxy-backend/config.yaml.example
		echo /usr/bin/rke2-proxy-backend
		echo /usr/bin/kubectl-proxy_backend
		echo /usr/libexec/rke2-proxy-backend-generator
		echo /usr/lib/systemd/system-generators/rke2-proxy-backend-generator
		for u in "$REPO"/units/*.service; do echo "/usr/lib/systemd/system/$(basename "$u")"; done
		echo /usr/share/bash-completion/completions/rke2-proxy-backend
		echo /usr/share/zsh/vendor-completions/_rke2-proxy-backend
		echo /usr/share/fish/vendor_completions.d/rke2-proxy-backend.fish
		echo /usr/share/doc/rke2-proxy-backend/changelog.gz
		echo /usr/share/man/man1/rke2-proxy-backend.1.gz
		echo /usr/share/man/man1/rke2-proxy-backend-version.1.gz
		echo /usr/share/man/man5/rke2-proxy-backend-config.5.gz
		echo /usr/share/rke2-proxy-backend/monitoring/node-problem-detector/rke2-proxy-backend.json
		echo /usr/share/rke2-proxy-backend/monitoring/prometheus/rke2-proxy-backend.rules.yaml
		echo /usr/share/rke2-proxy-backend/monitoring/prometheus/rke2-proxy-backend.prometheusrule.yaml
		echo /usr/share/rke2-proxy-backend/monitoring/grafana/rke2-proxy-backend-fleet.json
	} | sort
}

# assert_config_kept ROOT COPY WHAT: after WHAT, ROOT's operator config is
# byte for byte COPY (mode and mtime too), and no .dpkg-*, .rpmnew or
# .rpmsave file sits beside it.
assert_config_kept() {
	local r=$1 copy=$2 what=$3 cfg=$1/etc/rke2-proxy-backend/config.yaml beside
	cmp -s "$copy" "$cfg" || fail "$what changed the operator's config: $(diff "$copy" "$cfg" 2>&1 | head -n 5 | tr '\n' ' ')"
	[ "$(stat -c '%a %Y' "$copy")" = "$(stat -c '%a %Y' "$cfg")" ] || fail "$what rewrote the operator's config (mode or mtime changed)"
	beside=$(ls -A "$r/etc/rke2-proxy-backend" | grep -v -x -e config.yaml -e config.yaml.before-switch || true)
	[ -z "$beside" ] || fail "$what left beside the config: $beside"
}

# run_logged LOG WHAT CMD... runs CMD with its output in LOG; when CMD
# fails, it shows LOG and fails the test with WHAT.
run_logged() {
	local log=$1 what=$2
	shift 2
	"$@" >"$log" 2>&1 || {
		cat "$log" >&2
		fail "$what"
	}
}

# expect_refused LOG REASON ACCEPTED WRONG CMD... runs CMD with its output in
# LOG and fails the test unless CMD fails for the reason REASON (an extended
# regexp, case-insensitive) matches in LOG: ACCEPTED says what CMD's success
# means, WRONG what a failure for another reason means.
expect_refused() {
	local log=$1 reason=$2 accepted=$3 wrong=$4
	shift 4
	if "$@" >"$log" 2>&1; then
		cat "$log" >&2
		fail "$accepted"
	fi
	grep -qiE -- "$reason" "$log" || {
		cat "$log" >&2
		fail "$wrong"
	}
}

# guest_verdict RESULT DIAG WHAT [MORE] shows the result file a booted
# guest's assertions wrote and fails the test (WHAT, then MORE) unless they
# all held: a FAIL line, or no DONE line (the guest stopped before its last
# check). DIAG, the guest's diagnostics, is shown when there is one.
guest_verdict() {
	sed 's/^/    /' "$1"
	if grep -q '^FAIL' "$1" || ! grep -q '^DONE' "$1"; then
		[ -f "$2" ] && sed 's/^/    | /' "$2" >&2
		fail "$3: assertions failed inside the guest (above)${4:-}"
	fi
}

# boot_guest_test ROOT NAME SECONDS WHAT runs the in-guest assertions
# /usr/local/sbin/NAME (already written under ROOT) at one boot of ROOT and
# fails the test, naming WHAT, unless they all passed. Sets result (the
# guest's result file, a host path).
boot_guest_test() {
	local r=$1 name=$2 limit=$3 what=$4
	chmod 0755 "$r/usr/local/sbin/$name"
	guest_test_unit "$r" "$name" "$name"
	result=$r/var/lib/boot-test/result-1
	guest_boot "$r" "$result" "$work/console.log" "$limit" "$name"
	guest_verdict "$result" "$r/var/lib/boot-test/diag-1" "$what"
}

# assert_contains HAYSTACK_FILE NEEDLE WHAT
assert_contains() {
	grep -qF -- "$2" "$1" || {
		sed 's/^/    /' "$1" >&2
		fail "$3: expected to find \"$2\""
	}
}

# install_kube_proxy_oracle STANDIN ROOT puts the stand-in's kube-proxy
# into a guest root: the oracle (kube-proxy's real proxier) built for the
# Kubernetes minor of the stand-in's version (rke2's or k3s's --version),
# where the stand-in runs it.
# internal/testkit/oracle caches the build in .cache/oracle.
install_kube_proxy_oracle() {
	local standin=$1 root=$2 minor oracle
	minor=$("$standin" --version | sed -n 's/^\(rke2\|k3s\) version \(v[0-9]*\.[0-9]*\)\..*/\2/p')
	[ -n "$minor" ] || fail "cannot read the Kubernetes minor from the stand-in's --version"
	log "building the kube-proxy oracle for Kubernetes $minor (minutes when not cached)"
	oracle=$(cd "$REPO" && oracle_binary "$minor") || fail "no kube-proxy oracle for $minor (is it in internal/testkit/oracle.Minors? run: go test -v -run TestBinaries ./internal/testkit/oracle)"
	install -D -m 0755 "$oracle" "$root/usr/local/lib/rke2-standin/kubeproxy-oracle"
}

# plant_removable_state ROOT CFG leaves what a running node has before its
# package is removed: our metrics in a custom verify.textfile_dir (set in
# CFG, the package's config under ROOT) and in the default one, another
# exporter's textfile beside them, and bench's state (hostfs.BenchFile).
plant_removable_state() {
	local r=$1 cfg=$2 d
	sed -i 's|^  textfile_dir: .*|  textfile_dir: /srv/metrics|' "$cfg"
	grep -qx '  textfile_dir: /srv/metrics' "$cfg" || fail "could not set verify.textfile_dir in $cfg"
	for d in /srv/metrics /var/lib/prometheus/node-exporter; do
		mkdir -p "$r$d"
		echo 'rke2_proxy_backend_verify_ok 1' >"$r$d/rke2_proxy_backend.prom"
		echo 'rke2_proxy_backend_drift 0' >"$r$d/rke2_proxy_backend_watch.prom"
		echo 'rke2_proxy_backend_host_conflicts 0' >"$r$d/rke2_proxy_backend_fleet.prom"
	done
	mkdir -p "$r/etc/kubernetes/node-feature-discovery/features.d"
	echo 'feature.node.kubernetes.io/rke2-proxy-backend.backend=nftables' >"$r/etc/kubernetes/node-feature-discovery/features.d/rke2-proxy-backend"
	echo 'node_other_metric 1' >"$r/srv/metrics/other.prom"
	mkdir -p "$r/var/lib/rke2-proxy-backend"
	echo '{}' >"$r/var/lib/rke2-proxy-backend/bench.json"
}

# assert_metrics_removed ROOT WHAT: WHAT (remove, erase) took our metrics
# from both textfile dirs and left the other exporter's.
assert_metrics_removed() {
	local r=$1 what=$2 d left
	for d in /srv/metrics /var/lib/prometheus/node-exporter; do
		left=$(ls -A "$r$d" | grep rke2_proxy_backend || true)
		[ -z "$left" ] || fail "$what left our metrics in $d: $left"
	done
	[ -f "$r/srv/metrics/other.prom" ] || fail "$what deleted another exporter's textfile"
	[ ! -e "$r/etc/kubernetes/node-feature-discovery/features.d/rke2-proxy-backend" ] || fail "$what left our node-feature-discovery labels"
}
