#!/usr/bin/env bash
# tests/integration/t_run_refresh_parent.sh — a relation's refresh_parent
# (docs/mapping.md) under `searchsync run`, against real MariaDB + OpenSearch:
#   refresh_parent false  a change of the related row leaves every document
#                         embedding it as it was (same _version, the old value
#                         as SQL had it before the change)
#   default (true)        the same change of another relation's row rebuilds
#                         the documents embedding it (the new value as SQL has it)
# and a later change of the document's own row rebuilds it with the new value.
. "$(dirname "$0")/lib.sh"
require_bin
db="$(unique_name rpdb)"
meta="$(unique_name rpmeta)"
alias="$(unique_name rpidx)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v1?ignore_unavailable=true' >/dev/null"
mysql_q "CREATE DATABASE \`$db\`;
CREATE TABLE \`$db\`.docs (id INT PRIMARY KEY, name VARCHAR(50), tag_id INT, color_id INT);
CREATE TABLE \`$db\`.tags (id INT PRIMARY KEY, name VARCHAR(50));
CREATE TABLE \`$db\`.colors (id INT PRIMARY KEY, name VARCHAR(50));
INSERT INTO \`$db\`.tags VALUES (1, 'tag one'), (2, 'tag two'), (3, 'tag three');
INSERT INTO \`$db\`.colors VALUES (1, 'red'), (2, 'green'), (3, 'blue');
INSERT INTO \`$db\`.docs VALUES (1, 'doc one', 1, 1), (2, 'doc two', 2, 2), (3, 'doc three', 3, 3)"
cat >"$TEST_TMP/mapping.json" <<JSON
{"indices": [{"alias": "$alias", "shards": 1, "replicas": 0, "tables": [{
  "table": "$db.docs", "columns": [{"name": "id", "key": true}, "name", "tag_id", "color_id"],
  "relations": [
    {"column": "tag_id", "table": "$db.tags", "join_column": "id", "extend_name": "tag",
     "refresh_parent": false, "columns": ["id", "name"]},
    {"column": "color_id", "table": "$db.colors", "join_column": "id", "extend_name": "color",
     "columns": ["id", "name"]}]}]}]}
JSON
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = rp
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $((7500 + $$ % 400))
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
assert_eq 3 "$(search_count "$alias")" "three documents"

doc() { curl -s "$SEARCH_URL/$alias/_doc/$1"; }
version() { doc "$1" | jq -r ._version; }
marker_n=0
marker() { # a document's own change after the others; wait until everything before is acknowledged
    marker_n=$((marker_n + 1))
    mysql_q "UPDATE \`$db\`.docs SET name = 'marker $marker_n' WHERE id = 3"
    wait_until 30 "marker $marker_n delivered" bash -c \
        "curl -s '$SEARCH_URL/$alias/_doc/3' | jq -e '._source.name == \"marker $marker_n\"' >/dev/null"
    wait_checkpoint "$meta" rp 30
    search_refresh "$alias"
}
marker
v1="$(version 1)" v2="$(version 2)"
old_tag="$(mysql_q "SELECT name FROM \`$db\`.tags WHERE id = 2")"
assert_eq "$old_tag" "$(doc 2 | jq -r ._source.tag.name)" "before: document 2 embeds tag 2 as SQL has it"

mysql_q "UPDATE \`$db\`.tags SET name = 'tag two renamed' WHERE id = 2"
mysql_q "UPDATE \`$db\`.colors SET name = 'crimson' WHERE id = 1"
marker
assert_eq "$v2" "$(version 2)" "refresh_parent false: the tag's change did not rewrite document 2 (same _version)"
assert_eq "$old_tag" "$(doc 2 | jq -r ._source.tag.name)" "refresh_parent false: document 2 keeps the old tag name"
assert_ne "$old_tag" "$(mysql_q "SELECT name FROM \`$db\`.tags WHERE id = 2")" "(the tag did change in MySQL)"
assert_ne "$v1" "$(version 1)" "default refresh_parent: the color's change rewrote document 1"
assert_eq "$(mysql_q "SELECT name FROM \`$db\`.colors WHERE id = 1")" "$(doc 1 | jq -r ._source.color.name)" \
    "default refresh_parent: document 1 embeds the new color name"

# the document's own change rebuilds it whole: the tag's new name arrives then
mysql_q "UPDATE \`$db\`.docs SET name = 'doc two again' WHERE id = 2"
marker
assert_eq "$(mysql_q "SELECT name FROM \`$db\`.tags WHERE id = 2")" "$(doc 2 | jq -r ._source.tag.name)" \
    "a change of the document's own row rebuilds it with the new tag name"

kill -TERM "$DAEMON"
wait "$DAEMON"; rc=$?
assert_eq 0 "$rc" "SIGTERM: clean exit"
pass
