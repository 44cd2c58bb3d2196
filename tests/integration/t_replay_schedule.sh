#!/usr/bin/env bash
# tests/integration/t_replay_schedule.sh — `[delivery] replay_schedule`: the
# daemon that reads the source replays the source's dead letters by itself
# (sync/node/replay_schedule.c, one of the node's subsystems):
#   1. the index allows 2 nested objects a document: document 1 rebuilt with
#      4 items is refused (400) -> a dead letter; while the cause stays, the
#      scheduled replay fails again and the dead letter stays (one row)
#   2. the limit is raised: with no command run, the next scheduled replay
#      writes document 1; its items in the engine are what MySQL holds (the
#      oracle), and no dead letter is left
#   3. a replay_schedule that is not a time nor `every DUR`: exit 2 naming
#      the key
. "$(dirname "$0")/lib.sh"
require_bin
db="$(unique_name rsdb)"
meta="$(unique_name rsmeta)"
alias="$(unique_name rsidx)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v1?ignore_unavailable=true' >/dev/null"
mysql_q "CREATE DATABASE \`$db\`;
CREATE TABLE \`$db\`.docs (id INT PRIMARY KEY, name VARCHAR(50));
CREATE TABLE \`$db\`.items (id INT PRIMARY KEY, doc_id INT, v VARCHAR(20), KEY (doc_id));
INSERT INTO \`$db\`.docs VALUES (1, 'doc one'), (2, 'doc two');
INSERT INTO \`$db\`.items VALUES (1, 1, 'a'), (2, 2, 'b')"
cat >"$TEST_TMP/mapping.json" <<JSON
{"indices": [{"alias": "$alias", "shards": 1, "replicas": 0, "tables": [{
  "table": "$db.docs", "columns": [{"name": "id", "key": true}, "name"],
  "relations": [
    {"column": "id", "table": "$db.items", "join_column": "doc_id", "extend_name": "items",
     "nested": true, "columns": [{"name": "id", "key": true}, "v"]}]}]}]}
JSON
ini() { # REPLAY_SCHEDULE
    cat <<INI
[source]
name = rs
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $((8300 + $$ % 400))
start = now
heartbeat_ms = 500
[metadata]
database = $meta
reload_interval_ms = 500
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
replay_schedule = $1
[admin]
listen =
[log]
level = info
INI
}
ini "every 2s" >"$TEST_TMP/c.ini"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/mapping.json" --yes >"$TEST_TMP/import.out" 2>&1 ||
    fail "import: $(cat "$TEST_TMP/import.out")"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 40 lines)"; tail -40 "$TEST_TMP/run.log"; }'
wait_until 60 "the first build of $alias is live" grep -q "$alias: live changes no longer written to ${alias}_v1" "$TEST_TMP/run.log" ||
    fail "no first build: $(tail -20 "$TEST_TMP/run.log")"
assert_contains "$(cat "$TEST_TMP/run.log")" "scheduled replay of dead letters every 2s" "the replay is scheduled"
search_put "/$alias/_settings" '{"index.mapping.nested_objects.limit": 2}' >/dev/null
dead() { mysql_q "SELECT COUNT(*) FROM \`$meta\`.dead_letters WHERE doc_id = '1'"; }

# 1. document 1 with four items: refused, a dead letter that the scheduled
# replay cannot clear while the limit stands
mysql_q "INSERT INTO \`$db\`.items VALUES (11, 1, 'c'), (12, 1, 'd'), (13, 1, 'e')"
wait_until 30 "document 1's write became a dead letter" bash -c "[ \"\$(mariadb --no-defaults -h $MYSQL_HOST -P $MYSQL_PORT -uroot -N -B -e \"SELECT COUNT(*) FROM \\\`$meta\\\`.dead_letters WHERE doc_id = '1'\")\" -ge 1 ]" ||
    fail "no dead letter: $(tail -5 "$TEST_TMP/run.log")"
wait_until 30 "a scheduled replay resubmitted it and it failed again" grep -q "scheduled replay: 1 dead letter(s) resubmitted, 1 left" "$TEST_TMP/run.log" ||
    fail "no scheduled replay of the dead letter: $(tail -10 "$TEST_TMP/run.log")"
assert_eq 1 "$(dead 1)" "failed again: still one dead letter for document 1"
assert_eq 1 "$(jq '.items | length' <<<"$(search_doc "$alias" 1)")" "document 1 still holds its one old item"

# 2. the cause is fixed; nothing else is done: the schedule writes it
search_put "/$alias/_settings" '{"index.mapping.nested_objects.limit": 10000}' >/dev/null
wait_until 30 "the scheduled replay cleared the dead letter" bash -c "[ \"\$(mariadb --no-defaults -h $MYSQL_HOST -P $MYSQL_PORT -uroot -N -B -e \"SELECT COUNT(*) FROM \\\`$meta\\\`.dead_letters\")\" = 0 ]" ||
    fail "the dead letter stayed: $(tail -10 "$TEST_TMP/run.log")"
search_refresh "$alias"
want="$(mysql_q "SELECT GROUP_CONCAT(v ORDER BY id) FROM \`$db\`.items WHERE doc_id = 1")"
got="$(jq -r '[.items[] | .v] | sort | join(",")' <<<"$(search_doc "$alias" 1)")"
assert_eq "$want" "$got" "document 1's items are MySQL's"
assert_eq "$(mysql_q "SELECT COUNT(*) FROM \`$db\`.docs")" "$(search_count "$alias")" "the engine holds what MySQL holds"
daemon_stop
assert_eq 0 "$DAEMON_RC" "SIGTERM: clean exit"

# 3. a schedule that is neither: a configuration error naming the key
ini "often" >"$TEST_TMP/bad.ini"
st=0
out="$(timeout 60 "$SEARCHSYNC_BIN" run --config "$TEST_TMP/bad.ini" 2>&1)" || st=$?
assert_eq 2 "$st" "replay_schedule = often: exit 2"
assert_contains "$out" "[delivery] replay_schedule = \"often\"" "the error names the key"
pass
