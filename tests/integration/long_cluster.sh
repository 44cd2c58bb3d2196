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
. "$(dirname "$0")/cluster_lib.sh"
require_bin
[ -n "${ZK_HOSTS:-}" ] || fail "the harness did not start ZooKeeper (ZK_HOSTS unset)"
db="$(unique_name lc)"
meta="$(unique_name meta)"
alias="$(unique_name lci)"
cluster="$(unique_name c)"
source=lc
rows="${CLUSTER_ROWS:-60000}"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
cluster_items
flag="$TEST_TMP/slow"
CLUSTER_DELAY_MS=200 cluster_proxy "$flag"
for n in a b c; do cluster_config "$TEST_TMP/$n.ini" "node-$n" "736$(printf %d "'$n")" 6 500 8000; done
cluster_import "$TEST_TMP/a.ini"
q() { mysql_q "$1"; }
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
