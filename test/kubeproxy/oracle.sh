# Sourced, not run: how scripts reach the oracle (kube-proxy's real proxier,
# built by internal/testkit/oracle) and run it as RKE2's kube-proxy image would.
# Used by test/kubeproxy/footprint.sh, bench/*.sh and packaging/test/lib.

# oracle_binary MINOR prints the oracle built for Kubernetes MINOR (e.g.
# v1.36), building it the first time (minutes; internal/testkit/oracle caches it in
# .cache/oracle). Prints nothing and fails when MINOR has no oracle. Run
# from the repository's top directory.
oracle_binary() {
	local minor=$1 oracle
	oracle=$(go test -count=1 -timeout 0 -v -run "^TestBinaries\$/^$minor\$" ./internal/testkit/oracle 2>&1 |
		sed -n "s/.*binary $minor \([^ ]*\) .*/\1/p")
	[ -x "$oracle" ] || return 1
	echo "$oracle"
}

# kube_proxy_flavour DIR BACKEND links the iptables commands in DIR to the
# flavour BACKEND uses, as the kube-proxy image chooses its iptables (put
# DIR first in PATH), and sets mode to kube-proxy's --proxy-mode for it.
kube_proxy_flavour() {
	local dir=$1 flavour c
	case $2 in
		iptables-legacy) flavour=legacy mode=iptables ;;
		iptables-nft) flavour=nft mode=iptables ;;
		nftables) flavour=nft mode=nftables ;;
		*) echo "kube_proxy_flavour: $2 is not a backend (iptables-legacy, iptables-nft or nftables)" >&2; return 1 ;;
	esac
	mkdir -p "$dir"
	for c in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
		ln -s "$(command -v "xtables-$flavour-multi")" "$dir/$c"
	done
}
