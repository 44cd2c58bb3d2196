#!/usr/bin/env bash
# tests/bench/bench_lag_curve.sh — lag against rate: the lag
# phase of bench_sync.sh at several change rates, under the engine's default
# 1 s refresh and a 100 ms one, with [delivery] group_commit on and off
# alternately (the order flips every round) on the servers run.sh started.
# Every lag run appends one JSON line (bench_sync.sh's BENCH_RESULTS); at the
# end tests/bench/lag_curve.py prints the medians over the rounds as a table
# and draws them with gnuplot (Debian's gnuplot-nox) as PNG plots:
#   lag-searchable.png   searchable lag p50 / p99 against the rate, one
#                        panel per refresh setting, a line per mode
#   lag-acknowledged.png the same for the acknowledged lag
#   lag-engine-cpu.png   the engine's CPU per change and bulk requests a
#                        second against the rate
# Knobs: CURVE_ROUNDS (2), CURVE_RATES ("500 2000 5000 10000"), CURVE_REFRESH
# ("default 100ms"), CURVE_SECS (20 s a run), CURVE_MODES ("true false": the
# group_commit values), CURVE_PRODUCTS (10000), CURVE_OUT (a directory;
# default ./lag-curve), CURVE_POLL_MS (the _search poller, 10).
# One transaction every 10 ms, each with rate/100 row changes and the probe.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
SEARCHSYNC_SRCDIR="${SEARCHSYNC_SRCDIR:-$(cd "$here/../.." && pwd)}"
command -v gnuplot >/dev/null || { echo "bench_lag_curve: gnuplot is needed (tests/harness/deps.sh installs gnuplot-nox)"; exit 1; }
ROUNDS="${CURVE_ROUNDS:-2}"
RATES="${CURVE_RATES:-500 2000 5000 10000}"
REFRESH="${CURVE_REFRESH:-default 100ms}"
SECS="${CURVE_SECS:-20}"
MODES=(${CURVE_MODES:-true false})
OUT="${CURVE_OUT:-$PWD/lag-curve}"
mkdir -p "$OUT"
results="$OUT/lag.jsonl"
: >"$results"

runs=""
for rf in $REFRESH; do
    for r in $RATES; do runs="$runs 10:$rf:$SECS:$r"; done
done
echo "bench_lag_curve: $ROUNDS rounds of group_commit ${MODES[*]}, runs (tick:refresh:s:rate):$runs"
rc=0
for round in $(seq 1 "$ROUNDS"); do
    order=("${MODES[@]}")
    if [ $((round % 2)) = 0 ]; then # flip the order every other round
        order=()
        for ((i = ${#MODES[@]} - 1; i >= 0; i--)); do order+=("${MODES[$i]}"); done
    fi
    for mode in "${order[@]}"; do
        echo
        echo "### round $round, group_commit = $mode"
        BENCH_PHASES=lag BENCH_BASELINES=0 BENCH_PRODUCTS="${CURVE_PRODUCTS:-10000}" \
            BENCH_WARMUP=10 BENCH_POLL_MS="${CURVE_POLL_MS:-10}" BENCH_LAG_RUNS="$runs" \
            BENCH_GROUP_COMMIT="$mode" BENCH_TAG="group_commit=$mode" BENCH_RESULTS="$results" \
            bash "$here/bench_sync.sh" || { echo "bench_lag_curve: the run failed"; rc=1; }
    done
done
echo
python3 "$here/lag_curve.py" "$results" "$OUT" || rc=1
echo "plots and table in $OUT"
exit $rc
