#!/usr/bin/env bash
# tests/integration/t_router.sh — the change router (sync/pipeline/router.c) on the demo
# shop in real MariaDB: the documents a row change reaches equal what SQL
# says they are (the oracle), a child moved between parents reaches both, and
# a bulk change of thousands of rows costs one IN query per 500 values and
# step, not one per row; with slicing on (as the daemon routes), a fan-out
# larger than a slice is read in keyset pages and handed over a slice at a
# time.
. "$(dirname "$0")/lib.sh"
tool="$(dirname "$SEARCHSYNC_BIN")/tests/tools/route_dump"
[ -x "$tool" ] || skip "tests/tools/route_dump not built (make check builds it)"
map="$SEARCHSYNC_SRCDIR/sql/demo/mapping.json"
bash "$SEARCHSYNC_SRCDIR/sql/demo/generate.sh" --products 2000 >/dev/null
export MYSQL_HOST MYSQL_PORT
route() { "$tool" "$map" 2>"$TEST_TMP/err" | sort; }
products() { sed 's/^/products\tshop.products\t/' | sort; }
queries() { sed -n 's/^queries\t//p' "$TEST_TMP/err"; }

# a barcode reaches the product of its sku (one query: skus.id -> product_id)
read -r b s <<<"$(mysql_q 'SELECT id, sku_id FROM shop.sku_barcodes ORDER BY id LIMIT 1')"
got="$(printf 'shop.sku_barcodes\tid=%s;sku_id=%s\t-\n' "$b" "$s" | route)"
assert_eq "$(mysql_q "SELECT product_id FROM shop.skus WHERE id = $s" | products)" "$got" "barcode -> its product"
assert_eq 1 "$(queries)" "one query for one step"

# a barcode moved to another product's sku reaches both products
read -r s2 <<<"$(mysql_q "SELECT id FROM shop.skus WHERE product_id <> (SELECT product_id FROM shop.skus WHERE id = $s) ORDER BY id LIMIT 1")"
got="$(printf 'shop.sku_barcodes\tid=%s;sku_id=%s\tid=%s;sku_id=%s\n' "$b" "$s" "$b" "$s2" | route)"
assert_eq "$(mysql_q "SELECT DISTINCT product_id FROM shop.skus WHERE id IN ($s, $s2)" | products)" "$got" "moved barcode -> old and new product"

# a tag reaches every product carrying it, through the relation table
t="$(mysql_q 'SELECT tag_id FROM shop.product_tags GROUP BY tag_id ORDER BY COUNT(*) DESC LIMIT 1')"
got="$(printf 'shop.tags\tid=%s;name=x\tid=%s;name=y\n' "$t" "$t" | route)"
want="$(mysql_q "SELECT DISTINCT product_id FROM shop.product_tags WHERE tag_id = $t" | products)"
assert_true "the tag is used ($(wc -l <<<"$want") products)" test "$(wc -l <<<"$want")" -gt 1
assert_eq "$want" "$got" "tag -> every product with it"

# a warehouse (a one-to-one object inside the nested skus) and a brand
w="$(mysql_q 'SELECT warehouse_id FROM shop.skus WHERE warehouse_id IS NOT NULL LIMIT 1')"
got="$(printf 'shop.warehouses\tid=%s\t-\n' "$w" | route)"
assert_eq "$(mysql_q "SELECT DISTINCT product_id FROM shop.skus WHERE warehouse_id = $w" | products)" "$got" "warehouse -> products of its skus"
br="$(mysql_q 'SELECT brand_id FROM shop.products WHERE brand_id IS NOT NULL LIMIT 1')"
got="$(printf 'shop.brands\tid=%s\t-\n' "$br" | route)"
assert_eq "$(mysql_q "SELECT id FROM shop.products WHERE brand_id = $br" | products)" "$(grep '^products' <<<"$got")" "brand -> its products"
assert_eq "$(printf 'brands\tshop.brands\t%s' "$br")" "$(grep -v '^products' <<<"$got")" "and its own document in the brands index"

# a category is delay-effect: routed nowhere now
got="$(printf 'shop.categories\tid=1\tid=1\n' | route)"
assert_eq "" "$got" "delay-effect table is not routed"

# bulk: every barcode of the first 1500 products in one batch
mysql_q "SELECT CONCAT('shop.sku_barcodes|id=', b.id, ';sku_id=', b.sku_id, '|-') FROM shop.sku_barcodes b JOIN shop.skus s ON s.id = b.sku_id WHERE s.product_id <= 1500" | tr '|' '\t' >"$TEST_TMP/bulk"
rows="$(wc -l <"$TEST_TMP/bulk")"
skus="$(cut -f2 "$TEST_TMP/bulk" | sed 's/.*sku_id=//' | sort -u | wc -l)"
got="$(route <"$TEST_TMP/bulk")"
assert_eq "$(mysql_q "SELECT DISTINCT s.product_id FROM shop.sku_barcodes b JOIN shop.skus s ON s.id = b.sku_id WHERE s.product_id <= 1500" | products)" "$got" "bulk: every product reached once"
assert_eq $(( (skus + 499) / 500 )) "$(queries)" "bulk: $rows rows over $skus skus cost one query per 500 skus"

# a large fan-out in slices (ROUTE_SLICE: router_set_slice, as the daemon
# routes): every document of a brand with more than a slice of products is
# reached, in slices of at most the slice size, each page read in key order
# (one LIMIT query for the chunk, then a page per slice: linear, not a scan
# of the whole brand per page)
bigb="$(mysql_q 'SELECT brand_id FROM shop.products WHERE brand_id IS NOT NULL GROUP BY brand_id ORDER BY COUNT(*) DESC LIMIT 1')"
nb="$(mysql_q "SELECT COUNT(*) FROM shop.products WHERE brand_id = $bigb")"
sl=$(( nb / 4 ))
assert_true "the brand has more than 4 slices' worth ($nb products, slice $sl)" test "$sl" -ge 10
got="$(printf 'shop.brands\tid=%s\t-\n' "$bigb" | ROUTE_SLICE=$sl route)"
assert_eq "$(mysql_q "SELECT id FROM shop.products WHERE brand_id = $bigb" | products)" "$(grep '^products' <<<"$got")" "sliced: every product of the brand, once"
slices="$(grep -c '^slice' "$TEST_TMP/err" || true)"
assert_eq $(( nb / sl )) "$slices" "sliced: $nb products in $slices slices of $sl (the rest at the end)"
prev=0
while IFS=$'\t' read -r _ _ _ n; do
    assert_true "a slice holds at most $sl documents ($((n - prev)))" test $((n - prev)) -le "$sl"
    prev=$n
done < <(grep '^slice' "$TEST_TMP/err")
assert_eq $(( 1 + nb / sl + 1 )) "$(queries)" "sliced: one LIMIT query, then one page per slice"
# two brands in one chunk, over a slice together: read brand by brand
b2="$(mysql_q "SELECT brand_id FROM shop.products WHERE brand_id IS NOT NULL AND brand_id <> $bigb GROUP BY brand_id ORDER BY COUNT(*) DESC LIMIT 1")"
got="$(printf 'shop.brands\tid=%s\t-\nshop.brands\tid=%s\t-\n' "$bigb" "$b2" | ROUTE_SLICE=$sl route)"
assert_eq "$(mysql_q "SELECT id FROM shop.products WHERE brand_id IN ($bigb, $b2)" | products)" "$(grep '^products' <<<"$got")" "sliced, two brands: every product of both, once"
# under a slice: exactly what it was without slicing
got="$(printf 'shop.sku_barcodes\tid=%s;sku_id=%s\t-\n' "$b" "$s" | ROUTE_SLICE=100000 route)"
assert_eq "$(mysql_q "SELECT product_id FROM shop.skus WHERE id = $s" | products)" "$got" "slicing on, a small change: the same documents"
assert_eq 1 "$(queries)" "slicing on, a small change: the same one query"

# a MINIMAL image without the join column is refused, naming the fix
set +e
printf 'shop.skus\tid=1\t-\n' | "$tool" "$map" >/dev/null 2>"$TEST_TMP/err"; rc=$?
set -e
assert_eq 1 "$rc" "absent join column: failure"
assert_contains "$(cat "$TEST_TMP/err")" "binlog_row_image=FULL" "the message names the fix"
pass
