#!/usr/bin/env bash
# tests/integration/t_delayed_report.sh — what `searchsync delayed-run` says
# and records is what happened, on the demo shop (categories
# delay-effect, generated relation top; tags with a hand-written one that
# joins tag_links, a table of no index config):
#   - tag_links dropped, a tag renamed: the run cannot resolve the tag's
#     snapshot. Each run says so on stderr and exits 1 (cron sees it the
#     first time), the run recorded `failed` with the SQL error in
#     error_text; the third attempt leaves the snapshot in error: exit 3
#   - a run SIGKILLed after some pages, taken over by the next one: the
#     run's docs_written (and status --json) counts every document of the
#     category once — as many as SQL has products in it — not only the
#     last process's
. "$(dirname "$0")/lib.sh"
require_bin
bash "$SEARCHSYNC_SRCDIR/sql/demo/generate.sh" --products 1500 >/dev/null
mysql_q "CREATE TABLE shop.tag_links AS SELECT product_id, tag_id FROM shop.product_tags"
map="$TEST_TMP/mapping.json"
jq '(.indices[] | select(.alias == "products") | .tables) += [{"table": "shop.tags",
      "delay_effect": true, "relation_top": [{"db": "shop",
      "sql": "SELECT product_id FROM tag_links WHERE tag_id IN (?)", "output": "product_id"}]}]' \
    "$SEARCHSYNC_SRCDIR/sql/demo/mapping.json" >"$map"
meta="$(unique_name meta)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/products_v1,brands_v1?ignore_unavailable=true' >/dev/null"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = shop
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $((7300 + $$ % 90))
start = now
heartbeat_ms = 500
[metadata]
database = $meta
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
[admin]
listen =
INI
M="\`$meta\`"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$map" --yes >"$TEST_TMP/import.out" 2>&1 ||
    fail "import: $(cat "$TEST_TMP/import.out")"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 30 lines)"; tail -30 "$TEST_TMP/run.log"; }'
daemon_wait_log "products: live changes no longer written to products_v1" 90
wait_checkpoint "$meta" shop 30

# 1. a relation top whose table is gone: failed, said, exit 1 then 3
tag_id="$(mysql_q "SELECT tag_id FROM shop.product_tags GROUP BY tag_id ORDER BY COUNT(*) DESC LIMIT 1")"
mysql_q "DROP TABLE shop.tag_links"
mysql_q "UPDATE shop.tags SET name = CONCAT(name, ' renamed') WHERE id = $tag_id"
wait_checkpoint "$meta" shop 30
assert_eq "init" "$(mysql_q "SELECT status FROM $M.change_snapshots WHERE table_name = 'tags'")" "the tag's snapshot waits"
codes=""
for attempt in 1 2 3; do
    drc=0
    "$SEARCHSYNC_BIN" delayed-run --config "$TEST_TMP/c.ini" >"$TEST_TMP/d$attempt.out" 2>&1 || drc=$?
    codes="$codes $drc"
    run="$(mysql_q "SELECT status, errors, error_text FROM $M.delayed_runs ORDER BY id DESC LIMIT 1")"
    log "attempt $attempt: exit $drc; the run: $run"
    assert_eq "failed	1" "$(cut -f1,2 <<<"$run")" "attempt $attempt: the run is recorded failed, 1 error"
    assert_contains "$(cut -f3 <<<"$run")" "tag_links' doesn't exist" "attempt $attempt: error_text says why"
    assert_contains "$(cat "$TEST_TMP/d$attempt.out")" "relation top of shop.tags" "attempt $attempt: the command says which relation top failed"
done
assert_eq " 1 1 3" "$codes" "exits: 1 at each failure (tried again), 3 once the snapshot is left in error"
assert_eq "error	3" "$(mysql_q "SELECT status, attempts FROM $M.change_snapshots WHERE table_name = 'tags'")" "the snapshot is left in error after 3 attempts"

# 2. a run killed after some pages, taken over: its figures count every page
cat_id="$(mysql_q "SELECT category_id FROM shop.products WHERE category_id IS NOT NULL GROUP BY category_id ORDER BY COUNT(*) DESC LIMIT 1")"
naff="$(mysql_q "SELECT COUNT(*) FROM shop.products WHERE category_id = $cat_id")"
[ "$naff" -ge 60 ] || fail "too few products ($naff) in category $cat_id for pages of 20"
mysql_q "UPDATE shop.categories SET slug = 'killed-run-slug' WHERE id = $cat_id"
wait_checkpoint "$meta" shop 30
SEARCHSYNC_TEST_DELAYED_PAUSE_MS=600 "$SEARCHSYNC_BIN" delayed-run --config "$TEST_TMP/c.ini" \
    --buckets 1 --page 20 >"$TEST_TMP/k.out" 2>&1 &
pk=$!
two_pages() { [ "$(mysql_q "SELECT COALESCE(MAX(rows_read), 0) FROM $M.jobs WHERE type = 'job' AND status = 'running'")" -ge 40 ]; }
wait_until 60 "the run acknowledged two pages" two_pages
kill -9 $pk
wait $pk 2>/dev/null || true
read -r run acked < <(mysql_q "SELECT id, docs_written FROM $M.delayed_runs ORDER BY id DESC LIMIT 1")
read -r left_rows < <(mysql_q "SELECT MAX(rows_read) FROM $M.jobs WHERE params = '{\"delayed_run\":$run}'")
log "killed run $run: $acked document(s) counted, $left_rows id(s) read"
assert_eq "$left_rows" "$acked" "the killed run's row counts its acknowledged pages already"
[ "$acked" -lt "$naff" ] || fail "the run was killed too late to mean anything ($acked of $naff)"
"$SEARCHSYNC_BIN" delayed-run --config "$TEST_TMP/c.ini" >"$TEST_TMP/t.out" 2>&1 || fail "the take-over: $(cat "$TEST_TMP/t.out")"
assert_contains "$(cat "$TEST_TMP/t.out")" "taking over delayed run $run" "the next run takes it over"
assert_eq "done	$naff	$naff" "$(mysql_q "SELECT status, ids, docs_written FROM $M.delayed_runs WHERE id = $run")" \
    "the run: done, its documents written = the category's products in SQL, each once"
assert_eq "$naff" "$(mysql_q "SELECT JSON_VALUE(detail, '\$.stats.documents_rebuilt') FROM $M.sync_log WHERE event = 'delayed_run' AND JSON_VALUE(detail, '\$.run') = $run")" "sync_log: the run's documents, every process's"
"$SEARCHSYNC_BIN" status --config "$TEST_TMP/c.ini" --json >"$TEST_TMP/s.json" 2>/dev/null || true
assert_eq "$naff" "$(jq -r '.delayed_last_run[0].documents_rebuilt' "$TEST_TMP/s.json")" "status --json: the last run's documents"
search_refresh products
assert_eq "$naff" "$(search_count products '{"query":{"term":{"category.slug":"killed-run-slug"}}}')" "every product of the category has the new slug"
daemon_stop
pass
