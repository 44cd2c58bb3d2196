#!/usr/bin/env bash
# tests/integration/t_delayed_run.sh — `searchsync delayed-run`
# against real MariaDB + OpenSearch, on the demo shop (5k products), with
# categories (generated relation top) and tags (a hand-written relation_top)
# delay-effect:
#   - a hand-written relation_top with a syntax error is refused at import,
#     naming its JSON path
#   - renaming a category and deleting a tag change no document until the
#     run (the engine's _seq_no of every product unchanged), only snapshots
#   - --dry-run prints the snapshots, their ids and the work, changes nothing
#   - two runs started at the same moment: one works, the other finds the
#     lock held; the documents rebuilt in total = the affected products (SQL)
#   - a live change to an affected product made after the run read its
#     position (the run held there by a test-only pause) ends with the live
#     value, the run's older write refused as stale
#   - afterwards every document equals the SQL oracle (renamed category,
#     tag gone), documents of other categories and tags kept their _seq_no,
#     the snapshots are done, the run's numbers are in sync_log and status
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
require_bin
map="$TEST_TMP/mapping.json"
# tags delay-effect too, with a hand-written chain to the products
jq '(.indices[] | select(.alias == "products") | .tables) += [{"table": "shop.tags",
      "delay_effect": true, "relation_top": [{"db": "shop",
      "sql": "SELECT product_id FROM product_tags WHERE tag_id IN (?)", "output": "product_id"}]}]' \
    "$SEARCHSYNC_SRCDIR/sql/demo/mapping.json" >"$map"
bash "$SEARCHSYNC_SRCDIR/sql/demo/generate.sh" --products "${DELAYED_PRODUCTS:-5000}" >/dev/null
# make check-long (long_delayed_run.sh): one category holds the first
# DELAYED_BIG_CATEGORY products, so that its rename reaches that many
if [ -n "${DELAYED_BIG_CATEGORY:-}" ]; then
    mysql_q "SET sql_log_bin = 0; UPDATE shop.products SET category_id = (SELECT MIN(id) FROM shop.categories)
      WHERE id <= $DELAYED_BIG_CATEGORY"
fi
meta="$(unique_name meta)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/products_v1,brands_v1?ignore_unavailable=true' >/dev/null"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = shop
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $((7600 + $$ % 300))
start = now
heartbeat_ms = 500
[metadata]
database = $meta
reload_interval_ms = 500
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
[log]
level = info
INI
ss() { "$SEARCHSYNC_BIN" "$@"; }

# a relation_top that does not run is refused at import, with its JSON path
jq '(.indices[0].tables[] | select(.table == "shop.tags") | .relation_top[0].sql) = "SELEC product_id FROM product_tags WHERE tag_id IN (?)"' \
    "$map" >"$TEST_TMP/bad.json"
rc=0
ss mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/bad.json" --yes >"$TEST_TMP/bad.out" 2>&1 || rc=$?
assert_eq 2 "$rc" "an import with a broken relation_top is refused"
assert_contains "$(cat "$TEST_TMP/bad.out")" "table shop.tags).relation_top[0].sql" "the refusal names the JSON path"
jq '(.indices[0].tables[] | select(.table == "shop.tags") | .relation_top[0].sql) = "SELECT product_id FROM product_tags WHERE tag_id = 1"' \
    "$map" >"$TEST_TMP/bad2.json"
rc=0
ss mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/bad2.json" --yes >"$TEST_TMP/bad2.out" 2>&1 || rc=$?
assert_eq 2 "$rc" "a relation_top without its bound list is refused"
assert_contains "$(cat "$TEST_TMP/bad2.out")" "IN (?)" "the refusal says how to write the list"

ss mapping import --config "$TEST_TMP/c.ini" "$map" --yes >"$TEST_TMP/import.out" 2>&1 ||
    fail "import: $(cat "$TEST_TMP/import.out")"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 30 lines)"; tail -30 "$TEST_TMP/run.log"; }'
daemon_wait_log "products: live changes no longer written to products_v1" 60
wait_checkpoint "$meta" shop 30

# the product documents' _seq_no, by id (scrolled: any number of products)
seqnos() {
    local page sid n
    search_refresh products
    page="$(search_post "/products/_search?scroll=1m&size=10000" \
        '{"query":{"term":{"relation":"product"}},"sort":["_doc"],"seq_no_primary_term":true,"_source":false}')"
    : >"$1.unsorted"
    while :; do
        n="$(jq '.hits.hits | length' <<<"$page")"
        [ "$n" -gt 0 ] || break
        jq -r '.hits.hits[] | "\(._id)\t\(._seq_no)\t\(._primary_term)"' <<<"$page" >>"$1.unsorted"
        sid="$(jq -r ._scroll_id <<<"$page")"
        page="$(search_post "/_search/scroll" "{\"scroll\":\"1m\",\"scroll_id\":\"$sid\"}")"
    done
    sort "$1.unsorted" >"$1"
}
cat_id="$(mysql_q "SELECT category_id FROM shop.products WHERE category_id IS NOT NULL GROUP BY category_id ORDER BY COUNT(*) DESC LIMIT 1")"
tag_id="$(mysql_q "SELECT tag_id FROM shop.product_tags WHERE product_id IN (SELECT id FROM shop.products WHERE category_id <> $cat_id) GROUP BY tag_id ORDER BY COUNT(*) DESC LIMIT 1")"
mysql_q "SELECT id FROM shop.products WHERE category_id = $cat_id UNION SELECT product_id FROM shop.product_tags WHERE tag_id = $tag_id" | sort >"$TEST_TMP/affected"
naff="$(wc -l <"$TEST_TMP/affected")"
log "category $cat_id and tag $tag_id: $naff affected products of $(mysql_q 'SELECT COUNT(*) FROM shop.products')"
[ "$naff" -gt 100 ] || fail "too few affected products ($naff) for the test to mean anything"
seqnos "$TEST_TMP/seq.before"
assert_eq "${DELAYED_PRODUCTS:-5000}" "$(wc -l <"$TEST_TMP/seq.before")" "every product indexed"

# the changes: snapshots only
mysql_q "UPDATE shop.categories SET name = CONCAT('Renamed ', name) WHERE id = $cat_id"
mysql_q "DELETE FROM shop.tags WHERE id = $tag_id"
wait_checkpoint "$meta" shop 30
seqnos "$TEST_TMP/seq.mid"
assert_true "no document changed before the run" cmp -s "$TEST_TMP/seq.before" "$TEST_TMP/seq.mid"
assert_eq "update	$cat_id	init
delete	$tag_id	init" "$(mysql_q "SELECT operation, business_id, status FROM \`$meta\`.change_snapshots ORDER BY id")" "two snapshots, waiting"
assert_eq "$tag_id" "$(mysql_q "SELECT JSON_VALUE(row_image, '\$.id') FROM \`$meta\`.change_snapshots WHERE operation = 'delete'")" "the deleted tag's row kept"

# the dry run: the plan, the ids, nothing changed
ss delayed-run --config "$TEST_TMP/c.ini" --dry-run >"$TEST_TMP/dry.out" 2>&1 || fail "dry run: $(cat "$TEST_TMP/dry.out")"
log "dry run: $(cat "$TEST_TMP/dry.out")"
assert_contains "$(cat "$TEST_TMP/dry.out")" "level 1 in shop: SELECT DISTINCT \`id\` FROM \`shop\`.\`products\` WHERE \`category_id\` IN (?) -> id" "generated level of categories"
assert_contains "$(cat "$TEST_TMP/dry.out")" "relation_top of the mapping file" "the tags' hand-written chain"
assert_contains "$(cat "$TEST_TMP/dry.out")" "estimated work: 2 snapshot(s), $naff document(s) to rebuild" "the estimate"
assert_eq "init init" "$(mysql_q "SELECT GROUP_CONCAT(status ORDER BY id SEPARATOR ' ') FROM \`$meta\`.change_snapshots")" "the dry run changed nothing"

# two runs at the same moment, held 4 s at each page's position (2 buckets,
# one page each); a live change of an affected product in bucket 0 meanwhile
live_id="$(awk '$1 % 2 == 0 {print; exit}' "$TEST_TMP/affected")"
export SEARCHSYNC_TEST_DELAYED_PAUSE_MS=7000
ss delayed-run --config "$TEST_TMP/c.ini" --buckets 2 --page 10000 >"$TEST_TMP/a.out" 2>&1 &
pa=$!
ss delayed-run --config "$TEST_TMP/c.ini" --buckets 2 --page 10000 >"$TEST_TMP/b.out" 2>&1 &
pb=$!
unset SEARCHSYNC_TEST_DELAYED_PAUSE_MS
on_exit '[ "$rc" = 0 ] || { echo "--- run A"; cat "$TEST_TMP/a.out"; echo "--- run B"; cat "$TEST_TMP/b.out"; }'
job_running() { [ "$(mysql_q "SELECT COUNT(*) FROM \`$meta\`.jobs WHERE type = 'job' AND status = 'running'")" -ge 1 ]; }
# the run says when its page's position is read (and it holds there)
wait_until 30 "a run's page read its position" grep -q "test pause of" "$TEST_TMP/a.out" "$TEST_TMP/b.out"
mysql_q "UPDATE shop.products SET name = 'live change' WHERE id = $live_id"
wait_until 6 "the live change is in the engine while the run is held" bash -c \
    "curl -s '$SEARCH_URL/products/_doc/$live_id' | jq -e '._source.name == \"live change\"' >/dev/null"
ra=0; wait $pa || ra=$?
rb=0; wait $pb || rb=$?
log "run A (rc $ra): $(cat "$TEST_TMP/a.out")"
log "run B (rc $rb): $(cat "$TEST_TMP/b.out")"
assert_eq "0 0" "$ra $rb" "both runs exit 0"
assert_eq 1 "$(cat "$TEST_TMP/a.out" "$TEST_TMP/b.out" | grep -c 'holds the lock')" "one of them found the lock held"
total="$(cat "$TEST_TMP/a.out" "$TEST_TMP/b.out" | sed -n 's/^  \([0-9]*\) document(s) rebuilt.*/\1/p' | awk '{ s += $1 } END { print s + 0 }')"
assert_eq "$naff" "$total" "the affected products were rebuilt once in total"
stale_lines="$(cat "$TEST_TMP/a.out" "$TEST_TMP/b.out" | sed -n 's/.* deleted, \([0-9]*\) stale.*/\1/p')"
assert_eq 1 "$(printf '%s\n' "$stale_lines" | grep -c '^[0-9][0-9]*$')" "the working run's summary counts stale writes"
stale="$(printf '%s\n' "$stale_lines" | awk '{ s += $1 } END { print s + 0 }')"
[ "$stale" -ge 1 ] || fail "the run's write of product $live_id was not refused as older than the live change (stale $stale)"
search_refresh products
assert_eq "live change" "$(search_doc products "$live_id" | jq -r .name)" "the live change stays"

# every document as SQL has it; the others untouched
wait_checkpoint "$meta" shop 30
oracle_check_products shop products "after the delayed run"
seqnos "$TEST_TMP/seq.after"
changed="$(join -t $'\t' "$TEST_TMP/seq.before" "$TEST_TMP/seq.after" | awk -F'\t' '$2 != $4 || $3 != $5 {print $1}' | sort)"
assert_eq "$(cat "$TEST_TMP/affected")" "$changed" "exactly the affected products were rewritten"
assert_eq "done done" "$(mysql_q "SELECT GROUP_CONCAT(status ORDER BY id SEPARATOR ' ') FROM \`$meta\`.change_snapshots")" "the snapshots are done"
assert_eq 1 "$(mysql_q "SELECT COUNT(*) FROM \`$meta\`.sync_log WHERE event = 'delayed_run' AND JSON_VALUE(detail, '\$.stats.documents_rebuilt') = $naff AND JSON_VALUE(detail, '\$.stats.snapshots') = 2")" "the run's numbers in sync_log"
assert_eq 2 "$(mysql_q "SELECT COUNT(*) FROM \`$meta\`.jobs WHERE type = 'job' AND status = 'done'")" "one job per bucket"
ss status --config "$TEST_TMP/c.ini" >"$TEST_TMP/status.out" 2>&1 || true
assert_contains "$(cat "$TEST_TMP/status.out")" "change snapshots waiting for the delayed run (table, count)
  none" "status: no snapshot pending"
assert_contains "$(grep -A1 '^last delayed run' "$TEST_TMP/status.out" | tail -1)" "done" "status shows the last run, done"
# a run SIGKILLed in its first page is resumed by the next one
cat2="$(mysql_q "SELECT category_id FROM shop.products WHERE category_id NOT IN ($cat_id) GROUP BY category_id ORDER BY COUNT(*) DESC LIMIT 1")"
n2="$(mysql_q "SELECT COUNT(*) FROM shop.products WHERE category_id = $cat2")"
mysql_q "UPDATE shop.categories SET slug = 'resumed-slug' WHERE id = $cat2"
wait_checkpoint "$meta" shop 30
SEARCHSYNC_TEST_DELAYED_PAUSE_MS=20000 "$SEARCHSYNC_BIN" delayed-run --config "$TEST_TMP/c.ini" --buckets 2 --page 50 >"$TEST_TMP/k.out" 2>&1 &
pk=$!
wait_until 30 "the run to be killed started a job" job_running
kill -9 $pk
wait $pk 2>/dev/null || true
assert_eq "running" "$(mysql_q "SELECT status FROM \`$meta\`.delayed_runs ORDER BY id DESC LIMIT 1")" "the killed run is left running"
assert_eq 0 "$(search_count products '{"query":{"term":{"category.slug":"resumed-slug"}}}')" "nothing of it applied yet"
ss delayed-run --config "$TEST_TMP/c.ini" >"$TEST_TMP/r.out" 2>&1 || fail "the resuming run: $(cat "$TEST_TMP/r.out")"
log "resuming run: $(cat "$TEST_TMP/r.out")"
assert_contains "$(cat "$TEST_TMP/r.out")" "taking over delayed run" "the next run takes the killed one over"
assert_contains "$(cat "$TEST_TMP/r.out")" "  $n2 document(s) rebuilt" "it rebuilt the category's products, each once"
assert_eq "$n2" "$(search_count products '{"query":{"term":{"category.slug":"resumed-slug"}}}')" "every product of the category has the new slug"
assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM \`$meta\`.change_snapshots WHERE status <> 'done'")" "every snapshot done"
# a run stopped by SIGTERM finishes its page, keeps its cursor and exits 1;
# the next one takes it over from there
cat3="$(mysql_q "SELECT category_id FROM shop.products WHERE category_id NOT IN ($cat_id, $cat2) GROUP BY category_id ORDER BY COUNT(*) DESC LIMIT 1")"
n3="$(mysql_q "SELECT COUNT(*) FROM shop.products WHERE category_id = $cat3")"
mysql_q "UPDATE shop.categories SET slug = 'termed-slug' WHERE id = $cat3"
wait_checkpoint "$meta" shop 30
SEARCHSYNC_TEST_DELAYED_PAUSE_MS=1500 "$SEARCHSYNC_BIN" delayed-run --config "$TEST_TMP/c.ini" --buckets 1 --page 20 >"$TEST_TMP/t.out" 2>&1 &
pt=$!
wait_until 30 "the run to be stopped read its first page's position" grep -q "test pause of" "$TEST_TMP/t.out"
kill -TERM $pt
trc=0; wait $pt || trc=$?
assert_eq 1 "$trc" "a run stopped by SIGTERM exits 1 (work left)"
assert_contains "$(cat "$TEST_TMP/t.out")" "stopped midway by a signal: the next delayed-run takes the run over" "it says so"
assert_eq "running" "$(mysql_q "SELECT status FROM \`$meta\`.delayed_runs ORDER BY id DESC LIMIT 1")" "the stopped run is left running"
done1="$(search_count products '{"query":{"term":{"category.slug":"termed-slug"}}}')"
[ "$done1" -ge 1 ] && [ "$done1" -lt "$n3" ] || fail "the stopped run should have finished its page and no more: $done1 of $n3"
ss delayed-run --config "$TEST_TMP/c.ini" >"$TEST_TMP/t2.out" 2>&1 || fail "the run after the stop: $(cat "$TEST_TMP/t2.out")"
assert_contains "$(cat "$TEST_TMP/t2.out")" "taking over delayed run" "the next run takes the stopped one over"
rebuilt2="$(sed -n 's/^  \([0-9]*\) document(s) rebuilt.*/\1/p' "$TEST_TMP/t2.out")"
[ "$rebuilt2" -le $((n3 - done1 + 20)) ] || fail "the take-over rebuilt $rebuilt2 of $n3 ($done1 already done): more than the rest and one page"
assert_eq "$n3" "$(search_count products '{"query":{"term":{"category.slug":"termed-slug"}}}')" "every product of the category has the new slug"
# nothing left: a run does nothing and says so
ss delayed-run --config "$TEST_TMP/c.ini" >"$TEST_TMP/c.out" 2>&1 || fail "an idle run: $(cat "$TEST_TMP/c.out")"
assert_contains "$(cat "$TEST_TMP/c.out")" "0 snapshot(s) taken" "an idle run takes nothing"
pass
