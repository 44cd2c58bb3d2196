#!/usr/bin/env bash
# tests/integration/t_run_reload.sh — SIGHUP and SIGUSR1 on `searchsync run`
# against real MariaDB + OpenSearch.
#
#   SIGHUP   the configuration file is read again: [log] level = debug takes
#            effect (a transaction's debug line appears for a change made
#            after, none for one made before), the log file is reopened (the
#            old one moved away as logrotate does: new lines land in a new
#            file), a new [admin] token replaces the old one, and a changed
#            key that needs a restart ([delivery] batch_max) is named in a
#            warning. A file that no longer loads changes nothing.
#   SIGUSR1  a state dump in the log: the index config, builds, checkpoint,
#            delivery's queues and fuses.
. "$(dirname "$0")/lib.sh"
require_bin
db="$(unique_name rl)"
meta="$(unique_name meta)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/rl_items_v*?expand_wildcards=all' >/dev/null"
mysql_q "CREATE DATABASE \`$db\`;
  CREATE TABLE \`$db\`.items (id INT PRIMARY KEY, name VARCHAR(50))"
PORT="$(free_port)"
TOK1=0123456789abcdef0123456789abcdef
TOK2=fedcba9876543210fedcba9876543210
LOGF="$TEST_TMP/run.log"
write_config() { # LEVEL TOKEN BATCH_MAX
    cat >"$TEST_TMP/c.ini" <<INI
[source]
name = rl
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = 7331
start = now
heartbeat_ms = 500
[metadata]
database = $meta
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
batch_max = $3
[admin]
listen = 127.0.0.1:$PORT
token = $2
[log]
level = $1
file = $LOGF
INI
}
write_config info "$TOK1" 500
jq -n --arg db "$db" '{version: 1, indices: [{alias: "rl_items", shards: 1, replicas: 0,
    tables: [{table: ($db + ".items"), mode: "row-image",
              columns: [{name: "id", key: true}, {name: "name"}]}]}]}' >"$TEST_TMP/map.json"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/map.json" --yes >"$TEST_TMP/import.out" 2>&1 ||
    fail "import: $(cat "$TEST_TMP/import.out")"
# its standard error and its [log] file are the same file until the rotation
daemon_start "$TEST_TMP/c.ini" "$LOGF"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon logs (last 40 lines)"; tail -40 "$TEST_TMP"/run.log*; }'
daemon_wait_ready 60
wait_until 60 "the first build of rl_items ended" grep -q "rl_items: live changes no longer written to rl_items_v1" "$LOGF"

status_code() { # TOKEN
    curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $1" "http://127.0.0.1:$PORT/metrics"
}
doc_name() { search_doc rl_items "$1" | jq -r '.name // empty'; }

# at info: a change goes through without a debug line
mysql_q "INSERT INTO \`$db\`.items VALUES (1, 'one')"
wait_until 30 "item 1 indexed" has_output doc_name 1
assert_eq "$(grep -c 'transaction ending at' "$LOGF")" 0 "no debug line at [log] level = info"
assert_eq "$(status_code "$TOK1")" 200 "the first token is accepted"

# SIGHUP after logrotate moved the file away
write_config debug "$TOK2" 400
mv "$LOGF" "$LOGF.1"
kill -HUP "$DAEMON"
wait_until 30 "the reload line in the reopened log file" grep -q "SIGHUP: .* read again: \[log\] level = debug" "$LOGF"
assert_contains "$(cat "$LOGF")" "(reopened)" "the log file is said to be reopened"
assert_contains "$(grep 'applied only by a restart' "$LOGF")" "[delivery] batch_max" \
    "the key that needs a restart is named"
assert_eq "$(grep 'applied only by a restart' "$LOGF" | grep -c 'level\|token')" 0 \
    "the live keys are not in the restart warning"
mysql_q "INSERT INTO \`$db\`.items VALUES (2, 'two')"
wait_until 30 "item 2 indexed" has_output doc_name 2
wait_until 30 "a debug line for the transaction after the reload" grep -q "DEBUG \[run\] transaction ending at" "$LOGF"
assert_eq "$(grep -c 'DEBUG' "$LOGF.1")" 0 "no debug line in the rotated file"
assert_eq "$(status_code "$TOK1")" 401 "the old token is refused after the reload"
assert_eq "$(status_code "$TOK2")" 200 "the new token is accepted after the reload"

# SIGUSR1: the state dump
kill -USR1 "$DAEMON"
wait_until 30 "the state dump" grep -q "state dump ends" "$LOGF"
dump="$(sed -n '/state dump (SIGUSR1) of source rl begins/,/state dump ends/p' "$LOGF")"
assert_contains "$dump" "index config rl_items: state" "the index config in the dump"
assert_contains "$dump" "live version 1" "its live version"
assert_contains "$dump" "builds in progress: 0" "the builds in the dump"
assert_contains "$dump" "checkpoint saved: " "the checkpoint in the dump"
assert_contains "$dump" "delivery low-water mark: transaction" "the low-water mark in the dump"
assert_contains "$dump" "delivery: queued 0, in flight 0" "delivery's queues in the dump"
assert_contains "$dump" "fuse ok" "the index's fuse in the dump"

# a file that does not load changes nothing
printf '[log]\nlevel = loud\n' >>"$TEST_TMP/c.ini"
kill -HUP "$DAEMON"
wait_until 30 "the refused reload" grep -q "nothing changed, the running configuration stays" "$LOGF"
assert_true "the daemon still runs" daemon_alive
mysql_q "INSERT INTO \`$db\`.items VALUES (3, 'three')"
wait_until 30 "item 3 indexed" has_output doc_name 3

daemon_stop
assert_eq "$DAEMON_RC" 0 "SIGTERM still drains and exits 0"
pass
