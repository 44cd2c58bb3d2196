#!/usr/bin/env bash
# tests/integration/t_cluster_start.sh — three nodes of one cluster started at
# the same instant on a fresh install (docs/cluster.md: "start the same
# configuration on each node"): a fresh metadata database (the mapping just
# imported, no version built) and an empty engine.
#
#   One node reads, the other two stand by, and all three keep running; the
#   first version is built once (one v1 in the engine, one version and one
#   run in the metadata) and every document equals SQL. (Once
#   every node queued the first build before the election, so two of three
#   exited 1 with "creating index ..._v1: HTTP 400 resource_already_exists".)
#   Then two reindex requests made at the same instant on two nodes: one
#   queues version 2, the other is refused (a build is under way: exit 2),
#   and v2 goes live (neither deleted the other's index).
# With the argument mysql (t_cluster_start_mysql.sh) the same with MySQL 8 as
# the source and the metadata server: the cluster's jobs, election and
# fencing tokens, reindex requests and their lock on MySQL.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
require_bin
if [ "${1:-}" = mysql ]; then
    TEST_NAME=t_cluster_start_mysql
    use_mysql8
fi
[ -n "${ZK_HOSTS:-}" ] || fail "the harness did not start ZooKeeper (ZK_HOSTS unset)"
db="$(unique_name cs)"
meta="$(unique_name meta)"
alias="$(unique_name csi)"
cluster="$(unique_name c)"
source=cs
rows=3000
engine_url="$SEARCH_URL"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
cluster_items
for n in 1 2 3; do cluster_config "$TEST_TMP/n$n.ini" "node-$n" "736$n" 2 500 4000; done
cluster_import "$TEST_TMP/n1.ini"
assert_eq "" "$(curl -s "$SEARCH_URL/_cat/indices/${alias}*?h=index")" \
    "the engine holds no index of the alias yet"

# the same instant: three starts in a row, none waiting for another
pids=()
for n in 1 2 3; do
    daemon_start "$TEST_TMP/n$n.ini" "$TEST_TMP/n$n.log"
    pids+=("$DAEMON")
done
wait_until 120 "the first version is live" is_current 1
for i in 0 1 2; do
    DAEMON=${pids[$i]}; DAEMON_LOG="$TEST_TMP/n$((i + 1)).log"
    daemon_alive || fail "node-$((i + 1)) exited; its log ends with:
$(_daemon_tail)"
done
reader="$({ grep -l "reads the binlog of source $source" "$TEST_TMP"/n?.log || true; } | wc -l)"
standing="$({ grep -l "this node stands by" "$TEST_TMP"/n?.log || true; } | wc -l)"
assert_eq "1 2" "$reader $standing" "one node reads, two stand by"
assert_eq "" "$(grep -h "resource_already_exists\|creating index" "$TEST_TMP"/n?.log || true)" \
    "no node met an index another one created"
assert_eq "${alias}_v1" "$(curl -s "$SEARCH_URL/_cat/indices/${alias}*?h=index" | sort | tr -d ' ' | paste -sd,)" \
    "the engine holds one version, v1"
assert_eq "1 1" "$(mysql_q "SELECT (SELECT COUNT(*) FROM \`$meta\`.index_versions),
    (SELECT COUNT(*) FROM \`$meta\`.reindex_runs)" | tr "\t" " ")" "the metadata holds one version and one run"
oracle_equal "the first build"
# and it goes on syncing
mysql_q "UPDATE \`$db\`.items SET n = n + 1 WHERE id % 7 = 0; DELETE FROM \`$db\`.items WHERE id % 11 = 0"
wait_checkpoint "$meta" "$source" 60
oracle_equal "after changes"

# ---- two reindex requests at the same instant, from two nodes
st1=0 st2=0
"$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/n1.ini" "$alias" --no-wait >"$TEST_TMP/rx1.out" 2>&1 &
r1=$!
"$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/n2.ini" "$alias" --no-wait >"$TEST_TMP/rx2.out" 2>&1 &
r2=$!
wait "$r1" || st1=$?
wait "$r2" || st2=$?
log "reindex requests: exit $st1 ($(tail -n1 "$TEST_TMP/rx1.out" | head -c 300)), exit $st2 ($(tail -n1 "$TEST_TMP/rx2.out" | head -c 300))"
assert_eq "0 2" "$(printf '%s\n' "$st1" "$st2" | sort -n | paste -sd' ')" \
    "one request queues the version, the other is refused"
assert_contains "$(cat "$TEST_TMP/rx1.out" "$TEST_TMP/rx2.out")" "is already being rebuilt" \
    "the refused one says a build is under way"
wait_until 120 "version 2 is live" is_current 2
assert_eq "" "$(mysql_q "SELECT version FROM \`$meta\`.index_versions WHERE version > 2")" \
    "no third version was made"
oracle_equal "after the second build"
for i in 0 1 2; do
    DAEMON=${pids[$i]}; DAEMON_LOG="$TEST_TMP/n$((i + 1)).log"
    assert_true "node-$((i + 1)) still runs" daemon_alive
    daemon_stop
    assert_eq 0 "$DAEMON_RC" "node-$((i + 1)) stops cleanly"
done
pass
