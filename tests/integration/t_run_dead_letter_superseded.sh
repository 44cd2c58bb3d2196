#!/usr/bin/env bash
# tests/integration/t_run_dead_letter_superseded.sh — under `searchsync run`, a
# document's dead letter is cleared once a newer full write of that document
# (here its delete) lands, so `searchsync dead-letters replay` cannot bring a
# deleted document back (docs/delivery.md, Tombstones):
#   1. the index allows 2 nested objects a document (a dynamic setting): a
#      document rebuilt with 4 items is refused (400) -> a dead letter
#   2. its row is deleted: the delete is acknowledged, and the dead letter of
#      the older write is gone
#   3. the engine forgets the delete's tombstone (gc_deletes 1s), the limit
#      is lifted: a replay finds nothing to resubmit and the document stays
#      deleted (before, the old write came back: the document reappeared)
. "$(dirname "$0")/lib.sh"
require_bin
db="$(unique_name dsdb)"
meta="$(unique_name dsmeta)"
alias="$(unique_name dsidx)"
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
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = ds
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $((7900 + $$ % 400))
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
[log]
level = info
INI
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/mapping.json" --yes >"$TEST_TMP/import.out" 2>&1 ||
    fail "import: $(cat "$TEST_TMP/import.out")"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 40 lines)"; tail -40 "$TEST_TMP/run.log"; }'
wait_until 60 "the first build of $alias is live" grep -q "$alias: live changes no longer written to ${alias}_v1" "$TEST_TMP/run.log" ||
    fail "no first build: $(tail -20 "$TEST_TMP/run.log")"
assert_eq 2 "$(search_count "$alias")" "two documents"
search_put "/$alias/_settings" '{"index.mapping.nested_objects.limit": 2, "index.gc_deletes": "1s"}' >/dev/null
dead() { mysql_q "SELECT COUNT(*) FROM \`$meta\`.dead_letters WHERE index_name = '$alias' AND doc_id = '$1'"; }

# 1. document 1 with four items: refused, a dead letter
mysql_q "INSERT INTO \`$db\`.items VALUES (11, 1, 'c'), (12, 1, 'd'), (13, 1, 'e')"
wait_until 30 "document 1's write became a dead letter" bash -c "[ \"\$(mariadb --no-defaults -h $MYSQL_HOST -P $MYSQL_PORT -uroot -N -B -e \"SELECT COUNT(*) FROM \\\`$meta\\\`.dead_letters WHERE doc_id = '1'\")\" -ge 1 ]" ||
    fail "no dead letter: $(tail -5 "$TEST_TMP/run.log")"
assert_eq 1 "$(dead 1)" "one dead letter for document 1"
# a live change is written through the alias: its dead letter names the
# alias (docs/http-api.md), not the version behind it
list="$("$SEARCHSYNC_BIN" dead-letters list --config "$TEST_TMP/c.ini" 2>/dev/null)"
assert_eq "$alias 1" "$(jq -r '"\(.index) \(.doc_id)"' <<<"$list")" "dead-letters list: the live change's dead letter under the alias"
assert_eq "" "$("$SEARCHSYNC_BIN" dead-letters list --config "$TEST_TMP/c.ini" --index "${alias}_v1" 2>/dev/null)" \
    "none under the physical index"
assert_eq 1 "$(doc_items="$(search_doc "$alias" 1)"; jq '.items | length' <<<"$doc_items")" \
    "document 1 still holds its one old item"

# 2. the row is deleted: the delete lands and supersedes the dead letter
mysql_q "DELETE FROM \`$db\`.items WHERE doc_id = 1; DELETE FROM \`$db\`.docs WHERE id = 1"
mysql_q "UPDATE \`$db\`.docs SET name = 'marker' WHERE id = 2"
wait_checkpoint "$meta" ds 30
assert_eq "" "$(search_doc "$alias" 1)" "document 1 deleted"
assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM \`$db\`.docs WHERE id = 1")" "(as in MySQL)"
assert_eq 0 "$(dead 1)" "the delete superseded document 1's dead letter"
daemon_stop
assert_eq 0 "$DAEMON_RC" "SIGTERM: clean exit"

# 3. tombstone forgotten, limit lifted: a replay must not resurrect it
sleep 2
search_put "/$alias/_settings" '{"index.mapping.nested_objects.limit": 10000}' >/dev/null
search_refresh "$alias"
out="$("$SEARCHSYNC_BIN" dead-letters replay --config "$TEST_TMP/c.ini" --index "$alias" 2>&1)" || fail "replay: $out"
log "replay: $out"
search_refresh "$alias"
assert_eq "" "$(search_doc "$alias" 1)" "after the replay document 1 is still deleted"
assert_eq "$(mysql_q "SELECT COUNT(*) FROM \`$db\`.docs")" "$(search_count "$alias")" "the engine holds what MySQL holds"
assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM \`$meta\`.dead_letters")" "no dead letters left"
pass
