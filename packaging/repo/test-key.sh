#!/usr/bin/env bash
# A throwaway signing key for tests and CI, never for real repositories:
# creates a new GNUPGHOME under $TMPDIR (or the directory given), makes an
# RSA-4096 signing key without a passphrase, and prints the two exports that
# `make repo` reads:
#   eval "$(packaging/repo/test-key.sh)" && make repo
set -euo pipefail
command -v gpg >/dev/null 2>&1 || { echo "test-key: gpg not found: apt-get install gnupg" >&2; exit 1; }
home=${1:-$(mktemp -d "${TMPDIR:-/tmp}/rke2pb-gnupg.XXXXXX")}
mkdir -p "$home"
chmod 700 "$home"
uid="rke2-proxy-backend test repository (throwaway) <test-repo@rke2-proxy-backend.invalid>"
GNUPGHOME=$home gpg --batch --no-tty --passphrase '' --quick-gen-key "$uid" rsa4096 sign never 2>/dev/null ||
	{ echo "test-key: gpg could not generate a key in $home" >&2; exit 1; }
fpr=$(GNUPGHOME=$home gpg --batch --with-colons --list-secret-keys 2>/dev/null | awk -F: '$1 == "fpr" { print $10; exit }')
[ -n "$fpr" ] || { echo "test-key: no fingerprint for the new key in $home" >&2; exit 1; }
printf 'export GNUPGHOME=%q\nexport REPO_GPG_KEY_ID=%q\n' "$home" "$fpr"
