#!/usr/bin/env bash
# tests/integration/t_status_json.sh — `searchsync status --json`: its output
# validates against docs/status.schema.json (python3's jsonschema; no key
# the schema does not describe, a status with reindex jobs among them), and its
# exit status says whether the sync is caught up: 0 with the daemon caught
# up, 3 once the source moved on while no daemon runs.
. "$(dirname "$0")/lib.sh"
require_bin
db="$(unique_name st)"
meta="$(unique_name meta)"
alias="$(unique_name st)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
mysql_q "CREATE DATABASE \`$db\`; CREATE TABLE \`$db\`.t (id INT PRIMARY KEY, v VARCHAR(20)); INSERT INTO \`$db\`.t VALUES (1, 'a'), (2, 'b')"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = st
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = 7361
start = now
[metadata]
database = $meta
[search]
urls = $SEARCH_URL
[delivery]
checkpoint_interval_ms = 100
idle_checkpoint_interval_ms = 200
INI
import_one_table "$alias" "$db.t"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
daemon_wait_log "$alias: live changes no longer written to ${alias}_v1" 60
mysql_q "INSERT INTO \`$db\`.t VALUES (3, 'c')"
wait_checkpoint "$meta" st 30
caught() { "$SEARCHSYNC_BIN" status --config "$TEST_TMP/c.ini" --json >"$TEST_TMP/s1.json" 2>"$TEST_TMP/s1.err"; }
wait_until 20 "status --json says caught up (exit 0)" caught ||
    fail "status --json: $(cat "$TEST_TMP/s1.err" "$TEST_TMP/s1.json")"
status_schema_check "$TEST_TMP/s1.json" || fail "the caught-up status does not match docs/status.schema.json"
assert_eq true "$(jq .source.caught_up "$TEST_TMP/s1.json")" "caught_up is true"
# the daemon's role and health, as it writes them when they change (the
# role within a second of its taking the reader lock)
reads() { "$SEARCHSYNC_BIN" status --config "$TEST_TMP/c.ini" --json 2>/dev/null | jq -e '.nodes[0].role == "reader"' >/dev/null; }
wait_until 10 "status shows the daemon as the reader" reads
"$SEARCHSYNC_BIN" status --config "$TEST_TMP/c.ini" --json >"$TEST_TMP/s1.json" 2>/dev/null || true
status_schema_check "$TEST_TMP/s1.json" || fail "the status with a node does not match docs/status.schema.json"
assert_eq "true []" "$(jq -c -r '.nodes[0].state | "\(.engine_up) \(.fuses_blown)"' "$TEST_TMP/s1.json")" "nodes: the engine answers, no fuse blown"
"$SEARCHSYNC_BIN" status --config "$TEST_TMP/c.ini" >"$TEST_TMP/s1.txt" 2>&1 || true
assert_contains "$(cat "$TEST_TMP/s1.txt")" "reader for " "status's text shows the daemon"
assert_contains "$(cat "$TEST_TMP/s1.txt")" ": engine up, fuses blown: none" "status's text shows its engine and fuses"
assert_eq "[\"${alias}_v1\"]" "$(jq -c ".indices[] | select(.alias == \"$alias\") | .engine.alias_targets" "$TEST_TMP/s1.json")" "the alias and its version"
daemon_stop
assert_eq "stopped" "$(mysql_q "SELECT role FROM \`$meta\`.node_states")" "a stopped daemon says so"
mysql_q "INSERT INTO \`$db\`.t VALUES (4, 'd')"
st=0; "$SEARCHSYNC_BIN" status --config "$TEST_TMP/c.ini" --json >"$TEST_TMP/s2.json" 2>"$TEST_TMP/s2.err" || st=$?
assert_eq 3 "$st" "behind with no daemon running: exit 3"
status_schema_check "$TEST_TMP/s2.json" || fail "the behind status does not match docs/status.schema.json"
assert_eq false "$(jq .source.caught_up "$TEST_TMP/s2.json")" "caught_up is false"
assert_true "bytes_behind is positive" test "$(jq .source.bytes_behind "$TEST_TMP/s2.json")" -gt 0
# a status with jobs: a reindex queued (no daemon runs it), its jobs in
# job_list, each with its node and moved_by_rebalance, as the jobs table has them
"$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/c.ini" "$alias" --buckets 3 --no-wait >"$TEST_TMP/r.out" 2>&1 ||
    fail "reindex --no-wait: $(cat "$TEST_TMP/r.out")"
"$SEARCHSYNC_BIN" status --config "$TEST_TMP/c.ini" --json >"$TEST_TMP/s3.json" 2>"$TEST_TMP/s3.err" || true
status_schema_check "$TEST_TMP/s3.json" || fail "the status with reindex jobs does not match docs/status.schema.json"
want=$(mysql_q "SELECT COUNT(*) FROM \`$meta\`.jobs WHERE type = 'index'")
assert_true "the queued reindex has jobs" test "$want" -gt 0
assert_eq "$want" "$(jq '[.job_list[] | select(.index == "'"$alias"'" and .type == "index" and has("node") and has("moved_by_rebalance"))] | length' "$TEST_TMP/s3.json")" \
    "job_list has every reindex job, with node and moved_by_rebalance"
pass
