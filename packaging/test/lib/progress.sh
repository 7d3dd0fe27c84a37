#!/usr/bin/env bash
# progress.sh LABEL CMD [ARG...] runs CMD as the Makefile's long steps do:
# it says "== LABEL" when CMD starts, "== LABEL: still running, 2m30s" every
# HEARTBEAT_SECONDS (default 50) while it runs, and how it ended and after
# how long; it exits with CMD's status. A newcomer's first `make test` runs
# for many minutes, some steps silent for minutes on end (a boot waiting for
# its guest, go test compiling): at least a line a minute says it is alive.
set -uo pipefail
label=$1
shift
every=${HEARTBEAT_SECONDS:-50}

human() { local s=$1; if [ "$s" -ge 60 ]; then echo "$((s / 60))m$((s % 60))s"; else echo "${s}s"; fi; }
# elapsed: whole seconds since start, from the clock's microseconds (bash's
# SECONDS counts wall-clock second boundaries: up to a second off).
now() { echo "${EPOCHREALTIME//[!0-9]/}"; }
elapsed() { echo $((($(now) - start) / 1000000)); }

start=$(now)
echo "== $label"
# The beat runs beside CMD, which stays in the foreground (its signals,
# stdin and exit status as without this script); it stops with this script,
# whichever way that ends, and on its own when this script is gone.
parent=$$
(
	next=$every
	while sleep 1 && kill -0 "$parent" 2>/dev/null; do
		if [ "$(elapsed)" -ge "$next" ]; then
			echo "== $label: still running, $(human "$(elapsed)")"
			next=$((next + every))
		fi
	done
) &
beat=$!
trap 'kill "$beat" 2>/dev/null' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

"$@"
rc=$?
kill "$beat" 2>/dev/null
wait "$beat" 2>/dev/null
if [ "$rc" = 0 ]; then
	echo "== $label: finished (exit 0) in $(human "$(elapsed)")"
else
	echo "== $label: FAILED (exit $rc) after $(human "$(elapsed)")"
fi
exit "$rc"
