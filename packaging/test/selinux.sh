#!/usr/bin/env bash
# The SELinux policy module for the generator's domain (packaging/selinux)
# compiles against the reference policy's interfaces as Debian's
# selinux-policy-dev ships them, in both of its distro branches (the
# reference policy's types, and Fedora/EL's with DISTRO=redhat), into a
# policy package each (checkmodule, semodule_package), with no warning from
# m4, checkmodule or the build. What the module allows is held to what the
# generator touches by packaging/selinux's Go test; its enforcement on EL is
# not tested here (docs/selinux.md).
# Needs: checkmodule and semodule_package (checkpolicy), the policy
# development files (selinux-policy-dev), make, m4.
source "$(dirname "$0")/lib/common.sh"
need_tools checkmodule semodule_package make m4
devel=/usr/share/selinux/devel/Makefile
[ -f "$devel" ] || skip "needs $devel (apt-get install selinux-policy-dev)"

work=$(mktemp -d /tmp/rke2pb-selinux.XXXXXX)
trap 'rm -rf "$work"' EXIT
module=rke2_proxy_backend

for distro in debian redhat; do
	d=$work/$distro
	mkdir -p "$d"
	cp "$REPO/packaging/selinux/$module".{te,fc,if} "$d/"
	if ! (cd "$d" && make -f "$devel" DISTRO="$distro" "$module.pp") >"$d/build.log" 2>&1; then
		cat "$d/build.log" >&2
		fail "$distro: the module does not compile (log above)"
	fi
	if grep -qiE 'warn|undefined|deprecat' "$d/build.log"; then
		cat "$d/build.log" >&2
		fail "$distro: the build warned (log above): fix the policy, a warning is a failure here"
	fi
	[ -s "$d/$module.pp" ] || fail "$distro: make wrote no $module.pp"
	# The branch for the distribution's types was the one compiled.
	case $distro in
	debian) want=systemd_unit_t other=systemd_unit_file_t ;;
	redhat) want=systemd_unit_file_t other=systemd_unit_t ;;
	esac
	rules=$(grep -v '^[[:space:]]*#' "$d/tmp/$module.tmp")
	grep -qw "type_transition ${module}_generator_t $want:" <<<"$rules" || fail "$distro: the drop-ins are not created under $want"
	! grep -qw "$other" <<<"$rules" || fail "$distro: the expanded policy names $other, the other branch's type"
	pass "$distro: $module.pp ($(stat -c %s "$d/$module.pp") bytes), no warning"
done

# An interface the reference policy lacks is an error, not a silent pass:
# the check above means something.
d=$work/broken
mkdir -p "$d"
cp "$REPO/packaging/selinux/$module".{te,fc,if} "$d/"
sed -i 's/^dev_write_kmsg(/dev_write_kmsg_nonexistent(/' "$d/$module.te"
if (cd "$d" && make -f "$devel" "$module.pp") >"$d/build.log" 2>&1; then
	fail "a module calling an interface that does not exist compiled"
fi
grep -q 'dev_write_kmsg_nonexistent' "$d/build.log" || fail "the broken module failed for another reason: $(tail -n 3 "$d/build.log")"
pass "an unknown interface fails the build"
