#!/usr/bin/env bash
# tests/integration/t_run_truncate_crash.sh — the rebuild a TRUNCATE or DROP
# TABLE owes survives the daemon being killed after its checkpoint passed the
# statement, against real MariaDB + OpenSearch. The statement logs no rows:
# a restart from a checkpoint past it never reads it again, so only the
# metadata's record of the owed rebuild (emptied_rebuilds) can bring it back.
# The test hook SEARCHSYNC_TEST_HOLD_EMPTIED_MS holds the supervisor's
# handling of the statement, as a slow metadata server or engine would,
# until the daemon is killed:
#   - the nested table and the root table truncated (two statements), then
#     rows inserted: the checkpoint passes the TRUNCATEs while the index
#     still holds the rows from before them; the daemon is killed; the next
#     start rebuilds the index once (the second TRUNCATE covered by the
#     rebuild the first queued), which then equals SQL, and the records are
#     deleted
#   - both tables dropped, the daemon killed past the DROPs and started
#     again while they are still gone: the index waits for them; created
#     again, it is rebuilt once, with exactly their rows
. "$(dirname "$0")/lib.sh"
require_bin
db="$(unique_name trc)"
meta="$(unique_name meta)"
alias="$(unique_name trcitems)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
mysql_q "CREATE DATABASE \`$db\`;
  CREATE TABLE \`$db\`.items (id INT PRIMARY KEY, name VARCHAR(50));
  CREATE TABLE \`$db\`.tags (id INT PRIMARY KEY, item_id INT, tag VARCHAR(20), KEY (item_id));
  INSERT INTO \`$db\`.items SELECT seq, CONCAT('item ', seq) FROM \`$db\`.seq_1_to_2000;
  INSERT INTO \`$db\`.tags SELECT seq, 1 + seq % 2000, CONCAT('t', seq % 7) FROM \`$db\`.seq_1_to_3000"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = trc
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $((7800 + $$ % 90))
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
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 40 lines)"; tail -40 "$TEST_TMP/run.log"; }'

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
owed() { mysql_q "SELECT COUNT(*) FROM \`$meta\`.emptied_rebuilds WHERE alias = '$alias'"; }
live_version() { mysql_q "SELECT current_version FROM \`$meta\`.index_configs WHERE alias = '$alias'"; }

SEARCHSYNC_TEST_HOLD_EMPTIED_MS=3600000 daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
daemon_wait_log "$alias: live changes no longer written to ${alias}_v1" 60
wait_checkpoint "$meta" trc 30
assert_true "the first sync equals SQL" same_as_sql

# ---- two TRUNCATEs, the checkpoint past them, the daemon killed before
# their rebuild
mysql_q "TRUNCATE TABLE \`$db\`.tags"
mysql_q "TRUNCATE TABLE \`$db\`.items"
for i in $(seq 1 30); do mysql_q "INSERT INTO \`$db\`.items VALUES ($((6000 + i)), 'after $i')"; done
mysql_q "INSERT INTO \`$db\`.tags VALUES (9001, 6001, 'after')"
wait_checkpoint "$meta" trc 30
assert_eq 2 "$(owed)" "the rebuilds the TRUNCATEs owe are recorded before the checkpoint passes them"
wait_until 30 "the rows inserted after the TRUNCATE are documents" \
    bash -c "[ \"\$(curl -s '$SEARCH_URL/$alias/_count' | jq .count)\" = 2030 ]"
assert_eq 1 "$(live_version)" "no rebuild was queued while the hook held it"
daemon_kill

daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
daemon_wait_log "index $alias: TRUNCATE TABLE $db.items read from the binlog" 30
daemon_wait_log "index $alias: TRUNCATE TABLE $db.tags read from the binlog" 30
daemon_wait_log "is still owed a rebuild: queued" 30
daemon_wait_log "$alias: version 2 live" 60
daemon_wait_log "is covered by its rebuild as version 2" 10
wait_checkpoint "$meta" trc 30
wait_until 30 "the index equals SQL after the restart" same_as_sql
assert_eq 30 "$(search_count "$alias")" "only the rows written after the TRUNCATEs"
assert_eq '[{"id":9001,"tag":"after"}]' "$(search_get "/$alias/_doc/6001" | jq -c ._source.tags)" "the tag written after them"
assert_eq 0 "$(owed)" "the records are deleted once the rebuild is queued"
daemon_stop

# ---- both tables dropped, the checkpoint past the DROPs, the daemon
# killed, started while the tables are still gone
SEARCHSYNC_TEST_HOLD_EMPTIED_MS=3600000 daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
daemon_wait_ready 30
mysql_q "DROP TABLE \`$db\`.tags"
mysql_q "DROP TABLE \`$db\`.items"
mysql_q "CREATE TABLE \`$db\`.other (id INT PRIMARY KEY); INSERT INTO \`$db\`.other VALUES (1)"
wait_checkpoint "$meta" trc 30
# (the first DROP stops the index config: a generation without it may be
# in force when the second is read, which then owes it nothing more)
assert_true "the rebuild the DROPs owe is recorded" [ "$(owed)" -ge 1 ]
daemon_kill

daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
daemon_wait_log "DROP TABLE $db.tags read from the binlog" 30
daemon_wait_log "is still owed a rebuild: queued" 30
daemon_wait_log "cannot be rebuilt yet" 30
assert_eq 2 "$(live_version)" "the index waits for its tables"
mysql_q "CREATE TABLE \`$db\`.items (id INT PRIMARY KEY, name VARCHAR(50));
  CREATE TABLE \`$db\`.tags (id INT PRIMARY KEY, item_id INT, tag VARCHAR(20), KEY (item_id));
  INSERT INTO \`$db\`.items VALUES (7001, 'recreated'), (6002, 'back again');
  INSERT INTO \`$db\`.tags VALUES (1, 7001, 'new')"
daemon_wait_log "$alias: version 3 live" 60
wait_checkpoint "$meta" trc 30
wait_until 30 "the index equals SQL after the DROP and CREATE" same_as_sql
assert_eq 2 "$(search_count "$alias")" "only the new table's rows"
assert_eq 0 "$(owed)" "no rebuild is owed any more"
assert_eq '[{"id":1,"tag":"new"}]' "$(search_get "/$alias/_doc/7001" | jq -c ._source.tags)" "the new table's tag"
# once: no version 4 after a few of the supervisor's rounds
sleep 2
assert_eq 3 "$(live_version)" "the DROPs rebuilt the index once"
assert_eq "404" "$(curl -s -o /dev/null -w '%{http_code}' "$SEARCH_URL/${alias}_v4")" "no version 4 was created"
pass
