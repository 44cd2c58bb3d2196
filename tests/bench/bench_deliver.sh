#!/usr/bin/env bash
# tests/bench/bench_deliver.sh — delivery throughput for 1 KB documents, beside
# a plain parallel bulk load of the same documents into the same engine in the
# same run (the baseline: pre-built NDJSON files posted by P curl processes,
# each keeping its connection alive with --next, no versions, no compression).
#
# Prints docs/s for each, the ratio, and CPU seconds of searchsync's delivery
# (the driver process: user+sys) against the engine's CPU seconds in the same
# interval, for the baseline and searchsync (no gzip, the default;
# BENCH_GZIP=1 adds a gzip run) in warm-up rounds and then pairs of rounds
# (see below). searchsync's CPU includes the driver generating the documents.
# Knobs: BENCH_DOCS (default 200000), BENCH_PAR (default 4), BENCH_BATCH (500).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
SEARCHSYNC_SRCDIR="${SEARCHSYNC_SRCDIR:-$(cd "$here/../.." && pwd)}"
. "$SEARCHSYNC_HARNESS_DIR/env.sh"
DRIVER="${DELIVER_DRIVER:-$(dirname "${SEARCHSYNC_BIN:-$PWD/searchsync}")/tests/tools/deliver_driver}"
[ -x "$DRIVER" ] || { echo "bench_deliver: $DRIVER not built (make check_PROGRAMS)"; exit 1; }
N="${BENCH_DOCS:-200000}"
P="${BENCH_PAR:-4}"
B="${BENCH_BATCH:-500}"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/bench-deliver.XXXXXX")"
trap 'rm -rf "$tmp"; curl -s -XDELETE "$SEARCH_URL/bench_*" >/dev/null' EXIT

TCK="$(getconf CLK_TCK)"
engine_cpu() { # cumulative CPU seconds (user+sys, all threads) of the engine's process group
    local pg p
    pg="$(ps -o pgid= -p "$SEARCH_PID" | tr -d ' ')"
    for p in $(ps -o pid= -g "$pg"); do
        # fields after the ")" of comm: utime is the 12th, stime the 13th
        sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null | awk '{print $12 + $13}'
    done | awk -v t="$TCK" '{s += $1} END {printf "%.2f\n", s / t}'
}
now() { date +%s.%N; }
create() { "$DRIVER" --url "$SEARCH_URL" --index "$1" "${common[@]}" create >/dev/null; }
common=(--changes "$N" --docs "$N" --mix unique --body-bytes 1024 --batch-max "$B")

echo "bench_deliver: $N docs of 1 KB, $P parallel, batches of $B, engine $SEARCH_URL"
"$DRIVER" --url "$SEARCH_URL" --index bench_plain "${common[@]}" bulkfiles "$tmp" "$P"
for f in "$tmp"/bulk-*.ndjson; do split -l $((2 * B)) -d -a 5 "$f" "$f.part-"; done

baseline() {
    local idx=$1 pids=() f args
    create "$idx"
    for f in "$tmp"/bulk-*.ndjson; do
        args=()
        for c in "$f".part-*; do
            [ ${#args[@]} -gt 0 ] && args+=(--next)
            args+=(-s -o /dev/null -H 'Content-Type: application/x-ndjson'
                   --data-binary "@$c" "$SEARCH_URL/$idx/_bulk")
        done
        curl "${args[@]}" &
        pids+=($!)
    done
    wait "${pids[@]}"
}

run_one() { # name kind
    local name=$1 kind=$2 idx="bench_$1" e0 e1 t0 t1 self
    [ "$kind" = base ] && idx=bench_plain
    e0=$(engine_cpu); t0=$(now)
    if [ "$kind" = base ]; then
        baseline "$idx"
        self=""
    else
        create "$idx"
        /usr/bin/time -f '%U %S' -o "$tmp/time" "$DRIVER" --url "$SEARCH_URL" --index "$idx" \
            "${common[@]}" --helpers "$P" --workers $((2 * P)) --hwm $((8 * B * P)) \
            $([ "$kind" = nogz ] && echo --no-compress) run >"$tmp/out"
        self="$(awk '{print $1 + $2}' "$tmp/time")"
    fi
    curl -s -XPOST "$SEARCH_URL/$idx/_refresh" >/dev/null
    t1=$(now); e1=$(engine_cpu)
    local cnt; cnt="$(curl -s "$SEARCH_URL/$idx/_count" | jq .count)"
    [ "$cnt" = "$N" ] || { echo "bench_deliver: $idx has $cnt docs, expected $N"; exit 1; }
    awk -v n="$N" -v t0="$t0" -v t1="$t1" -v e0="$e0" -v e1="$e1" -v s="$self" -v name="$name" \
        'BEGIN { dt = t1 - t0; ec = e1 - e0;
                 printf "%-22s %7.0f docs/s  %6.2f s  engine cpu %6.2f s", name, n / dt, dt, ec;
                 if (s != "") printf "  searchsync cpu %5.2f s (%4.1f%% of engine)", s, 100 * s / ec;
                 printf "\n" }' | tee -a "$tmp/results"
    curl -s -XDELETE "$SEARCH_URL/$idx" >/dev/null
}

# The engine keeps getting faster for a while (JIT, caches): BENCH_WARMUP
# rounds (default 2) are run and not counted; then BENCH_PAIRS pairs of
# rounds (default 3), one with the baseline first and one with searchsync
# first. A pair's ratio is the geometric mean of its two rounds' ratios, which
# cancels a steady drift between the first and the second run of a round;
# the figure is the median of the pairs' ratios.
WARMUP="${BENCH_WARMUP:-2}"
PAIRS="${BENCH_PAIRS:-3}"
: >"$tmp/ratios"
round=0
for phase in $(seq 1 $((WARMUP + 2 * PAIRS))); do
    : >"$tmp/results"
    if [ "$phase" -le "$WARMUP" ]; then echo "warm-up round $phase (not counted)"; else round=$((round + 1)); echo "round $round"; fi
    if [ $((phase % 2)) = 1 ]; then
        run_one "plain-curl-bulk" base
        run_one "searchsync-nogzip" nogz
    else
        run_one "searchsync-nogzip" nogz
        run_one "plain-curl-bulk" base
    fi
    [ -n "${BENCH_GZIP:-}" ] && run_one "searchsync-gzip" gz
    base_rate="$(awk '$1 == "plain-curl-bulk" {print $2}' "$tmp/results")"
    for k in nogzip ${BENCH_GZIP:+gzip}; do
        r="$(awk -v k="searchsync-$k" '$1 == k {print $2}' "$tmp/results")"
        awk -v r="$r" -v b="$base_rate" -v k="$k" 'BEGIN { printf "  ratio searchsync-%s / plain = %.1f%%\n", k, 100 * r / b }'
        [ "$phase" -gt "$WARMUP" ] && awk -v r="$r" -v b="$base_rate" -v k="$k" -v p=$(( (round + 1) / 2 )) 'BEGIN { printf "%s %d %.4f\n", k, p, r / b }' >>"$tmp/ratios"
    done
done
for k in nogzip ${BENCH_GZIP:+gzip}; do
    awk -v k="$k" '$1 == k { if ($2 in a) printf "%.1f\n", 100 * sqrt(a[$2] * $3); else a[$2] = $3 }' "$tmp/ratios" | sort -n |
        awk -v k="$k" '{v[NR] = $1; printf "pair ratio (sorted) %d: %.1f%%\n", NR, $1} END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
                        printf "median ratio searchsync-%s / plain over %d pairs of rounds: %.1f%% (pairs %.1f-%.1f%%)\n", k, NR, m, v[1], v[NR] }'
done
