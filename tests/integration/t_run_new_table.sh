#!/usr/bin/env bash
# tests/integration/t_run_new_table.sh — a table added to the mapping while
# `searchsync run` runs is read from then on, against real MariaDB
# + OpenSearch.
#
# The daemon starts with a mapping without table items; rows are written to
# items while it runs, so its binlog reader has seen items' TABLE_MAP and
# skipped the table. A mapping that adds an index on items is then imported
# (the daemon keeps running). After the new index's first build, inserts,
# updates and deletes of items must reach it: the documents equal the rows as
# SQL has them. The reader used to keep its "skip" of the table for as long
# as the server repeated the same TABLE_MAP, so none of them arrived.
. "$(dirname "$0")/lib.sh"
require_bin
db="$(unique_name nt)"
meta="$(unique_name meta)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/nt_items_v1,nt_other_v1?ignore_unavailable=true' >/dev/null"
mysql_q "CREATE DATABASE \`$db\`;
  CREATE TABLE \`$db\`.other (id INT PRIMARY KEY, note VARCHAR(50));
  CREATE TABLE \`$db\`.items (id INT PRIMARY KEY, name VARCHAR(50), qty INT);
  INSERT INTO \`$db\`.other VALUES (1, 'start');
  INSERT INTO \`$db\`.items VALUES (1, 'one', 1), (2, 'two', 2), (3, 'three', 3)"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = nt
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = 7319
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
jq -n --arg db "$db" '{version: 1, indices: [{alias: "nt_other", shards: 1, replicas: 0,
    tables: [{table: ($db + ".other"), mode: "row-image",
              columns: [{name: "id", key: true}, {name: "note"}]}]}]}' >"$TEST_TMP/map1.json"
jq --arg db "$db" '.indices += [{alias: "nt_items", shards: 1, replicas: 0,
    tables: [{table: ($db + ".items"), mode: "row-image",
              columns: [{name: "id", key: true}, {name: "name"}, {name: "qty"}]}]}]' \
    "$TEST_TMP/map1.json" >"$TEST_TMP/map2.json"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/map1.json" --yes >"$TEST_TMP/import.out" 2>&1 ||
    fail "import: $(cat "$TEST_TMP/import.out")"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 40 lines)"; tail -40 "$TEST_TMP/run.log"; }'
wait_until 30 "the first build of nt_other ended" grep -q "nt_other: live changes no longer written to nt_other_v1" "$TEST_TMP/run.log"

marker_n=0
marker() { # a change of `other` after the others; wait until it and everything before is delivered
    marker_n=$((marker_n + 1))
    mysql_q "UPDATE \`$db\`.other SET note = 'marker $marker_n' WHERE id = 1"
    wait_until 30 "marker $marker_n delivered" bash -c \
        "curl -s '$SEARCH_URL/nt_other/_doc/1' | jq -e '._source.note == \"marker $marker_n\"' >/dev/null"
    wait_checkpoint "$meta" nt 30
}

# items written while the daemon runs without it: the reader sees its
# TABLE_MAP and skips it (the same table id is kept by the server)
mysql_q "INSERT INTO \`$db\`.items VALUES (4, 'four', 4)"
mysql_q "UPDATE \`$db\`.items SET qty = qty + 10 WHERE id = 1"
marker

"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/map2.json" --yes >"$TEST_TMP/import2.out" 2>&1 ||
    fail "import 2: $(cat "$TEST_TMP/import2.out")"
wait_until 30 "the mapping reload" grep -q "mapping reloaded: 2 index config(s)" "$TEST_TMP/run.log"
wait_until 60 "the first build of nt_items ended" grep -q "nt_items: live changes no longer written to nt_items_v1" "$TEST_TMP/run.log"
assert_true "the daemon still runs" kill -0 "$DAEMON"

# the oracle: the rows as SQL has them, and the engine's documents
items_sql() {
    mysql_q "SELECT JSON_OBJECT('id', id, 'name', name, 'qty', qty) FROM \`$db\`.items ORDER BY id" | jq -S -c . | jq -s -c .
}
items_docs() {
    search_refresh nt_items
    search_post /nt_items/_search '{"size": 1000, "query": {"match_all": {}}}' |
        jq -S -c '[.hits.hits[]._source | del(.ss_version, .ss_hash, .ss_key_hash)] | sort_by(.id)'
}
assert_eq "$(items_sql)" "$(items_docs)" "after the first build: nt_items equals the rows"

# live changes of the new table after its build
mysql_q "INSERT INTO \`$db\`.items VALUES (5, 'five', 5), (6, 'six', 6)"
mysql_q "UPDATE \`$db\`.items SET name = 'two, updated', qty = 22 WHERE id = 2"
mysql_q "BEGIN; UPDATE \`$db\`.items SET qty = 40 WHERE id = 4; DELETE FROM \`$db\`.items WHERE id = 3; COMMIT"
mysql_q "DELETE FROM \`$db\`.items WHERE id = 6"
mysql_q "UPDATE \`$db\`.items SET name = 'new name' WHERE id = 1"
marker
assert_eq "$(items_sql)" "$(items_docs)" "live insert, update and delete of the table added at run time"
assert_eq false "$(curl -s "$SEARCH_URL/nt_items/_doc/3" | jq .found)" "a deleted row's document is gone"

kill -TERM "$DAEMON"
wait "$DAEMON"; rc=$?
assert_eq 0 "$rc" "SIGTERM: clean exit"
pass
