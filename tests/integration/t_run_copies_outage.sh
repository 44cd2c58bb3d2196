#!/usr/bin/env bash
# tests/integration/t_run_copies_outage.sh — a parent/child move while the
# engine hangs is waited out, not a reason to exit.
#
# A child document that moves to another root leaves a copy under its old
# routing; the daemon waits for delivery to catch up, refreshes and looks the
# copies up before deleting them (sync/pipeline/child_copies.c). With the engine
# SIGSTOPped, that wait used to end after [delivery] drain_timeout_ms with
# the daemon exiting; now it is waited out like every engine outage (said
# once when it starts and once when it ends), and afterwards the child
# exists once, under its new root, as SQL has it.
. "$(dirname "$0")/lib.sh"
require_bin
db="$(unique_name cp)"
meta="$(unique_name meta)"
alias="$(unique_name cp)"
on_exit "bash '$HARNESS/servers.sh' resume opensearch >/dev/null 2>&1; mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
mysql_q "CREATE DATABASE \`$db\`;
  CREATE TABLE \`$db\`.p (id INT PRIMARY KEY, name VARCHAR(20));
  CREATE TABLE \`$db\`.r (id INT PRIMARY KEY, p_id INT NOT NULL, txt VARCHAR(20), KEY (p_id));
  INSERT INTO \`$db\`.p VALUES (1, 'one'), (2, 'two'), (3, 'three');
  INSERT INTO \`$db\`.r VALUES (10, 1, 'ten'), (20, 2, 'twenty')"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = cp
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = 7381
start = now
heartbeat_ms = 300
[metadata]
database = $meta
[search]
urls = $SEARCH_URL
timeout_ms = 2000
[delivery]
flush_interval_ms = 20
drain_timeout_ms = 2000
INI
cat >"$TEST_TMP/m.json" <<JSON
{"version": 1, "indices": [{"alias": "$alias", "shards": 3, "replicas": 0, "tables": [
  {"table": "$db.p", "join_name": "prod",
   "columns": [{"name": "id", "type": "long", "key": true}, {"name": "name", "type": "keyword"}]},
  {"table": "$db.r", "join_name": "rev", "parent": "$db.p", "parent_column": "p_id",
   "columns": [{"name": "id", "type": "long", "key": true}, {"name": "p_id", "type": "long"},
               {"name": "txt", "type": "keyword"}]}]}]}
JSON
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/m.json" --yes >"$TEST_TMP/import.out" 2>&1 ||
    fail "import: $(cat "$TEST_TMP/import.out")"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
daemon_wait_log "$alias: live changes no longer written to ${alias}_v1" 60
bash "$HARNESS/servers.sh" pause opensearch >/dev/null
mysql_q "UPDATE \`$db\`.r SET p_id = 3, txt = 'moved' WHERE id = 10"
sleep 6 # three drain timeouts with the engine hung
daemon_alive || fail "the daemon exited while the engine hung during a child's move: $(tail -5 "$TEST_TMP/run.log")"
bash "$HARNESS/servers.sh" resume opensearch >/dev/null
mysql_q "UPDATE \`$db\`.p SET name = 'marker' WHERE id = 2"
wait_checkpoint "$meta" cp 60
search_refresh "$alias"
assert_eq 1 "$(search_count "$alias" '{"query":{"ids":{"values":["rev-10"]}}}')" "the moved child exists once"
assert_eq "3 moved" "$(curl -s "$SEARCH_URL/$alias/_doc/rev-10?routing=3" | jq -r '"\(._source.p_id) \(._source.txt)"')" \
    "under its new root, as SQL has it"
assert_true "the wait is said" grep -qE "(waiting for delivery to catch up before looking for child document copies|child document copies: the engine does not answer|refreshing before the child copy check: the engine)" "$TEST_TMP/run.log"
daemon_alive || fail "the daemon exited after the engine came back"
pass
