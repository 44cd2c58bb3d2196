#!/usr/bin/env bash
# tests/integration/t_ui_mapping.sh — the admin web UI's Sources, Mapping
# and Dead letters screens (web/ui/screens/sources.js, mapping.js,
# deadletters.js) in a real headless Chromium against the real daemon on
# the demo shop (MariaDB + OpenSearch). The browser half is
# t_ui_mapping.mjs (playwright-core driving Debian's chromium, installed as
# t_ui_browser.sh does):
#
#   sources   the source's tables by database with their primary keys; a
#             table without one marked and not offered as a root;
#             "Auto-generate" of shop.products shows its columns, objects,
#             nested arrays, the tags flattened through product_tags, the
#             guesses and a sample document (the first product, as SQL has it)
#   mapping   a new table shop.product_notes (foreign key to shop.products)
#             auto-generated with its columns on Sources, handed over to
#             Mapping ("Add to the mapping…") and added as an index config;
#             relations added with the form: the product (object, with
#             its brand added inside it), the
#             replies (nested), the tags (many-to-many, flattened through
#             note_tags); a relation with a missing join column refused by
#             "Validate & plan" with the problem shown, then removed; the
#             plan; "Apply". Then, outside the browser: the API lists the
#             index config and the engine's documents equal SQL's notes
#             with their product, replies and tags
#   dead      dead letters inserted as t_admin_api.sh does for an index
#   letters   created strict: the engine's error readable, one opened with
#             its body, one replayed ("replayed 1, 0 left"), the index's
#             replayed (one refused again: "1 left", the engine's new
#             error shown), one discarded after a confirmation; checked in
#             SQL and in the engine
#   by source two dead letters of another source (west) of the same
#             metadata schema: each card names its source; the Source
#             filter lists each source with its count: west's alone (their
#             Replay and Discard off, a note naming the daemon that replays
#             them), every source's; Replay all sends this source's only
#             (west's stay in SQL)
#   phone     the three screens at 390 px without horizontal scroll
# Screenshots: $SUITE_LOG_DIR/ui/{sources,mapping,mapping-plan,deadletters,...}.png
. "$(dirname "$0")/lib.sh"
require_bin
. "$(dirname "$0")/ui_lib.sh"
ui_setup

bash "$SEARCHSYNC_SRCDIR/sql/demo/generate.sh" --products "${UI_PRODUCTS:-300}" >/dev/null
meta="$(unique_name meta)"
dlx="$(unique_name dlui)"
curl -s -XDELETE "$SEARCH_URL/products*,brands*,product_notes*?expand_wildcards=all" >/dev/null # left by others
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/products_v*,brands_v*,product_notes_v*,$dlx,${dlx}_b?expand_wildcards=all' >/dev/null"
on_exit "mysql_q 'DROP TABLE IF EXISTS shop.note_tags, shop.note_replies, shop.product_notes, shop.ui_no_pk' >/dev/null 2>&1"

# the new tables the Mapping screen adds: notes of products (a foreign key
# to shop.products), their replies (nested), their tags (a link table to
# shop.tags), and a table without a primary key
mysql_q "
CREATE TABLE shop.product_notes (
  id INT UNSIGNED NOT NULL PRIMARY KEY, product_id BIGINT UNSIGNED NOT NULL, note VARCHAR(200) NOT NULL,
  created_at DATETIME NOT NULL, FOREIGN KEY (product_id) REFERENCES shop.products (id)) ENGINE=InnoDB;
CREATE TABLE shop.note_replies (
  id INT UNSIGNED NOT NULL PRIMARY KEY, note_id INT UNSIGNED NOT NULL, body VARCHAR(200) NOT NULL,
  FOREIGN KEY (note_id) REFERENCES shop.product_notes (id)) ENGINE=InnoDB;
CREATE TABLE shop.note_tags (
  note_id INT UNSIGNED NOT NULL, tag_id INT UNSIGNED NOT NULL, PRIMARY KEY (note_id, tag_id),
  FOREIGN KEY (note_id) REFERENCES shop.product_notes (id), FOREIGN KEY (tag_id) REFERENCES shop.tags (id)) ENGINE=InnoDB;
CREATE TABLE shop.ui_no_pk (a INT, b VARCHAR(10)) ENGINE=InnoDB;
INSERT INTO shop.product_notes SELECT 100 + seq, p.id, CONCAT('note ', seq, ' on ', p.name), '2026-01-02 03:04:05'
  FROM shop.seq_1_to_6 JOIN (SELECT id, name, ROW_NUMBER() OVER (ORDER BY id) AS n FROM shop.products) p ON p.n = seq;
INSERT INTO shop.note_replies SELECT 1000 + seq, 100 + (seq % 3) + 1, CONCAT('reply ', seq) FROM shop.seq_1_to_5;
INSERT INTO shop.note_tags SELECT 100 + n.seq, t.id FROM shop.seq_1_to_4 n JOIN (SELECT id FROM shop.tags ORDER BY id LIMIT 2) t;
ANALYZE TABLE shop.product_notes, shop.note_replies, shop.note_tags, shop.ui_no_pk;" >/dev/null

PORT="$(free_port)"
TOKEN="$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = shop
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = 7342
start = now
heartbeat_ms = 500
[metadata]
database = $meta
reload_interval_ms = 300
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
drain_timeout_ms = 10000
[reindex]
buckets = 2
page_size = 50
[admin]
listen = 127.0.0.1:$PORT
[log]
level = info
INI
export SEARCHSYNC_ADMIN_TOKEN="$TOKEN"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$SEARCHSYNC_SRCDIR/sql/demo/mapping.json" --yes \
    >"$TEST_TMP/import.out" 2>&1 || fail "import: $(cat "$TEST_TMP/import.out")"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 40 lines)"; tail -40 "$TEST_TMP/run.log"; }'
meta_q() { mysql_q "$1" "$meta"; }
URL="http://127.0.0.1:$PORT"
wait_until 30 "admin server listening on $PORT" curl -s -o /dev/null "$URL/login"
wait_until 180 "first sync: alias brands -> brands_v1" bash -c "curl -s '$SEARCH_URL/_alias/brands' | jq -e 'has(\"brands_v1\")' >/dev/null" ||
    fail "no first sync: $(tail -20 "$TEST_TMP/run.log")"

# dead letters as t_admin_api.sh makes them: an index created strict, one
# change it refuses (field b) and two it takes (field a)
curl -s -XPUT "$SEARCH_URL/$dlx" -H 'Content-Type: application/json' -d '{"settings":{"number_of_replicas":0},
  "mappings":{"dynamic":"strict","properties":{"a":{"type":"long"},"ss_version":{"type":"long"},
  "ss_hash":{"type":"keyword"},"ss_key_hash":{"type":"keyword"}}}}' >/dev/null
parse_err='{"type":"mapper_parsing_exception","reason":"failed to parse field [a] of type [long]","caused_by":{"type":"illegal_argument_exception","reason":"For input string: x"}}'
strict_err='{"type":"strict_dynamic_mapping_exception","reason":"mapping set to strict, dynamic introduction of [b] within [_doc] is not allowed"}'
meta_q "INSERT INTO dead_letters (source, index_name, doc_id, version, op, status, error, body, attempts) VALUES
  ('shop', '$dlx', 'ok1', 5, 'index', 400, 'refused before the index existed', '{\"a\":12345678901234567}', 1),
  ('shop', '$dlx', 'bad1', 5, 'index', 400, '$strict_err', '{\"b\":1}', 1),
  ('shop', '$dlx', 'ok2', 5, 'index', 400, 'refused before the index existed', '{\"a\":7}', 2),
  ('shop', '${dlx}_b', 'late1', 5, 'index', 400, '$parse_err', '{\"a\":3}', 3)"
# another source's (an index fed by several sources): listed, never replayed here
meta_q "INSERT INTO dead_letters (source, index_name, doc_id, version, op, status, error, body, attempts) VALUES
  ('west', '$dlx', 'w1', 5, 'index', 400, '$strict_err', '{\"b\":2}', 1),
  ('west', '${dlx}_b', 'w2', 5, 'index', 400, '$parse_err', '{\"a\":4}', 1)"

first_product="$(mysql_q 'SELECT MIN(id) FROM shop.products')"
export UI_URL="$URL" TOKEN SEARCH_URL SHOTS PW_DIR CHROMIUM DLX="$dlx" FIRST_PRODUCT="$first_product"
start=$(date +%s)
node "$SEARCHSYNC_SRCDIR/tests/integration/t_ui_mapping.mjs" >"$TEST_TMP/browser.out" 2>&1 || {
    cat "$TEST_TMP/browser.out"
    fail "the browser run failed (screenshots so far in $SHOTS)"
}
cat "$TEST_TMP/browser.out"
n_ok="$(grep -c '^ok: ' "$TEST_TMP/browser.out")"
_LIB_ASSERTS=$((_LIB_ASSERTS + n_ok))
log "browser: $n_ok checks in $(( $(date +%s) - start )) s"

# ---- what the browser did, seen from the API (curl), MySQL and the engine
api_get() { curl -s -H "Authorization: Bearer $TOKEN" "$URL$1"; }
assert_eq "product_notes" "$(api_get /api/v1/indices | jq -r '.indices[] | select(.alias == "product_notes") | .alias')" \
    "curl: GET /api/v1/indices lists the index config added in the UI"
assert_eq 5 "$(api_get /api/v1/mapping | jq '[.indices[] | select(.alias == "product_notes") | .. | objects | select(has("join_column"))] | length')" \
    "curl: the stored mapping has the four relations added (one inside the product) and the link table's inner one"
wait_until 120 "the daemon built product_notes: alias product_notes -> product_notes_v1" bash -c \
    "curl -s '$SEARCH_URL/_alias/product_notes' | jq -e 'has(\"product_notes_v1\")' >/dev/null" ||
    fail "product_notes not built: $(tail -20 "$TEST_TMP/run.log")"
curl -s -XPOST "$SEARCH_URL/product_notes/_refresh" >/dev/null
# the replicas the form proposed for this one-node engine (0): the index is
# green, not waiting for a replica no node can take
assert_eq "0 3" "$(api_get /api/v1/mapping | jq -r '.indices[] | select(.alias == "product_notes") | "\(.replicas) \(.history_retention)"')" \
    "curl: stored with the replicas of the form (0) and the versions kept edited in the raw JSON (3)"
assert_eq "green 0" "$(curl -s "$SEARCH_URL/_cluster/health/product_notes_v1?wait_for_status=green&timeout=20s" | jq -r .status) $(curl -s "$SEARCH_URL/product_notes_v1/_settings" | jq -r '.[].settings.index.number_of_replicas')" \
    "the engine: product_notes_v1 green, with 0 replicas"
assert_eq "$(mysql_q 'SELECT COUNT(*) FROM shop.product_notes')" "$(search_count product_notes)" "one document per note"
# every note's document against SQL: its product's name, its replies, its tags
want="$(mysql_q "SELECT CONCAT(n.id, '|', p.name, '|', IFNULL(b.name, ''), '|',
    IFNULL((SELECT GROUP_CONCAT(r.body ORDER BY r.id SEPARATOR ',') FROM shop.note_replies r WHERE r.note_id = n.id), ''), '|',
    IFNULL((SELECT GROUP_CONCAT(t.name ORDER BY t.id SEPARATOR ',') FROM shop.note_tags nt JOIN shop.tags t ON t.id = nt.tag_id WHERE nt.note_id = n.id), ''))
  FROM shop.product_notes n JOIN shop.products p ON p.id = n.product_id LEFT JOIN shop.brands b ON b.id = p.brand_id ORDER BY n.id")"
got="$(curl -s "$SEARCH_URL/product_notes/_search?size=100&sort=id:asc" |
    jq -r '.hits.hits[]._source | "\(.id)|\(.product.name)|\(.product.brand.name // "")|\([.replies // [] | sort_by(.id)[] | .body] | join(","))|\([.tags // [] | sort_by(.id)[] | .name] | join(","))"')"
assert_eq "$want" "$got" "the engine's notes = SQL's (product object with its brand inside, nested replies, flattened tags)"

assert_eq 0 "$(meta_q "SELECT COUNT(*) FROM dead_letters WHERE source = 'shop' AND index_name = '$dlx'")" \
    "SQL: the index's dead letters replayed or discarded"
assert_eq '"a":12345678901234567' "$(curl -s "$SEARCH_URL/$dlx/_doc/ok1" | grep -o '"a":[0-9]*')" \
    "the engine: the replayed document, its number exact"
assert_eq true "$(curl -s "$SEARCH_URL/$dlx/_doc/ok2" | jq .found)" "the engine: the one replayed alone"
assert_eq false "$(curl -s "$SEARCH_URL/$dlx/_doc/bad1" | jq .found)" "the engine: the discarded one never written"
assert_eq 0 "$(meta_q "SELECT COUNT(*) FROM dead_letters WHERE source = 'shop'")" "SQL: no dead letter left after Replay all"
assert_eq 3 "$(curl -s "$SEARCH_URL/${dlx}_b/_doc/late1" | jq ._source.a)" "the engine: the one Replay all sent"
assert_eq "w1 w2" "$(meta_q "SELECT GROUP_CONCAT(doc_id ORDER BY doc_id SEPARATOR ' ') FROM dead_letters WHERE source = 'west'")" \
    "SQL: west's dead letters stay (only its own daemon replays them)"
assert_eq false "$(curl -s "$SEARCH_URL/$dlx/_doc/w1" | jq .found)" "the engine: west's never written from here"
for s in sources mapping mapping-plan deadletters deadletters-source sources-phone mapping-phone deadletters-phone; do
    assert_true "screenshot $s.png" test -s "$SHOTS/$s.png"
done
pass
