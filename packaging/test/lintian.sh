#!/usr/bin/env bash
# lintian on both .deb packages: any error-level tag fails. Overrides, each
# with its reason, live in packaging/lintian-overrides (shipped in the .deb).
# Needs: lintian, make, go. Root is not needed but CI runs everything as root.
source "$(dirname "$0")/lib/common.sh"
need_tools lintian make
ensure_packages

work=$(mktemp -d /tmp/rke2pb-lintian.XXXXXX)
trap 'rm -rf "$work"' EXIT
for deb in "$DEB_AMD64" "$DEB_ARM64"; do
	# lintian's exit code also reflects warnings on some versions; the
	# severity letter in front of each tag is what counts here.
	lintian --display-level '>=info' "$deb" >"$work/out" 2>&1 || true
	sed 's/^/    /' "$work/out"
	if grep -q '^E: ' "$work/out"; then
		fail "lintian reports errors for $(basename "$deb")"
	fi
	if grep -q 'unused-override\|mismatched-override' "$work/out"; then
		fail "an override in packaging/lintian-overrides no longer matches: remove or fix it"
	fi
done
pass "no lintian errors in $(basename "$DEB_AMD64") and $(basename "$DEB_ARM64")"
