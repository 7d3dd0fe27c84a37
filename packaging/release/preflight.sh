#!/usr/bin/env bash
# preflight.sh VERSION CHANGELOG: what `make release` checks before it
# builds anything, each refusal saying what to do:
#   VERSION     a semantic version (MAJOR.MINOR.PATCH, optionally -PRERELEASE)
#   CHANGELOG   a section for it: a line "## VERSION - YYYY-MM-DD" (or
#               "## [VERSION] - YYYY-MM-DD") followed by at least one entry
#               before the next "## " heading
#   the tree    clean (git status --porcelain prints nothing): the commit
#               is the release, and SOURCE_DATE_EPOCH is its time
#   the key     REPO_GPG_KEY_ID names one valid signing key (the key
#               `make repo` signs with; packaging/repo/lib.sh check_key)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../repo/lib.sh
source "$here/../repo/lib.sh"
die() {
	echo "release: $*" >&2
	exit 1
}
[ $# = 2 ] || die "usage: preflight.sh VERSION CHANGELOG"
version=$1 changelog=$2

[[ $version =~ ^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$ ]] ||
	die "VERSION \"$version\" is not a semantic version (MAJOR.MINOR.PATCH, e.g. 0.2.0): fix the VERSION file"

[ -f "$changelog" ] || die "$changelog is missing: a release needs its changelog section"
esc=${version//./\\.}
heading=$(grep -nE "^## (\[$esc\]|$esc) - [0-9]{4}-[0-9]{2}-[0-9]{2}$" "$changelog" | head -n 1 | cut -d: -f1 || true)
if [ -z "$heading" ]; then
	near=$(grep -nE "^## .*$esc" "$changelog" | head -n 1 || true)
	die "$changelog has no section for $version: add a heading \"## $version - $(date -u +%Y-%m-%d)\" (the release date, UTC) above its entries${near:+; line ${near%%:*} reads \"${near#*:}\", which is not that form}"
fi
entries=$(awk -v start="$heading" 'NR > start && /^## / { exit } NR > start && /[^[:space:]]/ { n++ } END { print n + 0 }' "$changelog")
[ "$entries" -gt 0 ] || die "$changelog's section for $version (line $heading) is empty: write what changed under it"

if command -v git >/dev/null 2>&1 && git -C "$(dirname "$changelog")" rev-parse --git-dir >/dev/null 2>&1; then
	dirty=$(git -C "$(dirname "$changelog")" status --porcelain --untracked-files=normal | grep -v -e ' \.cache$' -e ' \.cache/' || true)
	[ -z "$dirty" ] || die "the tree is not clean: a release is built from a commit (its time is SOURCE_DATE_EPOCH); commit or stash:
$dirty"
else
	die "not a git checkout: a release is built from a commit (its time is SOURCE_DATE_EPOCH)"
fi

need gpg gnupg
check_key
echo "release: $version, changelog line $heading, signing key $REPO_GPG_FPR"
