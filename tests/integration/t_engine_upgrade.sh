#!/usr/bin/env bash
# tests/integration/t_engine_upgrade.sh — an engine upgraded under a running
# daemon: OpenSearch 1.3 (tests/harness/engine.sh) syncs a root table with a
# nested relation; the engine is stopped, rows change meanwhile, and
# OpenSearch 2.19 is started on the same data directory and ports (the
# upgrade path OpenSearch supports: 1.3 -> 2.x). The daemon, never
# restarted:
#   - says the engine is now 2.19.1 and was 1.3.13 (it asked GET / again when
#     the engine answered after being unreachable);
#   - delivers what changed while the engine was away: every document equals
#     the SQL oracle;
#   - builds a new version with `searchsync reindex` on the upgraded engine
#     (index body in the new version's dialect), switches the alias, and the
#     documents equal the oracle again.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
require_bin

ENG="$SEARCHSYNC_SRCDIR/tests/harness/engine.sh"
port=$(free_port)
tport=$(free_port)
data="$TEST_TMP/engine-data"
mkdir -p "$data"
engine() { # engine FLAVOUR start|stop
    ENGINE="$1" SEARCHSYNC_ENGINE_DIR="$TEST_TMP/$1" ENGINE_PORT="$port" \
        ENGINE_TRANSPORT_PORT="$tport" ENGINE_DATA="$data" bash "$ENG" "$2" >>"$TEST_TMP/engine.out" 2>&1
}
on_exit "ENGINE=opensearch-1.3 SEARCHSYNC_ENGINE_DIR='$TEST_TMP/opensearch-1.3' bash '$ENG' kill >/dev/null 2>&1"
on_exit "ENGINE=opensearch-2 SEARCHSYNC_ENGINE_DIR='$TEST_TMP/opensearch-2' bash '$ENG' kill >/dev/null 2>&1"

engine opensearch-1.3 start || fail "OpenSearch 1.3 did not start: $(tail -20 "$TEST_TMP/engine.out")"
. "$TEST_TMP/opensearch-1.3/engine.env"
assert_eq 1.3.13 "$ENGINE_VERSION" "the old engine"
SEARCH_URL="$ENGINE_URL" # lib.sh's and oracle_lib.sh's engine from here on

db=$(unique_name upg)
meta=$(unique_name meta)
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1"
mysql_q "CREATE DATABASE \`$db\`"
mysql_q "
CREATE TABLE items (id BIGINT UNSIGNED PRIMARY KEY, name VARCHAR(100) NOT NULL, price DECIMAL(10,2) NULL,
  big BIGINT NULL);
CREATE TABLE notes (id INT PRIMARY KEY, item_id BIGINT UNSIGNED NOT NULL, body VARCHAR(200) NOT NULL, KEY (item_id));
INSERT INTO items VALUES (1, 'anvil', 10.50, 9223372036854775807), (2, 'bell', NULL, -9223372036854775808), (3, 'candle', 0.99, NULL);
INSERT INTO notes VALUES (1, 1, 'heavy'), (2, 1, 'iron'), (3, 3, 'wax');" "$db"
cat >"$TEST_TMP/m.json" <<JSON
{"version": 1, "indices": [{"alias": "${db}_items", "replicas": 0, "tables": [{"table": "$db.items",
  "relations": [{"column": "id", "table": "$db.notes", "join_column": "item_id", "extend_name": "notes",
                 "nested": true, "columns": [{"name": "id", "key": true}, "body"]}]}]}]}
JSON
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = upg
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = 7421
[metadata]
database = $meta
[search]
urls = $ENGINE_URL
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
INI
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" --yes "$TEST_TMP/m.json" >"$TEST_TMP/imp" 2>&1 ||
    fail "mapping import: $(cat "$TEST_TMP/imp")"

check_items() {
    oracle_query "$db" "SELECT JSON_OBJECT('id', CAST(i.id AS CHAR), 'routing', NULL, 'doc', JSON_OBJECT(
  'id', i.id, 'name', i.name, 'price', CAST(i.price AS CHAR), 'big', i.big,
  'notes', COALESCE(JSON_EXTRACT((SELECT JSON_ARRAYAGG(JSON_OBJECT('id', n.id, 'body', n.body) ORDER BY n.id)
      FROM notes n WHERE n.item_id = i.id), '\$'), JSON_ARRAY())))
FROM items i ORDER BY i.id" >"$TEST_TMP/oracle" || fail "$1: oracle query"
    search_refresh "${db}_items"
    engine_dump "${db}_items" "$TEST_TMP/engine"
    _LIB_ASSERTS=$((_LIB_ASSERTS + 1))
    compare_docs "$TEST_TMP/engine" "$TEST_TMP/oracle" --numbers exact \
        --ignore-field ss_version --ignore-field ss_hash --ignore-field ss_key_hash --label "items ($1)" --show 5 >"$TEST_TMP/cmp" ||
        { cat "$TEST_TMP/cmp"; fail "$1: the index differs from the SQL oracle"; }
}

daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
wait_until 90 "the first build on OpenSearch 1.3" bash -c \
    "[ \"\$(curl -s '$ENGINE_URL/${db}_items/_count' | jq .count)\" = 3 ]" ||
    fail "not built: $(tail -20 "$TEST_TMP/run.log")"
daemon_wait_ready 60
mysql_q "UPDATE items SET name = 'anvil (old)' WHERE id = 1; INSERT INTO notes VALUES (4, 2, 'brass')" "$db"
wait_checkpoint "$meta" upg 30
check_items "on OpenSearch 1.3"
assert_contains "$(cat "$TEST_TMP/run.log")" "engine 1.3.13 (opensearch-1)" "the daemon saw OpenSearch 1.3"

# ---- the upgrade: stop 1.3, change rows, start 2.19 on the same data and ports
engine opensearch-1.3 stop || fail "stopping OpenSearch 1.3: $(tail -20 "$TEST_TMP/engine.out")"
mysql_q "UPDATE items SET price = 12.00 WHERE id = 1; DELETE FROM notes WHERE id = 2;
INSERT INTO items VALUES (4, 'drum', 5.00, 9223372036854775806); INSERT INTO notes VALUES (5, 4, 'loud');
DELETE FROM items WHERE id = 3" "$db"
daemon_wait_log "the search engine is unreachable" 60
engine opensearch-2 start || fail "OpenSearch 2.19 on the 1.3 data did not start: $(tail -30 "$TEST_TMP/engine.out")"
. "$TEST_TMP/opensearch-2/engine.env"
assert_eq 2.19.1 "$ENGINE_VERSION" "the upgraded engine"
assert_eq "$ENGINE_URL" "$SEARCH_URL" "the same address"
daemon_wait_log "is now 2.19.1 (opensearch-2), was 1.3.13 (opensearch-1)" 90
wait_checkpoint "$meta" upg 90
daemon_alive || fail "the daemon stopped across the upgrade: $(tail -20 "$TEST_TMP/run.log")"
check_items "after the upgrade, changes made while the engine was away"

# ---- a new version built on the upgraded engine
mysql_q "UPDATE items SET name = 'bell (new)' WHERE id = 2" "$db"
"$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/c.ini" "${db}_items" >"$TEST_TMP/reindex.out" 2>&1 ||
    fail "reindex on the upgraded engine: $(cat "$TEST_TMP/reindex.out")"
assert_eq "${db}_items_v2" "$(curl -s "$ENGINE_URL/_alias/${db}_items" | jq -r 'keys | join(",")')" \
    "the alias moved to the version built on 2.19"
created() { curl -s "$ENGINE_URL/$1/_settings?human" | jq -r '.[].settings.index.version.created_string'; }
assert_eq 1.3.13 "$(created "${db}_items_v1")" "version 1 was created by OpenSearch 1.3"
assert_eq 2.19.1 "$(created "${db}_items_v2")" "version 2 was created by OpenSearch 2.19"
wait_checkpoint "$meta" upg 30
check_items "version 2 on OpenSearch 2.19"
daemon_stop
# the result for docs/compatibility.md (scripts/compat-doc.sh)
up="${SUITE_LOG_DIR:-$PWD/tests/integration/logs}/compat/upgrades"
mkdir -p "$up"
printf 'from\tto\tresult\tdate\tseconds\nOpenSearch 1.3.13\tOpenSearch 2.19.1\tpass\t%s\t%s\n' \
    "$(date -u +%Y-%m-%d)" "$SECONDS" >"$up/opensearch-1.3-to-2.tsv"
pass
