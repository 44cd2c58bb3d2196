#!/usr/bin/env bash
# tests/bench/bench_cluster.sh — a reindex spread over 1, 2 and 3 nodes of a
# ZooKeeper cluster, beside the same reindex by a standalone
# daemon and a plain bulk load of the same documents, in the same run.
#
# One flat table of BENCH_CLUSTER_ROWS rows (default 200,000). For each
# mode — standalone, cluster of 1, 2, 3 nodes (each with its own metadata
# schema and alias) — the nodes start and the first sync builds v1 (a
# warm-up); all modes' daemons stay up (idle between their reindexes). Then
# BENCH_ROUNDS (default 4) rounds, the modes' order turning each round (the
# engine keeps warming up for minutes), reindex each mode once, timed from
# the request to the version going live (reindex_runs: started_at ..
# finished_at), with the rows each node ended (reindex_run_jobs.owner_node).
# Medians per mode. The coordination overhead is the 1-node cluster's time
# over the standalone's (target < 5%). On 2 shared cores no speed-up is
# expected from more nodes: the engine is the bound.
# The plain load posts the same documents as NDJSON with 4 parallel curls
# into a fresh index with refresh off.
# Last, the reader of a 2-node cluster is SIGKILLed under a writer: the time
# to the standby's first checkpoint move (session timeout 4 s).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
SEARCHSYNC_SRCDIR="${SEARCHSYNC_SRCDIR:-$(cd "$here/../.." && pwd)}"
. "$SEARCHSYNC_HARNESS_DIR/env.sh"
if [ -z "${ZK_HOSTS:-}" ]; then
    bash "$SEARCHSYNC_SRCDIR/tests/harness/servers.sh" start zookeeper >/dev/null
    . "$SEARCHSYNC_HARNESS_DIR/env.sh"
fi
BIN="${SEARCHSYNC_BIN:-$PWD/searchsync}"
[ -x "$BIN" ] || BIN="$SEARCHSYNC_SRCDIR/searchsync"
ROWS="${BENCH_CLUSTER_ROWS:-200000}"
ROUNDS="${BENCH_ROUNDS:-4}"
T="$(mktemp -d "${TMPDIR:-/tmp}/bench_cluster.XXXXXX")"
db="bc_$$"
pids=()
cleanup() {
    for p in ${pids[@]+"${pids[@]}"}; do kill -9 "$p" 2>/dev/null || true; done
    mq "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true
    for m in sa c1 c2 c3 kill; do mq "DROP DATABASE IF EXISTS ${db}_$m" >/dev/null 2>&1 || true; done
    curl -s -XDELETE "$SEARCH_URL/${db}_*?ignore_unavailable=true" >/dev/null || true
    rm -rf "$T"
}
trap cleanup EXIT
mq() { mariadb --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -u root --batch --skip-column-names -e "$1"; }
now_ms() { date +%s%3N; }

mq "CREATE DATABASE $db; CREATE TABLE $db.items (id INT PRIMARY KEY, name VARCHAR(40), n INT, note VARCHAR(100));
    INSERT INTO $db.items SELECT seq, CONCAT('row ', seq), seq * 7, REPEAT('x', seq % 80) FROM $db.seq_1_to_$ROWS"

config() { # FILE MODE NODE SERVER_ID ZK
    cat >"$1" <<INI
[source]
name = $2
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $4
start = now
heartbeat_ms = 300
[metadata]
database = ${db}_$2
[search]
urls = $SEARCH_URL
[reindex]
buckets = 6
[log]
level = info
INI
    if [ -n "$5" ]; then
        printf '[cluster]\nzookeeper = %s\nname = %s\nnode_id = %s\nsession_timeout_ms = 4000\n' \
            "$5" "${db}_$2" "$3" >>"$1"
    fi
}
mapping() { # ALIAS
    printf '{"version":1,"indices":[{"alias":"%s","shards":2,"replicas":0,"tables":[{"table":"%s.items","columns":[{"name":"id","type":"long","key":true},{"name":"name","type":"keyword"},{"name":"n","type":"long"},{"name":"note","type":"text"}]}]}]}' "$1" "$db"
}
current() { mq "SELECT current_version FROM ${db}_$1.index_configs"; }
wait_version() { # MODE V
    local i
    for ((i = 0; i < 3000; i++)); do
        [ "$(current "$1" 2>/dev/null)" = "$2" ] && return 0
        sleep 0.2
    done
    echo "bench_cluster: $1 v$2 did not go live in 600 s" >&2
    exit 1
}

echo "rows: $ROWS (flat), reindex buckets 6 (raised to the live nodes), page 1000"
modes="sa c1 c2 c3"
mi=0
for mode in $modes; do # every mode's daemons run (idle between its reindexes)
    mi=$((mi + 1))
    nodes=1
    zk="$ZK_HOSTS"
    case "$mode" in sa) zk="" ;; c2) nodes=2 ;; c3) nodes=3 ;; esac
    for ((k = 1; k <= nodes; k++)); do config "$T/$mode$k.ini" "$mode" "n$k" "$((7400 + 10 * mi + k))" "$zk"; done
    mapping "${db}_${mode}_i" >"$T/$mode.json"
    "$BIN" mapping import --config "$T/${mode}1.ini" "$T/$mode.json" --yes >/dev/null 2>&1
    for ((k = 1; k <= nodes; k++)); do
        "$BIN" run --config "$T/$mode$k.ini" >>"$T/$mode$k.log" 2>&1 &
        pids+=($!)
        sleep 0.5
    done
    wait_version "$mode" 1 # the first sync: a warm-up
done
sleep 2 # every node registered and idle
printf '%-6s %6s %9s %9s  %s\n' mode round seconds docs/s "rows ended per node"
declare -A times
for ((r = 1; r <= ROUNDS; r++)); do
    set -- $modes
    for ((i = 1; i < r % 4; i++)); do set -- "${@:2}" "$1"; done # the order turns each round
    for mode in "$@"; do
        v=$((r + 1))
        "$BIN" reindex --config "$T/${mode}1.ini" "${db}_${mode}_i" --no-wait >/dev/null 2>&1
        wait_version "$mode" "$v"
        read -r secs rowsr < <(mq "SELECT TIMESTAMPDIFF(MICROSECOND, started_at, finished_at) / 1e6, rows_read
                                   FROM ${db}_$mode.reindex_runs WHERE version = $v")
        per="$(mq "SELECT GROUP_CONCAT(CONCAT(COALESCE(j.owner_node, '-'), ':', s) ORDER BY j.owner_node)
                   FROM (SELECT owner_node, SUM(rows_read) s FROM ${db}_$mode.reindex_run_jobs
                   WHERE run_id = (SELECT id FROM ${db}_$mode.reindex_runs WHERE version = $v)
                   GROUP BY owner_node) j")"
        printf '%-6s %6s %9.2f %9d  %s\n' "$mode" "$r" "$secs" "$(awk -v r="$rowsr" -v s="$secs" 'BEGIN {print int(r / s)}')" "$per"
        times[$mode]="${times[$mode]:-} $secs"
    done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
for mode in $modes; do
    m="$(median <<<"${times[$mode]}")"
    printf 'median %-4s %6.2f s  %7d docs/s\n' "$mode" "$m" "$(awk -v r="$ROWS" -v s="$m" 'BEGIN {print int(r / s)}')"
    eval "med_$mode=$m"
done
awk -v a="$med_c1" -v b="$med_sa" 'BEGIN {printf "coordination overhead (1-node cluster over standalone, medians): %+.1f%%\n", (a / b - 1) * 100}'
awk -v a="$med_c2" -v b="$med_c1" 'BEGIN {printf "2 nodes over 1 node: %.2fx the time\n", a / b}'
awk -v a="$med_c3" -v b="$med_c1" 'BEGIN {printf "3 nodes over 1 node: %.2fx the time\n", a / b}'
for p in ${pids[@]+"${pids[@]}"}; do kill -TERM "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
pids=()

# ---- the plain bulk load of the same documents
python3 - "$T/bulk" "$ROWS" <<'PY'
import sys
out, rows = sys.argv[1], int(sys.argv[2])
files = [open(f"{out}.{i}", "w") for i in range(4)]
for i in range(1, rows + 1):
    f = files[(i // 1000) % 4]
    f.write('{"index":{"_id":"%d"}}\n{"id":%d,"name":"row %d","n":%d,"note":"%s"}\n' % (i, i, i, i * 7, "x" * (i % 80)))
for f in files: f.close()
PY
for i in 0 1 2 3; do split -l 2000 -d -a 4 "$T/bulk.$i" "$T/part.$i."; done
curl -s -XPUT "$SEARCH_URL/${db}_plain" -H 'Content-Type: application/json' \
    -d '{"settings":{"number_of_shards":2,"number_of_replicas":0,"refresh_interval":"-1"}}' >/dev/null
t0=$(now_ms)
for i in 0 1 2 3; do
    ( for f in "$T"/part.$i.*; do
          curl -s -o /dev/null -XPOST "$SEARCH_URL/${db}_plain/_bulk" -H 'Content-Type: application/x-ndjson' --data-binary "@$f"
      done ) &
done
wait
curl -s -XPOST "$SEARCH_URL/${db}_plain/_refresh" >/dev/null
t1=$(now_ms)
awk -v r="$ROWS" -v ms="$((t1 - t0))" 'BEGIN {printf "plain bulk load: %.2f s, %d docs/s\n", ms / 1000, r * 1000 / ms}'

# ---- the reader killed: time to the standby's first checkpoint move
config "$T/k1.ini" kill n1 7411 "$ZK_HOSTS"
config "$T/k2.ini" kill n2 7412 "$ZK_HOSTS"
mapping "${db}_kill_i" >"$T/kill.json"
"$BIN" mapping import --config "$T/k1.ini" "$T/kill.json" --yes >/dev/null 2>&1
"$BIN" run --config "$T/k1.ini" >>"$T/k1.log" 2>&1 & k1=$!; pids+=($k1)
wait_version kill 1
"$BIN" run --config "$T/k2.ini" >>"$T/k2.log" 2>&1 & k2=$!; pids+=($k2)
sleep 2
( for i in $(seq 1 400); do mq "UPDATE $db.items SET n = n + 1 WHERE id = $i"; sleep 0.02; done ) &
w=$!
sleep 2
pos="$(mq "SELECT position FROM ${db}_kill.offsets")"
kill -9 "$k1"
t0=$(now_ms)
wait "$k1" 2>/dev/null || true
while [ "$(mq "SELECT position FROM ${db}_kill.offsets")" = "$pos" ]; do sleep 0.05; done
t1=$(now_ms)
echo "reader SIGKILLed -> standby's first checkpoint move: $((t1 - t0)) ms (session timeout 4000 ms)"
wait "$w" || true
kill -TERM "$k2" 2>/dev/null || true
wait "$k2" 2>/dev/null || true
