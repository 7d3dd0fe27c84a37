#!/usr/bin/env bash
# The rule every packaging test's prerequisites follow (lib/common.sh): a
# missing tool is a skip that names the Debian package to install, and
# under CI (CI=true) every skip is a failure, so CI cannot pass green by
# skipping. Also: every tool a packaging test needs has its package known.
# Needs: bash only.
source "$(dirname "$0")/lib/common.sh"

work=$(mktemp -d /tmp/rke2pb-skip-rule.XXXXXX)
trap 'rm -rf "$work"' EXIT
# A PATH with the shell's basics only, so the tools below are "missing".
mkdir "$work/bin"
for t in bash cat sed basename dirname id printf uname; do
	p=$(command -v "$t") && ln -s "$p" "$work/bin/$t"
done
cat >"$work/probe.sh" <<PROBE
source "$REPO/packaging/test/lib/common.sh"
PATH=$work/bin
need_tools apt-ftparchive dnf createrepo_c
echo "need_tools went on"
PROBE

CI= bash "$work/probe.sh" >"$work/dev.log" 2>&1 || { cat "$work/dev.log" >&2; fail "a missing tool outside CI is a skip, which exits 0"; }
assert_contains "$work/dev.log" "SKIP: probe: needs apt-ftparchive (apt-get install apt-utils), dnf (apt-get install dnf), createrepo_c (apt-get install createrepo-c)" "the skip names each Debian package"
if grep -q "need_tools went on" "$work/dev.log"; then fail "need_tools went on after a missing tool"; fi
pass "a missing tool outside CI: SKIP naming apt-utils, dnf and createrepo-c"

if CI=true bash "$work/probe.sh" >"$work/ci.log" 2>&1; then
	cat "$work/ci.log" >&2
	fail "under CI=true a skip passed"
fi
assert_contains "$work/ci.log" "FAIL: probe: needs apt-ftparchive (apt-get install apt-utils)" "under CI=true the skip is a failure naming the package"
if grep -q '^SKIP' "$work/ci.log"; then fail "under CI=true the test still printed SKIP"; fi
pass "under CI=true the same skip fails (exit 1)"

# Every tool passed to need_tools in these scripts has a package in the map.
# A call continued with a backslash is read as one line.
for t in $(cat "$REPO"/packaging/test/*.sh "$REPO"/packaging/test/lib/*.sh | sed -e ':a' -e '/\\$/{N;s/\\\n//;ba' -e '}' |
	sed -n 's/^[[:space:]]*need_tools //p' | tr ' \t' '\n\n' | grep -v -e '^"\$@"$' -e '^$' | sort -u); do
	tool_package "$t" >/dev/null || fail "need_tools $t: no Debian package known; add it to tool_package in lib/common.sh"
done
pass "every tool the packaging tests need has its Debian package named"
