# Shared by packaging/repo/*.sh (sourced). The signing key comes from the
# builder: REPO_GPG_KEY_ID names it in the keyring at GNUPGHOME (gpg's
# default, ~/.gnupg, when unset); REPO_GPG_PASSPHRASE_FILE, when set, holds
# its passphrase for unattended builds.
set -euo pipefail

die() {
	echo "repo: $*" >&2
	exit 1
}

# need TOOL DEBIAN_PACKAGE: fail naming the package that provides TOOL.
need() {
	command -v "$1" >/dev/null 2>&1 || die "$1 not found: apt-get install $2 (or your distribution's package with $1)"
}

# gpg_batch runs gpg unattended with the builder's key and, when given, its
# passphrase. SHA-512 because apt and RHEL 9+ reject SHA-1 signatures.
gpg_batch() {
	local pass=()
	if [ -n "${REPO_GPG_PASSPHRASE_FILE:-}" ]; then
		pass=(--pinentry-mode loopback --passphrase-file "$REPO_GPG_PASSPHRASE_FILE")
	fi
	gpg --batch --yes --no-tty --digest-algo SHA512 --local-user "$REPO_GPG_KEY_ID" "${pass[@]}" "$@"
}

# check_key fails unless the key can sign: a key ID that names no secret
# key (wrong GNUPGHOME, public key only) is the usual mistake.
check_key() {
	[ -n "${REPO_GPG_KEY_ID:-}" ] || die "REPO_GPG_KEY_ID is not set: export REPO_GPG_KEY_ID=<your signing key's fingerprint> (and GNUPGHOME if the key is not in ~/.gnupg); for a throwaway test key: eval \"\$(packaging/repo/test-key.sh)\""
	gpg --batch --list-secret-keys "$REPO_GPG_KEY_ID" >/dev/null 2>&1 ||
		die "no secret key \"$REPO_GPG_KEY_ID\" in ${GNUPGHOME:-~/.gnupg} (gpg --list-secret-keys shows what is there; set GNUPGHOME to the keyring that has it)"
}
