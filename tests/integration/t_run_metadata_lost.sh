#!/usr/bin/env bash
# tests/integration/t_run_metadata_lost.sh — an alias the engine has but the
# metadata database records no version of (a new or restored metadata
# database, or another deployment writing the same alias) is built again from
# the source, never taken as it is (sync/node/index_ensure.c).
#
# The daemon builds v1 and follows changes; it stops, its metadata database
# is dropped, rows change while no daemon runs (an update, a delete, an
# insert), and the mapping is imported again into a fresh metadata database
# with `start = now`. Nothing says where v1 was left, so the daemon
#   - says so (a warning naming the alias and the index it is on),
#   - builds v2 (a version above every <alias>_vN the alias names, so no
#     name is used twice) and moves the alias to it,
#   - and afterwards every document equals the SQL oracle, the changes made
#     while it was away included (taking v1 as it was loses all three).
# A second start with the metadata intact builds nothing more.
#
# Then the metadata database is backed up as docs/operations.md says
# (mysqldump --single-transaction), a reindex makes v3 live, and the backup
# is restored: it records v2 as live while the alias is on v3. A start
# follows changes through the alias, and the next reindex builds v4, never
# "v3" again: that name is the live index, and taking it for a leftover
# deleted it under the searches (the name answered 404 until v3 was built
# again). A poller asks the alias for its count through that reindex: never
# a 404.
. "$(dirname "$0")/lib.sh"
require_bin
db="$(unique_name ml)"
meta="$(unique_name mlmeta)"
alias="$(unique_name mlitems)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
mysql_q "CREATE DATABASE \`$db\`;
  CREATE TABLE \`$db\`.items (id INT PRIMARY KEY, name VARCHAR(50), price DECIMAL(12,2));
  CREATE TABLE \`$db\`.tags (id INT PRIMARY KEY, item_id INT, tag VARCHAR(20), KEY (item_id));
  INSERT INTO \`$db\`.items SELECT seq, CONCAT('item ', seq), seq * 1.25 FROM \`$db\`.seq_1_to_500;
  INSERT INTO \`$db\`.tags SELECT seq, 1 + seq % 500, CONCAT('t', seq % 7) FROM \`$db\`.seq_1_to_900"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = ml
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
INI
jq -n --arg db "$db" --arg alias "$alias" '{version: 1, indices: [{alias: $alias, shards: 1, replicas: 0,
    tables: [{table: ($db + ".items"), columns: [{name: "id", key: true}, {name: "name"}, {name: "price"}],
      relations: [{column: "id", table: ($db + ".tags"), join_column: "item_id", nested: true,
                   extend_name: "tags", columns: [{name: "id", key: true}, {name: "tag"}]}]}]}]}' >"$TEST_TMP/map.json"
import() {
    "$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/map.json" --yes >"$TEST_TMP/import.out" 2>&1 ||
        fail "import: $(cat "$TEST_TMP/import.out")"
}
import
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 40 lines)"; tail -40 "$TEST_TMP/run.log"; }'

# the oracle: every document as SQL has it (tags by id), and the engine's
oracle() {
    mysql_q "SELECT JSON_OBJECT('id', i.id, 'name', i.name, 'price', CAST(i.price AS CHAR), 'tags',
               COALESCE((SELECT JSON_ARRAYAGG(JSON_OBJECT('id', t.id, 'tag', t.tag))
               FROM \`$db\`.tags t WHERE t.item_id = i.id), JSON_ARRAY())) FROM \`$db\`.items i ORDER BY i.id" |
        jq -S -c '.tags |= sort_by(.id)' | sort
}
engine() {
    search_refresh "$alias"
    search_post "/$alias/_search?size=10000" '{"query":{"match_all":{}},"sort":["_doc"]}' |
        jq -S -c '.hits.hits[]._source | del(.ss_version, .ss_hash, .ss_key_hash) | .tags |= sort_by(.id)' | sort
}
same_as_sql() { [ "$(oracle | md5sum)" = "$(engine | md5sum)" ]; }

daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
daemon_wait_log "$alias: live changes no longer written to ${alias}_v1" 60
mysql_q "UPDATE \`$db\`.items SET name = 'seen live' WHERE id = 1"
wait_until 20 "the first build and a live change equal SQL" same_as_sql
daemon_stop
[ "$DAEMON_RC" = 0 ] || fail "the first daemon exited $DAEMON_RC"

# ---- the metadata lost; the source changes while nothing reads it
mysql_q "DROP DATABASE \`$meta\`"
mysql_q "UPDATE \`$db\`.items SET name = 'changed while away', price = 99999999.99 WHERE id = 2;
  DELETE FROM \`$db\`.items WHERE id = 3; DELETE FROM \`$db\`.tags WHERE item_id = 3;
  INSERT INTO \`$db\`.items VALUES (501, 'new while away', 0.01);
  INSERT INTO \`$db\`.tags VALUES (901, 501, 'away'), (902, 4, 'away')"
import
: >"$TEST_TMP/run.log"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
daemon_wait_log "$alias: live changes no longer written to ${alias}_v2" 60
log="$(cat "$TEST_TMP/run.log")"
assert_contains "$log" "$alias: the engine has this alias (on ${alias}_v1) but the metadata database records no version of it" \
    "the alias the metadata does not record is said, with the index it is on"
assert_contains "$log" "$alias: version 2 queued" "a version above the one the alias names is built"
assert_eq "${alias}_v2" "$(search_req GET "/_alias/$alias" | jq -r 'keys | join(",")')" "the alias is on v2 alone"
wait_until 20 "every document equals SQL, the changes made while no daemon ran included" same_as_sql
mysql_q "UPDATE \`$db\`.items SET name = 'live after' WHERE id = 5"
wait_until 20 "a later change is followed" same_as_sql
daemon_stop
[ "$DAEMON_RC" = 0 ] || fail "the second daemon exited $DAEMON_RC"

# ---- the metadata intact: a start builds nothing
: >"$TEST_TMP/run.log"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
daemon_wait_ready 60
mysql_q "UPDATE \`$db\`.items SET name = 'after restart' WHERE id = 6"
wait_until 20 "a change after a plain restart is followed" same_as_sql
daemon_stop
assert_eq "" "$(grep -E 'queued|records no version|ERROR' "$TEST_TMP/run.log" || true)" "a restart queues nothing and warns of nothing"
assert_eq 2 "$(mysql_q "SELECT current_version FROM \`$meta\`.index_configs WHERE alias = '$alias'")" "version 2 is the live one"

# ---- a backup, a reindex after it, and the backup restored
mysqldump --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -u root --single-transaction --routines \
    --databases "$meta" >"$TEST_TMP/meta.sql" || fail "mysqldump of the metadata database"
: >"$TEST_TMP/run.log"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
daemon_wait_ready 60
"$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/c.ini" "$alias" >"$TEST_TMP/reindex3.out" 2>&1 ||
    fail "reindex to v3: $(cat "$TEST_TMP/reindex3.out")"
assert_eq "${alias}_v3" "$(search_req GET "/_alias/$alias" | jq -r 'keys | join(",")')" "the reindex made v3 live"
daemon_stop
mysql_q "DROP DATABASE \`$meta\`"
mysql_file "$TEST_TMP/meta.sql"
assert_eq 2 "$(mysql_q "SELECT current_version FROM \`$meta\`.index_configs WHERE alias = '$alias'")" "the restored backup records v2 as live"
: >"$TEST_TMP/run.log"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
daemon_wait_ready 60
mysql_q "UPDATE \`$db\`.items SET name = 'after the restore' WHERE id = 9"
wait_until 20 "a change after the restore is followed through the alias" same_as_sql
(while [ ! -e "$TEST_TMP/stop-poll" ]; do
    curl -s -o /dev/null -w '%{http_code}\n' "$SEARCH_URL/$alias/_count"
    sleep 0.05
done) >"$TEST_TMP/poll" 2>/dev/null &
poller=$!
on_exit "touch '$TEST_TMP/stop-poll'; kill $poller 2>/dev/null || true"
"$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/c.ini" "$alias" >"$TEST_TMP/reindex4.out" 2>&1 ||
    fail "reindex after the restore: $(cat "$TEST_TMP/reindex4.out")"
touch "$TEST_TMP/stop-poll"
wait "$poller" 2>/dev/null || true
assert_contains "$(cat "$TEST_TMP/reindex4.out")" "version 4" "the reindex after the restore built v4, above the live v3"
assert_eq "${alias}_v4" "$(search_req GET "/_alias/$alias" | jq -r 'keys | join(",")')" "the alias is on v4 alone"
assert_eq 0 "$(grep -c -v '^200$' "$TEST_TMP/poll" || true)" "the alias answered all $(wc -l <"$TEST_TMP/poll") counts through that reindex ($(sort "$TEST_TMP/poll" | uniq -c | tr -s ' \n' ' '))"
wait_until 20 "every document equals SQL after it" same_as_sql
daemon_stop
[ "$DAEMON_RC" = 0 ] || fail "the last daemon exited $DAEMON_RC"
pass
