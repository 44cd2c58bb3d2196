#!/usr/bin/env bash
# tests/bench/bench_reindex.sh — reindex throughput, beside a plain
# parallel bulk load of the same documents into the same engine in the same
# run, at several table sizes (memory must stay flat in the table's size).
#
# For each size N (BENCH_SIZES, default "20000 100000" demo products, with
# their reviews and replies as child documents in the same index):
#   1. `searchsync run` starts on the filled database: its first sync is a
#      reindex (v1; it also warms the engine up)
#   2. BENCH_WARMUP rounds (default 2, as bench_deliver) of both loads, not counted: the
#      engine's JIT keeps speeding up for minutes, and would favour whichever
#      load ran second
#   3. BENCH_ROUNDS rounds (default 4), the order swapped every round, of
#      - `searchsync reindex` of the same index while the daemon runs (v2,
#        v3, ...): documents/s from the run's own bookkeeping (reindex_runs),
#        CPU seconds of the daemon, MariaDB and the engine
#      - the baseline: the same documents, built beforehand by
#        tests/tools/docbuild_dump into NDJSON bulk files (with the
#        ss_version field delivery adds to each document), posted by
#        BENCH_PAR (default 4) curl processes with keep-alive into an index
#        with the same body, refresh off and no replicas (as bulk-load advice
#        goes), every write on disk as the engine's default durability wants
#      - unless BENCH_MATCHED=0, the same plain load once more with
#        tests/bench/cpu_burner.py keeping busy the share of a CPU that the
#        last reindex's reading took (its daemon + MariaDB CPU s / its
#        seconds): what a loader that reads its documents before sending
#        them could reach on this box, the reading's CPU not being free
#      - with BENCH_TUNED=1, the tuned plain load: the plain load once more,
#        given what the reindex does to the index it builds: created with the
#        same build settings (no refresh, no replicas, translog written
#        asynchronously) and refreshed once when half its requests are
#        answered. The reindex against it measures what the reading and the
#        bookkeeping cost; against the plain load, what a user gains
# Prints docs/s of each, each round's ratios and their medians (target >= 90%
# of the plain load), CPU, and the daemon's peak RSS (VmHWM) over all rounds.
#
# BENCH_PIN=1 gives the engine CPUs of its own, as a search cluster has in
# production: the engine runs on CPUs 1.., MariaDB, the daemon and the plain
# load's curls on CPU 0, for both loads alike (taskset; undone at the end).
# Without it all share every CPU, and the reindex's MariaDB and daemon take
# CPU from the engine that the plain load's curls do not.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
SEARCHSYNC_SRCDIR="${SEARCHSYNC_SRCDIR:-$(cd "$here/../.." && pwd)}"
. "$SEARCHSYNC_HARNESS_DIR/env.sh"
BIN="${SEARCHSYNC_BIN:-$PWD/searchsync}"
[ -x "$BIN" ] || BIN="$SEARCHSYNC_SRCDIR/searchsync"
DUMP="$(dirname "$BIN")/tests/tools/docbuild_dump"
[ -x "$DUMP" ] || { echo "bench_reindex: $DUMP not built (make check_PROGRAMS)"; exit 1; }
SIZES="${BENCH_SIZES:-20000 100000}"
PAR="${BENCH_PAR:-4}"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/bench-reindex.XXXXXX")"
P="breindex$$"
DAEMON=""
BURNER=""
cleanup() {
    [ -n "$DAEMON" ] && kill -9 "$DAEMON" 2>/dev/null
    [ -n "$BURNER" ] && kill "$BURNER" 2>/dev/null
    curl -s -XDELETE "$SEARCH_URL/${P}_*?expand_wildcards=all" >/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
NCPU="$(nproc)"
PIN=""
if [ "${BENCH_PIN:-}" = 1 ]; then
    [ "$NCPU" -ge 2 ] || { echo "bench_reindex: BENCH_PIN=1 needs 2 CPUs or more"; exit 1; }
    PIN="taskset -c 0"
    taskset -a -p -c "1-$((NCPU - 1))" "$SEARCH_PID" >/dev/null
    taskset -a -p -c 0 "$MYSQL_PID" >/dev/null
    unpin() { taskset -a -p -c "0-$((NCPU - 1))" "$SEARCH_PID" >/dev/null; taskset -a -p -c "0-$((NCPU - 1))" "$MYSQL_PID" >/dev/null; }
    trap 'cleanup; unpin' EXIT
fi
q() { mariadb --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -u root -N -B "$@"; }
TCK="$(getconf CLK_TCK)"
cpu_of() { sed 's/^.*) //' "/proc/$1/stat" | awk -v t="$TCK" '{printf "%.2f", ($12 + $13) / t}'; }
hwm_of() { awk '/VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$1/status"; }
engine_cpu() { # all processes of the engine's process group
    local pg p
    pg="$(ps -o pgid= -p "$SEARCH_PID" | tr -d ' ')"
    for p in $(ps -o pid= -g "$pg"); do cpu_of "$p" 2>/dev/null; echo; done | awk '{s += $1} END {printf "%.2f", s}'
}
dcpu() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f", b - a}'; }
# median FILE WHAT: the median of FILE's numbers, with their range
median() {
    sort -n "$1" | awk -v n="$N" -v what="$2" '{v[NR] = $1} END { if (!NR) exit; m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
        printf "  N = %d: median ratio %s over %d rounds: %.1f%% (range %.1f-%.1f%%)\n", n, what, NR, m, v[1], v[NR] }'
}
# index_work INDEX: the engine's own indexing figures for INDEX
index_work() {
    curl -s "$SEARCH_URL/$1/_stats" | jq -r --arg ix "$1" '._all.primaries as $p |
        "      engine work on \($ix): \($p.indexing.index_total) docs indexed in \($p.indexing.index_time_in_millis) ms, " +
        "\($p.refresh.total) refreshes, merges \($p.merges.total_time_in_millis) ms, \($p.segments.count) segments"'
}

ROUNDS="${BENCH_ROUNDS:-4}"
MATCHED="${BENCH_MATCHED:-1}"
TUNED="${BENCH_TUNED:-0}"
WARMUP="${BENCH_WARMUP:-2}"
v=1
# one reindex of $A by the running daemon: sets rate (docs/s from the run's
# own bookkeeping) and prints CPU
reindex_once() {
    local c0 m0 e0 t0 t1 c1 m1 e1 docs secs
    c0="$(cpu_of "$DAEMON")"; m0="$(cpu_of "$MYSQL_PID")"; e0="$(engine_cpu)"
    t0=$(date +%s.%N)
    $PIN "$BIN" reindex --config "$tmp/c.ini" "$A" >"$tmp/reindex.out" 2>&1 || { cat "$tmp/reindex.out"; exit 1; }
    t1=$(date +%s.%N)
    c1="$(cpu_of "$DAEMON")"; m1="$(cpu_of "$MYSQL_PID")"; e1="$(engine_cpu)"
    v=$((v + 1))
    read -r docs secs <<<"$(q "$meta" -e "SELECT docs_written, TIMESTAMPDIFF(MICROSECOND, started_at, finished_at) / 1e6 FROM reindex_runs WHERE version = $v")"
    rate=$(awk -v d="$docs" -v s="$secs" 'BEGIN {printf "%.0f", d / s}')
    # the share of one CPU its reading took, for the matched plain load
    share=$(awk -v c="$(dcpu "$c0" "$c1")" -v m="$(dcpu "$m0" "$m1")" -v a="$t0" -v b="$t1" \
        'BEGIN {printf "%.2f", (c + m) / (b - a)}')
    echo "    searchsync reindex (v$v): $docs documents in $secs s = $rate docs/s (command: $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}') s);" \
         "CPU s: daemon $(dcpu "$c0" "$c1"), MariaDB $(dcpu "$m0" "$m1"), engine $(dcpu "$e0" "$e1")"
    # where the run's time went: queued -> first page acknowledged, the jobs'
    # finishing times (the tail runs with fewer jobs), last job -> alias switched
    q "$meta" -e "SELECT CONCAT('      timeline (s from queued): first page acknowledged ',
            ROUND(TIMESTAMPDIFF(MICROSECOND, r.started_at, MIN(j.started_at)) / 1e6, 2),
            ', jobs done ', GROUP_CONCAT(ROUND(TIMESTAMPDIFF(MICROSECOND, r.started_at, j.finished_at) / 1e6, 2)
                                        ORDER BY j.finished_at SEPARATOR ' '),
            ', alias switched ', ROUND(TIMESTAMPDIFF(MICROSECOND, r.started_at, r.finished_at) / 1e6, 2))
        FROM reindex_runs r JOIN reindex_run_jobs j ON j.run_id = r.id WHERE r.version = $v GROUP BY r.id"
    index_work "${A}_v$v"
}
# the same documents posted by PAR curls into an index with the same body
# and build settings: sets base; plain_once SHARE: with cpu_burner.py keeping
# SHARE of a CPU busy meanwhile, sets matched; plain_once tuned: the tuned
# plain load (the version's build settings in its body, one refresh once the
# first curl has half its requests answered), sets tuned
plain_once() {
    local pids=() m0 e0 t0 tr t1 m1 e1 cnt chunks w i args rest burner="" b0 b1 r what mid=""
    [ "${1:-}" = tuned ] && { mid=1; shift; }
    # CPU from before the index is created, as the reindex's (whose command
    # creates its version): creating an index costs the engine about 0.2 s.
    # The rate is timed from the first request, as the reindex's from its run
    # being queued, after its version was created.
    m0="$(cpu_of "$MYSQL_PID")"; e0="$(engine_cpu)"
    if [ -n "$mid" ]; then
        curl -s -XPUT "$SEARCH_URL/${P}_plain" -H 'Content-Type: application/json' --data-binary "@$tmp/build.json" >/dev/null
    else
        curl -s -XPUT "$SEARCH_URL/${P}_plain" -H 'Content-Type: application/json' --data-binary "@$tmp/body.json" >/dev/null
        curl -s -XPUT "$SEARCH_URL/${P}_plain/_settings" -H 'Content-Type: application/json' \
            -d '{"index":{"refresh_interval":"-1","number_of_replicas":0}}' >/dev/null
    fi
    if [ -n "${1:-}" ]; then
        $PIN python3 "$here/cpu_burner.py" "$1" &
        burner=$!
        BURNER=$burner
        b0="$(cpu_of "$burner")"
    fi
    t0=$(date +%s.%N)
    chunks=("$tmp"/chunk-*)
    for ((w = 0; w < PAR; w++)); do
        args=()
        rest=()
        for ((i = w; i < ${#chunks[@]}; i += PAR)); do
            if [ -n "$mid" ] && [ "$w" = 0 ] && [ "$i" -ge $((${#chunks[@]} / 2)) ]; then
                [ ${#rest[@]} -gt 0 ] && rest+=(--next)
                rest+=(-s -o /dev/null -H 'Content-Type: application/x-ndjson' --data-binary "@${chunks[$i]}" "$SEARCH_URL/${P}_plain/_bulk")
                continue
            fi
            [ ${#args[@]} -gt 0 ] && args+=(--next)
            args+=(-s -o /dev/null -H 'Content-Type: application/x-ndjson' --data-binary "@${chunks[$i]}" "$SEARCH_URL/${P}_plain/_bulk")
        done
        if [ ${#rest[@]} -gt 0 ]; then
            { $PIN curl "${args[@]}"
              $PIN curl -s -o /dev/null -XPOST "$SEARCH_URL/${P}_plain/_refresh" &
              $PIN curl "${rest[@]}"; wait; } &
            pids+=($!)
        elif [ ${#args[@]} -gt 0 ]; then
            $PIN curl "${args[@]}" & pids+=($!)
        fi
    done
    wait "${pids[@]}"
    tr=$(date +%s.%N)
    curl -s -XPOST "$SEARCH_URL/${P}_plain/_refresh" >/dev/null
    t1=$(date +%s.%N)
    m1="$(cpu_of "$MYSQL_PID")"; e1="$(engine_cpu)"
    what="baseline, plain curl bulk"
    if [ -n "$burner" ]; then
        b1="$(cpu_of "$burner")"
        kill "$burner"; wait "$burner" 2>/dev/null || true
        BURNER=""
        what="matched baseline, the plain load with cpu_burner.py at $1 of a CPU ($(dcpu "$b0" "$b1") CPU s)"
    fi
    [ -n "$mid" ] && what="tuned plain load (built as a version is, refreshed halfway)"
    cnt="$(curl -s "$SEARCH_URL/${P}_plain/_count" | jq .count)"
    r=$(awk -v n="$n" -v a="$t0" -v b="$t1" 'BEGIN {printf "%.0f", n / (b - a)}')
    if [ -n "$burner" ]; then matched=$r; elif [ -n "$mid" ]; then tuned=$r; else base=$r; fi
    echo "    $what of the same $n documents ($cnt in the index, $PAR parallel, 500 a request): $r docs/s; CPU s: MariaDB $(dcpu "$m0" "$m1"), engine $(dcpu "$e0" "$e1")"
    echo "      timeline (s): last bulk answered $(dcpu "$t0" "$tr"), refreshed $(dcpu "$t0" "$t1")"
    index_work "${P}_plain"
    curl -s -XDELETE "$SEARCH_URL/${P}_plain" >/dev/null
}

cpus="all share $NCPU CPUs"
[ -n "$PIN" ] && cpus="engine on CPUs 1-$((NCPU - 1)), MariaDB + daemon + curl on CPU 0"
echo "bench_reindex: sizes $SIZES (demo products), $PAR-way plain bulk baseline, engine $SEARCH_URL; $cpus"
for N in $SIZES; do
    D="${P}_db$N"
    meta="${P}_meta$N"
    bash "$SEARCHSYNC_SRCDIR/sql/demo/generate.sh" --products "$N" --db "$D" \
        --host "$MYSQL_HOST" --port "$MYSQL_PORT" >"$tmp/gen.out" 2>&1 || { cat "$tmp/gen.out"; exit 1; }
    rows="$(q -e "SELECT (SELECT COUNT(*) FROM \`$D\`.products) + (SELECT COUNT(*) FROM \`$D\`.reviews) + (SELECT COUNT(*) FROM \`$D\`.review_replies)")"
    sed "s/\"shop\\./\"$D./g" "$SEARCHSYNC_SRCDIR/sql/demo/mapping.json" |
        jq --arg p "$P$N" '.indices |= map(select(.alias == "products") | .alias = ($p + "_products"))' >"$tmp/mapping.json"
    A="$P${N}_products"
    cat >"$tmp/c.ini" <<INI
[source]
name = bench$N
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $((7400 + N % 500))
start = now
[metadata]
database = $meta
reload_interval_ms = 500
[search]
urls = $SEARCH_URL
[reindex]
${BENCH_JOBS:+parallel_jobs = $BENCH_JOBS}
${BENCH_BUCKETS:+buckets = $BENCH_BUCKETS}
${BENCH_PAGE:+page_size = $BENCH_PAGE}
[log]
level = info
INI
    "$BIN" mapping import --config "$tmp/c.ini" "$tmp/mapping.json" --yes >"$tmp/import.out" 2>&1 || { cat "$tmp/import.out"; exit 1; }
    $PIN "$BIN" run --config "$tmp/c.ini" >"$tmp/run.log" 2>&1 &
    DAEMON=$!
    for _ in $(seq 1 3000); do
        curl -sf "$SEARCH_URL/_alias/$A" >/dev/null && break
        kill -0 "$DAEMON" 2>/dev/null || { echo "the daemon exited:"; tail "$tmp/run.log"; exit 1; }
        sleep 0.2
    done
    echo
    echo "N = $N products: $rows rows (products, reviews, replies)"
    echo "  first sync (v1, cold engine): $(grep -o 'version 1 live: .*' "$tmp/run.log")"
    v=1
    # the baseline's documents: built beforehand by the same builder, as bulk files
    : >"$tmp/docs.ndjson"
    q "$D" -e "SELECT id FROM products ORDER BY id" |
        "$DUMP" --config "$tmp/c.ini" --mapping "$tmp/mapping.json" --index "$A" - >>"$tmp/docs.ndjson" 2>"$tmp/dump.err" || { cat "$tmp/dump.err"; exit 1; }
    q "$D" -e "SELECT id FROM reviews ORDER BY id" |
        "$DUMP" --config "$tmp/c.ini" --mapping "$tmp/mapping.json" --index "$A" --table "$D.reviews" - >>"$tmp/docs.ndjson" 2>"$tmp/dump.err" || { cat "$tmp/dump.err"; exit 1; }
    q "$D" -e "SELECT id FROM review_replies ORDER BY id" |
        "$DUMP" --config "$tmp/c.ini" --mapping "$tmp/mapping.json" --index "$A" --table "$D.review_replies" - >>"$tmp/docs.ndjson" 2>"$tmp/dump.err" || { cat "$tmp/dump.err"; exit 1; }
    # with the version field searchsync stores in every document (ss_version,
    # a long with doc values), so the engine indexes the same fields
    jq -c 'select(.absent | not) | {index: ({_id: .id} + (if .routing then {routing: .routing} else {} end))},
                                   ({ss_version: 4294967296} + .doc)' \
        "$tmp/docs.ndjson" >"$tmp/bulk.ndjson"
    n=$(( $(wc -l <"$tmp/bulk.ndjson") / 2 ))
    rm -f "$tmp"/chunk-*
    split -l 1000 -d -a 6 "$tmp/bulk.ndjson" "$tmp/chunk-" # 500 documents a request
    "$BIN" mapping body --config "$tmp/c.ini" "$A" >"$tmp/body.json" 2>/dev/null
    # the tuned plain load's index: what the reindex creates its versions with
    jq '.settings.index += {"number_of_replicas": 0, "refresh_interval": "-1", "translog": {"durability": "async"}}' \
        "$tmp/body.json" >"$tmp/build.json"

    # rounds: searchsync reindex (v2, v3, ...), the plain load and the
    # matched plain load, the order reversed every round (the matched load
    # takes the share of the reindex before it); the figures are the medians
    # of the rounds' ratios
    for round in $(seq 1 "$WARMUP"); do
        echo "  warm-up $round (not counted)"
        reindex_once; plain_once
    done
    : >"$tmp/ratios"
    : >"$tmp/mratios"
    : >"$tmp/rratios"
    for round in $(seq 1 "$ROUNDS"); do
        echo "  round $round"
        if [ $((round % 2)) = 1 ]; then
            reindex_once; plain_once
            if [ "$MATCHED" = 1 ]; then plain_once "$share"; fi
            if [ "$TUNED" = 1 ]; then plain_once tuned; fi
        else
            if [ "$TUNED" = 1 ]; then plain_once tuned; fi
            if [ "$MATCHED" = 1 ]; then plain_once "$share"; fi
            plain_once; reindex_once
        fi
        ratio=$(awk -v a="$rate" -v b="$base" 'BEGIN {printf "%.1f", 100 * a / b}')
        echo "$ratio" >>"$tmp/ratios"
        line="    ratio: searchsync reindex = $ratio% of the plain load"
        if [ "$MATCHED" = 1 ]; then
            mratio=$(awk -v a="$rate" -v b="$matched" 'BEGIN {printf "%.1f", 100 * a / b}')
            echo "$mratio" >>"$tmp/mratios"
            line="$line, $mratio% of the matched one"
        fi
        if [ "$TUNED" = 1 ]; then
            rratio=$(awk -v a="$rate" -v b="$tuned" 'BEGIN {printf "%.1f", 100 * a / b}')
            echo "$rratio" >>"$tmp/rratios"
            line="$line, $rratio% of the tuned one"
        fi
        echo "$line"
    done
    median "$tmp/ratios" "to the plain load"
    median "$tmp/mratios" "to the matched plain load"
    median "$tmp/rratios" "to the tuned plain load"
    hwm="$(hwm_of "$DAEMON")"
    echo "  daemon peak RSS over all rounds: ${hwm} MB"
    kill -TERM "$DAEMON"; wait "$DAEMON" || true
    DAEMON=""
    curl -s -XDELETE "$SEARCH_URL/${A}_v*" >/dev/null
    q -e "DROP DATABASE \`$D\`; DROP DATABASE \`$meta\`"
done
