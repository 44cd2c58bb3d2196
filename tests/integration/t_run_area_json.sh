#!/usr/bin/env bash
# tests/integration/t_run_area_json.sh — JSON (and DOUBLE) values stay
# "written as stored" (docs/mapping.md) on an index with an area_update
# relation: an element script would re-serialise the whole _source in the
# engine's form (1.10 -> 1.1, 3.14159265358979323846264 -> 3.141592653589793,
# 1e400 -> "Infinity", 12345678.9 -> 1.23456789E7), so such an index's
# area_update relations rebuild whole documents (said once in the log):
#   after an element change, the _source bytes of the JSON value and of the
#   DOUBLE equal those after a whole rebuild, and the JSON value's bytes are
#   the text MySQL stores (the oracle). An index without such columns still
#   gets element scripts.
. "$(dirname "$0")/lib.sh"
require_bin
db="$(unique_name ajdb)"
meta="$(unique_name ajmeta)"
alias="$(unique_name ajidx)"
plain="$(unique_name ajplain)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v1,${plain}_v1?ignore_unavailable=true' >/dev/null"
attrs='{"b": 1.10, "a": 3.14159265358979323846264, "z": 1e400, "list": [1.0, 2, -0.0]}'
mysql_q "CREATE DATABASE \`$db\`;
CREATE TABLE \`$db\`.docs (id INT PRIMARY KEY, name VARCHAR(50), attrs JSON, w DOUBLE);
CREATE TABLE \`$db\`.plain (id INT PRIMARY KEY, name VARCHAR(50));
CREATE TABLE \`$db\`.items (id INT PRIMARY KEY, doc_id INT, v VARCHAR(20), KEY (doc_id));
INSERT INTO \`$db\`.docs VALUES (1, 'doc one', '$attrs', 12345678.9), (2, 'doc two', '{}', 0.5);
INSERT INTO \`$db\`.plain VALUES (1, 'plain one'), (2, 'plain two');
INSERT INTO \`$db\`.items VALUES (1, 1, 'a'), (2, 1, 'b'), (3, 2, 'c')"
cat >"$TEST_TMP/mapping.json" <<JSON
{"indices": [
 {"alias": "$alias", "shards": 1, "replicas": 0, "tables": [{
  "table": "$db.docs", "columns": [{"name": "id", "key": true}, "name",
    {"name": "attrs", "type": "object", "index": false}, "w"],
  "relations": [
    {"column": "id", "table": "$db.items", "join_column": "doc_id", "extend_name": "items",
     "nested": true, "area_update": true, "columns": [{"name": "id", "key": true}, "v"]}]}]},
 {"alias": "$plain", "shards": 1, "replicas": 0, "tables": [{
  "table": "$db.plain", "columns": [{"name": "id", "key": true}, "name"],
  "relations": [
    {"column": "id", "table": "$db.items", "join_column": "doc_id", "extend_name": "items",
     "nested": true, "area_update": true, "columns": [{"name": "id", "key": true}, "v"]}]}]}]}
JSON
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = aj
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
[log]
level = info
INI
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/mapping.json" --yes >"$TEST_TMP/import.out" 2>&1 ||
    fail "import: $(cat "$TEST_TMP/import.out")"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 40 lines)"; tail -40 "$TEST_TMP/run.log"; }'
for a in "$alias" "$plain"; do
    wait_until 60 "the first build of $a is live" grep -q "$a: live changes no longer written to ${a}_v1" "$TEST_TMP/run.log" ||
        fail "no first build of $a: $(tail -20 "$TEST_TMP/run.log")"
done

# raw_field INDEX ID FIELD: the bytes of one top-level field's value in the
# stored _source, as the engine returns them (never re-serialised by a filter)
raw_field() {
    curl -s "$SEARCH_URL/$1/_doc/$2" | python3 -c '
import json, sys
body = sys.stdin.read()
src = body[body.index("\"_source\":") + len("\"_source\":"):]
key = json.dumps(sys.argv[1]) + ":"
at = src.index(key) + len(key)
_, end = json.JSONDecoder().raw_decode(src, at)
sys.stdout.write(src[at:end])' "$3"
}
marker_n=0
marker() { # wait until every change before is acknowledged
    marker_n=$((marker_n + 1))
    mysql_q "UPDATE \`$db\`.docs SET name = 'marker $marker_n' WHERE id = 2"
    wait_until 30 "marker $marker_n delivered" bash -c \
        "curl -s '$SEARCH_URL/$alias/_doc/2' | jq -e '._source.name == \"marker $marker_n\"' >/dev/null"
    wait_checkpoint "$meta" aj 30
}
items_sql() { mysql_q "SELECT COALESCE(JSON_ARRAYAGG(JSON_OBJECT('id', id, 'v', v)), JSON_ARRAY()) FROM \`$db\`.items WHERE doc_id = $1" | jq -S -c 'sort_by(.id)'; }
items_doc() { curl -s "$SEARCH_URL/$1/_doc/$2" | jq -S -c '._source.items | sort_by(.id)'; }

# a whole rebuild: the reference bytes, and the oracle's text
mysql_q "UPDATE \`$db\`.docs SET name = 'rebuilt' WHERE id = 1"
marker
whole_attrs="$(raw_field "$alias" 1 attrs)"
whole_w="$(raw_field "$alias" 1 w)"
assert_eq "$(mysql_q "SELECT attrs FROM \`$db\`.docs WHERE id = 1")" "$whole_attrs" "a whole rebuild writes the JSON value as MySQL stores it"

# element changes: an item updated, one inserted
mysql_q "UPDATE \`$db\`.items SET v = 'changed' WHERE id = 1"
mysql_q "INSERT INTO \`$db\`.items VALUES (4, 1, 'new')"
marker
assert_eq "$(items_sql 1)" "$(items_doc "$alias" 1)" "the items as SQL has them"
assert_eq "$whole_attrs" "$(raw_field "$alias" 1 attrs)" "after an element change the JSON value's bytes equal a whole rebuild's"
assert_eq "$whole_w" "$(raw_field "$alias" 1 w)" "and the DOUBLE's bytes"
assert_eq 1 "$(grep -c "$alias: area_update on $db.items rebuilds whole documents: they hold json column attrs" "$TEST_TMP/run.log")" \
    "said once in the log, naming the column"
assert_eq 0 "$(grep -c "$plain: area_update on" "$TEST_TMP/run.log")" "nothing said of the index without such columns"
assert_eq "$(items_sql 1)" "$(items_doc "$plain" 1)" "the index without them has the items too"

daemon_stop
assert_eq 0 "$DAEMON_RC" "SIGTERM: clean exit"
scripts="$(grep -o '[0-9]* element scripts' "$TEST_TMP/run.log" | tail -1 | awk '{print $1}')"
assert_true "the index without JSON or DOUBLE columns still got element scripts ($scripts)" test "${scripts:-0}" -ge 2
pass
