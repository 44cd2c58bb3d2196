#!/usr/bin/env bash
# tests/bench/compare_builds.sh — before/after in one run: the benchmarks of
# tests/bench/run.sh for two builds of searchsync, alternating A, B, A, B on
# one set of servers (the servers and the machine's state shared, a drift
# between rounds spread over both sides).
#
#   usage: compare_builds.sh BUILD_A_DIR BUILD_B_DIR [BENCH...]   (default: reindex sync deliver)
# A build dir holds `searchsync` and `tests/tools/` (make && make check TESTS=).
# The benchmark scripts and demo data come from this checkout. Sizes are the
# benchmarks' own knobs (BENCH_*), with smaller defaults here so that the
# whole comparison takes about 8 minutes on 2 cores.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
SEARCHSYNC_SRCDIR="${SEARCHSYNC_SRCDIR:-$(cd "$here/../.." && pwd)}"
export SEARCHSYNC_SRCDIR
[ $# -ge 2 ] || { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
A="$1" B="$2"
shift 2
benches=("$@")
[ ${#benches[@]} -gt 0 ] || benches=(reindex sync deliver)
for d in "$A" "$B"; do
    [ -x "$d/searchsync" ] && [ -d "$d/tests/tools" ] || { echo "$d: no build (searchsync, tests/tools)"; exit 2; }
done
export SEARCHSYNC_HARNESS_DIR
SEARCHSYNC_HARNESS_DIR="$(mktemp -d "${TMPDIR:-/tmp}/searchsync-compare.XXXXXX")"
touch "$SEARCHSYNC_HARNESS_DIR/.temporary"
trap 'bash "$SEARCHSYNC_SRCDIR/tests/harness/servers.sh" stop' EXIT
bash "$SEARCHSYNC_SRCDIR/tests/harness/servers.sh" start mariadb opensearch >/dev/null
export BENCH_SIZES="${BENCH_SIZES:-20000}" BENCH_ROUNDS="${BENCH_ROUNDS:-3}"
export BENCH_DOCS="${BENCH_DOCS:-100000}" BENCH_PAIRS="${BENCH_PAIRS:-2}"
export BENCH_PRODUCTS="${BENCH_PRODUCTS:-10000}" BENCH_LAG_RUNS="${BENCH_LAG_RUNS:-10:default:30}"
export BENCH_ROOT_CHANGES="${BENCH_ROOT_CHANGES:-50000}" BENCH_NESTED_CHANGES="${BENCH_NESTED_CHANGES:-40000}"
for bench in "${benches[@]}"; do
    for side in "$A" "$B" "$A" "$B"; do
        echo "######## $bench $side $(date -u +%H:%M:%S)"
        w=1; [ "$bench" = sync ] && w=10
        BENCH_WARMUP="${BENCH_WARMUP:-$w}" SEARCHSYNC_BIN="$side/searchsync" \
            bash "$SEARCHSYNC_SRCDIR/tests/bench/run.sh" "$bench" 2>&1
    done
done
echo "######## done $(date -u +%H:%M:%S)"
