#!/bin/sh
# rke2-proxy-backend's installer for hosts without dpkg or rpm (a NAS such
# as Synology DSM 7, a minimal image), run from the unpacked release
# tarball as root:
#
#   tar xzf rke2-proxy-backend-VERSION-linux-ARCH.tar.gz
#   sh rke2-proxy-backend-VERSION-linux-ARCH/install.sh [--prefix DIR] [--no-enable]
#
# Like RKE2's own tarball install it puts everything under a prefix
# (default /usr/local, where systemd looks for units in lib/systemd/system
# and for generators in lib/systemd/system-generators) except the operator
# config, which goes to /etc/rke2-proxy-backend/config.yaml only when there
# is none: an existing one is never touched. Under any other prefix systemd
# finds nothing there, so the units and the generator link go to
# /etc/systemd/system and /etc/systemd/system-generators, as RKE2 moves its
# units for the /opt/rke2 prefix.
#
# The shipped units say /usr/bin/rke2-proxy-backend (the packages' path);
# this script writes them with the binary under the prefix. The generator
# is its own program, $PREFIX/libexec/rke2-proxy-backend-generator, and its
# drop-ins run the tool installed with it ($PREFIX/bin), so they need no
# rewrite.
#
# Every path it writes (and every directory it made) goes into a manifest,
# $PREFIX/share/rke2-proxy-backend/install.manifest, which
# $PREFIX/bin/rke2-proxy-backend-uninstall.sh removes exactly. Running it
# again installs the same bytes (an upgrade when they differ: files the new
# version no longer ships are removed, a watch service that runs the old
# binary is restarted). A first install enables
# rke2-proxy-backend-watch.service, as the packages do (it starts with RKE2's
# next start; nothing starts now); a reinstall leaves that choice alone.
# With systemd running it reloads systemd so the generator writes its
# drop-ins; RKE2 is never restarted.
#
# Environment (the flags win): INSTALL_RKE2_PROXY_BACKEND_PREFIX,
# INSTALL_RKE2_PROXY_BACKEND_SKIP_ENABLE=true.
set -eu

name=rke2-proxy-backend
prefix=${INSTALL_RKE2_PROXY_BACKEND_PREFIX:-/usr/local}
skip_enable=${INSTALL_RKE2_PROXY_BACKEND_SKIP_ENABLE:-false}
packaged_binary=/usr/bin/$name
config=/etc/$name/config.yaml

info() { echo "[INFO]  $*"; }
fatal() {
	echo "[ERROR] $*" >&2
	exit 1
}

while [ $# -gt 0 ]; do
	case $1 in
	--prefix) [ $# -ge 2 ] || fatal "--prefix needs a directory"; prefix=$2; shift 2 ;;
	--prefix=*) prefix=${1#--prefix=}; shift ;;
	--no-enable) skip_enable=true; shift ;;
	-h | --help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) fatal "unknown argument $1 (see --help)" ;;
	esac
done

src=$(cd "$(dirname "$0")" && pwd)
for f in bin/$name libexec/$name-generator; do
	[ -x "$src/$f" ] || fatal "$src/$f is missing: run install.sh from the unpacked release tarball"
done
[ "$(id -u)" = 0 ] || fatal "run as root: it installs into $prefix, /etc and systemd's directories"

# The prefix ends up in ExecStart= lines and in sed expressions: a plain
# absolute path only.
case $prefix in
/*) ;;
*) fatal "--prefix $prefix is not an absolute path" ;;
esac
prefix=$(printf '%s' "$prefix" | sed 's:/*$::')
[ -n "$prefix" ] || fatal "--prefix / would install into /bin and /lib: use /usr/local or a directory of its own"
if printf '%s' "$prefix" | grep -q '[^A-Za-z0-9._/-]'; then
	fatal "--prefix $prefix: only letters, digits and . _ - / are allowed"
fi

[ "$prefix" != /usr ] || fatal "--prefix /usr is the packages' place: install the .deb or .rpm there, or use /usr/local"

bin=$prefix/bin/$name
manifest=$prefix/share/$name/install.manifest
uninstall=$prefix/bin/$name-uninstall.sh
case $prefix in
/usr/local)
	unitdir=$prefix/lib/systemd/system
	gendir=$prefix/lib/systemd/system-generators
	genlink=../../../libexec/$name-generator
	;;
*)
	unitdir=/etc/systemd/system
	gendir=/etc/systemd/system-generators
	genlink=$prefix/libexec/$name-generator
	;;
esac

# A package's copy would run its own generator beside ours, both writing
# the same drop-ins: one installation at a time.
# The package's files are the package's until it is purged: a removed but
# not purged .deb still owns the config (a conffile in 0.1, a file its
# postinst created from 0.2), and its purge would later delete the config
# and RKE2's drop-in from under this install.
keep="copy $config aside first if you changed it and put it back: this installer keeps an existing config"
if [ "$bin" != "$packaged_binary" ] && [ -e "$packaged_binary" ]; then
	fatal "$packaged_binary exists: $name is installed from a package; remove the package first (apt-get purge $name, or dnf remove $name; $keep)"
fi
if command -v dpkg-query >/dev/null 2>&1 && [ "$(dpkg-query -W -f '${db:Status-Status}' $name 2>/dev/null)" = config-files ]; then
	fatal "dpkg still holds the config files of the removed $name package, and purging it later would delete $config from under this install: purge it first (apt-get purge $name; $keep)"
fi
# Another prefix's install: its generator link (same name, so systemd
# runs only one of them) and its manifest would outlive this one.
for g in /usr/local/lib/systemd/system-generators/$name-generator /etc/systemd/system-generators/$name-generator; do
	if [ -L "$g" ] && [ "$g" != "$gendir/$name-generator" ]; then
		# It links PREFIX/libexec/NAME-generator (before 0.3: PREFIX/bin/NAME).
		t=$(readlink "$g")
		case $t in /*) ;; *) t=$(dirname "$g")/$t ;; esac
		t=$(cd "$(dirname "$t")/.." 2>/dev/null && pwd || dirname "$(dirname "$t")")
		fatal "$g is from an install under another prefix: uninstall it first ($t/bin/$name-uninstall.sh)"
	fi
done
"$src/bin/$name" version >/dev/null 2>&1 ||
	fatal "$src/bin/$name does not run on this machine ($(uname -m)): use the tarball built for this architecture"
for u in "$src"/lib/systemd/system/*.service; do
	grep -q "^Exec.*=$packaged_binary " "$u" ||
		fatal "$u runs no $packaged_binary: this installer and the units do not match"
done

# Manifest lines are "TYPE PATH": f file, l symlink, d a directory this
# install made (removed when empty), c the config this install created
# (kept by the uninstaller unless --purge). A reinstall keeps the d and c
# lines of the previous one: it finds those directories and the config
# already there.
new=$(mktemp "${TMPDIR:-/tmp}/$name-manifest.XXXXXX")
trap 'rm -f "$new"' EXIT
upgrade=false
if [ -f "$manifest" ]; then
	upgrade=true
	grep '^[dc] ' "$manifest" >>"$new" || true
fi
record() { grep -qxF "$1 $2" "$new" || echo "$1 $2" >>"$new"; }

# mkdirs DIR creates DIR and its missing parents, recording each one made.
mkdirs() {
	[ -d "$1" ] && return 0
	mkdirs "$(dirname "$1")"
	mkdir -m 0755 "$1" || fatal "cannot create $1"
	record d "$1"
}

changed_binary=false
# put SRC DST MODE [SED-EXPR] installs a file atomically (a temporary file
# in DST's directory, flushed, then renamed over DST), rewritten by
# SED-EXPR when given; a DST that already holds those bytes is kept.
put() {
	mkdirs "$(dirname "$2")"
	tmp=$2.$name-new
	if [ $# -ge 4 ]; then sed "$4" "$1" >"$tmp"; else cp "$1" "$tmp"; fi
	chmod "$3" "$tmp"
	record f "$2"
	if [ -f "$2" ] && [ ! -L "$2" ] && [ "$(sha256sum <"$tmp")" = "$(sha256sum <"$2")" ]; then
		# Same bytes: leave the file (and the inode a running watch
		# executes) alone, so a second install changes nothing.
		chmod "$3" "$2"
		rm -f "$tmp"
		return 0
	fi
	sync "$tmp" 2>/dev/null || sync
	if [ "$2" = "$bin" ]; then changed_binary=true; fi
	mv -f "$tmp" "$2" || fatal "cannot install $2"
}

rewrite="s:$packaged_binary:$bin:g"
info "installing $name $("$src/bin/$name" version 2>/dev/null | head -n 1) into $prefix"
put "$src/bin/$name" "$bin" 0755
put "$src/bin/kubectl-proxy_backend" "$prefix/bin/kubectl-proxy_backend" 0755
put "$src/libexec/$name-generator" "$prefix/libexec/$name-generator" 0755
put "$src/bin/$name-uninstall.sh" "$uninstall" 0755 "s:@MANIFEST@:$manifest:g"
for u in "$src"/lib/systemd/system/*.service; do
	put "$u" "$unitdir/$(basename "$u")" 0644 "$rewrite"
done
mkdirs "$gendir"
ln -sfn "$genlink" "$gendir/$name-generator"
record l "$gendir/$name-generator"
(cd "$src" && find share -type f | LC_ALL=C sort) | while read -r f; do
	case $f in
	*.json) put "$src/$f" "$prefix/$f" 0644 "$rewrite" ;;
	*) put "$src/$f" "$prefix/$f" 0644 ;;
	esac
done

if [ -e "$config" ]; then
	info "kept $config (yours); this version's example is $prefix/share/doc/$name/config.yaml.example"
else
	put "$src/share/doc/$name/config.yaml.example" "$config" 0644
	sed -i "\\:^f $config\$:d" "$new"
	record c "$config"
	info "installed the example config as $config"
fi

# An upgrade removes what the previous version shipped and this one does
# not (a file it renamed, a man page it dropped).
if [ "$upgrade" = true ]; then
	grep '^[fl] ' "$manifest" | while read -r t p; do
		if ! grep -qxF "$t $p" "$new" && { [ -f "$p" ] || [ -L "$p" ]; }; then
			rm -f "$p" && info "removed $p (no longer shipped)"
		fi
	done
fi
record f "$manifest"
LC_ALL=C sort -u -o "$new" "$new"
mkdirs "$(dirname "$manifest")"
cp "$new" "$manifest.$name-new"
chmod 0644 "$manifest.$name-new"
sync "$manifest.$name-new" 2>/dev/null || sync
mv -f "$manifest.$name-new" "$manifest"

watch=$name-watch.service
if [ "$upgrade" = true ] && systemctl is-enabled --quiet "$watch" 2>/dev/null; then
	# The unit's [Install] may name more units than the installed links
	# (k3s's from 0.2): an enabled watch is enabled again, as the package's
	# postinst does, so an upgraded node gets the new links.
	systemctl reenable "$watch" >/dev/null 2>&1 || info "could not re-enable $watch; run: systemctl reenable $watch"
fi
if [ "$upgrade" = false ] && [ "$skip_enable" != true ]; then
	# Only symlinks: works without a running systemd too (an image build).
	if systemctl enable "$watch" >/dev/null 2>&1; then
		info "enabled $watch (starts with rke2-server or rke2-agent)"
	else
		info "could not enable $watch (no systemctl?); run: systemctl enable $watch"
	fi
fi
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload
	info "reloaded systemd: the generator wrote its drop-ins for RKE2's units; they take effect at RKE2's next start"
	if [ "$changed_binary" = true ]; then
		# The old binary keeps running in watch until restarted.
		systemctl try-restart "$watch" || info "restarting $watch failed: see journalctl -u $watch"
	fi
fi
info "done; uninstall with $uninstall"
