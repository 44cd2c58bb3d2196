#!/usr/bin/env bash
# tests/bench/bench_cost.sh — cost as the work grows: time, documents/s, memory and CPU of searchsync at several sizes of one
# piece of work, each beside the engine's raw `_bulk` of the same documents,
# as a JSON line a measure, a markdown table and PNG plots (gnuplot).
#
# Run it:   bash tests/bench/run.sh cost        (starts MariaDB + OpenSearch)
#   or, on servers of tests/harness/servers.sh: bash tests/bench/bench_cost.sh
# The large sizes (each workload on its own; an empty list skips one):
#   BENCH_COST_FLAT="1000000 10000000" BENCH_COST_NESTED= BENCH_COST_BACKLOG= BENCH_COST_FANOUT= bash tests/bench/run.sh cost
#   BENCH_COST_FLAT= BENCH_COST_NESTED=1000000 BENCH_COST_BACKLOG=1000000 BENCH_COST_FANOUT=1000000 bash tests/bench/run.sh cost
# Quick check (a couple of minutes):
#   BENCH_COST_FLAT=20000 BENCH_COST_NESTED=5000 BENCH_COST_BACKLOG=20000 BENCH_COST_FANOUT=20000 \
#     BENCH_COST_TUNE_PARS="2 4" BENCH_COST_TUNE_SIZES="1000 2000" bash tests/bench/run.sh cost
#
# The workloads, each at every size N of its list, in its own database and
# metadata schema, with a fresh `searchsync run` (1 shard, 0 replicas,
# history_retention 0 so that old versions do not fill the disk):
#   flat     N rows of a flat table (7 columns, ~250 bytes of JSON a document):
#            `searchsync run` on the filled table (its first sync, v1: recorded
#            as flat-first-sync), then BENCH_COST_ROUNDS x `searchsync
#            reindex` (v2, v3, ...), timed by the run's own bookkeeping
#            (reindex_runs: queued -> alias switched)
#   nested   N roots x 5 children as a nested array (`children`), the same
#            way (nested-first-sync, nested); documents/s = roots/s
#   backlog  N rows (a flat table), first sync, then the daemon stopped
#            (BENCH_COST_BACKLOG_MODE=sigstop: SIGSTOP; stop: not running)
#            while a writer commits N single-row UPDATEs (rnd = a mark), in
#            transactions of BENCH_COST_TXN; timed from its SIGCONT (or its
#            start) until `_count` of the mark shows all N (polled every
#            200 ms; the engine's default 1 s refresh), and until its
#            checkpoint passes the writer's last commit (seconds_checkpoint)
#   fanout   N products, all in category 1 of 10, the category joined
#            one-to-one into each; one `UPDATE category SET name = ... WHERE
#            id = 1`, timed until `_count` of the new name shows all N:
#            fanout-live  the daemon's router fans it out (in slices,
#                         sync/pipeline/router.c router_set_slice), timed
#                         from the commit
#            fanout-delayed the category marked delay_effect (mapping
#                         imported into the running daemon), the rename
#                         waits as a change snapshot, then `searchsync
#                         delayed-run`, timed from its start
#            (BENCH_COST_FANOUT_MODES, order swapped every round)
# For every measure: seconds, documents/s, the peak RSS of the searchsync
# process doing the work (the daemon's VmHWM, reset before the measure
# through /proc/PID/clear_refs; the delayed-run process's by wait4), its RSS
# sampled every BENCH_COST_RSS_MS over the run (start, end, OUT/rss-*.dat),
# CPU seconds of searchsync (the daemon and the command), MariaDB and the
# engine (its process group). Beside it, the raw _bulk of the same documents:
# the index dumped once per point (scroll: _id and _source, as the engine
# holds them, and its mappings) into NDJSON, loaded by
# tests/bench/raw_bulk.py into a fresh index with the same mappings and the
# build settings (1 shard, 0 replicas, refresh -1, translog async) at the
# (connections, documents a request) raw_bulk.tune found best, once per run
# and document kind (flat and backlog share it); for the backlog and the
# fan-out also the same documents, changed, posted again over the loaded
# index under the engine's default settings and timed to a _count
# (raw_replace), and to its last answer, its _count polled while it is
# posted as searchsync's index is (else the index goes search-idle and the
# engine skips its refreshes); that index is kept through the
# point's rounds, so that round r replaces an index replaced r-1 times
# before, as searchsync's is. Rounds alternate searchsync first / raw
# first, and each measure starts with the engine calm and no merge
# running. The backlog is also timed to the engine's indexing counter (every
# 100 ms: indexed, searchable or not) beside the raw replacement's last
# answer, a comparison the 1 s refresh's schedule does not round up. Each
# measure logs the engine's own counters over it (shard bulks, documents
# indexed, refreshes, merges, flushes, searches, GC).
# Every measure is one JSON line appended to OUT/cost.jsonl; at the end the
# medians over every line of that file by (workload, N) are printed as a
# markdown table (also OUT/cost.md), with how docs/s, seconds per document
# and peak RSS move from the smallest to the largest size, seconds against N
# fitted as a line (a fixed part + N / a rate; the rate between each two
# sizes beside it), the RSS bound, and
# drawn by gnuplot (Debian's gnuplot-nox) as:
#   OUT/cost-docs-per-s.png  docs/s against N (log x), searchsync and raw
#                            (load dashed, replace dotted), a line a workload
#   OUT/cost-rss.png         peak RSS against N
#   OUT/cost-seconds.png     seconds against N, linear axes and log-log
#   OUT/cost-rss-time.png    RSS over each run (first round), a line per N
# `python3 tests/bench/cost_driver.py report OUT` redraws them; cost.jsonl is
# appended to, so runs of different sizes add up (delete it to start afresh).
#
# Knobs (environment) and defaults:
#   BENCH_COST_FLAT       "100000 300000 1000000"  flat rows (10M: add 10000000)
#   BENCH_COST_NESTED     "100000 300000 1000000"  roots (x 5 children)
#   BENCH_COST_BACKLOG    "100000 300000 1000000"  changes in the backlog (3M: add 3000000)
#   BENCH_COST_FANOUT     "100000 300000 1000000"  products under the renamed category
#   BENCH_COST_ROUNDS     1        rounds of each measure (the table: medians)
#   BENCH_COST_FANOUT_MODES "live delayed"
#   BENCH_COST_BACKLOG_MODE sigstop  (or stop: the daemon not running)
#   BENCH_COST_TXN        100      UPDATEs a transaction in the backlog
#   BENCH_COST_CHUNK      1000000  rows an INSERT ... SELECT FROM seq_LO_to_HI
#                                  (not logged: sql_log_bin = 0)
#   BENCH_COST_TUNE_PARS  "2 4 8 16"  connections raw_bulk.tune tries
#   BENCH_COST_TUNE_SIZES "500 1000 2000 5000"  documents a request it tries
#   BENCH_COST_TUNE_DOCS  100000   documents it loads for each pair (a third
#                                  of it for nested roots)
#   BENCH_COST_RSS_MS     250      RSS sampling period
#   BENCH_COST_WARMUP_S   30       seconds of synthetic bulk loads, each followed by
#                                  an externally versioned replacement of its
#                                  documents, warming the engine before the first
#                                  point (0: none; a just-started engine's JIT
#                                  halves the first one)
#   BENCH_COST_WARM_POINT 1        the first workload's smallest point run once
#                                  more before the measures, not recorded (the
#                                  engine's first real work after the synthetic
#                                  warm-up ran at half speed: a 100k backlog
#                                  13,959 then 27,174 docs/s in one run); 0: not
#   BENCH_COST_TIMEOUT    3600     seconds any one wait may take
#   BENCH_COST_SS_INI     (unset)  more of searchsync's configuration (INI text, \n
#                                  for new lines), e.g. '[delivery]\nbatch_max = 2000'
#   BENCH_COST_SS_INI_B   (unset)  a second configuration the backlog measures in the
#                                  same rounds (workload backlog-b; the daemon restarted
#                                  between them, the order swapped every round)
#   BENCH_COST_BUFFER_POOL (unset) e.g. 4G: SET GLOBAL innodb_buffer_pool_size
#                                  first (the harness starts MariaDB with 256M,
#                                  which 10M rows do not fit into)
#   BENCH_COST_KEEP       (unset)  1: keep OUT/tmp (the dumps, mappings, command output;
#                                  the daemons' logs are kept in OUT/logs anyway)
#   COST_OUT              ./cost-curve  where cost.jsonl, cost.md, rss-*.dat,
#                                  logs/ and the PNGs go
#   SEARCHSYNC_BIN        ./searchsync, else the source tree's
#   BENCH_COST_PIN        (unset)  1: the engine on CPUs 1.. of its own, as a search
#                                  cluster has in production; MariaDB, searchsync,
#                                  the writer and the raw loads' curl on CPU 0, for
#                                  both alike (taskset; undone at the end). Without
#                                  it they share every CPU, and searchsync's reads
#                                  of MariaDB take CPU from the engine that the raw
#                                  load's curl does not. Give a pinned run a
#                                  COST_OUT of its own (cost.jsonl adds up).
# Disk: each point checks that about 7x its documents' bytes are free (the
# table, the version, the raw index, the dump and its split) and cleans up
# after itself (indices, databases, dumps, the binlog it wrote).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
SEARCHSYNC_SRCDIR="${SEARCHSYNC_SRCDIR:-$(cd "$here/../.." && pwd)}"
. "$SEARCHSYNC_HARNESS_DIR/env.sh"
BIN="${SEARCHSYNC_BIN:-$PWD/searchsync}"
[ -x "$BIN" ] || BIN="$SEARCHSYNC_SRCDIR/searchsync"
[ -x "$BIN" ] || { echo "bench_cost: $BIN not built"; exit 1; }
for c in python3 curl mariadb gnuplot; do
    command -v "$c" >/dev/null || { echo "bench_cost: $c is needed (tests/harness/deps.sh installs it; gnuplot: gnuplot-nox)"; exit 1; }
done
OUT="${COST_OUT:-$PWD/cost-curve}"
mkdir -p "$OUT"
if [ -n "${BENCH_COST_BUFFER_POOL:-}" ]; then
    mariadb --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -u root -e "SET GLOBAL innodb_buffer_pool_size = $(
        numfmt --from=iec "$BENCH_COST_BUFFER_POOL")"
fi
df -h "$OUT" "$SEARCHSYNC_HARNESS_DIR" | sed 's/^/bench_cost: /'
PIN=""
if [ "${BENCH_COST_PIN:-}" = 1 ]; then
    NCPU="$(nproc)"
    [ "$NCPU" -ge 2 ] || { echo "bench_cost: BENCH_COST_PIN=1 needs 2 CPUs or more"; exit 1; }
    PIN="taskset -c 0"
    taskset -a -p -c "1-$((NCPU - 1))" "$SEARCH_PID" >/dev/null
    taskset -a -p -c 0 "$MYSQL_PID" >/dev/null
    trap 'taskset -a -p -c "0-$((NCPU - 1))" "$SEARCH_PID" >/dev/null; taskset -a -p -c "0-$((NCPU - 1))" "$MYSQL_PID" >/dev/null' EXIT
    echo "bench_cost: pinned: the engine on CPUs 1-$((NCPU - 1)); MariaDB, searchsync, the writer and curl on CPU 0"
fi
$PIN python3 "$here/cost_driver.py" run --searchsync "$BIN" --mysql-port "$MYSQL_PORT" --mysql-pid "$MYSQL_PID" \
    --search "$SEARCH_URL" --search-pid "$SEARCH_PID" --harness "$SEARCHSYNC_HARNESS_DIR" --out "$OUT"
