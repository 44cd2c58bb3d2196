#!/usr/bin/env bash
# tests/integration/t_run_bulk.sh — bulk DML through `searchsync run`: one
# UPDATE of every SKU (about 100k rows) in one transaction reaches every
# product document, with the router and the document builder batching (a
# bounded number of queries, not one per row). The products are indexed by the
# first sync (a reindex); SKUs are area_update in the demo mapping, so each
# product gets one script editing its SKU elements, and the products whose
# document went missing in the engine are rebuilt whole. The oracle is SQL:
# the sum of stock per product and over all SKUs.
. "$(dirname "$0")/lib.sh"
require_bin
products="${BULK_PRODUCTS:-33000}"
[ -n "${SEARCHSYNC_LONG:-}" ] && products=100000
bash "$SEARCHSYNC_SRCDIR/sql/demo/generate.sh" --products "$products" >/dev/null
skus="$(mysql_q 'SELECT COUNT(*) FROM shop.skus')"
meta="$(unique_name meta)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/products_v1,brands_v1' >/dev/null"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 30 lines)"; tail -30 "$TEST_TMP/run.log"; }'
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = shop
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = 7302
start = now
[metadata]
database = $meta
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 100
INI
# the demo mapping without products' attrs (JSON) and weight (FLOAT): with
# them, SKU changes rebuild whole documents instead of scripts (docs/mapping.md)
jq '(.indices[] | select(.alias == "products") | .tables[0].columns) |= map(select(.name != "attrs" and .name != "weight"))' \
    "$SEARCHSYNC_SRCDIR/sql/demo/mapping.json" >"$TEST_TMP/mapping.json"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/mapping.json" --yes >/dev/null
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
wait_until 300 "first sync: alias products" bash -c "curl -sf '$SEARCH_URL/_alias/products' >/dev/null"
# (until the daemon sees the build is over, changes go to the new version as
# whole documents: wait for that)
daemon_wait_log "products: live changes no longer written to products_v1" 30 # the first sync's dual writes ended
t_first="$(grep -o 'products: version 1 live: .*' "$TEST_TMP/run.log" || true)"
log "first sync (reindex): $t_first"
# a few product documents go missing in the engine: their element scripts
# find nothing and they are rebuilt whole instead
search_post "/products/_delete_by_query?refresh=true" '{"query":{"bool":{"filter":[{"range":{"id":{"lte":50}}},{"term":{"relation":"product"}}]}}}' >/dev/null
want="$(mysql_q 'SELECT COUNT(DISTINCT product_id) FROM shop.skus')"
t0=$(date +%s.%N)
mysql_q "UPDATE shop.skus SET stock = stock + 5"
want_total="$(mysql_q 'SELECT SUM(stock) FROM shop.skus')"
nested_total() {
    curl -s "$SEARCH_URL/products/_refresh" >/dev/null
    curl -s "$SEARCH_URL/products/_search" -H 'Content-Type: application/json' \
        -d '{"size":0,"aggs":{"s":{"nested":{"path":"skus"},"aggs":{"t":{"sum":{"field":"skus.stock"}}}}}}' |
        jq '.aggregations.s.t.value | floor'
}
export -f nested_total
export SEARCH_URL
wait_until 300 "every sku's new stock searchable" bash -c "[ \"\$(nested_total)\" = '$want_total' ]"
t1=$(date +%s.%N)
log "$skus sku rows updated in one statement; element scripts for $want products landed in $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}') s"
for id in $(mysql_q "SELECT DISTINCT product_id FROM shop.skus ORDER BY RAND(2) LIMIT 20"); do
    assert_eq "$(mysql_q "SELECT SUM(stock) FROM shop.skus WHERE product_id = $id")" \
        "$(search_get "/products/_doc/$id" | jq '[._source.skus[].stock] | add')" "product $id: stock of its skus after the scripts"
done
assert_eq "$(mysql_q 'SELECT COUNT(*) FROM shop.products WHERE id <= 50')" \
    "$(search_count products '{"query":{"bool":{"filter":[{"range":{"id":{"lte":50}}},{"term":{"relation":"product"}}]}}}')" \
    "documents missing in the engine were rebuilt whole"
total="$(nested_total)"
assert_eq "$(mysql_q 'SELECT SUM(stock) FROM shop.skus')" "$total" "total stock over every nested sku equals SQL"
daemon_stop
log "daemon: $(grep -o 'stopped after.*' "$TEST_TMP/run.log")"
assert_contains "$(cat "$TEST_TMP/run.log")" "rebuilt whole" "the scripts that found no document were followed by whole rebuilds"
pass
