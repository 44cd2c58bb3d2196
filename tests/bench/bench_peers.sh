#!/usr/bin/env bash
# tests/bench/bench_peers.sh — searchsync side by side with its peers, on
# the servers run.sh started, the same data and in alternating order:
#   go-mysql-elasticsearch (GME, the last commit of its repository, built
#     with the Go toolchain through the Go module proxy) against
#     Elasticsearch 7.10.2 (GME speaks to Elasticsearch <= 7 only;
#     tests/harness/engine.sh starts it), searchsync beside it on the
#     same engine;
#   PGSync (PyPI, in a venv; its MySQL/MariaDB source, with Redis from
#     Debian) against the harness's OpenSearch 2.19, searchsync beside it.
# Before the rounds, the engine's raw _bulk is tuned once per engine and
# kind (tests/bench/raw_bulk.py: connections x documents a request, the best
# of PEERS_TUNE_PARS x PEERS_TUNE_SIZES on a sample). Each round runs
# searchsync and the peer (the peer first in even rounds) on fresh indices,
# and the engine's raw _bulk at the tuned shape (after them in odd rounds,
# before them in even ones): a load of the plain documents (the SQL
# oracle's, the engine's dynamic mapping) and of searchsync's exact
# documents under its own mapping (dumped after its first flat load) into an
# empty index created with the build settings searchsync uses (no refresh,
# async translog), each to a _refresh and a _flush (durable, as a build's
# switch leaves its version); then the UPDATE phases' documents
# (flat and nested) posted again over the loaded index, its settings back to
# the engine's defaults, timed to a _count under the 1 s refresh as the
# tools' UPDATE phases are, and twice, as the tools replace them twice: the
# first pass pairs with the phase beside the writer, the second (over an
# index holding the first pass's deleted copies) with the backlog.
# The flat UPDATEs run twice: with the writer beside the tool (timed from
# the first commit), then as a backlog (the tool SIGSTOPped while the writer
# commits them, timed from its SIGCONT). Then the lag runs, flat and (for
# tools that nest) nested: every PEERS_LAG_REFRESH x PEERS_LAG_RATES, each
# after the engine is quiet, the _search poller's own engine CPU subtracted;
# beside them the engine's own floor for each lag run (raw _bulk, no
# tool: the same stream of documents sent at once, one request every 10 ms;
# PEERS_RAW_LAG=0 leaves it out), and for every lag run how long the index's
# refreshes took and how far apart they came (_stats/refresh).
# tests/bench/peers_driver.py runs the rounds and documents each measure;
# the tables (medians of the rounds) are printed at the end and saved in
# $PEERS_OUT (default: peers-table.md in the current directory); every
# measure is also a JSON line in $PEERS_JSONL (default: beside PEERS_OUT,
# .jsonl), and tests/bench/peers_plot.py draws the lag curves from them
# (PNGs in PEERS_OUT's name with -plots).
# Knobs: ROUNDS (4), PEERS_FLAT_ROWS (500000), PEERS_UPDATES (200000),
# PEERS_ROOTS (100000; 5 children each), PEERS_CHILD_UPDATES (20000),
# PEERS_TXN (100), PEERS_LAG_RATES ("500"; e.g. "500 2000 5000 10000"),
# PEERS_LAG_REFRESH ("1s 100ms"; 1s = the engine's default, the setting
# removed), PEERS_LAG_SECS (30), PEERS_LAG_NESTED (1), PEERS (gme,pgsync; a
# list of gme, pgsync, es7, opensearch: es7 / opensearch = searchsync and
# the raw _bulk only on that engine; none = es7), PEERS_TIMEOUT (1800 s a
# phase), PEERS_TUNE_PARS ("2 4 8 16"), PEERS_TUNE_SIZES ("500 1000 2000
# 5000"), PEERS_AREA_UPDATE (0), PEERS_RAW_LAG (1), PEERS_JSONL, PEERS_SS_INI (more of
# searchsync's configuration, INI text with \n between lines, e.g.
# PEERS_SS_INI='[delivery]\nbatch_max = 2000'), PEERS_SS_BASELINE_INI (runs
# searchsync a second time each round as "searchsync-baseline", with this
# added to its configuration, a key PEERS_SS_INI sets too taking this
# value, e.g. '[delivery]\nbatch_to_refresh = false':
# a change of its defaults against the defaults in the same rounds; with
# three tools each goes first in turn), PEERS_SS_BASELINE_BIN (the same with
# another build of searchsync: before and after a change in one run),
# PEERS_LOAD_ONLY=1 (the flat load alone: each tool's, the raw of the plain
# documents and of searchsync's exact ones, no UPDATE, lag or nested phase;
# a table of docs/s, % of each raw paired by round, the build's own
# queued-to-switched time, CPU seconds per 100k documents of the tool,
# MariaDB and the engine; the engine's work on each index, _stats), and
# PEERS_TUNE_EXACT (100000: the raw of searchsync's exact documents tuned
# on that many of them, at PEERS_TUNE_PARS x PEERS_TUNE_SIZES; 0: at the
# plain documents' best shape).
# PEERS_WARMUP (1): rounds run first and not counted. A fresh engine's JVM
# compiles its hot paths (JIT) for minutes, and whichever side first runs a
# path pays for it: the rounds counted meet a warm engine, as a long-running
# cluster is. The raw load goes last in odd rounds and first in even ones,
# and every engine CPU figure leaves out its JIT compiler threads (the
# total they used is printed after each round).
# PEERS_PIN=1 gives the engines a CPU of their own, as a search cluster has
# in production: every process of both engines on CPU 1, MariaDB, Redis, the
# tools, the writer and the raw loads' curl on CPU 0 (taskset; undone at the
# end). Without it all share both CPUs, and a tool's reading of MariaDB takes
# CPU from the engine that the raw _bulk's curl does not.
# Quick run: ROUNDS=1 PEERS_FLAT_ROWS=50000 PEERS_UPDATES=10000
#   PEERS_ROOTS=10000 PEERS_CHILD_UPDATES=2000 PEERS_LAG_SECS=5
#   PEERS_TUNE_PARS="2 4" PEERS_TUNE_SIZES="1000 2000"
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
SEARCHSYNC_SRCDIR="${SEARCHSYNC_SRCDIR:-$(cd "$here/../.." && pwd)}"
. "$SEARCHSYNC_HARNESS_DIR/env.sh"
BIN="${SEARCHSYNC_BIN:-$PWD/searchsync}"
[ -x "$BIN" ] || { echo "bench_peers: $BIN not built"; exit 1; }
for c in go mvn java python3 redis-server redis-cli mysqldump jq curl; do
    command -v "$c" >/dev/null || { echo "bench_peers: $c is needed (tests/harness/deps.sh installs it; go: the Go toolchain)"; exit 1; }
done
cache="${SEARCHSYNC_CACHE:-${HOME:-/root}/.cache/searchsync}"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/bench-peers.XXXXXX")"
D="benchpeers_$$"
q() { mariadb --no-defaults -h 127.0.0.1 -P "$MYSQL_PORT" -u root --batch --skip-column-names "$@"; }
ES7PID="" REDISPID=""
pin_all() { # CPULIST PID... : every thread of each process
    for pid in "${@:2}"; do
        [ -n "$pid" ] || continue # a server not started (pgrep -g '' is this shell's own group)
        for p in $(pgrep -g "$(ps -o pgid= -p "$pid" | tr -d ' ')" 2>/dev/null) "$pid"; do
            taskset -a -p -c "$1" "$p" >/dev/null 2>&1
        done
    done
}
PINNED=""
NCPU="$(nproc)"
cleanup() {
    set +e
    [ -n "$PINNED" ] && pin_all "0-$((NCPU - 1))" "$SEARCH_PID" "$MYSQL_PID"
    [ -n "$ES7PID" ] && ENGINE=elasticsearch-7 SEARCHSYNC_ENGINE_DIR="$tmp/es" \
        bash "$SEARCHSYNC_SRCDIR/tests/harness/engine.sh" stop >/dev/null 2>&1
    [ -n "$REDISPID" ] && { kill "$REDISPID" 2>/dev/null; wait "$REDISPID" 2>/dev/null; }
    q -e "DROP DATABASE IF EXISTS \`$D\`" >/dev/null 2>&1
    for m in $(q -e "SHOW DATABASES LIKE 'peers\\_meta\\_%'" 2>/dev/null); do q -e "DROP DATABASE \`$m\`"; done
    curl -s -XDELETE "$SEARCH_URL/pf_*" >/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# ---- the peers, built/installed once into the cache
case ",${PEERS:-gme,pgsync}," in *,gme,*) want_gme=1 ;; *) want_gme="" ;; esac
case ",${PEERS:-gme,pgsync}," in *,pgsync,*) want_pgsync=1 ;; *) want_pgsync="" ;; esac
gme=""
if [ -n "$want_gme" ]; then # the repository's last commit (2020-08-22), built once into the cache
    gme="$(bash "$SEARCHSYNC_SRCDIR/tests/harness/gme.sh" fetch 2>"$tmp/go.log")" ||
        { tail -20 "$tmp/go.log"; echo "bench_peers: cannot build go-mysql-elasticsearch (tests/harness/gme.sh)"; exit 1; }
fi
GME_VERSION="$(bash "$SEARCHSYNC_SRCDIR/tests/harness/gme.sh" version)"
PGSYNC_VERSION="${PGSYNC_VERSION:-7.3.0}"
venv="$cache/peers/pgsync-$PGSYNC_VERSION"
if [ -n "$want_pgsync" ] && [ ! -x "$venv/bin/pgsync" ]; then
    echo "installing PGSync $PGSYNC_VERSION from PyPI into $venv (first run only)"
    python3 -m venv "$venv" && "$venv/bin/pip" install -q "pgsync==$PGSYNC_VERSION" >"$tmp/pip.log" 2>&1 ||
        { tail -20 "$tmp/pip.log"; echo "bench_peers: cannot install pgsync==$PGSYNC_VERSION"; exit 1; }
fi

# ---- Elasticsearch 7.10.2 (tests/harness/engine.sh, as t_engines) and Redis
ENGINE=elasticsearch-7 SEARCHSYNC_ENGINE_DIR="$tmp/es" ENGINE_HEAP=1g \
    bash "$SEARCHSYNC_SRCDIR/tests/harness/engine.sh" start >"$tmp/es-start.log" 2>&1 ||
    { tail -20 "$tmp/es-start.log"; echo "bench_peers: Elasticsearch 7.10.2 did not start (tests/harness/engine.sh)"; exit 1; }
. "$tmp/es/engine.env"
ES7PID="$ENGINE_PID"
ES7_URL="$ENGINE_URL"
redisport="$(free_port)"
mkdir -p "$tmp/redis"
redis-server --port "$redisport" --bind 127.0.0.1 --dir "$tmp/redis" --save '' --appendonly no \
    >"$tmp/redis.log" 2>&1 &
REDISPID=$!
for _ in $(seq 1 240); do
    curl -sf "$ES7_URL/_cluster/health?wait_for_status=yellow&timeout=1s" >/dev/null && break
    kill -0 "$ES7PID" 2>/dev/null || { tail -20 "$ENGINE_LOG"; echo "bench_peers: Elasticsearch 7.10.2 exited"; exit 1; }
    sleep 0.5
done
[ "$(curl -s "$ES7_URL/" | jq -r .version.number)" = 7.10.2 ] || { tail -20 "$ENGINE_LOG"; echo "bench_peers: no Elasticsearch 7.10.2 at $ES7_URL"; exit 1; }
redis-cli -p "$redisport" ping >/dev/null || { cat "$tmp/redis.log"; echo "bench_peers: redis did not start"; exit 1; }

# ---- the data: a flat table, and roots with 5 children each
NF="${PEERS_FLAT_ROWS:-500000}" NR="${PEERS_ROOTS:-100000}"
echo "bench_peers: $NF flat rows, $NR roots x 5 children in $D; MariaDB $MYSQL_HOST:$MYSQL_PORT," \
     "OpenSearch $SEARCH_URL, Elasticsearch 7.10.2 $ES7_URL, Redis :$redisport"
echo "peers: go-mysql-elasticsearch $GME_VERSION (shipped river.toml settings: bulk_size 128, flush_bulk_time 200ms)," \
     "PGSync $("$venv/bin/pip" show pgsync 2>/dev/null | awk '$1 == "Version:" {print $2}') (its defaults)," \
     "$("$BIN" --version 2>/dev/null | head -1) (its defaults)"
t0=$(date +%s)
q -e "CREATE DATABASE \`$D\`"
q "$D" -e "SET SESSION sql_log_bin = 0;
  CREATE TABLE flat (id INT UNSIGNED PRIMARY KEY, name VARCHAR(64) NOT NULL, descr VARCHAR(255) NOT NULL,
    price DECIMAL(10,2) NOT NULL, qty INT NOT NULL, rnd INT NOT NULL DEFAULT 0, ts BIGINT NOT NULL DEFAULT 0);
  INSERT INTO flat (id, name, descr, price, qty)
    SELECT seq, CONCAT('item ', seq), CONCAT('the description of item ', seq, ': ', MD5(seq), ' ', MD5(seq + 1)),
           (seq % 10000) / 100, seq % 1000 FROM seq_1_to_$NF;
  CREATE TABLE root (id INT UNSIGNED PRIMARY KEY, name VARCHAR(64) NOT NULL, descr VARCHAR(255) NOT NULL,
    price DECIMAL(10,2) NOT NULL, rnd INT NOT NULL DEFAULT 0);
  CREATE TABLE child (id INT UNSIGNED PRIMARY KEY, root_id INT UNSIGNED NOT NULL, name VARCHAR(64) NOT NULL,
    qty INT NOT NULL, rnd INT NOT NULL DEFAULT 0, KEY (root_id),
    CONSTRAINT child_root FOREIGN KEY (root_id) REFERENCES root (id));
  INSERT INTO root (id, name, descr, price)
    SELECT seq, CONCAT('root ', seq), CONCAT('the description of root ', seq, ': ', MD5(seq)), (seq % 10000) / 100
    FROM seq_1_to_$NR;
  INSERT INTO child (id, root_id, name, qty)
    SELECT seq, (seq - 1) DIV 5 + 1, CONCAT('child ', seq), seq % 100 FROM seq_1_to_$((5 * NR));
  ANALYZE TABLE flat, root, child" >/dev/null
echo "data generated in $(($(date +%s) - t0)) s"

PIN=""
if [ "${PEERS_PIN:-}" = 1 ]; then
    [ "$NCPU" -ge 2 ] || { echo "bench_peers: PEERS_PIN=1 needs 2 CPUs or more"; exit 1; }
    PINNED=1
    pin_all "1-$((NCPU - 1))" "$SEARCH_PID" "$ES7PID"
    pin_all 0 "$MYSQL_PID" "$REDISPID"
    PIN="taskset -c 0"
    echo "pinned: the engines on CPUs 1-$((NCPU - 1)); MariaDB, Redis, the tools, the writer and curl on CPU 0"
fi
out="${PEERS_OUT:-$PWD/peers-table.md}"
export PEERS_JSONL="${PEERS_JSONL:-${out%.md}.jsonl}"
rc=0
PATH="$PATH" $PIN python3 "$here/peers_driver.py" --db "$D" --tmp "$tmp" --searchsync "$BIN" --gme "$gme" \
    --pgsync-venv "$venv" --es7 "$ES7_URL" --opensearch "$SEARCH_URL" --out "$out" \
    --mysql-port "$MYSQL_PORT" --mysql-pid "$MYSQL_PID" --redis-port "$redisport" --es7-pgid "$ES7PID" \
    --opensearch-pgid "$(ps -o pgid= -p "$SEARCH_PID" | tr -d ' ')" --peers "${PEERS:-gme,pgsync}" || rc=$?
# the lag curves; a load-only run has none to draw
[ "${PEERS_LOAD_ONLY:-}" = 1 ] || python3 "$here/peers_plot.py" "$PEERS_JSONL" "${out%.md}-plots" || rc=1
exit $rc
