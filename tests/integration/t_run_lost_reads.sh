#!/usr/bin/env bash
# tests/integration/t_run_lost_reads.sh — where `searchsync run` stops waiting
# out lost connections (sync/node/daemon.c replay_transaction), against real
# MariaDB + OpenSearch. t_run_area shows a killed read being read again; here
# the read drops its connection every time: the daemon's read of a related
# table waits on a table lock longer than [source] read_timeout_ms (1 s), so
# the client gives up on it again and again. That is no outage: after 11
# lost reads in a row, the server answering in between, the daemon exits 1
# with a message that says so and names the setting. Nothing is lost: once
# the lock is gone, the next start syncs the change. A reindex page read that
# drops its connection the same way fails the build after 6 tries (rolled
# back, the reason kept).
. "$(dirname "$0")/lib.sh"
require_bin

db="$(unique_name lostreads)"
meta="$(unique_name meta)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${db}_*?expand_wildcards=all' >/dev/null"
mysql_q "CREATE DATABASE \`$db\`"
mysql_q "CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(50) NOT NULL, kind_id INT NOT NULL);
         CREATE TABLE kinds (id INT PRIMARY KEY, label VARCHAR(50) NOT NULL);
         INSERT INTO kinds SELECT seq, CONCAT('kind ', seq) FROM seq_1_to_5;
         INSERT INTO items SELECT seq, CONCAT('item ', seq), 1 + seq % 5 FROM seq_1_to_20" "$db"
cat >"$TEST_TMP/mapping.json" <<JSON
{"version": 1, "indices": [
  {"alias": "${db}_items", "shards": 1, "replicas": 0, "tables": [
    {"table": "$db.items",
     "columns": [{"name": "id", "type": "long", "key": true}, {"name": "name", "type": "keyword"},
                 {"name": "kind_id", "type": "long"}],
     "relations": [{"column": "kind_id", "table": "$db.kinds", "join_column": "id",
                    "extend_name": "kind", "columns": [{"name": "label", "type": "keyword"}]}]}]}
]}
JSON
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = lostreads
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = 7331
start = now
heartbeat_ms = 300
read_timeout_ms = 1000
[metadata]
database = $meta
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
[log]
level = info
INI
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/mapping.json" --yes \
    >"$TEST_TMP/import.out" 2>&1 || fail "import: $(cat "$TEST_TMP/import.out")"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon logs (last 20 lines each)"; tail -20 "$TEST_TMP"/run*.log; }'
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run1.log"
daemon_wait_log "live changes no longer written to ${db}_items_v1" 30 # the first sync

lock_table "\`$db\`.kinds"
mysql_q "UPDATE \`$db\`.items SET name = 'changed under a lock' WHERE id = 7"
daemon_wait_exit 90
assert_eq 1 "$DAEMON_RC" "the daemon exits 1 once the reads drop 11 times in a row"
assert_eq 10 "$(grep -c "the transaction's reads failed midway" "$TEST_TMP/run1.log")" "it read the transaction again 10 times first"
msg="$(grep 'stopping:' "$TEST_TMP/run1.log")"
assert_contains "$msg" "11 times in a row, the server answering in between: not an outage" "the message says it is no outage"
assert_contains "$msg" "read_timeout_ms" "and names the setting"
assert_contains "$msg" "Nothing is lost" "and that nothing is lost"

unlock_table
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run2.log"
wait_until 30 "the change synced by the next start" bash -c \
    "curl -s '$SEARCH_URL/${db}_items/_doc/7' | jq -e '._source.name == \"changed under a lock\"' >/dev/null"
assert_eq "$(mysql_q "SELECT k.label FROM \`$db\`.items i JOIN \`$db\`.kinds k ON k.id = i.kind_id WHERE i.id = 7")" \
    "$(curl -s "$SEARCH_URL/${db}_items/_doc/7" | jq -r ._source.kind.label)" "item 7's kind as SQL has it"

# a reindex whose page read drops its connection every time: its job tries
# 6 times (backing off 1, 2, 4, 8, 16 s), then the build fails and is rolled
# back with the reason; with the lock gone the next reindex goes through
lock_table "\`$db\`.kinds"
st=0
timeout 120 "$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/c.ini" "${db}_items" >"$TEST_TMP/r2.out" 2>&1 || st=$?
assert_eq 1 "$st" "the reindex fails: $(cat "$TEST_TMP/r2.out")"
assert_contains "$(cat "$TEST_TMP/r2.out")" "${db}_items v2 failed" "it says which build failed"
assert_contains "$(mysql_q "SELECT error_text FROM reindex_runs WHERE version = 2" "$meta")" \
    "the connection dropped at this page 6 times, the server answering in between" "the run keeps why"
assert_eq "${db}_items_v1" "$(curl -s "$SEARCH_URL/_alias/${db}_items" | jq -r 'keys | join(",")')" "the alias stayed on v1"
unlock_table
timeout 60 "$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/c.ini" "${db}_items" >"$TEST_TMP/r3.out" 2>&1 ||
    fail "the reindex after the lock: $(cat "$TEST_TMP/r3.out")"
assert_eq "${db}_items_v3" "$(curl -s "$SEARCH_URL/_alias/${db}_items" | jq -r 'keys | join(",")')" "the next reindex went through"
daemon_stop
pass
