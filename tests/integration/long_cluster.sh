#!/usr/bin/env bash
# tests/integration/long_cluster.sh — `make check-long`: three nodes on a real
# ZooKeeper share a source's reindex jobs (t_cluster_rebalance.sh is the
# two-node smoke in make check):
#
#   thirds     a reindex in 6 buckets over nodes A (reader), B, C: each node
#              ends 2 jobs and reads about a third of the rows
#   node dies  C SIGKILLed mid-job under a steady writer: its jobs resume
#              from their cursors on A and B, the version goes live once,
#              every row counted once, every document equals SQL
#   paused     B SIGSTOPped mid-job past its session: its jobs move; B
#              SIGCONTed moves no job row (each run job has one owner, the
#              rows counted once), registers again with a new session and
#              stands by
#   zk restart ZooKeeper restarted mid-reindex: the work goes on, the
#              version goes live once, oracle equal
. "$(dirname "$0")/lib.sh"
require_bin
[ -n "${ZK_HOSTS:-}" ] || fail "the harness did not start ZooKeeper (ZK_HOSTS unset)"
db="$(unique_name lc)"
meta="$(unique_name meta)"
alias="$(unique_name lci)"
cluster="$(unique_name c)"
rows="${CLUSTER_ROWS:-60000}"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
mysql_q "CREATE DATABASE \`$db\`; CREATE TABLE \`$db\`.items (id INT PRIMARY KEY, name VARCHAR(40), n INT);
  INSERT INTO \`$db\`.items SELECT seq, CONCAT('row ', seq), seq * 7 FROM \`$db\`.seq_1_to_$rows"
flag="$TEST_TMP/slow"
python3 "$SEARCHSYNC_SRCDIR/tests/tools/fault_proxy.py" "$TEST_TMP/proxy.port" "$SEARCH_URL" \
    POST '/_bulk' "$flag" delay 200 "\"_index\":\"${alias}_v[0-9]+\"" 2>"$TEST_TMP/proxy.err" &
proxy=$!
on_exit "kill $proxy 2>/dev/null"
wait_until 10 "the fault proxy listens" test -s "$TEST_TMP/proxy.port"
purl="http://127.0.0.1:$(cat "$TEST_TMP/proxy.port")"
config() { # FILE NODE_ID SERVER_ID
    cat >"$1" <<INI
[source]
name = lc
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $3
start = now
heartbeat_ms = 300
[metadata]
database = $meta
[search]
urls = $purl
[delivery]
flush_interval_ms = 20
checkpoint_interval_ms = 100
[reindex]
buckets = 6
parallel_jobs = 2
page_size = 500
[cluster]
zookeeper = $ZK_HOSTS
name = $cluster
node_id = $2
session_timeout_ms = 8000
[log]
level = info
INI
}
for n in a b c; do config "$TEST_TMP/$n.ini" "node-$n" "736$(printf %d "'$n")"; done
cat >"$TEST_TMP/m.json" <<JSON
{"version": 1, "indices": [{"alias": "$alias", "shards": 2, "replicas": 0, "tables": [{
  "table": "$db.items", "columns": [{"name": "id", "type": "long", "key": true},
  {"name": "name", "type": "keyword"}, {"name": "n", "type": "long"}]}]}]}
JSON
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/a.ini" "$TEST_TMP/m.json" --yes >"$TEST_TMP/import.out" 2>&1 ||
    fail "import: $(cat "$TEST_TMP/import.out")"
q() { mysql_q "$1"; }
current() { q "SELECT current_version FROM \`$meta\`.index_configs WHERE alias = '$alias'"; }
is_current() { [ "$(current)" = "$1" ]; }
run_jobs() { # VERSION
    q "SELECT j.bucket, j.owner_node, j.rows_read, j.broken_by_rebalance, j.status
       FROM \`$meta\`.reindex_run_jobs j JOIN \`$meta\`.reindex_runs r ON r.id = j.run_id
       JOIN \`$meta\`.index_configs c ON c.id = r.index_id
       WHERE c.alias = '$alias' AND r.version = $1 ORDER BY j.bucket"
}
oracle_equal() { # WHAT
    search_refresh "$alias"
    local want have
    want="$(q "SELECT id, name, n FROM \`$db\`.items ORDER BY id" | md5sum)"
    have="$(python3 - "$SEARCH_URL" "$alias" <<'PY' | md5sum
import json, sys, urllib.request
url, alias = sys.argv[1], sys.argv[2]
def post(path, body):
    req = urllib.request.Request(url + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req))
r = post(f"/{alias}/_search?scroll=1m", {"size": 5000, "sort": [{"id": "asc"}]})
while r["hits"]["hits"]:
    for h in r["hits"]["hits"]:
        s = h["_source"]
        print(f"{s['id']}\t{s['name']}\t{s['n']}")
    r = post("/_search/scroll", {"scroll": "1m", "scroll_id": r["_scroll_id"]})
PY
)"
    assert_eq "$want" "$have" "$1: every document equals SQL"
}
counted_once() { # VERSION WHAT
    assert_eq "$rows" "$(run_jobs "$1" | awk '{s += $3} END {print s + 0}')" "$2: every row counted once"
    assert_eq 1 "$(grep -c "version $1 live" "$TEST_TMP/a.log" "$TEST_TMP/b.log" "$TEST_TMP/c.log" | awk -F: '{s += $2} END {print s}')" \
        "$2: the switch happened once"
}
start_node() { # NAME
    daemon_start "$TEST_TMP/$1.ini" "$TEST_TMP/$1.log"
    eval "P_$1=\$DAEMON"
}
daemon_start "$TEST_TMP/a.ini" "$TEST_TMP/a.log"; P_a=$DAEMON
daemon_wait_log "node-a reads the binlog of source lc" 60
daemon_wait_ready 120
wait_until 120 "the first build is live" is_current 1
start_node b; daemon_wait_log "this node stands by" 30
start_node c; daemon_wait_log "this node stands by" 30

# ---- thirds
"$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/a.ini" "$alias" --no-wait >/dev/null 2>&1 || fail "reindex v2"
wait_until 180 "version 2 is live" is_current 2
run_jobs 2 >"$TEST_TMP/v2.jobs"
log "v2 jobs:
$(cat "$TEST_TMP/v2.jobs")"
for n in a b c; do
    assert_eq 2 "$(awk -v n="node-$n" '$2 == n' "$TEST_TMP/v2.jobs" | wc -l)" "node $n ended 2 of the 6 jobs"
    r="$(awk -v n="node-$n" '$2 == n {s += $3} END {print s + 0}' "$TEST_TMP/v2.jobs")"
    assert_true "node $n read about a third ($r of $rows)" test "$r" -ge $((rows * 25 / 100)) -a "$r" -le $((rows * 42 / 100))
done
counted_once 2 "v2 over three nodes"
oracle_equal "v2 over three nodes"

# ---- node dies under a writer
( for i in $(seq 1 400); do
      mysql_q "UPDATE \`$db\`.items SET n = n + 1, name = CONCAT('w', $i) WHERE id = $(( (i * 131) % rows + 1 ))" || exit 1
      sleep 0.02
  done ) &
writer=$!
touch "$flag"
"$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/a.ini" "$alias" --no-wait >/dev/null 2>&1 || fail "reindex v3"
c_saved() { [ "$(q "SELECT COUNT(*) FROM \`$meta\`.jobs WHERE owner_node = 'node-c' AND version = 3 AND rows_read > 0")" -ge 1 ]; }
wait_until 90 "node C saved a cursor" c_saved
DAEMON=$P_c; DAEMON_LOG="$TEST_TMP/c.log"; daemon_kill
rm -f "$flag"
wait_until 240 "version 3 is live" is_current 3
wait "$writer" || fail "the writer failed"
run_jobs 3 >"$TEST_TMP/v3.jobs"
log "v3 jobs:
$(cat "$TEST_TMP/v3.jobs")"
assert_eq 0 "$(awk '$2 == "node-c"' "$TEST_TMP/v3.jobs" | wc -l)" "no job ended on the dead node C"
counted_once 3 "v3 after C died"
wait_checkpoint "$meta" lc 60
oracle_equal "v3 after C died"

# ---- paused past its session
start_node c; daemon_wait_log "this node stands by" 30
touch "$flag"
"$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/a.ini" "$alias" --no-wait >/dev/null 2>&1 || fail "reindex v4"
b_saved() { [ "$(q "SELECT COUNT(*) FROM \`$meta\`.jobs WHERE owner_node = 'node-b' AND version = 4 AND rows_read > 0")" -ge 1 ]; }
wait_until 90 "node B saved a cursor" b_saved
kill -STOP "$P_b"
b_moved() { [ "$(q "SELECT COUNT(*) FROM \`$meta\`.jobs WHERE owner_node = 'node-b' AND version = 4")" = 0 ] || is_current 4; }
wait_until 60 "B's jobs are given to the others" b_moved
kill -CONT "$P_b"
DAEMON=$P_b; DAEMON_LOG="$TEST_TMP/b.log"
wait_until 60 "the woken node B registers again with a new session" grep -q "node node-b registered again" "$TEST_TMP/b.log"
assert_true "node B still runs (it stands by again)" daemon_alive
rm -f "$flag"
wait_until 240 "version 4 is live" is_current 4
run_jobs 4 >"$TEST_TMP/v4.jobs"
log "v4 jobs:
$(cat "$TEST_TMP/v4.jobs")"
assert_eq 0 "$(awk '$2 == "node-b"' "$TEST_TMP/v4.jobs" | wc -l)" "the paused node B ended no job"
counted_once 4 "v4 after B was paused"
oracle_equal "v4 after B was paused"

# ---- ZooKeeper restarted mid-reindex
touch "$flag"
"$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/a.ini" "$alias" --no-wait >/dev/null 2>&1 || fail "reindex v5"
a_saved() { [ "$(q "SELECT COUNT(*) FROM \`$meta\`.jobs WHERE version = 5 AND rows_read > 0")" -ge 2 ]; }
wait_until 90 "the v5 jobs run" a_saved
SEARCHSYNC_HARNESS_DIR="$SEARCHSYNC_HARNESS_DIR" bash "$SEARCHSYNC_SRCDIR/tests/harness/zookeeper.sh" restart >/dev/null 2>&1 ||
    fail "restarting ZooKeeper"
rm -f "$flag"
wait_until 240 "version 5 is live" is_current 5
for n in a b c; do
    DAEMON=$(eval echo "\$P_$n"); DAEMON_LOG="$TEST_TMP/$n.log"
    assert_true "node $n still runs after the ZooKeeper restart" daemon_alive
done
run_jobs 5 >"$TEST_TMP/v5.jobs"
log "v5 jobs:
$(cat "$TEST_TMP/v5.jobs")"
counted_once 5 "v5 across a ZooKeeper restart"
oracle_equal "v5 across a ZooKeeper restart"
pass
