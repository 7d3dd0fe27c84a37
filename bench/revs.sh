#!/usr/bin/env bash
# Benchmark, not a test: the project's Go benchmarks at two revisions, run
# as interleaved pairs (A B A B ...) so that a shared machine's load falls
# on both sides alike. For each benchmark it prints the median of the
# per-pair ratios B/A (ns/op and B/op), with min-max and the load average,
# e.g. to show that a refactor changed no speed or memory.
# Usage: bench/revs.sh REV_A REV_B [PACKAGE ...]
# Env: PAIRS=7 (pairs per benchmark), BENCHTIME=1x... (go test -benchtime,
# default 200ms). Packages default to every package with a Benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
[ $# -ge 2 ] || { echo "usage: bench/revs.sh REV_A REV_B [PACKAGE ...]" >&2; exit 2; }
a=$1 b=$2
shift 2
pairs=${PAIRS:-7}
benchtime=${BENCHTIME:-200ms}

work=$(mktemp -d)
cleanup() {
  for side in A B; do
    [ -d "$work/$side" ] && git worktree remove --force "$work/$side" >/dev/null 2>&1 || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

pkgs=("$@")
if [ ${#pkgs[@]} -eq 0 ]; then
  # Directories (module-relative) with a Benchmark in both revisions' trees
  # are compared; a package moved between them is named by its B path and
  # found in A by its benchmark names (see pathIn below).
  mapfile -t pkgs < <(git grep -l '^func Benchmark' "$b" -- '*_test.go' | sed "s#^$b:##; s#/[^/]*\$##" | sort -u)
fi

# pathIn REV DIR BENCH... finds DIR in REV, or the one directory of REV that
# defines the same benchmarks (the package moved between the revisions).
pathIn() {
  local rev=$1 dir=$2 first
  if git cat-file -e "$rev:$dir" 2>/dev/null; then echo "$dir"; return; fi
  first=$(git grep -h -o '^func Benchmark[A-Za-z0-9_]*' "$b" -- "$dir/*_test.go" | head -1 | sed 's/^func //')
  git grep -l "^func $first(" "$rev" -- '*_test.go' | sed "s#^$rev:##; s#/[^/]*\$##" | head -1
}

for side in A B; do
  rev=$a
  [ $side = B ] && rev=$b
  git worktree add --detach -q "$work/$side" "$rev"
done

echo "bench/revs.sh: A=$(git rev-parse --short "$a") B=$(git rev-parse --short "$b"), $pairs pairs, benchtime $benchtime, load $(cut -d' ' -f1-3 /proc/loadavg)"
for dir in "${pkgs[@]}"; do
  adir=$(pathIn "$a" "$dir")
  if [ -z "$adir" ]; then
    echo "$dir: not in $a, nothing to compare"
    continue
  fi
  (cd "$work/A" && go test -c -o "$work/A.test" "./$adir") >/dev/null
  (cd "$work/B" && go test -c -o "$work/B.test" "./$dir") >/dev/null
  : >"$work/runs"
  for i in $(seq "$pairs"); do
    for side in A B; do
      # Each side runs in its own package directory, as go test would.
      d=$work/$side/$dir
      [ $side = A ] && d=$work/A/$adir
      (cd "$d" && "$work/$side.test" -test.run '^$' -test.bench . -test.benchmem -test.benchtime "$benchtime") |
        awk -v side=$side -v i="$i" '/^Benchmark/ {
          name=$1; sub(/-[0-9]+$/, "", name); ns=""; bop=""
          for (k = 2; k < NF; k++) { if ($(k+1) == "ns/op") ns = $k; if ($(k+1) == "B/op") bop = $k }
          print i, side, name, ns, bop }' >>"$work/runs"
    done
  done
  if [ ! -s "$work/runs" ]; then
    echo "$dir: no benchmark ran"
    continue
  fi
  # Pair A and B of the same round, then the median and range of B/A.
  awk -v dir="$dir" '
    { key = $1 SUBSEP $3; if ($2 == "A") { ans[key] = $4; ab[key] = $5 } else { bns[key] = $4; bb[key] = $5 }; names[$3] = 1 }
    function med(arr, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (arr[j] < arr[i]) { t = arr[i]; arr[i] = arr[j]; arr[j] = t }
      return n % 2 ? arr[(n + 1) / 2] : (arr[n / 2] + arr[n / 2 + 1]) / 2 }
    END {
      for (name in names) {
        n = 0; m = 0
        for (key in bns) { split(key, p, SUBSEP); if (p[2] != name || !(key in ans) || ans[key] == 0) continue
          r[++n] = bns[key] / ans[key]; if (ab[key] > 0) q[++m] = bb[key] / ab[key] }
        if (n == 0) { printf "%s %s: only in one revision\n", dir, name; continue }
        line = sprintf("%s %s: time B/A %.2f (%.2f-%.2f)", dir, name, med(r, n), r[1], r[n])
        if (m > 0) line = line sprintf(", B/op B/A %.2f (%.2f-%.2f)", med(q, m), q[1], q[m])
        print line; delete r; delete q
      }
    }' "$work/runs" | sort
done
echo "bench/revs.sh: load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
