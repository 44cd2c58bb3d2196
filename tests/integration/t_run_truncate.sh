#!/usr/bin/env bash
# tests/integration/t_run_truncate.sh — TRUNCATE TABLE and DROP TABLE of a
# mapped table while `searchsync run` runs, against real MariaDB +
# OpenSearch. Neither writes row events, so the daemon must rebuild what
# they emptied:
#   - the root table truncated while a writer inserts rows before and after
#     it: the index is rebuilt (a new version); afterwards its documents are
#     exactly the rows SQL has (the ones from before the TRUNCATE gone, the
#     ones after it there)
#   - a related (nested) table truncated: every document's array is empty
#     afterwards, equal to SQL
#   - the root table dropped, then created again with two rows (a migration):
#     the index waits (said in the log), then holds exactly those two rows
#   - a table no index reads truncated: nothing is rebuilt
. "$(dirname "$0")/lib.sh"
require_bin
db="$(unique_name tr)"
meta="$(unique_name meta)"
alias="$(unique_name tritems)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
mysql_q "CREATE DATABASE \`$db\`;
  CREATE TABLE \`$db\`.items (id INT PRIMARY KEY, name VARCHAR(50));
  CREATE TABLE \`$db\`.tags (id INT PRIMARY KEY, item_id INT, tag VARCHAR(20), KEY (item_id));
  CREATE TABLE \`$db\`.unmapped (id INT PRIMARY KEY);
  INSERT INTO \`$db\`.items SELECT seq, CONCAT('item ', seq) FROM \`$db\`.seq_1_to_2000;
  INSERT INTO \`$db\`.tags SELECT seq, 1 + seq % 2000, CONCAT('t', seq % 7) FROM \`$db\`.seq_1_to_3000;
  INSERT INTO \`$db\`.unmapped VALUES (1)"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = tr
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $((7700 + $$ % 90))
start = now
heartbeat_ms = 500
[metadata]
database = $meta
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
[reindex]
poll_interval_ms = 100
[log]
level = info
INI
jq -n --arg db "$db" --arg alias "$alias" '{version: 1, indices: [{alias: $alias, shards: 1, replicas: 0,
    tables: [{table: ($db + ".items"), columns: [{name: "id", key: true}, {name: "name"}],
      relations: [{column: "id", table: ($db + ".tags"), join_column: "item_id", nested: true,
                   extend_name: "tags", columns: [{name: "id", key: true}, {name: "tag"}]}]}]}]}' >"$TEST_TMP/map.json"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/map.json" --yes >"$TEST_TMP/import.out" 2>&1 ||
    fail "import: $(cat "$TEST_TMP/import.out")"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 40 lines)"; tail -40 "$TEST_TMP/run.log"; }'
daemon_wait_log "$alias: live changes no longer written to ${alias}_v1" 60
wait_checkpoint "$meta" tr 30

# the oracle: every document as SQL has it (tags by id), and the engine's
oracle() {
    mysql_q "SELECT JSON_OBJECT('id', i.id, 'name', i.name, 'tags', COALESCE((SELECT JSON_ARRAYAGG(JSON_OBJECT('id', t.id, 'tag', t.tag))
               FROM \`$db\`.tags t WHERE t.item_id = i.id), JSON_ARRAY())) FROM \`$db\`.items i ORDER BY i.id" |
        jq -S -c '.tags |= sort_by(.id)' | sort
}
engine() {
    search_refresh "$alias"
    search_post "/$alias/_search?size=10000" '{"query":{"match_all":{}},"sort":["_doc"]}' |
        jq -S -c '.hits.hits[]._source | del(.ss_version, .ss_hash, .ss_key_hash) | .tags |= sort_by(.id)' | sort
}
same_as_sql() { [ "$(oracle | md5sum)" = "$(engine | md5sum)" ]; }
assert_true "the first sync equals SQL" same_as_sql

# ---- the root table truncated between two bursts of inserts
mysql_q "INSERT INTO \`$db\`.items VALUES (5001, 'before the truncate')"
mysql_q "TRUNCATE TABLE \`$db\`.items"
for i in $(seq 1 30); do mysql_q "INSERT INTO \`$db\`.items VALUES ($((6000 + i)), 'after $i')"; done
daemon_wait_log "index $alias: TRUNCATE TABLE $db.items read from the binlog" 30
daemon_wait_log "$alias: version 2 live" 60
wait_checkpoint "$meta" tr 30
wait_until 30 "the index equals SQL after the TRUNCATE" same_as_sql
assert_eq 30 "$(search_count "$alias")" "only the rows written after the TRUNCATE"

# ---- a nested table truncated: the arrays empty
mysql_q "INSERT INTO \`$db\`.tags VALUES (9001, 6001, 'kept?')"
mysql_q "TRUNCATE \`$db\`.tags"
mysql_q "INSERT INTO \`$db\`.tags VALUES (9002, 6002, 'after')"
daemon_wait_log "$alias: version 3 live" 60
wait_checkpoint "$meta" tr 30
wait_until 30 "the index equals SQL after the nested table's TRUNCATE" same_as_sql
assert_eq '[{"id":9002,"tag":"after"}]' "$(search_get "/$alias/_doc/6002" | jq -c ._source.tags)" "a tag added after it"
assert_eq '[]' "$(search_get "/$alias/_doc/6001" | jq -c ._source.tags)" "the truncated tag gone"

# ---- the root table dropped and created again (a migration): its rows only
mysql_q "DROP TABLE \`$db\`.items"
daemon_wait_log "DROP TABLE $db.items read from the binlog" 30
daemon_wait_log "cannot be rebuilt yet" 30
mysql_q "CREATE TABLE \`$db\`.items (id INT PRIMARY KEY, name VARCHAR(50));
  INSERT INTO \`$db\`.items VALUES (7001, 'recreated'), (6002, 'back again')"
daemon_wait_log "$alias: version 4 live" 60
wait_checkpoint "$meta" tr 30
wait_until 30 "the index equals SQL after the DROP and CREATE" same_as_sql
assert_eq 2 "$(search_count "$alias")" "only the new table's rows"

# ---- a table no index reads: nothing rebuilt
mysql_q "TRUNCATE TABLE \`$db\`.unmapped"
mysql_q "UPDATE \`$db\`.items SET name = 'marker' WHERE id = 7001"
wait_until 30 "the marker" bash -c "curl -s '$SEARCH_URL/$alias/_doc/7001' | jq -e '._source.name == \"marker\"' >/dev/null"
# the supervisor would queue a rebuild within a tick of its poll: give it two
sleep 2
assert_eq 3 "$(grep -c "(no rows are logged for it)" "$TEST_TMP/run.log")" "only the mapped tables' TRUNCATEs and DROP rebuilt the index"
assert_eq "404" "$(curl -s -o /dev/null -w '%{http_code}' "$SEARCH_URL/${alias}_v5")" "no version 5 was created"
assert_eq "available" "$(mysql_q "SELECT state FROM \`$meta\`.index_configs WHERE alias = '$alias'")" "no build under way"
assert_eq 4 "$(mysql_q "SELECT current_version FROM \`$meta\`.index_configs WHERE alias = '$alias'")" "version 4 is live"
pass
