#!/usr/bin/env bash
# tests/integration/t_engines.sh — the live engine matrix: searchsync against
# every engine flavour in $ENGINES (default: opensearch-1.3 opensearch-3
# elasticsearch-7 elasticsearch-8 elasticsearch-9; the suite's OpenSearch 2.19
# is every other test's engine), one after another, each started by tests/harness/engine.sh
# beside the suite's servers and stopped before the next.
#
# Per flavour: a small MariaDB schema (items, a one-to-one store object, nested
# parts; notes as child documents where the engine has parent-join, parts kept
# by area updates where it has painless), `mapping import`, `run` (first build
# into items_v1 behind the alias), inserts/updates/deletes, every document
# compared with an SQL oracle, `reindex` to items_v2 (alias switched), the
# oracle again, a change after the switch, the daemon stopped cleanly.
# Results: one TSV per flavour in ${SUITE_LOG_DIR:-tests/integration/logs}/compat/
# (scripts/compat-doc.sh turns them into docs/compatibility.md). A flavour
# this machine cannot run (engine.sh exit 3: no JDK >= 21, no download) is a
# skip of the whole test, and so a failure under CI=true.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
require_bin

# ------------------------------------------------------------ one flavour
if [ "${1:-}" = one ]; then
    fl="$2" resf="$3" n="$4"
    edir="$TEST_TMP/engine"
    eng() { ENGINE="$fl" SEARCHSYNC_ENGINE_DIR="$edir" bash "$HARNESS/engine.sh" "$@"; }
    set +e
    eng start >"$TEST_TMP/engine-start.log" 2>&1
    rc=$?
    set -e
    on_exit "ENGINE='$fl' SEARCHSYNC_ENGINE_DIR='$edir' bash '$HARNESS/engine.sh' stop >/dev/null 2>&1"
    if [ "$rc" != 0 ]; then
        cat "$TEST_TMP/engine-start.log"
        [ "$rc" = 3 ] && { echo "unavailable" >"$resf"; exit 3; }
        fail "$fl did not start"
    fi
    . "$edir/engine.env"
    cp "$edir/engine.env" "$resf"
    on_exit '[ "$rc" = 0 ] || { echo "--- engine log (last 30 lines)"; tail -30 "$ENGINE_LOG"; }'
    log "$fl: $ENGINE_DISTRIBUTION $ENGINE_VERSION on $ENGINE_URL (Java $ENGINE_JAVA), features: ${ENGINE_FEATURES:-none}"
    SEARCH_URL="$ENGINE_URL"
    has() { case " $ENGINE_FEATURES " in *" $1 "*) return 0 ;; esac; return 1; }
    join="" join_name="" join_field=""
    if has parent-join; then
        join=1 join_name='"join_name": "item",' join_field=", 'relation', JSON_OBJECT('name', 'item')"
    fi
    area=false; has painless && area=true

    db="eng${n}_$$"
    meta="$(unique_name meta)"
    on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1"
    mysql_q "CREATE DATABASE \`$db\`"
    mysql_q "
CREATE TABLE stores (id INT PRIMARY KEY, name VARCHAR(50) NOT NULL, city VARCHAR(50) NULL);
CREATE TABLE items (id BIGINT PRIMARY KEY, store_id INT NULL, name VARCHAR(100) NOT NULL,
  qty INT NULL, created_at DATETIME(3) NOT NULL);
CREATE TABLE item_parts (id BIGINT PRIMARY KEY, item_id BIGINT NOT NULL, label VARCHAR(50) NOT NULL, n INT NOT NULL);
CREATE TABLE notes (id BIGINT PRIMARY KEY, item_id BIGINT NOT NULL, body VARCHAR(200) NOT NULL);
INSERT INTO stores VALUES (1, 'north', 'Oslo'), (2, 'south', NULL), (3, 'east', 'Riga');
INSERT INTO items SELECT seq, 1 + seq % 4, CONCAT('item ', seq, ' Wi-Fi'), IF(seq % 5 = 0, NULL, seq * 3),
  TIMESTAMP('2024-01-31 12:00:00.125') + INTERVAL seq MINUTE FROM seq_1_to_40;
INSERT INTO item_parts SELECT seq, 1 + seq % 37, CONCAT('part-', seq), seq FROM seq_1_to_90;
INSERT INTO notes SELECT seq, 1 + seq % 23, CONCAT('note ', seq) FROM seq_1_to_30;" "$db"

    notes_table=""
    [ -z "$join" ] || notes_table=',
      {"table": "'"$db"'.notes", "join_name": "note", "parent": "'"$db"'.items", "parent_column": "item_id",
       "columns": [{"name": "id", "type": "long", "key": true}, {"name": "item_id", "type": "long"},
                   {"name": "body", "type": "text"}]}'
    cat >"$TEST_TMP/mapping.json" <<JSON
{"version": 1, "indices": [{"alias": "items", "shards": 2, "replicas": 0, "history_retention": 1, "tables": [
  {"table": "$db.items", $join_name "bucket_column": "id",
   "columns": [{"name": "id", "type": "long", "key": true}, {"name": "store_id", "type": "long", "extend_name": "store"},
               {"name": "name", "type": "text", "keyword": true}, {"name": "qty", "type": "integer"},
               {"name": "created_at", "type": "date"}],
   "relations": [
     {"column": "store_id", "table": "$db.stores", "join_column": "id",
      "columns": [{"name": "id", "type": "long"}, {"name": "name", "type": "keyword"}, {"name": "city", "type": "text"}]},
     {"column": "id", "table": "$db.item_parts", "join_column": "item_id", "extend_name": "parts", "nested": true,
      "area_update": $area,
      "columns": [{"name": "id", "type": "long", "key": true}, {"name": "label", "type": "keyword"},
                  {"name": "n", "type": "integer"}]}]}$notes_table]}]}
JSON
    cat >"$TEST_TMP/c.ini" <<INI
[source]
name = src
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $((7400 + n))
start = now
heartbeat_ms = 500
[metadata]
database = $meta
reload_interval_ms = 300
[search]
urls = $ENGINE_URL
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
[reindex]
buckets = 2
page_size = 50
INI
    "$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" --yes "$TEST_TMP/mapping.json" >"$TEST_TMP/import.out" 2>&1 ||
        fail "$fl: mapping import: $(cat "$TEST_TMP/import.out")"

    # the SQL oracle: items (with the store object and the parts), notes
    oracle() {
        oracle_query "$db" "SET SESSION time_zone = '+00:00';
SELECT JSON_OBJECT('id', CAST(i.id AS CHAR), 'routing', NULL, 'doc', JSON_OBJECT(
  'id', i.id, 'store_id', i.store_id, 'name', i.name, 'qty', i.qty,
  'created_at', $(_oracle_dt i.created_at 3),
  'store', JSON_EXTRACT((SELECT JSON_OBJECT('id', s.id, 'name', s.name, 'city', s.city)
                         FROM stores s WHERE s.id = i.store_id), '\$'),
  'parts', COALESCE(JSON_EXTRACT((SELECT JSON_ARRAYAGG(JSON_OBJECT('id', p.id, 'label', p.label, 'n', p.n))
                                  FROM item_parts p WHERE p.item_id = i.id), '\$'), JSON_ARRAY())
  $join_field))
FROM items i ORDER BY i.id" >"$TEST_TMP/items.oracle" || fail "$fl: the items oracle query"
        : >"$TEST_TMP/notes.oracle"
        [ -z "$join" ] || oracle_query "$db" "SELECT JSON_OBJECT('id', CONCAT('note-', n.id), 'routing', CAST(n.item_id AS CHAR),
  'doc', JSON_OBJECT('id', n.id, 'item_id', n.item_id, 'body', n.body,
                     'relation', JSON_OBJECT('name', 'note', 'parent', CAST(n.item_id AS CHAR))))
FROM notes n ORDER BY n.id" >"$TEST_TMP/notes.oracle" || fail "$fl: the notes oracle query"
    }
    check() { # check WHAT — every document behind the alias equals the oracle
        oracle
        search_refresh items
        engine_dump items "$TEST_TMP/engine.ndjson" 2>"$TEST_TMP/dump.err" || {
            cat "$TEST_TMP/dump.err"; fail "$fl: $1: engine dump"; }
        _LIB_ASSERTS=$((_LIB_ASSERTS + 1))
        compare_docs "$TEST_TMP/engine.ndjson" "$TEST_TMP/items.oracle,$TEST_TMP/notes.oracle" --numbers value \
            --ignore-field ss_version --ignore-field ss_hash --ignore-field ss_key_hash \
            --label "$fl items ($1)" --show 5 >"$TEST_TMP/cmp.out" ||
            { cat "$TEST_TMP/cmp.out"; fail "$fl: $1: the index differs from the SQL oracle"; }
        log "$(cat "$TEST_TMP/cmp.out")"
    }
    alias_target() { curl -s "$SEARCH_URL/_alias/items" | jq -r 'keys | join(",")'; }

    daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
    on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 40 lines)"; tail -40 "$TEST_TMP/run.log"; }'
    wait_until 90 "$fl: first build: alias items -> items_v1" bash -c \
        "curl -s '$SEARCH_URL/_alias/items' | jq -e 'has(\"items_v1\")'"
    daemon_wait_ready 30
    assert_contains "$(cat "$TEST_TMP/run.log")" "engine $ENGINE_VERSION (${fl%%.*})" \
        "$fl: the daemon read the engine's version and dialect"
    check "first build"

    mysql_q "
INSERT INTO stores VALUES (4, 'west', 'Lima');
UPDATE stores SET name = 'north-2', city = 'Bergen' WHERE id = 1;
INSERT INTO items VALUES (41, 4, 'new item', 7, '2024-02-29 23:59:59.999'), (42, NULL, 'no store', NULL, '2024-03-01 00:00:00');
UPDATE items SET qty = qty + 100, name = CONCAT(name, ' (changed)') WHERE id IN (1, 2, 3);
UPDATE items SET store_id = 3 WHERE id = 4;
DELETE FROM items WHERE id IN (5, 6);
INSERT INTO item_parts VALUES (91, 41, 'part-new', 1), (92, 1, 'part-1b', 2);
UPDATE item_parts SET n = n * 10, label = 'relabelled' WHERE item_id = 2;
DELETE FROM item_parts WHERE item_id = 3;
INSERT INTO notes VALUES (31, 41, 'note on a new item'), (32, 1, 'second note');
UPDATE notes SET body = 'edited' WHERE id = 2;
DELETE FROM notes WHERE id IN (3, 4);" "$db"
    wait_checkpoint "$meta" src 60
    check "after inserts, updates, deletes"

    "$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/c.ini" items >"$TEST_TMP/reindex.out" 2>&1 ||
        fail "$fl: reindex: $(cat "$TEST_TMP/reindex.out")"
    assert_contains "$(cat "$TEST_TMP/reindex.out")" "items v2 is live" "$fl: reindex reports the switch"
    assert_eq items_v2 "$(alias_target)" "$fl: the alias points at items_v2"
    check "after the reindex to v2"
    mysql_q "UPDATE items SET name = 'after the switch' WHERE id = 7; DELETE FROM item_parts WHERE id = 92;
INSERT INTO notes VALUES (33, 7, 'after the switch')" "$db"
    wait_checkpoint "$meta" src 60
    check "a change after the switch"

    daemon_stop
    assert_eq 0 "$DAEMON_RC" "$fl: the daemon stopped cleanly on SIGTERM"
    assert_contains "$(_daemon_log_since)" "stopped" "$fl: the daemon said it stopped"
    pass
fi

# ------------------------------------------------------------ the matrix
engine_row() { # FLAVOUR RESULT SECONDS RESFILE (lib.sh matrix_run)
    local version="" dist="" features="" java=""
    if [ -s "$4" ] && [ "$(cat "$4")" != unavailable ]; then
        version="$( . "$4"; printf '%s' "$ENGINE_VERSION")"
        dist="$( . "$4"; printf '%s' "$ENGINE_DISTRIBUTION")"
        features="$( . "$4"; printf '%s' "$ENGINE_FEATURES")"
        java="$( . "$4"; printf '%s' "$ENGINE_JAVA")"
    fi
    printf 'flavour\tdistribution\tversion\tfeatures\tresult\tseconds\tjava\tdate\tsearchsync\n%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
        "$1" "$dist" "$version" "$features" "$2" "$3" "$java" "$(date -u +%Y-%m-%d)" "$(matrix_build)"
    log "$1: $2 in ${3}s (${dist:-?} ${version:-?}; features: ${features:-none})"
}
matrix_run "${SUITE_LOG_DIR:-$PWD/tests/integration/logs}/compat" engine_row \
    ${ENGINES:-opensearch-1.3 opensearch-3 elasticsearch-7 elasticsearch-8 elasticsearch-9}
