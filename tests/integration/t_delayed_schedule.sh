#!/usr/bin/env bash
# tests/integration/t_delayed_schedule.sh — `[delayed] schedule`:
# the daemon that reads the source runs the delayed refresh itself, against
# real MariaDB + OpenSearch on the demo shop (categories are delay-effect):
#   - a category renamed: the scheduled run rebuilds every product of that
#     category (that the commit alone changes none is t_delayed_run's): their
#     category.name equals SQL's, the snapshot is done, the run is in
#     delayed_runs and the log (with its ids: not "0 id(s)"), shaped by
#     [delayed] buckets, page and max_attempts
#   - a malformed schedule is refused at start with exit 2, naming the key
#   - the retention: history older than the retention table keeps goes at
#     start (this source's, done snapshots only), the recent stays
. "$(dirname "$0")/lib.sh"
require_bin
bash "$SEARCHSYNC_SRCDIR/sql/demo/generate.sh" --products 1500 >/dev/null
meta="$(unique_name meta)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/products_v1,brands_v1?ignore_unavailable=true' >/dev/null"
PORT="$(free_port)"
TOKEN="$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')"
export SEARCHSYNC_ADMIN_TOKEN="$TOKEN"
write_config() { # SCHEDULE
    cat >"$TEST_TMP/c.ini" <<INI
[source]
name = shop
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $((7500 + $$ % 90))
start = now
heartbeat_ms = 500
[metadata]
database = $meta
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
[delayed]
schedule = $1
buckets = 3
page = 7
max_attempts = 5
[admin]
listen = 127.0.0.1:$PORT
[log]
level = info
INI
}
write_config "every 1 minute"
rc=0
"$SEARCHSYNC_BIN" run --config "$TEST_TMP/c.ini" >"$TEST_TMP/bad.out" 2>&1 || rc=$?
assert_eq 2 "$rc" "a malformed schedule: exit 2"
assert_contains "$(cat "$TEST_TMP/bad.out")" '[delayed] schedule = "every 1 minute": give a time of day, UTC, as HH:MM' "the message names the key and what to write"

write_config "every 3s"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$SEARCHSYNC_SRCDIR/sql/demo/mapping.json" --yes \
    >"$TEST_TMP/import.out" 2>&1 || fail "import: $(cat "$TEST_TMP/import.out")"
# history older than the retention table keeps, and some that is not
mysql_q "INSERT INTO \`$meta\`.sync_log (source, event, detail, created_at) VALUES
    ('shop', 'old', 'a year ago', NOW(3) - INTERVAL 365 DAY), ('shop', 'recent', 'today', NOW(3)),
    ('othersource', 'old', 'another source', NOW(3) - INTERVAL 365 DAY);
  INSERT INTO \`$meta\`.check_runs (source, index_alias, status, started_at) VALUES
    ('shop', 'products', 'clean', NOW(3) - INTERVAL 365 DAY), ('shop', 'products', 'clean', NOW(3));
  INSERT INTO \`$meta\`.change_snapshots (source, db_name, table_name, operation, business_id, status, attach_date, updated_at) VALUES
    ('shop', 'shop', 'categories', 'update', '1', 'done', CURDATE() - INTERVAL 365 DAY, NOW(3) - INTERVAL 365 DAY),
    ('shop', 'shop', 'categories', 'update', '2', 'error', CURDATE() - INTERVAL 365 DAY, NOW(3) - INTERVAL 365 DAY)"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
daemon_wait_log "retention: 3 history row(s) older than the retention table keeps removed" 30
assert_eq "0 1" "$(mysql_q "SELECT SUM(event = 'old'), SUM(event = 'recent') FROM \`$meta\`.sync_log WHERE source = 'shop'" | tr '\t' ' ')" "retention: this source's old sync_log row gone, the recent kept"
assert_eq 1 "$(mysql_q "SELECT COUNT(*) FROM \`$meta\`.sync_log WHERE source = 'othersource'")" "retention: another source's rows are its own daemon's"
assert_eq 1 "$(mysql_q "SELECT COUNT(*) FROM \`$meta\`.check_runs")" "retention: the old check run gone"
assert_eq "error" "$(mysql_q "SELECT GROUP_CONCAT(status) FROM \`$meta\`.change_snapshots")" "retention: an old snapshot in error is kept (only done ones go)"
mysql_q "DELETE FROM \`$meta\`.change_snapshots; DELETE FROM \`$meta\`.check_runs"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 30 lines)"; tail -30 "$TEST_TMP/run.log"; }'
daemon_wait_log "scheduled delayed run every 3s" 30
daemon_wait_log "products: live changes no longer written to products_v1" 90
wait_checkpoint "$meta" shop 30

cat_id="$(mysql_q "SELECT category_id FROM shop.products WHERE category_id IS NOT NULL GROUP BY category_id ORDER BY COUNT(*) DESC LIMIT 1")"
naff="$(mysql_q "SELECT COUNT(*) FROM shop.products WHERE category_id = $cat_id")"
new_name="Renamed by the schedule $$"
mysql_q "UPDATE shop.categories SET name = '$new_name' WHERE id = $cat_id"
in_engine() {
    search_refresh products
    search_post "/products/_count" "{\"query\":{\"match_phrase\":{\"category.name\":\"$new_name\"}}}" | jq -r .count
}
all_renamed() { [ "$(in_engine)" = "$naff" ]; }
wait_until 60 "the scheduled run renamed the category in all $naff products" all_renamed
assert_eq "done" "$(mysql_q "SELECT status FROM \`$meta\`.change_snapshots WHERE business_id = '$cat_id' ORDER BY id DESC LIMIT 1")" "the snapshot is done"
assert_true "a delayed run is recorded" [ "$(mysql_q "SELECT COUNT(*) FROM \`$meta\`.delayed_runs WHERE status = 'done' AND docs_written >= $naff")" -ge 1 ]
# the run took its shape from [delayed]: 3 buckets, pages of 7 ids, 5 attempts
assert_eq "3 7 5" "$(mysql_q "SELECT buckets, page, max_attempts FROM \`$meta\`.delayed_runs WHERE status = 'done' AND docs_written >= $naff ORDER BY id DESC LIMIT 1" | tr '\t' ' ')" \
    "the scheduled run used [delayed] buckets, page and max_attempts"
# its log line: the ids it resolved (the category's products, from SQL) and
# the documents it rebuilt
daemon_wait_log "scheduled delayed run: 1 snapshot(s), $naff id(s), $naff document(s) rebuilt" 10
# the API: runs and snapshots
api() { curl -s -o "$TEST_TMP/api.json" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT$1"; }
assert_eq 200 "$(api /api/v1/delayed/runs)" "GET /api/v1/delayed/runs"
assert_true "the run with its figures" jq -e --argjson n "$naff" '[.runs[] | select(.status == "done" and .documents_rebuilt >= $n)] | length >= 1' "$TEST_TMP/api.json"
assert_eq 200 "$(api '/api/v1/delayed/snapshots?status=done')" "GET /api/v1/delayed/snapshots?status=done"
assert_eq "update $cat_id" "$(jq -r '.snapshots[] | select(.table == "categories") | "\(.operation) \(.business_id)"' "$TEST_TMP/api.json" | head -1)" "the category's snapshot, done"
assert_true "counts per table and status" jq -e '[.counts[] | select(.table == "shop.categories" and .status == "done")] | length == 1' "$TEST_TMP/api.json"
assert_eq 200 "$(api /api/v1/delayed/snapshots)" "GET /api/v1/delayed/snapshots"
assert_eq 0 "$(jq '.snapshots | length' "$TEST_TMP/api.json")" "nothing waiting"
assert_eq 400 "$(api '/api/v1/delayed/snapshots?status=bogus')" "an unknown status: 400"
assert_contains "$(cat "$TEST_TMP/api.json")" "init, running, error, done" "naming the statuses"
assert_eq 200 "$(api /api/v1/delayed/relation-tops)" "GET /api/v1/delayed/relation-tops"
assert_true "the relation tops' levels, the categories' among them" jq -e '[.levels[] | select(.table == "categories")] | length >= 1' "$TEST_TMP/api.json"
daemon_stop
pass
