#!/bin/sh
# Runs before removal and before an upgrade replaces the files
# (deb: prerm remove|upgrade|...; rpm: %preun 0 on erase, 1 on upgrade).
# On a real removal:
# - stop a verify run that may still be waiting for kube-proxy, so it does
#   not fire against a half-removed package, and stop and disable the watch
#   service (the package enabled it);
# - remove our textfile metrics wherever they were written: a node without
#   the package must not export rke2_proxy_backend_verify_ok 1 forever. The
#   directory is verify.textfile_dir from the operator config, which the
#   binary (still installed here, gone in postrm) reads exactly as verify and
#   watch do: `detect -o json` prints it. No record of written files is kept,
#   so nothing new is written on the boot path; a directory given only with
#   --textfile-dir in an administrator's drop-in is not known here. postrm
#   removes them from the default directory in any case.
# - rpm erase (0): the config is a %ghost of the package (nfpm.yaml), which
#   rpm deletes with the package. One the package created and nobody
#   edited goes so (config.created holds its digest: postinstall.sh); one
#   edited, or there before the package, is kept: a hard link here, which
#   postremove.sh renames back once rpm is done (postinstall.sh renames it
#   back too, should the erase die between the two).
# - In a transactional update ($TRANSACTIONAL_UPDATE, SLE Micro) nothing is
#   stopped: the running system is not the snapshot being changed.
set -e

# The snapshot's enablement links only (the disable below).
[ -z "${TRANSACTIONAL_UPDATE:-}" ] || export SYSTEMD_OFFLINE=1

bin=/usr/bin/rke2-proxy-backend
config=/etc/rke2-proxy-backend/config.yaml
created=/var/lib/rke2-proxy-backend/config.created

# remove_metrics DIR removes verify's and watch's textfiles (the fleet's
# too) from DIR (and
# the temp files an interrupted atomic write leaves beside them).
remove_metrics() {
	case $1 in
	/*) ;;
	*) return 0 ;;
	esac
	rm -f "$1/rke2_proxy_backend.prom" "$1/rke2_proxy_backend_watch.prom" "$1/rke2_proxy_backend_fleet.prom" \
		"$1"/.rke2_proxy_backend.prom.tmp-* "$1"/.rke2_proxy_backend_watch.prom.tmp-* "$1"/.rke2_proxy_backend_fleet.prom.tmp-*
}

if [ "$1" = 0 ] && [ -f "$config" ] && [ ! -L "$config" ] &&
	[ "$(sha256sum <"$config" | cut -d' ' -f1)" != "$(cat "$created" 2>/dev/null)" ]; then
	ln -f "$config" "${config%/*}/.config.yaml.keep"
fi

case "$1" in
remove | 0)
	if [ -d /run/systemd/system ] && [ -z "${TRANSACTIONAL_UPDATE:-}" ]; then
		systemctl stop rke2-proxy-backend-verify.service rke2-proxy-backend-watch.service >/dev/null 2>&1 || true
	fi
	systemctl disable rke2-proxy-backend-watch.service >/dev/null 2>&1 || true
	if [ -x "$bin" ]; then
		# A path with a quote or backslash is JSON-escaped: not matched, and
		# only the default directory is cleaned.
		dir=$(timeout 60 "$bin" detect -o json 2>/dev/null |
			sed -n 's/^ *"textfile_dir": "\([^"\\]*\)",\{0,1\}$/\1/p' | head -n 1) || dir=
		if [ -n "$dir" ]; then
			remove_metrics "$dir"
		else
			echo "rke2-proxy-backend: could not read verify.textfile_dir (is /etc/rke2-proxy-backend/config.yaml valid?); metrics are removed from the default directory only" >&2
		fi
	fi
	;;
esac
exit 0
