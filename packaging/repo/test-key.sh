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
# The fingerprint of the key made now (KEY_CREATED), not of the first key
# in the keyring: a second call with the same DIR adds a second key of the
# same user ID, as a key rotation does.
fpr=$(GNUPGHOME=$home gpg --batch --yes --no-tty --passphrase '' --status-fd 1 --quick-gen-key "$uid" rsa4096 sign never 2>/dev/null |
	awk '$2 == "KEY_CREATED" { print $4 }') ||
	{ echo "test-key: gpg could not generate a key in $home" >&2; exit 1; }
[ -n "$fpr" ] || { echo "test-key: no fingerprint for the new key in $home" >&2; exit 1; }
printf 'export GNUPGHOME=%q\nexport REPO_GPG_KEY_ID=%q\n' "$home" "$fpr"
