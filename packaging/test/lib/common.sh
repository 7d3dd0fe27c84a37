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

log() { echo "[$TEST] $*"; }
# skip ends the test successfully but loudly: only for a missing
# prerequisite (not root, tool absent), never to hide a failure.
skip() {
	echo "SKIP: $TEST: $*"
	exit 0
}
fail() {
	echo "FAIL: $TEST: $*" >&2
	exit 1
}
pass() { echo "PASS: $TEST: $*"; }

need_root() { [ "$(id -u)" = 0 ] || skip "needs root"; }
need_tools() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 || skip "needs $t (apt-get install the Debian package that has it)"
	done
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

# apt_mirror prints the Debian mirror apt is configured with (deb822 or
# one-line sources), so debootstrap reaches what this machine can reach.
apt_mirror() {
	local m
	m=$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null |
		awk '{print $2}' | grep -v -- '-security' | grep '/debian/*$' | head -n 1 || true)
	if [ -z "$m" ]; then
		m=$(grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
			awk '{print $2}' | grep -v -- '-security' | grep '/debian/*$' | head -n 1 || true)
	fi
	echo "${m:-http://deb.debian.org/debian}"
}

# new_overlay DIR mounts a writable overlay of the cached root at DIR/merged
# (changes land in DIR/upper); a copy when overlayfs is unavailable.
# Unmounting and removal happen in cleanup_overlays (set as EXIT trap).
OVERLAYS=()
new_overlay() {
	local d=$1
	mkdir -p "$d/upper" "$d/work" "$d/merged"
	if ! mount -t overlay overlay -o "lowerdir=$BOOKWORM_ROOT,upperdir=$d/upper,workdir=$d/work" "$d/merged" 2>/dev/null; then
		log "overlayfs unavailable; copying the root"
		cp -a "$BOOKWORM_ROOT/." "$d/merged/"
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

# host_arch prints the Go name of this machine's architecture, so tests run
# the package built for it.
host_arch() {
	case "$(uname -m)" in
	x86_64) echo amd64 ;;
	aarch64 | arm64) echo arm64 ;;
	*) skip "no package is built for $(uname -m)" ;;
	esac
}

# build_variant FORMAT VERSION CONFIG OUTDIR packages the already staged
# dist/build again with another version and example config: an "upgrade"
# for the conffile / %config(noreplace) checks.
build_variant() {
	local format=$1 version=$2 config=$3 out=$4
	mkdir -p "$out"
	(cd "$REPO" && ARCH=$(host_arch) VERSION=$version BUILD=dist/build CONFIG=$config \
		.cache/bin/nfpm-v2.45.2/nfpm package --config packaging/nfpm.yaml --packager "$format" --target "$out/" >/dev/null) ||
		fail "nfpm could not build the $format upgrade package"
	ls "$out"/*."$format"
}

# expected_files prints, sorted, every path the packages must install
# (besides format-specific license/doc files).
expected_files() {
	local u
	{
		echo /etc/rke2-proxy-backend/config.yaml
		echo /usr/bin/rke2-proxy-backend
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
	} | sort
}

# assert_contains HAYSTACK_FILE NEEDLE WHAT
assert_contains() {
	grep -qF -- "$2" "$1" || {
		sed 's/^/    /' "$1" >&2
		fail "$3: expected to find \"$2\""
	}
}

# install_kube_proxy_oracle STANDIN ROOT puts the RKE2 stand-in's kube-proxy
# into a guest root: the oracle (kube-proxy's real proxier) built for the
# Kubernetes minor of the stand-in's version, where the stand-in runs it.
# internal/oracle caches the build in .cache/oracle.
install_kube_proxy_oracle() {
	local standin=$1 root=$2 minor oracle
	minor=$("$standin" --version | sed -n 's/^rke2 version \(v[0-9]*\.[0-9]*\)\..*/\1/p')
	[ -n "$minor" ] || fail "cannot read the Kubernetes minor from the stand-in's rke2 --version"
	log "building the kube-proxy oracle for Kubernetes $minor (minutes when not cached)"
	oracle=$(cd "$REPO" && go test -count=1 -timeout 0 -v -run "^TestBinaries\$/^$minor\$" ./internal/oracle 2>&1 |
		sed -n "s/.*binary $minor \([^ ]*\) .*/\1/p")
	[ -x "$oracle" ] || fail "no kube-proxy oracle for $minor (is it in internal/oracle.Minors? run: go test -v -run TestBinaries ./internal/oracle)"
	install -D -m 0755 "$oracle" "$root/usr/local/lib/rke2-standin/kubeproxy-oracle"
}
