#!/usr/bin/env bash
# build.sh VERSION DIST OUT CYCLONEDX: the release directory OUT from what
# `make packages tarball sysext` left in DIST (run by `make release`, after
# preflight.sh):
#   the artifacts   .deb and .rpm (amd64, arm64), the tarballs
#                   (linux-amd64, linux-arm64), the system extensions
#                   (x86-64, arm64)
#   ARTIFACT.cdx.json  its SBOM: CycloneDX 1.6 made by cyclonedx-gomod from
#                   the Go build info of the binaries inside (rke2-proxy-backend
#                   and kubectl-proxy_backend, merged into one document), with
#                   no serial number and no timestamp, so it is reproducible
#   SHA256SUMS      sha256sum's format, every artifact and SBOM, sorted
#   SHA256SUMS.asc  its detached, armored signature by the key `make repo`
#                   uses (REPO_GPG_KEY_ID; packaging/repo/lib.sh)
#   rke2-proxy-backend-release-key.asc  that key's public part
# Everything but the signature and the key is byte-identical when built
# again from the same commit (packaging/test/release.sh shows the hashes).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../repo/lib.sh
source "$here/../repo/lib.sh"
die() {
	echo "release: $*" >&2
	exit 1
}
[ $# = 4 ] || die "usage: build.sh VERSION DIST OUT CYCLONEDX"
version=$1 dist=$2 out=$3 cdx=$4
need jq jq
need gpg gnupg
check_key
[ -x "$cdx" ] || die "no cyclonedx-gomod at $cdx (make release installs it)"

rm -rf "$out"
mkdir -p "$out"
# artifact GOARCH FILE: copy FILE into OUT and write its SBOM.
artifact() {
	local arch=$1 file=$2 name sboms=()
	[ -f "$file" ] || die "$file is missing: make packages tarball sysext did not build it"
	name=$(basename "$file")
	cp "$file" "$out/$name"
	touch -r "$file" "$out/$name"
	for bin in rke2-proxy-backend kubectl-proxy_backend; do
		"$cdx" bin -json -noserial -notimestamp -version "v$version" -output "$out/.$name.$bin.cdx.json" "$dist/build/$arch/$bin" ||
			die "cyclonedx-gomod could not read the build info of $dist/build/$arch/$bin"
		sboms+=("$out/.$name.$bin.cdx.json")
	done
	# One document: rke2-proxy-backend's, with kubectl-proxy_backend and
	# its modules added to the components and dependencies, and the
	# artifact named in the metadata.
	jq -S --arg artifact "$name" --slurp '
		.[0] as $main | .[1] as $plugin
		| $main
		| .components = ([$main.components[], $plugin.metadata.component, $plugin.components[]] | unique_by(."bom-ref"))
		| .dependencies = ([$main.dependencies[], $plugin.dependencies[]] | unique_by(.ref))
		| .metadata.properties = (($main.metadata.properties // []) + [
			{"name": "rke2-proxy-backend:artifact", "value": $artifact},
			{"name": "rke2-proxy-backend:binaries", "value": "rke2-proxy-backend kubectl-proxy_backend"}])
	' "${sboms[@]}" >"$out/$name.cdx.json" || die "could not merge the SBOMs of $name"
	rm -f "${sboms[@]}"
}
for arch in amd64 arm64; do
	case $arch in amd64) rpm=x86_64 sd=x86-64 ;; arm64) rpm=aarch64 sd=arm64 ;; esac
	artifact "$arch" "$dist/rke2-proxy-backend_${version}-1_${arch}.deb"
	artifact "$arch" "$dist/rke2-proxy-backend-${version}-1.${rpm}.rpm"
	artifact "$arch" "$dist/rke2-proxy-backend-${version}-linux-${arch}.tar.gz"
	artifact "$arch" "$dist/rke2-proxy-backend-${version}-${sd}.raw"
done
(cd "$out" && LC_ALL=C sha256sum -- $(LC_ALL=C ls) >SHA256SUMS)
gpg_batch --armor --detach-sign --output "$out/SHA256SUMS.asc" "$out/SHA256SUMS"
export_key "$out/rke2-proxy-backend-release-key.asc" --armor
gpg --batch --no-tty --verify "$out/SHA256SUMS.asc" "$out/SHA256SUMS" 2>/dev/null || die "the signature just made does not verify"
echo "release: $out: $(grep -c . "$out/SHA256SUMS") files in SHA256SUMS, signed by $REPO_GPG_FPR"
