#!/usr/bin/env bash
# tests/integration/t_run_sync.sh — `searchsync run` on the demo shop: after
# root, child, grandchild, many-to-many and parent/child changes in MariaDB,
# the documents in OpenSearch hold what SQL says (the oracle); a deleted
# product's document is gone; SIGTERM drains and saves the checkpoint, and a
# restart resumes from it without losing the changes made while it was down.
. "$(dirname "$0")/lib.sh"
require_bin
map="$SEARCHSYNC_SRCDIR/sql/demo/mapping.json"
bash "$SEARCHSYNC_SRCDIR/sql/demo/generate.sh" --products 300 >/dev/null
meta="$(unique_name meta)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/products_v1,brands_v1' >/dev/null"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = shop
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = 7301
start = now
[metadata]
database = $meta
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
[log]
level = info
INI
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$map" --yes >"$TEST_TMP/import.out" 2>&1 || fail "import: $(cat "$TEST_TMP/import.out")"

start_daemon() {
    daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
    wait_until 30 "alias products exists" bash -c "curl -sf '$SEARCH_URL/_alias/products' >/dev/null" ||
        fail "daemon did not create the index: $(tail -20 "$TEST_TMP/run.log")"
    daemon_wait_ready # the reader is at "now" once it has connected
}
doc() { search_refresh products; search_get "/products/_doc/$1${2:+?routing=$2}"; }
mysql_q_meta() { mysql_q "SELECT position FROM \`$meta\`.offsets WHERE source = 'shop'"; }
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 40 lines)"; tail -40 "$TEST_TMP/run.log"; }'

start_daemon
# stopped before its first transaction: "now" was saved as a position, so a
# change made while it is down is not skipped by the restart
daemon_stop
assert_contains "$(mysql_q_meta)" "mysql-bin." "start = now saved as a checkpoint at once"
mysql_q "UPDATE shop.products SET name = 'Changed before the first transaction' WHERE id = 13"
start_daemon
wait_until 30 "the change made while down arrived" bash -c \
    "curl -s '$SEARCH_URL/products/_doc/13' | jq -e '._source.name == \"Changed before the first transaction\"' >/dev/null" ||
    fail "a change made before the first transaction was skipped: $(tail -20 "$TEST_TMP/run.log")"
# root update, child insert, grandchild update, many-to-many, delete, child document
# (product 4 is in the engine first, so that its absence below says something)
wait_until 30 "product 4 indexed before its delete" bash -c "curl -s '$SEARCH_URL/products/_doc/4' | jq -e .found >/dev/null"
mysql_q "UPDATE shop.products SET name = 'Renamed by t_run_sync', price = 12.34 WHERE id = 1"
mysql_q "INSERT INTO shop.skus (id, product_id, sku_code, color, size, price, stock, warehouse_id) SELECT MAX(id) + 1, 2, 'NEW-SKU-2', 'teal', 'XL', 9.99, 5, NULL FROM shop.skus"
s3="$(mysql_q 'SELECT id FROM shop.skus WHERE product_id = 3 ORDER BY id LIMIT 1')"
mysql_q "INSERT INTO shop.sku_barcodes (id, sku_id, barcode, kind) SELECT MAX(id) + 1, $s3, '4006381333931', 'EAN13' FROM shop.sku_barcodes"
tag="$(mysql_q 'SELECT tag_id FROM shop.product_tags WHERE product_id = 5 LIMIT 1')"
mysql_q "UPDATE shop.tags SET name = 'renamed-tag' WHERE id = $tag"
mysql_q "DELETE FROM shop.skus WHERE product_id = 4; DELETE FROM shop.products WHERE id = 4"
mysql_q "INSERT INTO shop.reviews (id, product_id, rating, title, body, author, created_at) VALUES (900001, 6, 5, 'great', 'really great', 'tester', NOW(3))"
last_change="$(mysql_q 'SHOW MASTER STATUS' | awk '{print $1":"$2}')"
wait_until 30 "product 1 renamed in the engine" bash -c \
    "curl -s '$SEARCH_URL/products/_doc/1' | jq -e '._source.name == \"Renamed by t_run_sync\"' >/dev/null" ||
    fail "root update not delivered: $(tail -20 "$TEST_TMP/run.log")"
# every change above acknowledged by the engine, product 4's delete included:
# the checkpoint (delivery's low-water mark) past them all
wait_checkpoint "$meta" shop 30

assert_eq "$(mysql_q 'SELECT CAST(price AS CHAR) FROM shop.products WHERE id = 1')" "$(doc 1 | jq -r ._source.price)" "root: price as MySQL has it"
assert_eq "$(mysql_q 'SELECT COUNT(*) FROM shop.skus WHERE product_id = 2')" "$(doc 2 | jq '._source.skus | length')" "child insert: product 2 has every sku"
assert_eq "teal" "$(doc 2 | jq -r '._source.skus[] | select(.sku_code == "NEW-SKU-2") | .color')" "child insert: the new sku is embedded"
assert_eq "$(mysql_q "SELECT COUNT(*) FROM shop.sku_barcodes WHERE sku_id = $s3 AND kind <> 'INTERNAL'")" \
    "$(doc 3 | jq --argjson s "$s3" '[._source.skus[] | select(.id == $s) | .barcodes[]] | length')" "grandchild insert: barcodes of the sku"
assert_eq "renamed-tag" "$(doc 5 | jq -r --argjson t "$tag" '._source.tags[] | select(.tag_id == $t) | .tag.name')" "many-to-many: the renamed tag reached product 5"
assert_eq "$(mysql_q "SELECT COUNT(*) FROM shop.product_tags WHERE tag_id = $tag")" \
    "$(search_refresh products; search_post /products/_count "{\"query\":{\"nested\":{\"path\":\"tags\",\"query\":{\"term\":{\"tags.tag.name\":\"renamed-tag\"}}}}}" | jq .count)" \
    "many-to-many: every product with the tag"
assert_eq false "$(curl -s "$SEARCH_URL/products/_doc/4" | jq .found)" "deleted product: document gone"
assert_eq "great" "$(doc review-900001 6 | jq -r ._source.title)" "parent/child: the review is a child document"
assert_eq 6 "$(doc review-900001 6 | jq -r ._routing)" "routed by its product"

# a child moved to another parent: one copy, on the new parent's routing;
# a deleted child: no copy left on any shard
copies() { search_refresh products; search_post /products/_search "{\"query\":{\"ids\":{\"values\":[\"$1\"]}}}" | jq -c '[.hits.hits[]._routing]'; }
rv="$(mysql_q 'SELECT id FROM shop.reviews WHERE product_id = 10 ORDER BY id LIMIT 1')"
mysql_q "UPDATE shop.reviews SET title = 'indexed first' WHERE id = $rv"
marker() { # marker N: a root change after the others, then wait for it and all before it
    mysql_q "UPDATE shop.products SET name = 'marker $1' WHERE id = 11"
    wait_until 30 "marker $1 delivered" bash -c \
        "curl -s '$SEARCH_URL/products/_doc/11' | jq -e '._source.name == \"marker $1\"' >/dev/null"
    wait_checkpoint "$meta" shop 30
}
marker 1
assert_eq "[\"10\"]" "$(copies "review-$rv")" "the review is indexed under its product"
# through several parents (three shards: the routings land on different ones)
for p in 7 8 9 12; do
    mysql_q "UPDATE shop.reviews SET product_id = $p WHERE id = 900001"
    marker "m$p"
done
mysql_q "DELETE FROM shop.review_replies WHERE review_id = $rv; DELETE FROM shop.reviews WHERE id = $rv"
marker 2
assert_eq '["12"]' "$(copies review-900001)" "moved child: one copy, routed by its last parent"
assert_eq '[]' "$(copies "review-$rv")" "deleted child: no copy left on any shard"
# grandchildren follow: the replies of a moved review are re-routed to its new
# product; a deleted review takes its replies' documents (no parent chain)
rv2="$(mysql_q 'SELECT MIN(review_id) FROM shop.review_replies y JOIN shop.reviews r ON r.id = y.review_id')"
rp="$(mysql_q "SELECT MIN(id) FROM shop.review_replies WHERE review_id = $rv2")"
newp="$(mysql_q "SELECT MIN(id) FROM shop.products WHERE id NOT IN (4, (SELECT product_id FROM shop.reviews WHERE id = $rv2))")"
assert_eq "[\"$(mysql_q "SELECT product_id FROM shop.reviews WHERE id = $rv2")\"]" "$(copies "reply-$rp")" "a reply, routed by its review's product"
mysql_q "UPDATE shop.reviews SET product_id = $newp WHERE id = $rv2"
marker 4
assert_eq "[\"$newp\"]" "$(copies "reply-$rp")" "a moved review's reply follows it to the new product's routing"
mysql_q "DELETE FROM shop.reviews WHERE id = $rv2"
marker 5
assert_eq '[]' "$(copies "reply-$rp")" "a deleted review takes its replies' documents"

# categories are delay-effect: their changes become change snapshots (one row
# per id, operation and day; a delete keeps its row image) and the products
# embedding them wait for the delayed run
cat1="$(mysql_q 'SELECT category_id FROM shop.products WHERE id = 1')"
old_cat_name="$(doc 1 | jq -r ._source.category.name)"
other="$(mysql_q "SELECT id FROM shop.categories WHERE id <> $cat1 ORDER BY id DESC LIMIT 1")"
other_name="$(mysql_q "SELECT name FROM shop.categories WHERE id = $other")"
mysql_q "UPDATE shop.categories SET name = 'renamed once' WHERE id = $cat1"
mysql_q "UPDATE shop.categories SET name = 'renamed twice' WHERE id = $cat1"
mysql_q "DELETE FROM shop.categories WHERE id = $other"
marker 3
assert_eq "$(printf 'update\t%s\tinit\ndelete\t%s\tinit' "$cat1" "$other")" \
    "$(mysql_q "SELECT operation, business_id, status FROM \`$meta\`.change_snapshots WHERE table_name = 'categories' ORDER BY id")" \
    "one snapshot per category and operation"
assert_eq "$other_name" "$(mysql_q "SELECT row_image FROM \`$meta\`.change_snapshots WHERE operation = 'delete'" | jq -r .name)" \
    "a deleted category's snapshot keeps its row"
assert_eq "$old_cat_name" "$(doc 1 | jq -r ._source.category.name)" "the products wait for the delayed run"

# SIGTERM: drain, checkpoint saved at a transaction boundary, exit 0
daemon_stop
assert_eq 0 "$DAEMON_RC" "SIGTERM: clean exit"
assert_contains "$(cat "$TEST_TMP/run.log")" "drain complete" "SIGTERM drained the queues"
saved="$(mysql_q_meta)"
# the metadata schema lives on the source here, so the checkpoint's own saves
# are binlog transactions too: the checkpoint is at or past the last change
# and no further than the binlog's end
now_pos="$(mysql_q 'SHOW MASTER STATUS' | awk '{print $1":"$2}')"
assert_true "checkpoint $saved is at or after the last change $last_change" \
    test "$(printf '%s\n%s\n' "$last_change" "$saved" | sort -t: -k1,1 -k2,2n | tail -1)" = "$saved"
assert_true "checkpoint $saved is not past the binlog's end $now_pos" \
    test "$(printf '%s\n%s\n' "$now_pos" "$saved" | sort -t: -k1,1 -k2,2n | tail -1)" = "$now_pos"
assert_true "few transactions of checkpoint saves, not a feedback loop" \
    test "$(grep -o 'stopped after [0-9]* transactions' "$TEST_TMP/run.log" | tail -1 | awk '{print $3}')" -lt 200

# changes while it is down reach the engine after the restart
mysql_q "UPDATE shop.products SET name = 'Changed while down' WHERE id = 7"
start_daemon
wait_until 30 "product 7 updated after the restart" bash -c \
    "curl -s '$SEARCH_URL/products/_doc/7' | jq -e '._source.name == \"Changed while down\"' >/dev/null" ||
    fail "change made while down not delivered: $(tail -20 "$TEST_TMP/run.log")"
assert_contains "$(cat "$TEST_TMP/run.log")" "resuming source shop at $saved" "resumed from the checkpoint"
daemon_stop
pass
