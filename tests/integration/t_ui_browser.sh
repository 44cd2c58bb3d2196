#!/usr/bin/env bash
# tests/integration/t_ui_browser.sh — the admin web UI (web/ui/, served at /
# by `searchsync run`) in a real headless Chromium against the real daemon on
# the demo shop (MariaDB + OpenSearch). The browser half is
# t_ui_browser.mjs (playwright-core driving Debian's chromium):
#
#   login     GET / without a session -> /login; a wrong token refused on
#             the form; the right one -> the UI (CSP without inline scripts)
#   overview  engine, reader, queue, in flight, dead letters, fuses as the
#             API has them; 50 changes made in MySQL show up in the
#             acknowledged count and on the chart
#   indices   an index config over three shard tables shows its pattern
#             and its shards; "Reindex" on products: a second click shows the API's 409
#             next to the button; the progress bar moves through values
#             between 0 and 100 to 100%; the alias moves to products_v2
#             (checked in the engine here and by the driver with curl); the
#             documents are SQL's products + reviews + replies. "Delete
#             all…" on brands: enabled once "brands" is typed again; every
#             brands index gone from the engine, the config unavailable
#   others    nodes, checks (a `searchsync check` run), delayed runs (a
#             `searchsync delayed-run`) list what the API lists
#   words     add, a duplicate refused, edit, publish; /dict/ext.txt has it
#             (fetched here with curl too); dynamic_words says published
#   phone     every screen at 390 px without horizontal scroll
#   logout    back to /login; the API answers 401 to the browser and to the
#             old cookie
# Screenshots of every screen: $SUITE_LOG_DIR/ui/*.png (the suite's log dir).
# Needs: chromium (tests/harness/deps.sh installs it), node and npm; the
# npm package playwright-core (pinned) is installed by this test into
# $SEARCHSYNC_CACHE/ui-tests (nothing is downloaded by the browser itself).
. "$(dirname "$0")/lib.sh"
require_bin
. "$(dirname "$0")/ui_lib.sh"
ui_setup

bash "$SEARCHSYNC_SRCDIR/sql/demo/generate.sh" --products "${UI_PRODUCTS:-2500}" >/dev/null
meta="$(unique_name meta)"
curl -s -XDELETE "$SEARCH_URL/products*,brands*,parcels*?expand_wildcards=all" >/dev/null # left by others
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/products_v*,brands_v*?expand_wildcards=all' >/dev/null"
PORT="$(free_port)"
TOKEN="$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = shop
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = 7341
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
[reindex]
buckets = 4
page_size = 10
[admin]
listen = 127.0.0.1:$PORT
[log]
level = info
INI
export SEARCHSYNC_ADMIN_TOKEN="$TOKEN"
# beside the demo, an index config over three shard tables (mapping.md,
# "Shard tables"): the index screen shows its pattern and its shards
sdb="$(unique_name uishards)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$sdb\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/parcels_v*?expand_wildcards=all' >/dev/null"
mysql_q "CREATE DATABASE \`$sdb\`"
for n in 0 1 2; do
    mysql_q "CREATE TABLE \`$sdb\`.parcels_$n (id INT PRIMARY KEY, w INT); INSERT INTO \`$sdb\`.parcels_$n VALUES ($n, 1)"
done
jq --arg db "$sdb" '.indices += [{alias: "parcels", replicas: 0, unique_keys: true,
    tables: [{table: ($db + ".parcels_{n:[0-9]+}"), columns: [{name: "id", key: true}, "w"]}]}]' \
    "$SEARCHSYNC_SRCDIR/sql/demo/mapping.json" >"$TEST_TMP/mapping.json"
export SHARDS_DB="$sdb"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/mapping.json" --yes \
    >"$TEST_TMP/import.out" 2>&1 || fail "import: $(cat "$TEST_TMP/import.out")"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 40 lines)"; tail -40 "$TEST_TMP/run.log"; }'
meta_q() { mysql_q "$1" "$meta"; }
URL="http://127.0.0.1:$PORT"
wait_until 30 "admin server listening on $PORT" curl -s -o /dev/null "$URL/login"
wait_until 180 "first sync: alias products -> products_v1" bash -c "curl -s '$SEARCH_URL/_alias/products' | jq -e 'has(\"products_v1\")' >/dev/null" ||
    fail "no first sync: $(tail -20 "$TEST_TMP/run.log")"

# the UI's files need a session or the token, like the API
assert_eq 303 "$(curl -s -o /dev/null -w '%{http_code}' "$URL/")" "GET / without a session: redirected"
assert_eq "/login" "$(curl -s -o /dev/null -w '%{redirect_url}' "$URL/" | sed 's|^http://[^/]*||')" "to /login"
assert_eq 401 "$(curl -s -o /dev/null -w '%{http_code}' "$URL/ui/app.js")" "a UI file without a session: 401"
assert_eq 421 "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" -H 'Host: evil.example' "$URL/")" "the UI checks Host like the API"
ct="$(curl -s -o /dev/null -w '%{content_type}' -H "Authorization: Bearer $TOKEN" "$URL/ui/screens/indices.js")"
assert_eq "text/javascript; charset=utf-8" "$ct" "a screen module is JavaScript"
etag="$(curl -s -D - -o /dev/null -H "Authorization: Bearer $TOKEN" "$URL/ui/app.css" | tr -d '\r' | sed -n 's/^ETag: //Ip')"
assert_eq 304 "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" -H "If-None-Match: $etag" "$URL/ui/app.css")" "an unchanged file: 304"

# something for the checks and delayed-runs screens to list
"$SEARCHSYNC_BIN" check --config "$TEST_TMP/c.ini" --settle 20 brands >"$TEST_TMP/check.out" 2>&1 ||
    fail "searchsync check brands: $(tail -5 "$TEST_TMP/check.out")"
cat_id="$(mysql_q 'SELECT MIN(id) FROM shop.categories')"
mysql_q "UPDATE shop.categories SET name = CONCAT(name, ' (ui)') WHERE id = $cat_id"
wait_until 30 "a change snapshot of categories" bash -c \
    "[ \"\$(mariadb --no-defaults -h '$MYSQL_HOST' -P '$MYSQL_PORT' -uroot -N -B -e 'SELECT COUNT(*) FROM change_snapshots' '$meta' 2>/dev/null)\" -gt 0 ]" ||
    fail "no change snapshot: $(tail -5 "$TEST_TMP/run.log")"
"$SEARCHSYNC_BIN" delayed-run --config "$TEST_TMP/c.ini" >"$TEST_TMP/delayed.out" 2>&1 ||
    fail "searchsync delayed-run: $(tail -5 "$TEST_TMP/delayed.out")"

WORD_OLD="机器学习$RANDOM" WORD_NEW="深度学习$RANDOM"
export UI_URL="$URL" TOKEN SEARCH_URL SHOTS PW_DIR CHROMIUM WORD_OLD WORD_NEW
export TOUCH_CMD="mariadb --no-defaults -h '$MYSQL_HOST' -P '$MYSQL_PORT' -uroot -e 'UPDATE shop.products SET price = price + 1 ORDER BY id LIMIT 50'"
start=$(date +%s)
node "$SEARCHSYNC_SRCDIR/tests/integration/t_ui_browser.mjs" >"$TEST_TMP/browser.out" 2>&1 || {
    cat "$TEST_TMP/browser.out"
    fail "the browser run failed (screenshots so far in $SHOTS)"
}
cat "$TEST_TMP/browser.out"
n_ok="$(grep -c '^ok: ' "$TEST_TMP/browser.out")"
_LIB_ASSERTS=$((_LIB_ASSERTS + n_ok))
log "browser: $n_ok checks in $(( $(date +%s) - start )) s"

# what the browser did, seen from the engine, MySQL and curl
assert_eq "products_v2" "$(curl -s "$SEARCH_URL/_alias/products" | jq -r 'keys | join(",")')" "the engine: the alias moved to v2"
assert_eq "done" "$(meta_q "SELECT status FROM reindex_runs WHERE version = 2 ORDER BY id DESC LIMIT 1")" "reindex_runs: v2 done"
assert_eq "unavailable" "$(meta_q "SELECT state FROM index_configs WHERE alias = 'brands'")" "index_configs: brands unavailable after the UI's delete-all"
assert_eq 1 "$(meta_q "SELECT COUNT(*) FROM sync_log WHERE event = 'indices deleted' AND index_id = (SELECT id FROM index_configs WHERE alias = 'brands')")" "sync_log: the deletion noted"
wait_checkpoint "$meta" shop
want="$(mysql_q 'SELECT (SELECT COUNT(*) FROM shop.products) + (SELECT COUNT(*) FROM shop.reviews) + (SELECT COUNT(*) FROM shop.review_replies)')"
assert_eq "$want" "$(search_count products)" "documents in v2 = products + reviews + replies in SQL"
assert_eq "published" "$(meta_q "SELECT status FROM dynamic_words WHERE word = '$WORD_NEW' AND kind = 'ext'")" "dynamic_words: the word is published"
assert_eq 0 "$(meta_q "SELECT COUNT(*) FROM dynamic_words WHERE word = '$WORD_OLD'")" "the old spelling is gone"
assert_true "curl: /dict/ext.txt has the word" grep -qxF "$WORD_NEW" <(curl -s "$URL/dict/ext.txt")
for s in login overview indices nodes checks delayed words overview-phone indices-phone; do
    assert_true "screenshot $s.png" test -s "$SHOTS/$s.png"
done
assert_eq 0 "$(grep -c "$TOKEN" "$TEST_TMP/run.log" || true)" "the token never appears in the log"
pass
