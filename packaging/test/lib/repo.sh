# Shared by the packaging tests that install from the repositories `make
# repo` builds (sourced after common.sh). Meant for reuse, e.g. by a boot
# test that installs with apt-get from the repository.

# build_test_repo DIR: `make repo` of the current dist/ into DIR, signed by a
# new throwaway key whose keyring is DIR.gnupg (stop its agent with
# stop_test_repo_agents). The public keys land in DIR/rke2-proxy-backend.gpg
# and .asc.
build_test_repo() {
	local dir=$1
	(
		eval "$("$REPO/packaging/repo/test-key.sh" "$dir.gnupg")"
		make -s -C "$REPO" repo REPO_DIR="$dir" >"$dir.log" 2>&1
	) || {
		cat "$dir.log" >&2
		fail "make repo into $dir failed"
	}
}

# stop_test_repo_agents DIR...: stop the gpg-agent gpg left for each keyring
# directory given (build_test_repo's DIR.gnupg, dnf's pubring caches).
stop_test_repo_agents() {
	local d
	for d in "$@"; do
		[ -d "$d" ] && { gpgconf --homedir "$d" --kill gpg-agent 2>/dev/null || true; }
	done
	return 0
}

# build_rotated_key_repo DIR: a keyring DIR.gnupg as a key rotation leaves it,
# two secret keys of one user ID: the retired one (made first, so gpg lists
# and would pick it first) and its successor. `make repo` with the shared
# user ID as REPO_GPG_KEY_ID must be refused, naming both fingerprints and
# saying to pass the full one, and build nothing; with the successor's
# fingerprint it builds DIR, and both exported public keys hold exactly the
# successor. Sets RETIRED_FPR and CURRENT_FPR: the caller checks its format's
# signatures with signer_of (and rpm -K).
build_rotated_key_repo() {
	local dir=$1 uid=test-repo@rke2-proxy-backend.invalid f got
	RETIRED_FPR=$(eval "$("$REPO/packaging/repo/test-key.sh" "$dir.gnupg")" && echo "$REPO_GPG_KEY_ID") || fail "test-key.sh failed"
	CURRENT_FPR=$(eval "$("$REPO/packaging/repo/test-key.sh" "$dir.gnupg")" && echo "$REPO_GPG_KEY_ID") || fail "test-key.sh failed"
	if (GNUPGHOME=$dir.gnupg REPO_GPG_KEY_ID=$uid make -s -C "$REPO" repo REPO_DIR="$dir") >"$dir.ambiguous.log" 2>&1; then
		cat "$dir.ambiguous.log" >&2
		fail "make repo accepted REPO_GPG_KEY_ID=$uid, which names two keys"
	fi
	assert_contains "$dir.ambiguous.log" "REPO_GPG_KEY_ID=\"$uid\" matches 2 secret keys" "make repo with an ambiguous key ID"
	assert_contains "$dir.ambiguous.log" "  $RETIRED_FPR  " "make repo names the retired key"
	assert_contains "$dir.ambiguous.log" "  $CURRENT_FPR  " "make repo names the current key"
	assert_contains "$dir.ambiguous.log" "set REPO_GPG_KEY_ID to the full fingerprint of the signing key" "make repo says what to do"
	[ ! -e "$dir" ] || fail "make repo refused the key but left $dir behind"
	(GNUPGHOME=$dir.gnupg REPO_GPG_KEY_ID=$CURRENT_FPR make -s -C "$REPO" repo REPO_DIR="$dir") >"$dir.log" 2>&1 || {
		cat "$dir.log" >&2
		fail "make repo with the current key's fingerprint failed"
	}
	for f in "$dir/rke2-proxy-backend.gpg" "$dir/rke2-proxy-backend.asc"; do
		got=$(gpg --batch --with-colons --import-options show-only --import <"$f" 2>/dev/null |
			awk -F: '$1 == "pub" { p = 1; next } p && $1 == "fpr" { print $10; p = 0 }' | tr '\n' ' ')
		[ "$got" = "$CURRENT_FPR " ] || fail "$f holds the keys $got; want exactly the signing key $CURRENT_FPR"
	done
}

# signer_of KEYRING_DIR FILE [SIG]: the primary fingerprint of the key whose
# signature verifies (SIG detached over FILE, or FILE clearsigned), checked
# against every key in KEYRING_DIR so a signature by the wrong one shows.
signer_of() {
	gpg --homedir "$1" --batch --status-fd 1 --verify "${@:3}" "$2" 2>/dev/null | awk '$2 == "VALIDSIG" { print $NF }'
}
