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
