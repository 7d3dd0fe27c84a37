#!/bin/sh
# Runs after install and upgrade (deb: postinst configure <old-version>;
# rpm: %post 1 on install, 2 on upgrade). RKE2 is never restarted: a new
# decision takes effect at RKE2's next start (or the next boot), never in
# the middle of an upgrade. In a chroot or image build there is no running
# systemd and only the files change; the generator runs at first boot.
#
# - deb: the generator link, to the generator's own program in
#   /usr/libexec. The .deb does not ship the link as a file: on
#   Debian 12 and Ubuntu 22.04 systemd's generators are dpkg's
#   /lib/systemd/system-generators, the same directory as
#   /usr/lib/systemd/system-generators through the /usr merge, so a package
#   owning the /usr/lib spelling alone makes dpkg try to remove that
#   directory on purge ("not empty so not removed"); owning the /lib
#   spelling breaks the same way on Debian 13 and Ubuntu 24.04, where
#   systemd moved to /usr/lib. postrm removes the link again. (The .rpm
#   ships it: RPM distributions have one spelling.)
# - A first install (deb: configure with no old version; rpm: 1), and a
#   deb reinstall after "remove" (preinst left the marker) enable
#   rke2-proxy-backend-watch.service: WantedBy= the RKE2 and k3s units, so
#   it starts with their next start; nothing starts now. `systemctl enable`
#   only makes symlinks, so it also works in a chroot. An upgrade leaves the
#   administrator's enable/disable choice alone, but re-enables an enabled
#   watch, so the links follow its current WantedBy= (earlier versions
#   linked it to the RKE2 units only, and on k3s nothing wanted it).
# - With systemd running: daemon-reload re-runs the generators, so the new
#   generator writes its drop-ins and the new unit files are read; on an
#   upgrade, try-restart puts a running watch on the new binary (the old one
#   is deleted; a stopped or disabled watch stays so).
# - The operator config (no conffile: packaging/nfpm.yaml says why) is
#   created from the example only when there is none, and never changed
#   after: no upgrade asks a question or touches an edited file.
#   config.created records that the package created it, and the digest of
#   what it wrote, so a purge removes only what the package put there and
#   says so when it held edits (postremove.sh), and an RPM erase keeps an
#   edited one (preremove.sh).
# - Transactional installs (SLE Micro's transactional-update sets
#   $TRANSACTIONAL_UPDATE and runs this in a new snapshot while the old one
#   runs): only files change (the link, the config, the offline enable);
#   nothing talks to the running systemd or RKE2. At the new snapshot's
#   first boot the generator runs before any unit starts, so RKE2's start
#   runs apply (the plan, the drop-in, verify) and the enabled watch starts
#   with RKE2: what adoption does on a running node.
set -e

name=rke2-proxy-backend
watch_unit=$name-watch.service
state_dir=/var/lib/$name
reinstall_marker=$state_dir/reinstall
generator_dir=/usr/lib/systemd/system-generators
config_dir=/etc/$name
config=$config_dir/config.yaml
example=/usr/share/$name/config.yaml.example
created=$state_dir/config.created

# live: a running systemd this script may talk to. Not in a chroot or an
# image build (no /run/systemd/system), nor in a transactional update's
# snapshot, where /run is the running system's.
live=no
[ -d /run/systemd/system ] && [ -z "${TRANSACTIONAL_UPDATE:-}" ] && live=yes
# The snapshot's enablement links only: with the running system's /run
# visible, systemctl would otherwise take the node for a running one.
[ -z "${TRANSACTIONAL_UPDATE:-}" ] || export SYSTEMD_OFFLINE=1

# put FILE writes stdin to FILE durably: a temp beside it, synced, renamed
# over FILE, the directory synced.
put() {
	tmp=$(mktemp "${1%/*}/.${1##*/}.tmp-XXXXXX")
	cat >"$tmp"
	chmod 0644 "$tmp"
	sync "$tmp"
	mv -f "$tmp" "$1"
	sync "${1%/*}"
}

# digest FILE prints FILE's SHA-256.
digest() { sha256sum <"$1" | cut -d' ' -f1; }

enable=no
case "$1:${2:-}" in
configure: | 1:) enable=yes ;;
configure:*) [ -e "$reinstall_marker" ] && enable=yes ;;
esac
rm -f "$reinstall_marker"

if [ "$1" = configure ]; then
	mkdir -p "$generator_dir"
	ln -sfn ../../../libexec/rke2-proxy-backend-generator "$generator_dir/rke2-proxy-backend-generator"
fi

mkdir -p "$config_dir" "$state_dir"
if [ ! -e "$config" ] && [ ! -L "$config" ]; then
	if [ -f "$config_dir/.config.yaml.keep" ]; then
		# An RPM erase killed between its two scriptlets (preremove.sh).
		mv -f "$config_dir/.config.yaml.keep" "$config"
	else
		put "$config" <"$example"
		digest "$config" | put "$created"
	fi
elif [ "$1" = configure ] && [ ! -e "$created" ]; then
	# Upgraded from a version that shipped the config as a conffile: dpkg
	# keeps it as an obsolete conffile (no question, never replaced) and
	# removes it on purge. Record that it came with the package, with its
	# digest when it is still the example dpkg installed (the conffile's
	# MD5), so the purge says when it took edits with it.
	shipped=$(dpkg-query -W -f='${Conffiles}\n' $name 2>/dev/null | awk -v c="$config" '$1 == c { print $2 }')
	if [ -n "$shipped" ]; then
		if [ "$(md5sum <"$config" | cut -d' ' -f1)" = "$shipped" ]; then
			digest "$config" | put "$created"
		else
			echo edited | put "$created"
		fi
	fi
fi

if [ "$enable" = yes ]; then
	systemctl enable "$watch_unit" >/dev/null 2>&1 || true
else
	case "$1:${2:-}" in
	configure:?* | 2:)
		if systemctl is-enabled --quiet "$watch_unit" 2>/dev/null; then
			systemctl reenable "$watch_unit" >/dev/null 2>&1 || true
		fi
		;;
	esac
fi

if [ "$live" = yes ]; then
	systemctl daemon-reload >/dev/null 2>&1 || true
	case "$1:${2:-}" in
	configure:?* | 2:)
		systemctl try-restart "$watch_unit" >/dev/null 2>&1 || true
		;;
	esac
fi

# Adoption (docs/install.md: "Adopting on a running node"): RKE2 or k3s already runs
# and this boot has no plan, so nothing would verify until its next start.
# adopt records the backend kube-proxy runs on now, re-runs the generator
# and starts verify and watch; it never restarts RKE2 or k3s. It waits up
# to 60s for kube-proxy's first sync and says what to do when it cannot
# tell. The units asked about are RKE2's two and k3s's as its install.sh
# names them (k3s, k3s-agent, k3s-NAME); adopt itself tells a k3s-NAME
# unit of another program from k3s's by its ExecStart=.
if [ "$live" = yes ] && [ ! -e /run/$name/plan.json ] &&
	[ -n "$(systemctl list-units --state=active --plain --no-legend rke2-server.service rke2-agent.service k3s.service 'k3s-*.service' 2>/dev/null)" ]; then
	/usr/bin/$name adopt --wait=60s || true
fi
exit 0
