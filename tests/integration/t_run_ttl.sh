#!/usr/bin/env bash
# tests/integration/t_run_ttl.sh — documents expire with their row's expiry
# column (mapping `expiry_column`), not only when the row changes:
#
#   first sync  a row already past its expiry gets no document
#   expiry      a document is gone within a second of its row's expiry, with
#               no change to the row
#   extended    a row whose expiry is cleared before it passes keeps its
#               document; a row without expiry keeps its document
#   shards      an index over two shard tables: more rows expire at once in
#               one shard than a look takes, a few in the other; all go
. "$(dirname "$0")/lib.sh"
require_bin
db="$(unique_name ttl)"
meta="$(unique_name meta)"
alias="$(unique_name ttl)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
mysql_q "CREATE DATABASE \`$db\`;
  CREATE TABLE \`$db\`.t (id INT PRIMARY KEY, v VARCHAR(20), expires_at DATETIME(3) NULL, KEY (expires_at));
  INSERT INTO \`$db\`.t VALUES (1, 'forever', NULL), (2, 'expired', UTC_TIMESTAMP(3) - INTERVAL 1 HOUR)"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = ttl
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = 7371
start = now
heartbeat_ms = 200
[metadata]
database = $meta
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 20
INI
cat >"$TEST_TMP/m.json" <<JSON
{"version": 1, "indices": [{"alias": "$alias", "shards": 1, "replicas": 0, "tables": [{
  "table": "$db.t", "expiry_column": "expires_at",
  "columns": [{"name": "id", "type": "long", "key": true}, {"name": "v", "type": "keyword"},
              {"name": "expires_at", "type": "date"}]}]}]}
JSON
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/m.json" --yes >"$TEST_TMP/import.out" 2>&1 ||
    fail "import: $(cat "$TEST_TMP/import.out")"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
daemon_wait_log "$alias: live changes no longer written to ${alias}_v1" 60
found() { curl -s "$SEARCH_URL/$alias/_doc/$1" | jq -r .found; }
assert_eq true "$(found 1)" "a row without expiry has its document"
assert_eq false "$(found 2)" "a row already expired gets no document at the first sync"

mysql_q "INSERT INTO \`$db\`.t VALUES (3, 'short', UTC_TIMESTAMP(3) + INTERVAL 3 SECOND),
                                      (4, 'kept', UTC_TIMESTAMP(3) + INTERVAL 3 SECOND)"
deadline=$(mysql_q "SELECT ROUND(UNIX_TIMESTAMP(CONVERT_TZ(expires_at, '+00:00', @@session.time_zone)) * 1000) FROM \`$db\`.t WHERE id = 3")
wait_until 10 "the new rows are indexed" bash -c "[ \"\$(curl -s '$SEARCH_URL/$alias/_doc/3' | jq -r .found)\" = true ]"
mysql_q "UPDATE \`$db\`.t SET expires_at = NULL WHERE id = 4"
gone_at=""
for _ in $(seq 1 100); do
    if [ "$(found 3)" = false ]; then gone_at=$(date +%s%3N); break; fi
    sleep 0.1
done
[ -n "$gone_at" ] || fail "document 3 was not deleted within 10 s of its expiry"
late=$((gone_at - deadline))
log "document 3 gone $late ms after its expiry"
assert_true "document 3 gone within a second of its expiry ($late ms)" test "$late" -le 1000
assert_true "and not before it ($late ms)" test "$late" -ge -150
sleep 0.5
assert_eq true "$(found 4)" "a row whose expiry was cleared keeps its document"
assert_eq true "$(found 1)" "a row without expiry keeps its document"
assert_eq 1 "$(mysql_q "SELECT COUNT(*) FROM \`$db\`.t WHERE id = 3")" "the row itself is untouched"

# shards (mapping.md, "Shard tables"): each shard's table has its own expiry
# cursor. More rows expire at once in the first shard than one look takes
# (5,000), a few in the second: every one of them goes, in both shards
daemon_stop
salias="$(unique_name ttls)"
on_exit "curl -s -XDELETE '$SEARCH_URL/${salias}_v*?ignore_unavailable=true' >/dev/null"
mysql_q "CREATE TABLE \`$db\`.s_0 (id INT PRIMARY KEY, expires_at DATETIME(3) NULL, KEY (expires_at));
  CREATE TABLE \`$db\`.s_1 LIKE \`$db\`.s_0;
  INSERT INTO \`$db\`.s_0 SELECT seq, NULL FROM seq_1_to_6000;
  INSERT INTO \`$db\`.s_1 SELECT seq, NULL FROM seq_10001_to_10010" "$db"
jq --arg a "$salias" --arg db "$db" '.indices += [{alias: $a, shards: 1, replicas: 0, unique_keys: true,
    tables: [{table: ($db + ".s_{n:[0-9]+}"), expiry_column: "expires_at",
              columns: [{name: "id", type: "long", key: true}, {name: "expires_at", type: "date"}]}]}]' \
    "$TEST_TMP/m.json" >"$TEST_TMP/m2.json"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/m2.json" --yes >"$TEST_TMP/import2.out" 2>&1 ||
    fail "import: $(cat "$TEST_TMP/import2.out")"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
daemon_wait_log "$salias: live changes no longer written to ${salias}_v1" 60
assert_eq 6010 "$(search_count "$salias")" "shards: every row of both shards has its document"
mysql_q "UPDATE \`$db\`.s_0 SET expires_at = UTC_TIMESTAMP(3) + INTERVAL 2 SECOND;
  UPDATE \`$db\`.s_1 SET expires_at = UTC_TIMESTAMP(3) + INTERVAL 2 SECOND"
wait_until 30 "shards: every expired document gone" bash -c "[ \"\$(curl -s -XPOST '$SEARCH_URL/$salias/_refresh' >/dev/null; curl -s '$SEARCH_URL/$salias/_count' | jq .count)\" = 0 ]"
pass
