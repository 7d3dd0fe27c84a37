#!/usr/bin/env bash
# footprint.sh [MINOR...]: print the fixed footprint kube-proxy's real
# proxiers program (each minor x backend, dual-stack, 10 Services, kubelet's
# chains): tables, base chains with hook and priority, fixed chains and
# sets/maps, without the per-Service objects. Diff two minors' output to see
# what a new minor changed before teaching verify about it. Needs root (a
# throwaway netns each) and the oracle builds (make oracle).
set -euo pipefail
cd "$(dirname "$0")/../.."
. test/kubeproxy/oracle.sh
[ "$(id -u)" = 0 ] || { echo "footprint.sh: needs root for network namespaces" >&2; exit 1; }
if [ "${1:-}" = --case ]; then
  oracle=$2 b=$3
  bin=$(mktemp -d)
  trap 'rm -rf "$bin"' EXIT
  kube_proxy_flavour "$bin" "$b"
  if ! err=$(PATH=$bin:$PATH "$oracle" --mode "$mode" --services 10 --kubelet 2>&1 >/dev/null); then
    # An oracle built without sigs.k8s.io/iptables-wrappers (1.38) has only
    # the nftables proxier and writes no kubelet chains: say so, and run
    # what it has.
    case $err in *"without sigs.k8s.io/iptables-wrappers"*) ;; *) echo "$err" >&2; exit 1 ;; esac
    if [ "$b" != nftables ]; then echo "## not programmed: ${err#kubeproxy-oracle: }"; exit 0; fi
    echo "## without kubelet's chains: ${err#kubeproxy-oracle: }"
    PATH=$bin:$PATH "$oracle" --mode "$mode" --services 10 >/dev/null 2>&1
  fi
  per_service='KUBE-(SVC|SEP|EXT|FW|SVL|XLB)-|-oracle/|oracle/svc-'
  for save in iptables-legacy-save ip6tables-legacy-save iptables-nft-save ip6tables-nft-save; do
    out=$($save 2>/dev/null | grep -E '^(\*|:KUBE|-A [A-Z]+ .*-j KUBE)' | grep -Ev "$per_service" || true)
    [ -n "$(grep -E 'KUBE' <<<"$out")" ] && { echo "## $save"; sed -E 's/ \[[0-9]+:[0-9]+\]//' <<<"$out"; }
  done
  if [[ $(nft list tables 2>/dev/null) == *kube-proxy* ]]; then
    echo "## nft (kube-proxy tables)"
    nft list ruleset | awk '/^table (ip|ip6) kube-proxy/ {p=1} /^table/ && !/kube-proxy/ {p=0} p' |
      grep -E '^table|^\s+(chain|set|map|counter) |type .* hook' | grep -Ev "$per_service" | sed 's/ {$//'
  fi
  exit 0
fi
minors=("$@")
[ ${#minors[@]} -gt 0 ] || minors=(v1.34 v1.35 v1.36 v1.37 v1.38)
for m in "${minors[@]}"; do
  oracle=$(oracle_binary "$m") || { echo "footprint.sh: no oracle for $m (internal/testkit/oracle.Minors)" >&2; exit 1; }
  for b in iptables-legacy iptables-nft nftables; do
    echo "# $m $b"
    unshare -n "$0" --case "$oracle" "$b"
  done
done
