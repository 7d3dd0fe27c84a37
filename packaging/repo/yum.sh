#!/usr/bin/env bash
# yum.sh DIST OUT: a signed YUM/DNF repository per architecture in OUT from
# the .rpm files in DIST: OUT/x86_64 and OUT/aarch64, each with its RPMs
# signed (rpmsign) and createrepo_c metadata whose repomd.xml is signed too
# (repodata/repomd.xml.asc), so a node can use gpgcheck=1 and
# repo_gpgcheck=1 with baseurl=<URL of OUT>/$basearch.
source "$(dirname "$0")/lib.sh"
[ $# = 2 ] || die "usage: yum.sh DIST OUT"
dist=$1 out=$2
need createrepo_c createrepo-c
need rpmsign rpm
need gpg gnupg
check_key

rm -rf "$out"
for a in x86_64 aarch64; do
	shopt -s nullglob
	rpms=("$dist"/*."$a".rpm)
	[ ${#rpms[@]} -gt 0 ] || die "no .$a.rpm in $dist: run make packages first"
	mkdir -p "$out/$a"
	cp "${rpms[@]}" "$out/$a/"
	# rpmsign calls gpg itself; the extra args carry the passphrase file
	# the same way gpg_batch does.
	extra="--batch --no-tty"
	[ -n "${REPO_GPG_PASSPHRASE_FILE:-}" ] && extra="$extra --pinentry-mode loopback --passphrase-file $REPO_GPG_PASSPHRASE_FILE"
	# Debian's rpm macros name /usr/bin/gpg2, which Debian does not ship.
	rpmsign --addsign \
		--define "__gpg $(command -v gpg)" \
		--define "_gpg_name $REPO_GPG_FPR" \
		--define "_gpg_digest_algo sha512" \
		--define "_gpg_sign_cmd_extra_args $extra" \
		"$out/$a"/*.rpm 2> >(grep -v 'Could not set GPG_TTY' >&2) >/dev/null || die "rpmsign failed for $out/$a/*.rpm (is the key in ${GNUPGHOME:-~/.gnupg} usable without a prompt? set REPO_GPG_PASSPHRASE_FILE)"
	createrepo_c --quiet --no-database "$out/$a" >/dev/null ||
		die "createrepo_c failed in $out/$a"
	gpg_batch --armor --detach-sign --output "$out/$a/repodata/repomd.xml.asc" "$out/$a/repodata/repomd.xml"
done
echo "repo: YUM repositories in $out/{x86_64,aarch64}, RPMs and repomd.xml signed by $REPO_GPG_FPR"
