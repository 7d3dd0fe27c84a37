# Shared by packaging/repo/*.sh (sourced). The signing key comes from the
# builder: REPO_GPG_KEY_ID names exactly one key (best by its full
# fingerprint) in the keyring at GNUPGHOME (gpg's default, ~/.gnupg, when
# unset); REPO_GPG_PASSPHRASE_FILE, when set, holds
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

# gpg_batch runs gpg unattended with the builder's key (REPO_GPG_FPR, set
# by check_key) and, when given, its passphrase. SHA-512 because apt and
# RHEL 9+ reject SHA-1 signatures.
gpg_batch() {
	local pass=()
	if [ -n "${REPO_GPG_PASSPHRASE_FILE:-}" ]; then
		pass=(--pinentry-mode loopback --passphrase-file "$REPO_GPG_PASSPHRASE_FILE")
	fi
	gpg --batch --yes --no-tty --digest-algo SHA512 --local-user "$REPO_GPG_FPR" "${pass[@]}" "$@"
}

# check_key fails unless REPO_GPG_KEY_ID names exactly one secret key, valid
# and able to sign, and sets REPO_GPG_FPR to that key's fingerprint: every
# signature and the exported public key use the fingerprint, never the ID
# again. An ID that matches several keys (a user ID or e-mail shared by a
# retired key and its successor, a short key ID) would make gpg sign with
# the first match and export all of them for nodes to trust.
check_key() {
	[ -n "${REPO_GPG_KEY_ID:-}" ] || die "REPO_GPG_KEY_ID is not set: export REPO_GPG_KEY_ID=<your signing key's fingerprint> (and GNUPGHOME if the key is not in ~/.gnupg); for a throwaway test key: eval \"\$(packaging/repo/test-key.sh)\""
	local listing keys n
	listing=$(gpg --batch --with-colons --list-secret-keys -- "$REPO_GPG_KEY_ID" 2>/dev/null) ||
		die "no secret key \"$REPO_GPG_KEY_ID\" in ${GNUPGHOME:-~/.gnupg} (gpg --list-secret-keys shows what is there; set GNUPGHOME to the keyring that has it)"
	# One line per matching key: fingerprint, validity, capabilities, user ID.
	keys=$(awk -F: '
		$1 == "sec" { if (fpr != "") print fpr, valid, caps, uid; fpr = ""; uid = ""; valid = $2; caps = $12; primary = 1; next }
		$1 == "ssb" { primary = 0 }
		$1 == "fpr" && primary && fpr == "" { fpr = $10 }
		$1 == "uid" && uid == "" { uid = $10 }
		END { if (fpr != "") print fpr, valid, caps, uid }' <<<"$listing")
	n=$(grep -c . <<<"$keys" || true)
	[ "$n" -gt 0 ] || die "gpg lists no secret key for \"$REPO_GPG_KEY_ID\" in ${GNUPGHOME:-~/.gnupg}"
	if [ "$n" -gt 1 ]; then
		die "REPO_GPG_KEY_ID=\"$REPO_GPG_KEY_ID\" matches $n secret keys in ${GNUPGHOME:-~/.gnupg}:
$(awk '{ fpr = $1; $1 = $2 = $3 = ""; sub(/^ +/, ""); print "  " fpr "  " $0 }' <<<"$keys")
gpg would sign with the first and the exported key would make nodes trust all of them: set REPO_GPG_KEY_ID to the full fingerprint of the signing key"
	fi
	local valid caps
	read -r REPO_GPG_FPR valid caps _ <<<"$keys"
	case $valid in
	r) die "key $REPO_GPG_FPR (\"$REPO_GPG_KEY_ID\") is revoked: sign with its successor" ;;
	e) die "key $REPO_GPG_FPR (\"$REPO_GPG_KEY_ID\") has expired: extend it (gpg --quick-set-expire) or sign with its successor" ;;
	d | i | n) die "key $REPO_GPG_FPR (\"$REPO_GPG_KEY_ID\") is not valid (gpg validity \"$valid\"): sign with a valid key" ;;
	esac
	[[ $caps == *S* ]] || die "key $REPO_GPG_FPR (\"$REPO_GPG_KEY_ID\") cannot sign (capabilities \"$caps\"): give it a signing subkey or use another key"
	export REPO_GPG_FPR
}

# export_key FILE [--armor]: the signing key's public part, and only it, into
# FILE; fails unless FILE holds exactly that one key.
export_key() {
	local file=$1
	shift
	gpg --batch "$@" --export "$REPO_GPG_FPR" >"$file"
	local got
	got=$(gpg --batch --with-colons --import-options show-only --import <"$file" 2>/dev/null | awk -F: '$1 == "pub" { pub = 1; next } pub && $1 == "fpr" { print $10; pub = 0 }')
	[ "$got" = "$REPO_GPG_FPR" ] || die "$file holds the keys \"${got//$'\n'/ }\", not exactly $REPO_GPG_FPR"
}
