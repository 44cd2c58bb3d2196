#!/usr/bin/env bash
# tests/integration/t_run_root_filter.sh — a soft-delete application under
# a root filter (the `where` of a document table, docs/mapping.md), against
# real MariaDB + OpenSearch, every step held to the SQL oracle: documents
# computed by the server from the rows with the same conditions.
#
#   items   (root) deleted_at / status, a shop object (shops: delay-effect),
#           nested parts (area_update), notes as child documents with their
#           own where (hidden = 0); index A, re-query:
#             where deleted_at IS NULL AND status <> 'draft'
#           the same items in row-image mode, index B, decided from the row
#           image: where deleted_at IS NULL AND status IN ('live', 'archived')
#           AND name NOT LIKE 'hidden%' (names like 'hiddén 4' only the
#           server can judge under utf8mb4_general_ci: rebuilt from MySQL)
#
#   first sync   the daemon's first build (reindex pages) of rows in and out
#   by hand      a flag set (the item's document and its notes' go) and
#                cleared (they come back, with what changed meanwhile);
#                parts and notes changed under an item that is out (no
#                document appears); out and in again in one transaction with
#                other changes; an item the evaluator leaves to the server
#   writer       SOFT_DELETE_TXNS (1500) seeded transactions
#                (soft_delete_writer.py: SEARCHSYNC_SEED) while the daemon
#                runs, then the delayed run of the shop renames
#   reindex      of A while the writer writes more
#   check        differences planted in both indices (a document of a row
#                that is out, one missing, rows moved in and out behind
#                searchsync's back with sql_log_bin = 0): found exactly
#                (exit 3), --repair (exit 0), the oracle again
# Knobs: SOFT_DELETE_ITEMS (400), SOFT_DELETE_TXNS (1500), SEARCHSYNC_SEED.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
require_bin
command -v python3 >/dev/null || skip "python3 needed for the writer and the oracle comparison"

SEED="${SEARCHSYNC_SEED:-$(( (RANDOM << 15 | RANDOM) % 1000000000 ))}"
ITEMS="${SOFT_DELETE_ITEMS:-400}"
TXNS="${SOFT_DELETE_TXNS:-1500}"
RANDOM=$SEED
log "seed $SEED: $ITEMS items, $TXNS writer transactions (replay: SEARCHSYNC_SEED=$SEED SOFT_DELETE_ITEMS=$ITEMS SOFT_DELETE_TXNS=$TXNS)"
D=$(unique_name soft)
meta=$(unique_name softmeta)
A=$(unique_name softa)
B=$(unique_name softb)
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$D\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1"
on_exit "curl -s -m 30 -XDELETE '$SEARCH_URL/${A}_v*,${B}_v*?ignore_unavailable=true' >/dev/null 2>&1"
ss() { "$SEARCHSYNC_BIN" "$@"; }
q() { mysql_q "$1" "$D"; }

# ---------------------------------------------------------------- the shop
NPARTS=$((ITEMS * 2)) NNOTES=$((ITEMS * 3 / 2)) NSHOPS=20
mysql_q "CREATE DATABASE \`$D\` CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci" || fail "create $D"
q "CREATE TABLE shops (id INT PRIMARY KEY, name VARCHAR(60) NOT NULL);
CREATE TABLE items (id BIGINT UNSIGNED PRIMARY KEY, shop_id INT NULL, name VARCHAR(100) NOT NULL,
  status ENUM('draft','live','archived') NOT NULL DEFAULT 'draft', deleted_at DATETIME(3) NULL,
  price DECIMAL(10,2) NOT NULL, KEY (shop_id));
CREATE TABLE item_parts (id BIGINT PRIMARY KEY, item_id BIGINT UNSIGNED NOT NULL, label VARCHAR(40),
  n INT NOT NULL DEFAULT 0, KEY (item_id));
CREATE TABLE notes (id BIGINT PRIMARY KEY, item_id BIGINT UNSIGNED NOT NULL, body VARCHAR(200),
  hidden TINYINT NOT NULL DEFAULT 0, KEY (item_id));
INSERT INTO shops SELECT seq, CONCAT('shop ', seq) FROM seq_1_to_$NSHOPS;
INSERT INTO items SELECT seq, IF(seq % 11 = 0, NULL, seq % $NSHOPS + 1),
  ELT(seq % 7 + 1, CONCAT('item ', seq), CONCAT('Hidden ', seq), CONCAT('Café ', seq),
      CONCAT('hiddén ', seq), CONCAT('Item ', seq), CONCAT('ÄRGER ', seq), CONCAT('hid ', seq)),
  ELT(seq % 4 + 1, 'live', 'draft', 'archived', 'live'),
  IF(seq % 5 = 0, '2024-01-02 03:04:05.678', NULL), seq * 1.25 FROM seq_1_to_$ITEMS;
INSERT INTO item_parts SELECT seq, (seq - 1) % $ITEMS + 1, CONCAT('p', seq), seq % 10 FROM seq_1_to_$NPARTS;
INSERT INTO notes SELECT seq, (seq * 13) % ($ITEMS + 20) + 1, CONCAT('note ', seq), seq % 3 = 0
  FROM seq_1_to_$NNOTES" || fail "the shop's rows"

AWHERE="deleted_at IS NULL AND status <> 'draft'"
BWHERE="deleted_at IS NULL AND status IN ('live', 'archived') AND name NOT LIKE 'hidden%'"
cat >"$TEST_TMP/m.json" <<JSON
{"version": 1, "indices": [
 {"alias": "$A", "shards": 2, "replicas": 0, "tables": [
  {"table": "$D.items", "join_name": "item", "where": "$AWHERE",
   "columns": [{"name": "id", "type": "long", "key": true}, {"name": "shop_id", "type": "long", "extend_name": "shop"},
               {"name": "name", "type": "keyword"}, {"name": "status", "type": "keyword"},
               {"name": "price", "type": "keyword"}],
   "relations": [
     {"column": "shop_id", "table": "$D.shops", "join_column": "id",
      "columns": [{"name": "id", "type": "long"}, {"name": "name", "type": "keyword"}]},
     {"column": "id", "table": "$D.item_parts", "join_column": "item_id", "extend_name": "parts",
      "nested": true, "area_update": true,
      "columns": [{"name": "id", "type": "long", "key": true}, {"name": "label", "type": "keyword"},
                  {"name": "n", "type": "integer"}]}]},
  {"table": "$D.notes", "join_name": "note", "parent": "$D.items", "parent_column": "item_id",
   "where": "hidden = 0",
   "columns": [{"name": "id", "type": "long", "key": true}, {"name": "item_id", "type": "long"},
               {"name": "body", "type": "text"}]},
  {"table": "$D.shops", "delay_effect": true}]},
 {"alias": "$B", "shards": 1, "replicas": 0, "tables": [
  {"table": "$D.items", "mode": "row-image", "where": "$BWHERE",
   "columns": [{"name": "id", "type": "long", "key": true}, {"name": "name", "type": "keyword"},
               {"name": "status", "type": "keyword"}, {"name": "price", "type": "keyword"},
               {"name": "deleted_at", "type": "date"}]}]}]}
JSON
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = soft
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $((8100 + $$ % 400))
start = now
heartbeat_ms = 200
[metadata]
database = $meta
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
[reindex]
buckets = 3
page_size = 97
[admin]
listen =
[log]
level = info
INI

# a row-image where outside what searchsync evaluates is refused, naming it
jq --arg b "$B" '(.indices[] | select(.alias == $b) | .tables[0].where) = "LOWER(name) <> '"'x'"'"' \
    "$TEST_TMP/m.json" >"$TEST_TMP/bad.json"
st=0; ss mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/bad.json" --yes >"$TEST_TMP/bad.out" 2>&1 || st=$?
assert_eq 2 "$st" "a row-image where outside the subset: refused (exit 2)"
assert_contains "$(cat "$TEST_TMP/bad.out")" "in mode row-image it is decided from the row image, without the server, and the function LOWER() is not supported" \
    "the refusal names what is not supported"
ss mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/m.json" --yes >"$TEST_TMP/import.out" 2>&1 ||
    fail "import: $(cat "$TEST_TMP/import.out")"
assert_eq "$AWHERE" "$(ss mapping export --config "$TEST_TMP/c.ini" | jq -r --arg a "$A" '.indices[] | select(.alias == $a) | .tables[0].where')" \
    "the where is stored and exported"

# ---------------------------------------------------------------- the oracle
# A: items in its where with their shop and parts; notes not hidden under
# such an item. B: items in B's where. As the server evaluates the conditions
# (the where's columns are the items' alone: unqualified in the joins too).
oracle_a() {
    oracle_query "$D" "SELECT JSON_OBJECT('id', CAST(i.id AS CHAR), 'routing', NULL, 'doc', JSON_OBJECT(
  'id', i.id, 'shop_id', i.shop_id, 'name', i.name, 'status', CAST(i.status AS CHAR), 'price', CAST(i.price AS CHAR),
  'shop', JSON_EXTRACT((SELECT JSON_OBJECT('id', s.id, 'name', s.name) FROM shops s WHERE s.id = i.shop_id), '\$'),
  'parts', COALESCE(JSON_EXTRACT((SELECT JSON_ARRAYAGG(JSON_OBJECT('id', p.id, 'label', p.label, 'n', p.n) ORDER BY p.id)
                                  FROM item_parts p WHERE p.item_id = i.id), '\$'), JSON_ARRAY()),
  'relation', JSON_OBJECT('name', 'item')))
FROM items i WHERE $AWHERE ORDER BY i.id" >"$TEST_TMP/a.oracle" || fail "the oracle of A"
    oracle_query "$D" "SELECT JSON_OBJECT('id', CONCAT('note-', n.id), 'routing', CAST(n.item_id AS CHAR),
  'doc', JSON_OBJECT('id', n.id, 'item_id', n.item_id, 'body', n.body,
                     'relation', JSON_OBJECT('name', 'note', 'parent', CAST(n.item_id AS CHAR))))
FROM notes n JOIN items i ON i.id = n.item_id WHERE n.hidden = 0 AND ($AWHERE) ORDER BY n.id" \
        >"$TEST_TMP/notes.oracle" || fail "the oracle of A's notes"
}
oracle_b() {
    oracle_query "$D" "SET SESSION time_zone = '+00:00';
SELECT JSON_OBJECT('id', CAST(i.id AS CHAR), 'routing', NULL, 'doc', JSON_OBJECT(
  'id', i.id, 'name', i.name, 'status', CAST(i.status AS CHAR), 'price', CAST(i.price AS CHAR),
  'deleted_at', i.deleted_at))
FROM items i WHERE $BWHERE ORDER BY i.id" >"$TEST_TMP/b.oracle" || fail "the oracle of B"
}
# oracle_check LABEL — both indices equal their oracles
oracle_check() {
    oracle_a
    oracle_b
    search_refresh "$A"
    search_refresh "$B"
    engine_dump "$A" "$TEST_TMP/a.engine" 2>"$TEST_TMP/dump.err" || { cat "$TEST_TMP/dump.err"; fail "$1: engine dump of A"; }
    engine_dump "$B" "$TEST_TMP/b.engine" 2>"$TEST_TMP/dump.err" || { cat "$TEST_TMP/dump.err"; fail "$1: engine dump of B"; }
    _LIB_ASSERTS=$((_LIB_ASSERTS + 1))
    compare_docs "$TEST_TMP/a.engine" "$TEST_TMP/a.oracle,$TEST_TMP/notes.oracle" --numbers value \
        --ignore-field ss_version --ignore-field ss_hash --ignore-field ss_key_hash --label "A ($1)" --show 8 \
        >"$TEST_TMP/cmp.out" || { cat "$TEST_TMP/cmp.out"; fail "$1: index A differs from the SQL oracle (seed $SEED)"; }
    log "$(cat "$TEST_TMP/cmp.out")"
    _LIB_ASSERTS=$((_LIB_ASSERTS + 1))
    compare_docs "$TEST_TMP/b.engine" "$TEST_TMP/b.oracle" --numbers value \
        --ignore-field ss_version --ignore-field ss_hash --ignore-field ss_key_hash --label "B ($1)" --show 8 \
        >"$TEST_TMP/cmp.out" || { cat "$TEST_TMP/cmp.out"; fail "$1: index B differs from the SQL oracle (seed $SEED)"; }
    log "$(cat "$TEST_TMP/cmp.out")"
}
caught_up() { wait_checkpoint "$meta" soft "${1:-120}"; search_refresh "$A"; search_refresh "$B"; }

# ---------------------------------------------------------------- first sync
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 40 lines)"; tail -40 "$TEST_TMP/run.log"; echo "--- seed $SEED"; }'
daemon_wait_log "$A: live changes no longer written to ${A}_v1" 180
daemon_wait_log "$B: live changes no longer written to ${B}_v1" 180
caught_up
assert_true "rows out of A's where exist (soft-deleted, drafts)" \
    test "$(q "SELECT COUNT(*) FROM items WHERE NOT ($AWHERE)")" -gt $((ITEMS / 3))
assert_true "notes under items out of A exist, and hidden ones" \
    test "$(q "SELECT COUNT(*) FROM notes n JOIN items i ON i.id = n.item_id WHERE n.hidden = 0 AND NOT ($AWHERE)")" -gt 0
oracle_check "first sync"
assert_eq "$(q "SELECT COUNT(*) FROM items WHERE $BWHERE")" "$(search_count "$B")" "B holds exactly the rows in its where"

# ---------------------------------------------------------------- by hand
X=$(q "SELECT i.id FROM items i WHERE $AWHERE AND $BWHERE AND EXISTS (SELECT 1 FROM notes n WHERE n.item_id = i.id AND n.hidden = 0)
       AND EXISTS (SELECT 1 FROM item_parts p WHERE p.item_id = i.id) ORDER BY i.id LIMIT 1")
XN=$(q "SELECT MIN(id) FROM notes WHERE item_id = $X AND hidden = 0")
[ -n "$X" ] && [ -n "$XN" ] || fail "no item with parts and a shown note"
assert_false_doc() { _LIB_ASSERTS=$((_LIB_ASSERTS + 1)); [ -z "$(search_doc "$@")" ] || fail "$1/$2 should have no document"; }
assert_doc() { _LIB_ASSERTS=$((_LIB_ASSERTS + 1)); [ -n "$(search_doc "$@")" ] || fail "$1/$2 should have its document"; }
assert_doc "$A" "$X"
assert_doc "$B" "$X"
assert_doc "$A" "note-$XN" "$X"
log "soft delete of item $X"
q "UPDATE items SET deleted_at = NOW(3) WHERE id = $X"
caught_up
assert_false_doc "$A" "$X"
assert_false_doc "$B" "$X"
assert_false_doc "$A" "note-$XN" "$X"
log "children changed under item $X while it is out"
q "INSERT INTO item_parts VALUES (990000001, $X, 'under', 1);
   UPDATE item_parts SET n = n + 100 WHERE item_id = $X;
   INSERT INTO notes VALUES (990000002, $X, 'note under an item that is out', 0);
   UPDATE notes SET body = 'edited while out' WHERE id = $XN"
caught_up
assert_false_doc "$A" "$X"
assert_false_doc "$A" "note-990000002" "$X"
assert_false_doc "$A" "note-$XN" "$X"
log "the flag cleared"
q "UPDATE items SET deleted_at = NULL WHERE id = $X"
caught_up
assert_eq "true 990000001" "$(search_doc "$A" "$X" | jq -r '[.parts[].n] | all(. >= 100) | tostring' ) $(search_doc "$A" "$X" | jq -r '.parts[-1].id')" \
    "item $X back with every part changed while it was out"
assert_eq "edited while out" "$(search_doc "$A" "note-$XN" "$X" | jq -r .body)" "its note back as it is now"
assert_doc "$A" "note-990000002" "$X"
assert_doc "$B" "$X"
log "out and in within transactions, beside other changes"
Y=$(q "SELECT id FROM items WHERE $AWHERE AND id <> $X ORDER BY id LIMIT 1")
q "BEGIN; UPDATE items SET deleted_at = NOW(3) WHERE id = $X; UPDATE items SET price = 777.77 WHERE id = $Y;
   INSERT INTO notes VALUES (990000003, $X, 'in the same transaction', 0); COMMIT"
q "BEGIN; UPDATE items SET status = 'draft' WHERE id = $Y; UPDATE items SET deleted_at = NULL WHERE id = $X;
   UPDATE items SET status = 'live' WHERE id = $Y; UPDATE item_parts SET label = 'last' WHERE id = 990000001; COMMIT"
q "BEGIN; UPDATE items SET status = 'archived' WHERE id = $X; UPDATE items SET status = 'draft' WHERE id = $X; COMMIT"
caught_up
assert_false_doc "$A" "$X" # its last state: a draft
assert_false_doc "$B" "$X"
assert_eq "777.77" "$(search_doc "$A" "$Y" | jq -r .price)" "item $Y: out and in within one transaction, its price kept"
q "UPDATE items SET status = 'live' WHERE id = $X"
caught_up
assert_eq "last" "$(search_doc "$A" "$X" | jq -r '.parts[] | select(.id == 990000001) | .label')" "item $X in again with its part"
assert_doc "$A" "note-990000003" "$X"
log "names only the server judges against B's LIKE (row-image: rebuilt from MySQL)"
q "UPDATE items SET name = 'hiddén here' WHERE id = $X; UPDATE items SET name = 'CAFÉ $Y' WHERE id = $Y"
caught_up
assert_false_doc "$B" "$X"          # 'hiddén here' LIKE 'hidden%' under utf8mb4_general_ci
assert_eq "CAFÉ $Y" "$(search_doc "$B" "$Y" | jq -r .name)" "B: a name with a letter beyond ASCII, in"
assert_doc "$A" "$X"                # A's where does not read the name
oracle_check "by hand"

# ---------------------------------------------------------------- the writer
python3 "$(dirname "$0")/soft_delete_writer.py" "$SEED" "$TXNS" 0 "$ITEMS" "$NPARTS" "$NNOTES" "$NSHOPS" \
    >"$TEST_TMP/w1.sql" 2>"$TEST_TMP/w1.sum" || fail "the writer"
log "$(cat "$TEST_TMP/w1.sum")"
t0=$(date +%s)
mysql_file "$TEST_TMP/w1.sql" "$D" >"$TEST_TMP/w1.out" 2>&1 || fail "the writer's SQL failed: $(tail -5 "$TEST_TMP/w1.out")"
log "the writer's $TXNS transactions ran in $(( $(date +%s) - t0 ))s"
caught_up 300
snaps=$(mysql_q "SELECT COUNT(*) FROM \`$meta\`.change_snapshots" 2>/dev/null || echo 0)
log "change snapshots of shop renames waiting for the delayed run: $snaps"
ss delayed-run --config "$TEST_TMP/c.ini" >"$TEST_TMP/delayed.out" 2>&1 || fail "delayed-run: $(cat "$TEST_TMP/delayed.out")"
caught_up
oracle_check "after the writer (seed $SEED) and the delayed run"

# ---------------------------------------------------------------- reindex
python3 "$(dirname "$0")/soft_delete_writer.py" "$((SEED + 1))" $((TXNS / 3)) 1 "$ITEMS" "$NPARTS" "$NNOTES" "$NSHOPS" \
    >"$TEST_TMP/w2.sql" 2>"$TEST_TMP/w2.sum" || fail "the writer"
mysql_file "$TEST_TMP/w2.sql" "$D" >"$TEST_TMP/w2.out" 2>&1 &
W2=$!
ss reindex --config "$TEST_TMP/c.ini" "$A" >"$TEST_TMP/reindex.out" 2>&1 || fail "reindex: $(cat "$TEST_TMP/reindex.out")"
wait "$W2" || fail "the second writer's SQL failed: $(tail -5 "$TEST_TMP/w2.out")"
assert_contains "$(cat "$TEST_TMP/reindex.out")" "$A v2 is live" "the reindex of A switched"
caught_up 300
ss delayed-run --config "$TEST_TMP/c.ini" >"$TEST_TMP/delayed2.out" 2>&1 || fail "delayed-run: $(cat "$TEST_TMP/delayed2.out")"
caught_up
oracle_check "after a reindex of A under the writer (seed $((SEED + 1)))"

# ---------------------------------------------------------------- check
# planted: a document of a row that is out (and of a hidden note), one
# missing, a row moved out and one moved in behind searchsync's back
# (four different rows)
MOVEIN=$(q "SELECT id FROM items WHERE deleted_at IS NOT NULL AND status = 'live' AND name LIKE 'item%' ORDER BY id LIMIT 1")
OUTROW=$(q "SELECT id FROM items WHERE NOT ($AWHERE) AND NOT ($BWHERE) AND id <> '$MOVEIN' ORDER BY id LIMIT 1")
GONE=$(q "SELECT id FROM items WHERE $AWHERE ORDER BY id LIMIT 1 OFFSET 3")
MOVEOUT=$(q "SELECT id FROM items WHERE $AWHERE AND $BWHERE AND id <> '$GONE' ORDER BY id LIMIT 1 OFFSET 5")
HIDDEN=$(q "SELECT n.id FROM notes n JOIN items i ON i.id = n.item_id WHERE n.hidden = 1 AND ($AWHERE) ORDER BY n.id LIMIT 1")
HIDDEN_ITEM=$(q "SELECT item_id FROM notes WHERE id = $HIDDEN")
[ -n "$OUTROW" ] && [ -n "$GONE" ] && [ -n "$MOVEOUT" ] && [ -n "$MOVEIN" ] && [ -n "$HIDDEN" ] ||
    fail "rows to plant differences on: out=$OUTROW gone=$GONE moveout=$MOVEOUT movein=$MOVEIN hidden=$HIDDEN"
log "planting: A: $OUTROW (out) and note-$HIDDEN (hidden) added, $GONE deleted; in MySQL without the binlog: $MOVEOUT out, $MOVEIN in"
search_put "/$A/_doc/$OUTROW" '{"name":"planted","relation":{"name":"item"}}' >/dev/null
search_put "/$A/_doc/note-$HIDDEN?routing=$HIDDEN_ITEM" '{"body":"planted","relation":{"name":"note","parent":"'"$HIDDEN_ITEM"'"}}' >/dev/null
search_put "/$B/_doc/$OUTROW" '{"name":"planted"}' >/dev/null
search_req DELETE "/$A/_doc/$GONE" >/dev/null
q "SET SESSION sql_log_bin = 0; UPDATE items SET deleted_at = NOW(3) WHERE id = $MOVEOUT;
   UPDATE items SET deleted_at = NULL WHERE id = $MOVEIN"
search_refresh "$A"
search_refresh "$B"
check() { # ALIAS [ARGS] — --json in $OUT, exit status in $RC
    RC=0
    OUT="$(ss check --config "$TEST_TMP/c.ini" --json --settle 20 "$@" 2>"$TEST_TMP/check.err")" || RC=$?
}
# the shown notes of the rows moved go and come with them
notes_of() { q "SELECT CONCAT('note-', id) FROM notes WHERE item_id = $1 AND hidden = 0"; }
check "$A"
assert_eq 3 "$RC" "A: differences found and left (exit 3) $(cat "$TEST_TMP/check.err")"
assert_eq "$( (printf '%s\n' "$OUTROW" "$MOVEOUT" "note-$HIDDEN"; notes_of "$MOVEOUT") | sort)" "$(jq -r '.extra[]' <<<"$OUT" | sort)" \
    "A: exactly the documents of rows out of its where, and of the notes under them, are extra"
assert_eq "$( (printf '%s\n' "$GONE" "$MOVEIN"; notes_of "$MOVEIN") | sort)" "$(jq -r '.missing[]' <<<"$OUT" | sort)" \
    "A: exactly the deleted document, the row moved in and its notes are missing"
assert_eq "$(q "SELECT (SELECT COUNT(*) FROM items WHERE $AWHERE) + (SELECT COUNT(*) FROM notes n JOIN items i ON i.id = n.item_id WHERE n.hidden = 0 AND ($AWHERE))")" \
    "$(jq -r .rows <<<"$OUT")" "A: the MySQL side counts the rows in the where only"
check "$B"
assert_eq 3 "$RC" "B: differences found (exit 3)"
assert_eq "$(printf '%s\n' "$OUTROW" "$MOVEOUT" | sort)" "$(jq -r '.extra[]' <<<"$OUT" | sort)" "B: the rows out of its where are extra"
assert_eq "$MOVEIN" "$(jq -r '.missing[]' <<<"$OUT")" "B: the row moved in is missing"
check "$A" --repair
assert_eq 0 "$RC" "A: repaired (exit 0) $(cat "$TEST_TMP/check.err")"
check "$B" --repair
assert_eq 0 "$RC" "B: repaired (exit 0) $(cat "$TEST_TMP/check.err")"
check "$A"
assert_eq 0 "$RC" "A: clean after the repair"
oracle_check "after check --repair"

# ---------------------------------------------------------------- the log
errs=$(grep -E ' ERROR \[|dead letter' "$TEST_TMP/run.log" | head -5 || true)
assert_eq "" "$errs" "no ERROR and no dead letter in the daemon's log"
assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM \`$meta\`.dead_letters")" "no dead letters"
daemon_stop
assert_eq 0 "$DAEMON_RC" "SIGTERM: a clean exit"
pass
