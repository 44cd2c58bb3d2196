#!/usr/bin/env bash
# t_cluster_sources — a reindex across three sources in a three-node
# ZooKeeper cluster (docs/cluster.md, "Several sources with ZooKeeper"), a
# node killed mid-build. east, west and north are MariaDB servers of this
# test (multi_lib.sh's shop: the same keys on each); every node runs a
# `searchsync run` per source (east-1 ... north-3: nine processes, one
# cluster name), so each source has a reader and two standbys, and each
# source's part of a build is spread over that source's three nodes only.
#   1. first sync: version 1 of the alias from every source;
#   2. a writer on every server; version 2 queued in 3 buckets a source, its
#      pages to the engine held back by a proxy; once node 2's processes have
#      each saved a cursor of a job of their source, node 2 dies (its three
#      processes SIGKILLed, a reader among them if the election put one
#      there); after their sessions expire each source's survivors take its
#      jobs (broken by the rebalance) and never another source's; version 2
#      goes live once, every job of every source done, each by a node of its
#      source;
#   3. node 2 back; version 3 queued the same way, and once node 1's
#      processes (every source's reader) have each saved a cursor, node 1
#      dies: a standby of each source takes its binlog over and the
#      survivors its jobs; version 3 goes live, every job on a surviving
#      node of its source;
#   4. the writers stopped (they wrote all along), every checkpoint at its
#      server's end: the index equals the union of the three servers' SQL
#      oracles.
# Seeded (SEARCHSYNC_SEED): the writers' statements.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
. "$(dirname "$0")/multi_lib.sh"
require_bin
[ -n "${ZK_HOSTS:-}" ] || fail "the harness did not start ZooKeeper (ZK_HOSTS unset)"

SEED="${SEARCHSYNC_SEED:-$RANDOM}"
log "seed $SEED"
SRC=(east west north)
NODES=(1 2 3)
ORDERS=600
MULTI_RATE=6
meta="$(unique_name sscs)"
alias="$(unique_name orders)"
cluster="$(unique_name cs)"
mapping_name="shop_$$"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
on_exit '[ "$rc" = 0 ] || { for f in "$TEST_TMP"/*.log; do echo "--- $f (last 25 lines)"; tail -25 "$f"; done; echo "--- seed $SEED"; }'

t0=$(date +%s)
extra_mariadb "${SRC[@]}"
n=0
for s in "${SRC[@]}"; do n=$((n + 1)); shop_schema "$s" "$n" "$ORDERS"; done
log "three source servers up and filled in $(($(date +%s) - t0)) s"

# pages to the versions built (2 and 3) wait 1.5 s in the proxy while $flag exists
flag="$TEST_TMP/slow"
python3 "$SEARCHSYNC_SRCDIR/tests/tools/fault_proxy.py" "$TEST_TMP/proxy.port" "$SEARCH_URL" \
    POST '/_bulk' "$flag" delay 1500 "\"_index\":\"${alias}_v[23]\"" 2>"$TEST_TMP/proxy.err" &
on_exit "kill $! 2>/dev/null"
wait_until 10 "the fault proxy listens" test -s "$TEST_TMP/proxy.port"

config() { # SOURCE NODE SERVER_ID
    cat >"$TEST_TMP/$1-$2.ini" <<INI
[source]
name = $1
mapping = $mapping_name
host = 127.0.0.1
port = $(extra_port "$1")
user = searchsync
password = searchsync
server_id = $3
start = now
heartbeat_ms = 300
[metadata]
host = $MYSQL_HOST
port = $MYSQL_PORT
user = root
database = $meta
reload_interval_ms = 500
[search]
urls = http://127.0.0.1:$(cat "$TEST_TMP/proxy.port")
[reindex]
buckets = 3
parallel_jobs = 1
page_size = 50
poll_interval_ms = 300
[delivery]
flush_interval_ms = 20
checkpoint_interval_ms = 100
[cluster]
zookeeper = $ZK_HOSTS
name = $cluster
node_id = $1-$2
session_timeout_ms = 4000
[log]
level = info
INI
}
n=0
for s in "${SRC[@]}"; do for k in "${NODES[@]}"; do n=$((n + 1)); config "$s" "$k" $((4400 + n)); done; done
shop_mapping "$TEST_TMP/m.json"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/east-1.ini" --yes "$TEST_TMP/m.json" \
    >"$TEST_TMP/import.out" 2>&1 || fail "mapping import: $(cat "$TEST_TMP/import.out")"

# ---- 1. first sync: node 1 of each source first (its reader), then the standbys
for s in "${SRC[@]}"; do dstart "$s-1"; done
for s in "${SRC[@]}"; do dwait_log "$s-1" "reads the binlog of source $s" 60; done
for s in "${SRC[@]}"; do for k in 2 3; do dstart "$s-$k"; done; done
for s in "${SRC[@]}"; do for k in 2 3; do dwait_log "$s-$k" "this node stands by" 60; done; done
wait_until 180 "version 1 of $alias is live" version_is 1
check_oracle "first sync"

# ---- 2. a build across the sources, node 2 killed mid-build
k=0
for s in "${SRC[@]}"; do wstart "$s" $((SEED * 10 + k)); k=$((k + 1)); done
sleep 2 # every standby counted by its reader (two looks) before the jobs exist
touch "$flag"
"$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/west-3.ini" "$alias" --no-wait >"$TEST_TMP/rx.out" 2>&1 ||
    fail "reindex: $(cat "$TEST_TMP/rx.out")"
assert_eq 2 "$(building)" "version 2 is being built"
jobs_of() { # VERSION: source, bucket, owner, rows read, status of each job left
    mysql_q "SELECT source, bucket, owner_node, rows_read, status FROM \`$meta\`.jobs
             WHERE type = 'index' AND version = $1 ORDER BY source, bucket"
}
node2_saved() { # each source's node 2 runs a job of its source and saved a cursor
    [ "$(mysql_q "SELECT COUNT(DISTINCT source) FROM \`$meta\`.jobs WHERE type = 'index' AND version = 2
            AND owner_node = CONCAT(source, '-2') AND rows_read > 0 AND status = 'running'")" = 3 ]
}
wait_until 120 "node 2 of every source saved a cursor of a version 2 job" node2_saved
jobs_of 2 >"$TEST_TMP/v2.before"
log "version 2's jobs when node 2 dies (source bucket owner rows status):
$(cat "$TEST_TMP/v2.before")"
assert_eq 0 "$(awk '$3 != "NULL" && index($3, $1 "-") != 1' "$TEST_TMP/v2.before" | wc -l)" \
    "every job runs on a node of its own source"
for s in "${SRC[@]}"; do dkill "$s-2"; done
killed_at=$(date +%s)
log "node 2 SIGKILLed (east-2, west-2, north-2)"
none_on_2() {
    [ "$(mysql_q "SELECT COUNT(*) FROM \`$meta\`.jobs WHERE type = 'index' AND version = 2
            AND status <> 'done' AND (owner_node LIKE '%-2' OR owner_node IS NULL)")" = 0 ] || version_is 2
}
wait_until 60 "the survivors of every source take node 2's jobs" none_on_2
log "node 2's jobs moved $(($(date +%s) - killed_at)) s after the kill (session timeout 4 s)"
rm -f "$flag"
wait_until 180 "version 2 goes live" version_is 2
run_jobs() { # VERSION: source, bucket, owner, rows read, broken, status of each job of its run
    mysql_q "SELECT j.source, j.bucket, j.owner_node, j.rows_read, j.broken_by_rebalance, j.status
       FROM \`$meta\`.reindex_run_jobs j JOIN \`$meta\`.reindex_runs r ON r.id = j.run_id
       WHERE r.alias = '$alias' AND r.version = $1 ORDER BY j.source, j.bucket"
}
run_jobs 2 >"$TEST_TMP/v2.jobs"
log "version 2's run (source bucket owner rows broken status):
$(cat "$TEST_TMP/v2.jobs")"
for s in "${SRC[@]}"; do
    assert_eq 3 "$(awk -v s="$s" '$1 == s && $6 == "done"' "$TEST_TMP/v2.jobs" | wc -l)" \
        "$s: its 3 jobs of version 2 are done"
done
assert_eq 0 "$(awk 'index($3, $1 "-") != 1' "$TEST_TMP/v2.jobs" | wc -l)" \
    "every job ended on a node of its own source"
assert_eq 0 "$(awk '$3 ~ /-2$/' "$TEST_TMP/v2.jobs" | wc -l)" "no job ended on the dead node 2"
assert_true "node 2's interrupted jobs are marked broken by the rebalance" \
    test "$(awk '$5 == 1' "$TEST_TMP/v2.jobs" | wc -l)" -ge 3
switches=0
for s in "${SRC[@]}"; do for k in 1 3; do
    c="$(dlog "$s-$k" | grep -c "$alias: version 2 live" || true)"
    switches=$((switches + c))
done; done
assert_eq 1 "$switches" "the switch to version 2 happened once, by one process"

# ---- 3. node 2 back; a build across the sources with node 1 killed: every
# source's reader dies mid-build, a standby of each takes the binlog over
# (its dual writes from the checkpoint on) and the survivors take the jobs
for s in "${SRC[@]}"; do dstart "$s-2"; done
for s in "${SRC[@]}"; do dwait_log "$s-2" "this node stands by" 60; done
sleep 2
touch "$flag"
"$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/north-2.ini" "$alias" --no-wait >"$TEST_TMP/rx3.out" 2>&1 ||
    fail "reindex v3: $(cat "$TEST_TMP/rx3.out")"
assert_eq 3 "$(building)" "version 3 is being built"
node1_saved() {
    [ "$(mysql_q "SELECT COUNT(DISTINCT source) FROM \`$meta\`.jobs WHERE type = 'index' AND version = 3
            AND owner_node = CONCAT(source, '-1') AND rows_read > 0 AND status = 'running'")" = 3 ]
}
wait_until 120 "node 1 of every source saved a cursor of a version 3 job" node1_saved
for s in "${SRC[@]}"; do dkill "$s-1"; done
killed_at=$(date +%s)
log "node 1 SIGKILLed (every source's reader, each with a job of version 3)"
reader_moved() { dlog "$1-2" | grep -q "reads the binlog of source $1" || dlog "$1-3" | grep -q "reads the binlog of source $1"; }
for s in "${SRC[@]}"; do wait_until 60 "a standby of $s reads its binlog" reader_moved "$s"; done
log "every source's binlog read by a survivor $(($(date +%s) - killed_at)) s after the kill"
rm -f "$flag"
wait_until 180 "version 3 goes live" version_is 3
run_jobs 3 >"$TEST_TMP/v3.jobs"
log "version 3's run (source bucket owner rows broken status):
$(cat "$TEST_TMP/v3.jobs")"
for s in "${SRC[@]}"; do
    assert_eq 3 "$(awk -v s="$s" '$1 == s && $6 == "done"' "$TEST_TMP/v3.jobs" | wc -l)" \
        "$s: its 3 jobs of version 3 are done"
done
assert_eq 0 "$(awk 'index($3, $1 "-") != 1 || $3 ~ /-1$/' "$TEST_TMP/v3.jobs" | wc -l)" \
    "every job of version 3 ended on a surviving node of its own source"

# ---- 4. every writer stopped, every checkpoint at its server's end
sleep 3
for s in "${SRC[@]}"; do wstop "$s"; done
for s in "${SRC[@]}"; do log "$s: $(grep '^writer:' "$TEST_TMP/$s.writer.log" | tr '\n' ' ')"; done
caught_up 120 "${SRC[@]}"
check_oracle "two builds across three sources on three nodes, node 2 then node 1 killed mid-build"
for s in "${SRC[@]}"; do for k in 2 3; do dstop "$s-$k"; done; done
log "every document equals the union of the three servers' oracles; $(($(date +%s) - t0)) s"
pass
