#!/usr/bin/env bash
# tests/integration/t_run_live_wait.sh — caught up, a stream of small
# transactions whose documents are read back shares read snapshots
# ([source] group_wait_ms; sync/sources/binlog_source.c, group_defer):
#
#   stream   single-row child UPDATEs committed a few ms apart (autocommit
#            statements of a compound statement) while the daemon is caught
#            up: builds wait for the next commit, so the source sees far
#            fewer read snapshots than transactions; every root document
#            equals SQL (the oracle: each root's children's qty, summed)
#   slow     commits 300 ms apart: nothing waits (each is built at its
#            commit), and each change reaches the engine
#   off      group_wait_ms = 0, the same stream: nothing waits
. "$(dirname "$0")/lib.sh"
require_bin
db="$(unique_name lw)"
meta="$(unique_name meta)"
alias="$(unique_name lw)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
ROOTS=500
mysql_q "CREATE DATABASE \`$db\`;
  CREATE TABLE \`$db\`.root (id INT PRIMARY KEY, name VARCHAR(40));
  CREATE TABLE \`$db\`.child (id INT PRIMARY KEY, root_id INT NOT NULL, qty INT NOT NULL, KEY (root_id));
  INSERT INTO \`$db\`.root SELECT seq, CONCAT('root ', seq) FROM \`$db\`.seq_1_to_$ROOTS;
  INSERT INTO \`$db\`.child SELECT seq, (seq - 1) DIV 3 + 1, 0 FROM \`$db\`.seq_1_to_$((ROOTS * 3));"
# N single-row UPDATEs, PAUSE s apart (autocommit: each commits on its own)
stream() { # N PAUSE STEP
    mysql_q "DELIMITER //
BEGIN NOT ATOMIC
  FOR i IN 0..$1 - 1 DO
    UPDATE child SET qty = qty + 1 WHERE id = 1 + (i * $3) % $((ROOTS * 3));
    DO SLEEP($2);
  END FOR;
END //" "$db"
}
cat >"$TEST_TMP/map.json" <<JSON
{"version": 1, "indices": [{"alias": "$alias", "shards": 1, "replicas": 0, "tables": [{"table": "$db.root",
 "columns": [{"name": "id", "key": true}, "name"],
 "relations": [{"column": "id", "table": "$db.child", "join_column": "root_id", "extend_name": "children",
   "nested": true, "columns": ["id", "qty"]}]}]}]}
JSON
write_ini() { # GROUP_WAIT_MS
    cat >"$TEST_TMP/c.ini" <<INI
[source]
name = lw
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = 7393
start = now
group_wait_ms = $1
[metadata]
database = $meta
[search]
urls = $SEARCH_URL
[delivery]
checkpoint_interval_ms = 100
INI
}
write_ini 50
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/map.json" --yes >/dev/null ||
    fail "mapping import failed"

# the oracle: "root_id qty-sum" lines, from SQL and from the engine
sql_sums() { mysql_q "SELECT root_id, SUM(qty) FROM \`$db\`.child GROUP BY root_id ORDER BY root_id" | tr '\t' ' '; }
doc_sums() {
    search_refresh "$alias"
    search_post "/$alias/_search" '{"size": 10000, "_source": ["id", "children.qty"], "sort": [{"id": "asc"}]}' |
        jq -r '.hits.hits[]._source | "\(.id) \([.children[]?.qty] | add // 0)"'
}
# a run's stop line: "W waited" of it
waited() { grep -o 'read while behind or [0-9]* waited for' "$TEST_TMP/run.$1.log" | tr -dc '0-9'; }
groups() { grep -o 'built together in [0-9]* groups' "$TEST_TMP/run.$1.log" | tr -dc '0-9'; }
txns() { grep -o 'stopped after [0-9]* transactions' "$TEST_TMP/run.$1.log" | tr -dc '0-9'; }
together() { grep -o '([0-9]* of them built together' "$TEST_TMP/run.$1.log" | tr -dc '0-9'; }
caught_up() { # a last change, then its checkpoint
    mysql_q "UPDATE \`$db\`.root SET name = 'marker $1' WHERE id = 1"
    wait_checkpoint "$meta" lw 60
}

# ---- stream: caught up, commits a few ms apart
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.stream.log"
daemon_wait_log "$alias: live changes no longer written to ${alias}_v1" 60
caught_up 0
stream 1200 0.002 7
caught_up 1
assert_eq "$(sql_sums)" "$(doc_sums)" "after the stream, every root's children equal SQL"
daemon_stop
assert_eq 0 "$DAEMON_RC" "the daemon stops cleanly"
w="$(waited stream)" g="$(groups stream)" n="$(txns stream)" t="$(together stream)"
builds=$(( n - t + g ))
log "stream: $n transactions in $builds builds ($t of them in $g groups, $w waited for)"
assert_true "builds waited for the next commit ($w of $n)" test "${w:-0}" -gt 50
assert_true "the stream took far fewer builds than transactions ($builds of $n)" test "$builds" -lt "$(( n / 2 ))"

# ---- slow: commits further apart than the wait, each built at its commit
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.slow.log"
daemon_wait_ready 60
caught_up 2
for k in 1 2 3 4 5 6; do
    mysql_q "UPDATE \`$db\`.child SET qty = qty + 100 WHERE id = $((k * 31))"
    root=$(( (k * 31 - 1) / 3 + 1 ))
    want="$(mysql_q "SELECT SUM(qty) FROM \`$db\`.child WHERE root_id = $root")"
    wait_until 10 "root $root's document holds its child's change" \
        test "$(search_doc "$alias" "$root" | jq '[.children[].qty] | add')" = "$want"
    sleep 0.3
done
caught_up 3
daemon_stop
assert_eq 0 "$DAEMON_RC" "the daemon stops cleanly"
assert_eq 0 "$(waited slow)" "commits 300 ms apart: no build waited"
assert_eq "$(sql_sums)" "$(doc_sums)" "after the slow changes, every root's children equal SQL"

# ---- off: group_wait_ms = 0, the same stream
write_ini 0
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.off.log"
daemon_wait_ready 60
caught_up 4
stream 300 0.002 11
caught_up 5
daemon_stop
assert_eq 0 "$DAEMON_RC" "the daemon stops cleanly"
assert_eq 0 "$(waited off)" "group_wait_ms = 0: no build waited"
assert_eq "$(sql_sums)" "$(doc_sums)" "with group_wait_ms = 0, every root's children equal SQL"
pass
