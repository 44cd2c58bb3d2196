#!/usr/bin/env bash
# tests/integration/t_check.sh — `searchsync check` against real
# MariaDB + OpenSearch, on the demo shop (products with nested skus and tags,
# parent/child reviews and replies), with the daemon running:
#   - a clean index reports clean (exit 0) without fetching one document
#     (documents_fetched 0 in --json), and equals the SQL oracle
#   - documents deleted, altered (a top-level field, a nested element's field,
#     a nested element removed) and added behind searchsync's back, directly
#     in the engine, are found exactly: no more, no fewer, with the first
#     differing field path; exit 3. Edits that keep the document's ss_hash
#     (a GET, edit and PUT copying _source; an _update) too: the engine's
#     version of such a document is not its ss_version
#   - --repair rewrites or deletes them (exit 0); a second check is clean and
#     every document equals the SQL oracle again
#   - --since covers rows whose daily_check_column changed in the window
#   - a document whose ss_hash is stale (hashed by another release) but
#     whose content is right is not drift; --repair rewrites its hash
#   - a check while a steady writer updates products reports no difference
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
require_bin
bash "$SEARCHSYNC_SRCDIR/sql/demo/generate.sh" --products 4000 >/dev/null
meta="$(unique_name meta)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/products_v1,brands_v1?ignore_unavailable=true' >/dev/null"
PORT="$(free_port)"
TOKEN="$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = shop
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $((7900 + $$ % 90))
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
listen = 127.0.0.1:$PORT
[log]
level = info
INI
export SEARCHSYNC_ADMIN_TOKEN="$TOKEN"
ss() { "$SEARCHSYNC_BIN" "$@"; }
# the SKUs' own daily_check_column: a window check follows their changes up to the products
jq '(.indices[] | select(.alias == "products") | .tables) += [{"table": "shop.skus", "daily_check_column": "updated_at"}]' \
    "$SEARCHSYNC_SRCDIR/sql/demo/mapping.json" >"$TEST_TMP/mapping.json"
ss mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/mapping.json" --yes \
    >"$TEST_TMP/import.out" 2>&1 || fail "import: $(cat "$TEST_TMP/import.out")"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 30 lines)"; tail -30 "$TEST_TMP/run.log"; }'
daemon_wait_log "products: live changes no longer written to products_v1" 90
wait_checkpoint "$meta" shop 30

check() { # ARGS... — the check's --json output in $OUT, its exit code in $RC
    RC=0
    OUT="$(ss check --config "$TEST_TMP/c.ini" --json --settle 20 "$@" 2>"$TEST_TMP/check.err")" || RC=$?
}
ndocs="$(search_count products)"

# ---- a clean index: clean, nothing fetched, equal to the oracle
check products
assert_eq 0 "$RC" "a clean index: exit 0 ($OUT $(cat "$TEST_TMP/check.err"))"
assert_eq true "$(jq -r .clean <<<"$OUT")" "a clean index reports clean"
assert_eq 0 "$(jq -r .documents_fetched <<<"$OUT")" "no document fetched for a clean index of $ndocs"
assert_eq "$(mysql_q "SELECT (SELECT COUNT(*) FROM shop.products) + (SELECT COUNT(*) FROM shop.reviews) + (SELECT COUNT(*) FROM shop.review_replies r JOIN shop.reviews v ON v.id = r.review_id)")" \
    "$(jq -r .rows <<<"$OUT")" "every document built from MySQL (products, reviews, replies of reviews: SQL)"
assert_eq "$ndocs" "$(jq -r .engine_documents <<<"$OUT")" "every engine document counted"
oracle_check_products shop products "before the tampering"

# ---- behind searchsync's back, in the engine
pick() { mysql_q "SELECT p.id FROM shop.products p WHERE $1 ORDER BY p.id LIMIT 1 OFFSET $2"; }
gone="$(pick "1=1" 10)"
top="$(pick "1=1" 20)"
skufield="$(pick "EXISTS (SELECT 1 FROM shop.skus s WHERE s.product_id = p.id)" 30)"
skuless="$(pick "(SELECT COUNT(*) FROM shop.skus s WHERE s.product_id = p.id) >= 2" 40)"
review="$(mysql_q "SELECT id FROM shop.reviews ORDER BY id LIMIT 1 OFFSET 5")"
extra=999000001
kept="$(pick "1=1" 70)"
copied="$(pick "1=1" 80)"
log "tampering: delete $gone, name of $top, skus[0].color of $skufield, skus[1] of $skuless, review-$review, add $extra, edit $kept in place, GET+PUT $copied"
rproduct="$(mysql_q "SELECT product_id FROM shop.reviews WHERE id = $review")"
search_req DELETE "/products_v1/_doc/$gone" >/dev/null
# rewrite PRODUCT JQ — the document written again by someone else than
# searchsync: its _source changed by JQ, without searchsync's fields
rewrite() {
    search_get "/products_v1/_doc/$1" | jq -c "._source | del(.ss_version, .ss_hash, .ss_key_hash) | $2" >"$TEST_TMP/doc.json"
    search_put "/products_v1/_doc/$1" "$(cat "$TEST_TMP/doc.json")" >/dev/null
}
rewrite "$top" '.name = "tampered"'
rewrite "$skufield" '.skus[0].color = "XX"'
rewrite "$skuless" 'del(.skus[1])'
search_req DELETE "/products_v1/_doc/review-$review?routing=$rproduct" >/dev/null
search_put "/products_v1/_doc/$extra" '{"name":"not in MySQL","relation":{"name":"product"}}' >/dev/null
# a partial update in the engine keeps the document's ss_hash
search_post "/products_v1/_update/$kept" '{"doc":{"name":"edited in place"}}' >/dev/null
# so does a GET, edit and PUT of the whole _source: ss_version, ss_hash and
# ss_key_hash copied along, the hash still that of the row
search_get "/products_v1/_doc/$copied" | jq -c '._source | .name = "copied and edited"' >"$TEST_TMP/doc.json"
assert_true "the copy keeps searchsync's hash" jq -e '.ss_hash and .ss_version' "$TEST_TMP/doc.json"
search_put "/products_v1/_doc/$copied" "$(cat "$TEST_TMP/doc.json")" >/dev/null
search_refresh products

check products
assert_eq 3 "$RC" "differences found and left: exit 3 ($(cat "$TEST_TMP/check.err"))"
assert_eq false "$(jq -r .clean <<<"$OUT")" "not clean"
assert_eq "$(printf '%s\n' "$gone" "review-$review" | sort)" "$(jq -r '.missing[]' <<<"$OUT" | sort)" "exactly the deleted documents are missing"
assert_eq "$extra" "$(jq -r '.extra[]' <<<"$OUT")" "exactly the added document is extra"
assert_eq "$(printf '%s\n' "$top" "$skufield" "$skuless" "$kept" "$copied" | sort)" "$(jq -r '.different[].id' <<<"$OUT" | sort)" \
    "exactly the altered documents differ, those that kept their ss_hash too"
assert_eq name "$(jq -r --arg id "$copied" '.different[] | select(.id == $id) | .path' <<<"$OUT")" "the copied and edited document: its path"
assert_eq name "$(jq -r --arg id "$kept" '.different[] | select(.id == $id) | .path' <<<"$OUT")" "the document edited in place: its path"
assert_eq 2 "$(jq -r .rewritten <<<"$OUT")" "two hashed documents were written last by someone else"
assert_eq name "$(jq -r --arg id "$top" '.different[] | select(.id == $id) | .path' <<<"$OUT")" "a top-level field's path"
assert_eq "skus[0].color" "$(jq -r --arg id "$skufield" '.different[] | select(.id == $id) | .path' <<<"$OUT")" "a nested element's field's path"
assert_contains "$(jq -r --arg id "$skuless" '.different[] | select(.id == $id) | .path' <<<"$OUT")" "skus[1]" "a removed nested element: the first element that no longer matches"
assert_true "no duplicates (an empty list)" jq -e '.duplicate | type == "array" and length == 0' <<<"$OUT"
fetched="$(jq -r .documents_fetched <<<"$OUT")"
# six documents are in the engine of the eight: each fetched once per settle round (two: the
# second finds the same differences, so they are believed)
assert_eq 12 "$fetched" "only the suspects were fetched, once per round"
assert_eq 2 "$(jq -r .rounds <<<"$OUT")" "two rounds: the second confirms the first"
text="$(ss check --config "$TEST_TMP/c.ini" --settle 20 products 2>/dev/null)" || true
assert_contains "$(head -1 <<<"$text")" "products: 8 difference(s): 2 missing, 1 extra, 5 different" "the summary line comes first"
assert_contains "$text" "different $copied at name" "the copied document's line"
assert_contains "$text" "different $skufield at skus[0].color" "a detail line names the path"

# ---- --deep compares every document's content: the same found
check products --deep
assert_eq 3 "$RC" "--deep: differences ($(cat "$TEST_TMP/check.err"))"
assert_eq "$(printf '%s\n' "$top" "$skufield" "$skuless" "$kept" "$copied" | sort)" "$(jq -r '.different[].id' <<<"$OUT" | sort)" \
    "--deep: the rewritten documents and the two that kept their hash differ"
assert_eq name "$(jq -r --arg id "$kept" '.different[] | select(.id == $id) | .path' <<<"$OUT")" "--deep: its path"
assert_eq "$(printf '%s\n' "$gone" "review-$review" | sort)" "$(jq -r '.missing[]' <<<"$OUT" | sort)" "--deep: the same missing"
assert_true "--deep reads every document" [ "$(jq -r .documents_fetched <<<"$OUT")" -ge "$ndocs" ]

# ---- repair, then clean and equal to the oracle
check products --repair --deep
assert_eq 0 "$RC" "--repair: exit 0 ($OUT $(cat "$TEST_TMP/check.err"))"
assert_eq true "$(jq -r .repair.done <<<"$OUT")" "the repair was delivered"
search_refresh products
check products
assert_eq 0 "$RC" "after the repair: clean ($OUT)"
assert_eq 0 "$(jq -r .documents_fetched <<<"$OUT")" "after the repair nothing is fetched: the repaired documents carry hashes again"
oracle_check_products shop products "after the repair"
assert_eq "$(mysql_q "SELECT name FROM shop.products WHERE id = $copied")" "$(search_get "/products/_doc/$copied" | jq -r ._source.name)" \
    "the copied and edited document repaired"
# every run is recorded: status shows the last, the API lists them
st="$(ss status --config "$TEST_TMP/c.ini" --json 2>/dev/null)" || true
assert_eq "clean 0" "$(jq -r '.checks[] | select(.index == "products") | "\(.status) \(.differences)"' <<<"$st")" "status: the last check of products"
api="$(curl -s -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/api/v1/indices/products/checks")"
assert_eq "clean repaired differences differences differences clean" "$(jq -r '[.checks[].status] | join(" ")' <<<"$api")" "GET /api/v1/indices/products/checks: every run, newest first"
assert_eq "$extra" "$(jq -r '.checks[1].report.extra[0]' <<<"$api")" "each run's report is in the API"
assert_eq 6 "$(mysql_q "SELECT COUNT(*) FROM \`$meta\`.sync_log WHERE event = 'check'")" "each run has a sync_log line"
metrics="$(curl -s -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/metrics")"
assert_true "/metrics: the last check's differences" grep -qx 'searchsync_check_differences{index="products",source="shop"} 0' <<<"$metrics"
assert_true "/metrics: the documents checks repaired" grep -qx 'searchsync_check_detected_repairs_total{index="products",source="shop"} 8' <<<"$metrics"

# ---- --since: the rows changed in the window
old="$(pick "1=1" 50)"
mysql_q "UPDATE shop.products SET updated_at = NOW(6) - INTERVAL 10 DAY WHERE id = $old"
mysql_q "UPDATE shop.products SET price = price + 1 WHERE id = $top"
viasku="$(pick "EXISTS (SELECT 1 FROM shop.skus s WHERE s.product_id = p.id) AND p.updated_at < NOW() - INTERVAL 1 DAY" 5)"
mysql_q "UPDATE shop.skus SET stock = stock + 1 WHERE product_id = $viasku ORDER BY id LIMIT 1"
wait_checkpoint "$meta" shop 30
search_post "/products_v1/_update/$viasku" '{"doc":{"name":"tampered, its SKU changed"}}' >/dev/null
search_post "/products_v1/_update/$top" '{"doc":{"name":"tampered after the sync"}}' >/dev/null
rewrite "$old" '.name = "tampered, but its row is old"'
search_refresh products
check products --since 1h
assert_eq 3 "$RC" "--since finds the change in its window ($OUT)"
assert_eq "$(printf '%s\tname\n' "$top" "$viasku" | sort)" "$(jq -r '.different[] | "\(.id)\t\(.path)"' <<<"$OUT" | sort)" \
    "--since looks only at rows changed in the window: the product's own, and one whose SKU changed"
assert_true "--since built only the window's documents" [ "$(jq -r .rows <<<"$OUT")" -lt 100 ]
check products --since 1h --repair
assert_eq 0 "$RC" "--since --repair ($OUT)"
assert_eq "$(printf '%s\n' "$top" "$viasku" | sort)" "$(jq -r '.different[].id' <<<"$OUT" | sort)" "the window's differences repaired"
# the daily replay: the window's documents rebuilt, compared, the different rewritten
search_post "/products_v1/_update/$viasku" '{"doc":{"name":"drift the replay finds"}}' >/dev/null
search_refresh products
rrc=0
ss replay --config "$TEST_TMP/c.ini" --index products --since 1h >"$TEST_TMP/replay.out" 2>"$TEST_TMP/replay.err" || rrc=$?
assert_eq 0 "$rrc" "replay: exit 0 ($(cat "$TEST_TMP/replay.err"))"
assert_contains "$(cat "$TEST_TMP/replay.out")" "products: 2 document(s) changed in the last 3600 s rebuilt and compared; 1 found different, rewritten" "replay: its figures"
search_refresh products
assert_eq "$(mysql_q "SELECT name FROM shop.products WHERE id = $viasku")" "$(search_get "/products/_doc/$viasku" | jq -r ._source.name)" "replay rewrote the document"
check products --repair
assert_eq 0 "$RC" "repaired"
assert_eq "$old" "$(jq -r '.different[].id' <<<"$OUT")" "the whole-index check finds the row outside the window"
rc2=0
ss check --config "$TEST_TMP/c.ini" products --since 5x >/dev/null 2>&1 || rc2=$?
assert_eq 2 "$rc2" "a malformed --since is a usage error"
rc2=0
ss check --config "$TEST_TMP/c.ini" nosuch >"$TEST_TMP/nosuch.out" 2>&1 || rc2=$?
assert_eq 2 "$rc2" "an unknown index is a usage error"
assert_contains "$(cat "$TEST_TMP/nosuch.out")" 'no index config "nosuch"' "and says so"

# ---- a document hashed by a release whose body hash differs: the same
# content, a stale ss_hash, its _version still its ss_version (written as
# searchsync writes, with external versioning). Compared by content, not
# drift; --repair rewrites it and the next check fetches nothing. The source
# is edited as text: jq would round ss_version (above 2^53) to a double.
stale="$(pick "1=1" 90)"
search_get "/products_v1/_source/$stale" >"$TEST_TMP/stale.json"
h="$(grep -o '"ss_hash":[0-9]*' "$TEST_TMP/stale.json" | cut -d: -f2)"
ver="$(grep -o '"ss_version":[0-9]*' "$TEST_TMP/stale.json" | cut -d: -f2)"
assert_true "the document carries its hash and version ($h, $ver)" test -n "$h" -a -n "$ver"
{
    printf '{"index":{"_index":"products_v1","_id":"%s","version":%s,"version_type":"external_gte"}}\n' "$stale" "$ver"
    sed "s/\"ss_hash\":$h/\"ss_hash\":$(((h + 1) % 2147483648))/" "$TEST_TMP/stale.json"
    echo
} >"$TEST_TMP/stale.ndjson"
curl -s -H 'Content-Type: application/x-ndjson' -XPOST "$SEARCH_URL/_bulk?refresh=true" \
    --data-binary @"$TEST_TMP/stale.ndjson" | jq -e '.errors == false' >/dev/null || fail "writing $stale with a stale hash"
assert_eq "$ver" "$(search_get "/products_v1/_doc/$stale" | grep -o '"_version":[0-9]*' | cut -d: -f2)" \
    "the stale document's _version is still its ss_version"
check products
assert_eq 0 "$RC" "a stale hash is not drift ($OUT $(cat "$TEST_TMP/check.err"))"
assert_eq true "$(jq -r .clean <<<"$OUT")" "a stale hash: clean"
assert_eq 1 "$(jq -r .unhashed <<<"$OUT")" "the document with a stale hash is counted unhashed"
check products --repair
assert_eq 0 "$RC" "--repair of a stale hash ($OUT)"
search_refresh products
check products
assert_eq 0 "$(jq -r .documents_fetched <<<"$OUT")" "after --repair it carries this release's hash: nothing fetched"
assert_eq 0 "$(jq -r .unhashed <<<"$OUT")" "and nothing is unhashed"

# ---- under a steady writer: no false differences
# the writer runs until its flag file goes; each UPDATE that succeeded is a line
touch "$TEST_TMP/writing"
: >"$TEST_TMP/writes"
(
    while [ -e "$TEST_TMP/writing" ]; do
        mysql_q "UPDATE shop.products SET price = price + 0.01, name = CONCAT(LEFT(name, 40), '.') ORDER BY RAND() LIMIT 20" &&
            echo ok >>"$TEST_TMP/writes"
        sleep 0.02
    done
) &
writer=$!
on_exit "rm -f '$TEST_TMP/writing'; kill $writer 2>/dev/null || true"
writes() { wc -l <"$TEST_TMP/writes"; }
wait_until 30 "the writer writes" bash -c "[ \$(wc -l <'$TEST_TMP/writes') -ge 10 ]"
before="$(writes)"
check products
during=$(($(writes) - before))
rm -f "$TEST_TMP/writing"
wait "$writer" || true
assert_true "the writer kept writing through the check ($during UPDATEs of 20 rows)" [ "$during" -ge 3 ]
assert_eq 0 "$RC" "a check under a steady writer: no differences ($OUT $(cat "$TEST_TMP/check.err"))"
wait_checkpoint "$meta" shop 30
oracle_check_products shop products "after the writer"
# ---- the daemon's scheduled check: found and repaired by itself, recorded
daemon_stop
cat >>"$TEST_TMP/c.ini" <<INI
[check]
schedule = every 2s
since = 1h
repair = true
settle_s = 10
INI
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run2.log"
daemon_wait_log "scheduled check every 2s" 30
target="$(pick "1=1" 60)"
mysql_q "UPDATE shop.products SET price = price + 1 WHERE id = $target"
wait_checkpoint "$meta" shop 30
search_post "/products_v1/_update/$target" '{"doc":{"name":"drift the schedule finds"}}' >/dev/null
search_refresh products
sched_repaired() {
    [ "$(mysql_q "SELECT COUNT(*) FROM \`$meta\`.check_runs WHERE trigger_kind = 'schedule' AND status = 'repaired' AND different = 1")" -ge 1 ]
}
wait_until 60 "a scheduled check repairs the drift" sched_repaired
daemon_wait_log "products: 0 missing, 0 extra, 1 different, 0 duplicate document(s), repaired" 10
search_refresh products
assert_eq "$(mysql_q "SELECT name FROM shop.products WHERE id = $target")" \
    "$(search_get "/products/_doc/$target" | jq -r ._source.name)" "the scheduled repair restored the document"
daemon_stop
pass
