#!/usr/bin/env bash
# Benchmark, not a test: what a switch costs around the RKE2 restart it
# exists for. The real binary switches a fixture node (the fake systemctl of
# internal/switchover/binary_netns_test.go: its daemon-reload runs the real
# generator, its restart the real apply and loads kube-proxy's rules for
# real) in a network namespace of its own, as interleaved pairs: the fake's
# restart alone, then a switch (alternately to iptables-nft and back to
# iptables-legacy). It prints the median pair ratio with min-max and the
# load, and the switch's step-cost table (each step's median; before the
# first step; between steps, which is the journal's writes; after the last).
# Goal (issue 35): the switch <= 2x the restart alone. Needs root (network
# namespaces) and the iptables-legacy/-nft tools.
# Env: PAIRS=31 (rounds).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
. bench/lib.sh
need_root_or_skip "the switch runs in a network namespace of its own"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Built as the release is (static: no dynamic loader at each of the
# switch's, apply's and the generator's starts).
CGO_ENABLED=0 go build -trimpath -o "$work/rke2-proxy-backend" ./cmd/rke2-proxy-backend
RKE2PB_SWITCH_BINARY=$work/rke2-proxy-backend RKE2PB_SWITCH_COST=${PAIRS:-31} \
  go test ./internal/switchover/ -run '^TestSwitchCost$' -count=1 -v |
  sed -n '/^ *switch cost:/,/after the last step/p' | sed "s/^        //"
