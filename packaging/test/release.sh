#!/usr/bin/env bash
# make release, twice, from clean clones of this commit: signed,
# checksummed, with an SBOM per artifact, and byte-identical.
#   refusal   the clone's CHANGELOG.md has no section for VERSION (or it
#             was written already: one is removed for this step): make
#             release refuses, naming the heading it wants
#   build A   a section added and committed with the commit's own date (so
#             SOURCE_DATE_EPOCH is the same), make release with a throwaway
#             key (packaging/repo/test-key.sh), Go's build cache as it is
#   build B   another clone of that commit, an EMPTY Go build cache (every
#             package compiled again), the same key
#   check     the same files; every artifact, SBOM and SHA256SUMS byte-
#             identical (the hashes are printed); SHA256SUMS.asc verifies
#             with the key; sha256sum -c passes; each SBOM names its
#             artifact and the modules the binaries link; the packages,
#             tarball, extension and binary say VERSION
# Cost: two release builds, the second with a cold Go cache (about 4-6
# minutes on 2 idle cores; more under load). Uncommitted changes are not
# in the clones: commit first.
# Needs: git, make, go, gpg, jq, mksquashfs, dpkg-deb, rpm.
source "$(dirname "$0")/lib/common.sh"
need_tools gpg make go dpkg-deb rpm mksquashfs
command -v jq >/dev/null || skip "needs jq (apt-get install jq)"
work=$(mktemp -d /tmp/rke2pb-release.XXXXXX)
trap 'gpgconf --homedir "$work/gnupg" --kill all >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
eval "$("$REPO/packaging/repo/test-key.sh" "$work/gnupg")"

src=$work/src
mkdir -p "$REPO/.cache" # the clones share its pinned tools
git clone -q "$REPO" "$src" || fail "git clone of $REPO failed"
ln -s "$REPO/.cache" "$src/.cache" # nfpm and cyclonedx-gomod, pinned there
when=$(git -C "$src" log -1 --format=%cI)
esc=${VERSION//./\\.}
if grep -qE "^## (\[$esc\]|$esc) - " "$src/CHANGELOG.md"; then
	sed -i -E "s/^## (\[$esc\]|$esc) - .*/## Unreleased/" "$src/CHANGELOG.md"
	git -C "$src" -c user.name=release-test -c user.email=release-test@invalid commit -qam "test: no section for $VERSION"
fi

log "refusal: no section for $VERSION in CHANGELOG.md"
expect_refused "$work/refused.log" "CHANGELOG.md has no section for $esc: add a heading \"## $esc - " \
	"make release built without a CHANGELOG section for $VERSION" \
	"make release failed, but not for the missing CHANGELOG section" \
	make -s -C "$src" release
pass "make release refuses without \"## $VERSION - YYYY-MM-DD\" in CHANGELOG.md"

# The section, committed at the commit's own time.
python3 - "$src/CHANGELOG.md" "$VERSION" "${when%%T*}" <<'PY'
import sys
path, version, day = sys.argv[1:]
text = open(path).read()
i = text.index("\n## ")
section = "\n## %s - %s\n\n- The release packaging/test/release.sh builds.\n" % (version, day)
open(path, "w").write(text[:i] + section + text[i:])
PY
GIT_AUTHOR_DATE=$when GIT_COMMITTER_DATE=$when git -C "$src" -c user.name=release-test -c user.email=release-test@invalid \
	commit -qam "test: changelog section for $VERSION" || fail "could not commit the changelog section"

# build NAME [GOCACHE]: make release in a clean clone of $src.
build() {
	local d=$work/$1 start=$SECONDS
	git clone -q "$src" "$d" || fail "git clone for build $1 failed"
	ln -s "$REPO/.cache" "$d/.cache"
	log "build $1: make release${2:+ (empty Go build cache $2)}"
	(cd "$d" && env ${2:+GOCACHE=$2} make -s release >"$work/$1.log" 2>&1) || {
		tail -n 40 "$work/$1.log" >&2
		fail "make release (build $1) failed"
	}
	log "build $1 took $((SECONDS - start))s"
}
build a
mkdir -p "$work/gocache-b"
build b "$work/gocache-b"

A=$work/a/dist/release B=$work/b/dist/release
(cd "$A" && ls) >"$work/a.list"
(cd "$B" && ls) >"$work/b.list"
cmp -s "$work/a.list" "$work/b.list" || { diff "$work/a.list" "$work/b.list" >&2; fail "the two builds made different files"; }
for v in "${VERSION}-1_amd64.deb" "${VERSION}-1_arm64.deb"; do grep -qx "rke2-proxy-backend_$v" "$work/a.list" || fail "no rke2-proxy-backend_$v"; done
for f in "${VERSION}-1.x86_64.rpm" "${VERSION}-1.aarch64.rpm" "${VERSION}-linux-amd64.tar.gz" "${VERSION}-linux-arm64.tar.gz" \
	"${VERSION}-x86-64.raw" "${VERSION}-arm64.raw"; do
	grep -qx "rke2-proxy-backend-$f" "$work/a.list" || fail "no rke2-proxy-backend-$f"
	grep -qx "rke2-proxy-backend-$f.cdx.json" "$work/a.list" || fail "no SBOM rke2-proxy-backend-$f.cdx.json"
done

echo "    size      sha256 (build a)                                                  build b   file"
differ=0
while read -r f; do
	case $f in SHA256SUMS.asc | rke2-proxy-backend-release-key.asc) continue ;; esac
	ha=$(sha256sum "$A/$f" | cut -d' ' -f1)
	hb=$(sha256sum "$B/$f" | cut -d' ' -f1)
	same=same
	[ "$ha" = "$hb" ] || { same=DIFFERS; differ=1; }
	printf '    %9d %s %-7s   %s\n' "$(stat -c %s "$A/$f")" "$ha" "$same" "$f"
	[ "$same" = same ] || printf '    %9s %s (build b)\n' "" "$hb"
done <"$work/a.list"
[ "$differ" = 0 ] || fail "the two builds are not byte-identical (above)"
compared=$(grep -cv -e '^SHA256SUMS.asc$' -e '^rke2-proxy-backend-release-key.asc$' "$work/a.list")
pass "two builds from clean clones are byte-identical: $compared files"

(cd "$A" && sha256sum -c --quiet SHA256SUMS) || fail "sha256sum -c SHA256SUMS fails"
gpg --batch --no-tty --verify "$A/SHA256SUMS.asc" "$A/SHA256SUMS" 2>"$work/verify.log" || { cat "$work/verify.log" >&2; fail "SHA256SUMS.asc does not verify"; }
grep -q "$REPO_GPG_KEY_ID" "$work/verify.log" || grep -q "Good signature" "$work/verify.log" || fail "SHA256SUMS.asc is not by the release key"
pass "SHA256SUMS checks and SHA256SUMS.asc verifies with the release key"

for s in "$A"/*.cdx.json; do
	art=$(basename "$s" .cdx.json)
	jq -e --arg a "$art" '.bomFormat == "CycloneDX" and (.metadata.properties | map(select(.name == "rke2-proxy-backend:artifact" and .value == $a)) | length == 1)
		and (.components | map(.name) | index("github.com/spf13/cobra") != null) and (.serialNumber == null) and (.metadata.timestamp == null)' "$s" >/dev/null ||
		fail "$(basename "$s"): not a CycloneDX SBOM of $art with its modules (or it has a serial number or timestamp)"
done
pass "each artifact's SBOM is CycloneDX from the binaries' build info"

[ "$(dpkg-deb -f "$A/rke2-proxy-backend_${VERSION}-1_amd64.deb" Version)" = "${VERSION}-1" ] || fail "the .deb is not version ${VERSION}-1"
[ "$(rpm -qp --qf '%{VERSION}' "$A/rke2-proxy-backend-${VERSION}-1.x86_64.rpm" 2>/dev/null)" = "$VERSION" ] || fail "the .rpm is not version $VERSION"
tar -xzf "$A/rke2-proxy-backend-${VERSION}-linux-$(host_arch).tar.gz" -C "$work"
"$work/rke2-proxy-backend-${VERSION}-linux-$(host_arch)/bin/rke2-proxy-backend" version | grep -q "$VERSION" || fail "the tarball's binary does not say $VERSION"
unsquashfs -cat "$A/rke2-proxy-backend-${VERSION}-x86-64.raw" usr/lib/extension-release.d/extension-release.rke2-proxy-backend | grep -qx "VERSION_ID=$VERSION" ||
	fail "the x86-64 extension does not say VERSION_ID=$VERSION"
pass "release $VERSION: $(grep -c . "$A/SHA256SUMS") files signed and checksummed, reproducible"
