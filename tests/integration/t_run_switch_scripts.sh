#!/usr/bin/env bash
# tests/integration/t_run_switch_scripts.sh — element updates right after a
# reindex switch are not lost.
#
# After the switch the alias and the new version's name are one index. The
# writes queued for the version by its name while it was built (whole
# documents) must land before an element script sent through the alias, or
# they overwrite it: a script raises the engine's version by one only, below
# those writes' external versions. The engine path to the new version is
# made slow (tests/tools/fault_proxy.py delays every bulk request naming
# <alias>_v2 by 2 s); a root row is renamed every 0.3 s while v2 is built;
# a child row is inserted right after the daemon stops the dual writes. The
# document's nested array must then equal SQL's (it lost the element before:
# issue "element updates are lost right after a reindex switch").
. "$(dirname "$0")/lib.sh"
require_bin
db="$(unique_name sw)"
meta="$(unique_name meta)"
alias="$(unique_name sw)"
flag="$TEST_TMP/slow"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
mysql_q "CREATE DATABASE \`$db\`;
  CREATE TABLE \`$db\`.p (id INT PRIMARY KEY, name VARCHAR(40));
  CREATE TABLE \`$db\`.item (id INT PRIMARY KEY, p_id INT, label VARCHAR(40), KEY (p_id));
  INSERT INTO \`$db\`.p SELECT seq, CONCAT('p', seq) FROM \`$db\`.seq_1_to_40;
  INSERT INTO \`$db\`.item SELECT seq, 1 + seq % 40, CONCAT('i', seq) FROM \`$db\`.seq_1_to_120;"
cat >"$TEST_TMP/m.json" <<JSON
{"version": 1, "indices": [{"alias": "$alias", "shards": 1, "replicas": 0, "tables": [{
  "table": "$db.p", "columns": [{"name": "id", "type": "long", "key": true},
                                {"name": "name", "type": "keyword"}],
  "relations": [{"column": "id", "table": "$db.item", "join_column": "p_id",
                 "extend_name": "items", "nested": true, "area_update": true,
                 "columns": [{"name": "id", "type": "long", "key": true},
                             {"name": "label", "type": "keyword"}]}]}]}]}
JSON
python3 "$SEARCHSYNC_SRCDIR/tests/tools/fault_proxy.py" "$TEST_TMP/proxy.port" "$SEARCH_URL" \
    POST '/_bulk' "$flag" delay 2000 "\"_index\":\"${alias}_v2\"" 2>"$TEST_TMP/proxy.err" &
proxy=$!
on_exit "kill $proxy 2>/dev/null"
wait_until 10 "the fault proxy listens" test -s "$TEST_TMP/proxy.port"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = sw
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $((7950 + $$ % 40))
start = now
heartbeat_ms = 300
[metadata]
database = $meta
reload_interval_ms = 500
[search]
urls = http://127.0.0.1:$(cat "$TEST_TMP/proxy.port")
[delivery]
flush_interval_ms = 20
checkpoint_interval_ms = 100
[reindex]
buckets = 2
page_size = 10
[log]
level = info
INI
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/m.json" --yes >"$TEST_TMP/import.out" 2>&1 ||
    fail "import: $(cat "$TEST_TMP/import.out")"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
daemon_wait_log "$alias: live changes no longer written to ${alias}_v1" 120
items_sql() {
    mysql_q "SELECT COALESCE(GROUP_CONCAT(CONCAT(id, ':', label) ORDER BY id), '') FROM \`$db\`.item WHERE p_id = $1"
}
items_doc() {
    curl -s "$SEARCH_URL/$alias/_doc/$1" | jq -r '._source.items | sort_by(.id) | map("\(.id):\(.label)") | join(",")'
}

touch "$flag" # from here every bulk request naming ${alias}_v2 reaches the engine 2 s late
"$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/c.ini" "$alias" --no-wait >"$TEST_TMP/rx.out" 2>&1 ||
    fail "reindex request: $(cat "$TEST_TMP/rx.out")"
( i=0; while [ ! -f "$TEST_TMP/stop_renames" ] && [ $i -lt 400 ]; do
      i=$((i + 1)); mysql_q "UPDATE \`$db\`.p SET name = 'renamed-$i' WHERE id = 7" || exit 1
      sleep 0.3
  done ) &
renamer=$!
on_exit "touch '$TEST_TMP/stop_renames'; kill $renamer 2>/dev/null"
daemon_wait_log "$alias: live changes no longer written to ${alias}_v2" 240
touch "$TEST_TMP/stop_renames"
wait "$renamer" || fail "the renaming loop failed"
# at once, while the dual writes of the renames are still on their slow way:
# an element of product 7 (a script through the alias)
mysql_q "INSERT INTO \`$db\`.item VALUES (9001, 7, 'after the switch')"
mysql_q "UPDATE \`$db\`.item SET label = 'marker' WHERE id = 1"
wait_checkpoint "$meta" sw 60
rm -f "$flag"
search_refresh "$alias"
assert_true "some writes to ${alias}_v2 were slowed down" test -s "$flag.delayed"
assert_eq "${alias}_v2" "$(curl -s "$SEARCH_URL/_alias/$alias" | jq -r 'keys[0]')" "the alias is on version 2"
assert_eq "$(items_sql 7)" "$(items_doc 7)" "product 7's items equal SQL after the switch (the new element is there)"
assert_eq "$(mysql_q "SELECT name FROM \`$db\`.p WHERE id = 7")" \
    "$(curl -s "$SEARCH_URL/$alias/_doc/7" | jq -r ._source.name)" "product 7's name equals SQL"
assert_eq "$(items_sql 2)" "$(items_doc 2)" "product 2's items equal SQL (a later element change)"
pass
