#!/usr/bin/env bash
# Benchmark, not a test: what a switch costs around the RKE2 restart it
# exists for. The real binary switches a fixture node (the fake systemctl of
# internal/switchover/binary_netns_test.go: its daemon-reload runs the real
# generator, its restart the real apply and loads kube-proxy's rules for
# real) in a network namespace of its own. Each round times the fake's
# restart alone, a daemon-reload and restart, a switch, and the move by hand
# onto the other backend (backend: edited, daemon-reload, restart; the old
# backend's rules left, then flushed untimed), alternating between
# iptables-legacy and iptables-nft over an even number of rounds: restoring
# kube-proxy's rules costs iptables-nft several times what it costs
# iptables-legacy, so each switch is paired with the round whose rows load
# the same backend, and each row's median is printed per backend too. It
# prints the median pair ratios with min-max and the load, and the switch's
# step-cost table (each step's median; before the first step; between
# steps, which is the journal's writes; after the last), the restart step
# itemised into its systemctl calls, as the switch logs their wall and CPU
# times, beside the same calls by hand, and the switch's own work around
# them. Goal (issue 35): the switch <= 2x the restart alone. Needs root
# (network namespaces) and the iptables-legacy/-nft tools.
# Env: PAIRS=31 (rounds; an odd count runs one more).
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
