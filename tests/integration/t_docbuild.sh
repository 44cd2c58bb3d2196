#!/usr/bin/env bash
# t_docbuild.sh — the document builder (sync/pipeline/docbuild.c) against real MariaDB
# and OpenSearch, on the demo shop (sql/demo: generate.sh --products 10000)
# plus edge rows inserted here (NULLs, a product without SKUs, SKUs whose
# warehouse is missing or NULL, FLOAT 1.1 and 0.1+0.2, negative DECIMAL,
# BIGINT UNSIGNED max as a product id, SKU id and routing, 4-byte UTF-8,
# control characters, a tag link to a missing tag, an orphan reply).
#
# Every product, review and reply document built by tests/tools/docbuild_dump
# is compared with an ORACLE computed independently by SQL in MariaDB
# (JSON_OBJECT / JSON_ARRAYAGG / correlated subqueries, values formatted to
# docs/binlog.md "Values" with CAST and DATE_FORMAT); arrays are compared sorted by id
# and floats by their exact text. Then: absent roots are reported, the
# documents are accepted by OpenSearch with the generated index body
# (`searchsync mapping body`), nested / has_child queries find them and the
# children land with their root's routing. Prints documents/s for 10k
# products (docs/benchmarks.md "Document builder").
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
require_bin

DUMP=""
for _d in "${DOCBUILD_DUMP:-}" "$(dirname "$SEARCHSYNC_BIN")/tests/tools/docbuild_dump" \
          "$PWD/tests/tools/docbuild_dump" "$SEARCHSYNC_SRCDIR/tests/tools/docbuild_dump"; do
    [ -n "$_d" ] && [ -x "$_d" ] && { DUMP="$_d"; break; }
done
[ -n "$DUMP" ] || fail "tests/tools/docbuild_dump not built (make check builds it)"
command -v python3 >/dev/null || skip "python3 needed for the oracle comparison"

N="${DOCBUILD_PRODUCTS:-10000}"
D=$(unique_name shopdb)
meta=$(unique_name meta)
IDX=$(unique_name docbuild)
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$D\`' >/dev/null 2>&1"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1"
on_exit "SEARCH_ALLOW_ERROR=1 search_delete '/$IDX' >/dev/null 2>&1"

log "generating $N products into $D"
bash "$SEARCHSYNC_SRCDIR/sql/demo/generate.sh" --products "$N" --db "$D" \
    --host "$MYSQL_HOST" --port "$MYSQL_PORT" >"$TEST_TMP/gen.out" 2>&1 || {
    cat "$TEST_TMP/gen.out" >&2; fail "generate.sh failed"; }

MAX=18446744073709551615
# ---- edge rows
mysql_q "SET time_zone = '+00:00';
INSERT INTO products (id, brand_id, category_id, name, description, price, status, created_at, updated_at, weight, attrs)
VALUES ($MAX, NULL, NULL, 'Max 😀 𝄞 id', NULL, -12345.67, 'draft', '2024-02-29 23:59:59.999', '2038-01-19 03:14:07.999999', 1.1, '{\"k\":\"v 😀\",\"n\":[1,2.5,null]}'),
       (1000001, 1, 1, 'Edge \"quoted\" \\\\ back', CONCAT('line1', CHAR(10), 'tab', CHAR(9), 'ctl', CHAR(1), 'end'), 0.00, 'active', '1999-12-31 00:00:00.000', '1970-01-01 00:00:01.000001', 0.1 + 0.2, '[]'),
       (1000002, 2, NULL, 'No skus', '', 99999.99, 'discontinued', '2024-01-01 00:00:00.5', '2024-01-01 00:00:00', 123456, NULL);
INSERT INTO skus (id, product_id, sku_code, color, size, price, stock, warehouse_id)
VALUES (18446744073709551614, 1000001, 'EDGE-1', 'red', NULL, -0.01, -5, 99999),
       (1000002, 1000001, 'EDGE-2', NULL, 'M', 10.00, 0, NULL),
       (1000003, 1000001, 'EDGE-3', 'ünïcode 🎉', 'L', 12345678.90, 2147483647, 1);
INSERT INTO sku_barcodes (id, sku_id, barcode, kind)
VALUES (9000001, 1000003, 'EDGEEAN', 'EAN13'), (9000002, 1000003, 'EDGEINT', 'INTERNAL'),
       (9000003, 18446744073709551614, 'EDGEUPC', 'UPC');
INSERT INTO product_tags (product_id, tag_id) VALUES (1000001, 1), (1000001, 2), (1000001, 99999), ($MAX, 3);
INSERT INTO reviews (id, product_id, rating, title, body, author, created_at)
VALUES (9000001, 1000001, 5, NULL, 'ok 👍', 'zed', '2024-05-05 05:05:05.050'),
       (9000002, $MAX, 1, 'max', NULL, 'max', '2024-05-05 05:05:05.000');
INSERT INTO review_replies (id, review_id, author, body, created_at)
VALUES (9000001, 9000001, 'shop', 'thanks', '2024-05-06 00:00:00.001'),
       (9000002, 9000002, 'shop', 'grandchild of max', '2024-05-06 00:00:00.002'),
       (9000003, 99999999, 'ghost', 'orphan reply', '2024-05-06 00:00:00.003');
DELETE FROM products WHERE id = 5;" "$D"

# the demo mapping with this database, and BIGINT UNSIGNED as unsigned_long
# (the demo's "long" cannot hold the ids above 2^63-1 inserted here)
sed "s/\"shop\./\"$D./g" "$SEARCHSYNC_SRCDIR/sql/demo/mapping.json" |
    jq 'walk(if type == "object" and .mysql_type == "bigint(20) unsigned" then .type = "unsigned_long" else . end)' \
    >"$TEST_TMP/mapping.json"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = docbuild
host = 127.0.0.1
port = $MYSQL_PORT
user = root
[metadata]
database = $meta
[search]
urls = $SEARCH_URL
INI
dump() { "$DUMP" --config "$TEST_TMP/c.ini" --mapping "$TEST_TMP/mapping.json" --index products "$@"; }

# ---- build every product (+ absent keys), reviews and replies
mysql_q "SELECT id FROM products ORDER BY id" "$D" >"$TEST_TMP/ids"
{ cat "$TEST_TMP/ids"; echo 5; echo 999999999; echo abc; echo "x'y"; } >"$TEST_TMP/keys"
dump - <"$TEST_TMP/keys" >"$TEST_TMP/products.ndjson" 2>"$TEST_TMP/dump.err" || {
    cat "$TEST_TMP/dump.err" >&2; fail "docbuild_dump products failed"; }
log "products: $(tail -1 "$TEST_TMP/dump.err")"
# the SKUs of a range of products are read by their key range (their keys
# from the product_id index first): the oracle below checks those documents
keyed=$(tail -1 "$TEST_TMP/dump.err" | sed -n 's/.* keyed \([0-9]*\) .*/\1/p')
assert_true "some relation levels read by primary key range (keyed $keyed)" test "${keyed:-0}" -gt 0
mysql_q "SELECT id FROM reviews ORDER BY id" "$D" |
    dump --table "$D.reviews" - >"$TEST_TMP/reviews.ndjson" 2>"$TEST_TMP/dump.err" || {
    cat "$TEST_TMP/dump.err" >&2; fail "docbuild_dump reviews failed"; }
log "reviews: $(tail -1 "$TEST_TMP/dump.err")"
mysql_q "SELECT id FROM review_replies ORDER BY id" "$D" |
    dump --table "$D.review_replies" - >"$TEST_TMP/replies.ndjson" 2>"$TEST_TMP/dump.err" || {
    cat "$TEST_TMP/dump.err" >&2; fail "docbuild_dump replies failed"; }
log "replies: $(tail -1 "$TEST_TMP/dump.err")"

# ---- row image vs re-query: the same row gives the same bytes
# A table of every §4.2 type with edge values; `searchsync tail` decodes its
# inserts from the binlog, the builder re-reads the rows; with the columns in
# table order the document body must equal tail's "after" object exactly.
read -r f0 p0 <<<"$(mysql_binlog_pos)"
mysql_q "SET SESSION sql_mode = ''; SET SESSION time_zone = '+00:00';
CREATE TABLE types (id INT PRIMARY KEY, ti TINYINT, tiu TINYINT UNSIGNED, si SMALLINT,
  miu MEDIUMINT UNSIGNED, i INT, bi BIGINT, biu BIGINT UNSIGNED, f FLOAT, fd DOUBLE,
  d1 DECIMAL(65,30), d2 DECIMAL(20,10), d6 DECIMAL(5,5), b5 BIT(5), b64 BIT(64), y YEAR,
  da DATE, dt0 DATETIME, dt3 DATETIME(3), dt6 DATETIME(6), ts0 TIMESTAMP NULL,
  ts2 TIMESTAMP(2) NULL, ts6 TIMESTAMP(6) NULL, t0 TIME, t3 TIME(3), t6 TIME(6), c CHAR(4),
  v VARCHAR(300), l1 VARCHAR(10) CHARACTER SET latin1, tx TEXT, bn BINARY(4), vb VARBINARY(10),
  bl BLOB, e ENUM('a','b c','ü'), st SET('x','y','z'), j JSON);
INSERT INTO types VALUES
 (1,-128,0,-32768,0,-2147483648,-9223372036854775808,0,-3.40282e38,-1.7976931348623157e308,
  '-99999999999999999999999999999999999.999999999999999999999999999999','-42000.123456','-0.99999',
  0,0,1901,'0000-00-00','0000-00-00 00:00:00','2020-00-15 00:00:00','1000-01-01 00:00:00.000001',
  '0000-00-00 00:00:00','1970-01-01 00:00:01.5','2000-01-01 00:00:00.123456',
  '-838:59:59','-00:00:01.001','-838:59:58.123456','ab  ','','é',REPEAT('x', 1000),
  'a','', '', '', '', '{}'),
 (2,127,255,32767,16777215,2147483647,9223372036854775807,18446744073709551615,1.1,0.1,
  '99999999999999999999999999999999999.999999999999999999999999999999','9999999999.9999999999','0.00001',
  31,18446744073709551615,2155,'9999-12-31','9999-12-31 23:59:59','9999-12-31 23:59:59.999',
  '9999-12-31 23:59:59.999999','2038-01-19 03:14:07','2038-01-19 03:14:07.99','2038-01-19 03:14:07.999999',
  '838:59:59','838:59:59.999','838:59:59.999999','😀','a\"b\\\\c\\n\\t😀 𝄞','Ærø',
  'tab\\there', X'00FF0102', X'000102', X'DEADBEEF00', 'ü', 'x,z', '{\"a\": [1, 2.5e3, null], \"b\": \"😀\"}'),
 (3,0,0,0,0,0,0,0,0.1+0.2,0.1+0.2,0,0,0,0,0,0,'2024-02-29','2024-02-29 12:00:00','2024-02-29 12:00:00.5',
  '2024-02-29 12:00:00.000500','2024-02-29 12:00:00','2024-02-29 12:00:00.05','2024-02-29 12:00:00.000001',
  '00:00:00','100:00:00.0004','00:00:00.000001','','','','',X'61',X'',X'','b c','','[1,\"x\"]'),
 (4,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,
  NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);" "$D"
SRC="mysql://$MYSQL_USER:$MYSQL_PASSWORD@$MYSQL_HOST:$MYSQL_PORT"
"$SEARCHSYNC_BIN" tail --source "$SRC" --file "$f0" --pos "$p0" --stop-at-end --tables "$D.types" \
    >"$TEST_TMP/tail.out" 2>"$TEST_TMP/tail.err" || { cat "$TEST_TMP/tail.err" >&2; fail "tail"; }
cols=$(mysql_q "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = '$D'
                AND TABLE_NAME = 'types' ORDER BY ORDINAL_POSITION" | grep -v '^id$' |
       jq -R '{name: ., type: (if . == "bn" or . == "vb" or . == "bl" then "binary" else "keyword" end), index: false}' |
       jq -s -c .)
jq -n --arg t "$D.types" --argjson cols "$cols" '{version: 1, indices: [{alias: "types", shards: 1,
    replicas: 0, tables: [{table: $t, columns: ([{name: "id", type: "integer", key: true}] + $cols)}]}]}' \
    >"$TEST_TMP/types.json"
"$DUMP" --config "$TEST_TMP/c.ini" --mapping "$TEST_TMP/types.json" --index types 1 2 3 4 \
    >"$TEST_TMP/types.ndjson" 2>"$TEST_TMP/types.err" || { cat "$TEST_TMP/types.err" >&2; fail "dump types"; }
assert_eq 4 "$(grep -c '"type":"insert"' "$TEST_TMP/tail.out")" "tail saw the 4 inserts"
for id in 1 2 3 4; do
    after=$(grep "\"after\":{\"id\":$id," "$TEST_TMP/tail.out" | sed 's/.*"after"://; s/}$//')
    doc=$(grep "^{\"id\":\"$id\"" "$TEST_TMP/types.ndjson" | sed 's/.*"doc"://; s/}$//')
    assert_eq "$after" "$doc" "row $id: re-queried document = binlog row image, byte for byte"
done

# ---- the oracle, by SQL (tests/integration/oracle_lib.sh)
oracle_dump "$D" "$TEST_TMP" || fail "oracle queries failed"
cmp_docs() {
    compare_docs "$@" >"$TEST_TMP/cmp.out" 2>&1 || {
        cat "$TEST_TMP/cmp.out" >&2; fail "built documents differ from the SQL oracle ($1)"; }
    log "$(tail -1 "$TEST_TMP/cmp.out")"
}
cmp_docs "$TEST_TMP/products.ndjson" "$TEST_TMP/products.oracle" --absent "5,999999999,abc,x'y"
cmp_docs "$TEST_TMP/reviews.ndjson" "$TEST_TMP/reviews.oracle" --absent ""
cmp_docs "$TEST_TMP/replies.ndjson" "$TEST_TMP/replies.oracle" --absent "reply-9000003"
assert_eq "$(($(wc -l <"$TEST_TMP/ids") + 4))" "$(wc -l <"$TEST_TMP/products.ndjson")" "one line per requested key"

# the sanitizer build (ASan + UBSan + leaks) builds the same bytes
if [ -x "$DUMP"_asan ]; then
    { head -300 "$TEST_TMP/keys"; tail -8 "$TEST_TMP/keys"; } >"$TEST_TMP/keys.small"
    grep -F -f <(sed 's/.*/{"id":"&"/' "$TEST_TMP/keys.small") "$TEST_TMP/products.ndjson" >"$TEST_TMP/small.expect" || true
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        "$DUMP"_asan --config "$TEST_TMP/c.ini" --mapping "$TEST_TMP/mapping.json" --index products \
        --chunk 7 - <"$TEST_TMP/keys.small" >"$TEST_TMP/small.out" 2>"$TEST_TMP/asan.err" || {
        cat "$TEST_TMP/asan.err" >&2; fail "docbuild_dump_asan failed"; }
    assert_eq "" "$(grep -E 'ERROR|runtime error' "$TEST_TMP/asan.err" || true)" "sanitizers quiet"
    assert_eq "$(wc -l <"$TEST_TMP/keys.small")" "$(wc -l <"$TEST_TMP/small.out")" "asan build: one line per key"
    sort "$TEST_TMP/small.out" >"$TEST_TMP/small.out.s"
    sort "$TEST_TMP/small.expect" >"$TEST_TMP/small.expect.s"
    assert_true "asan build, chunk 7: same documents" cmp -s "$TEST_TMP/small.out.s" "$TEST_TMP/small.expect.s"
    "$DUMP"_asan --config "$TEST_TMP/c.ini" --mapping "$TEST_TMP/mapping.json" --index products \
        --table "$D.review_replies" 9000001 9000002 9000003 1 >"$TEST_TMP/small.rep" 2>"$TEST_TMP/asan.err" || {
        cat "$TEST_TMP/asan.err" >&2; fail "docbuild_dump_asan replies failed"; }
    assert_eq 4 "$(wc -l <"$TEST_TMP/small.rep")" "asan build: replies"
else
    log "no docbuild_dump_asan: sanitizer run skipped"
fi

# exact values, byte for byte, in the built text
line_of() { grep "^{\"id\":\"$1\"" "$TEST_TMP/$2.ndjson"; }
max_line=$(line_of "$MAX" products)
assert_contains "$max_line" "\"doc\":{\"id\":$MAX,\"brand_id\":null" "BIGINT UNSIGNED max exact, NULL column"
assert_contains "$max_line" '"price":"-12345.67"' "negative DECIMAL exact"
assert_contains "$max_line" '"weight":1.1,' "FLOAT 1.1 shortest"
assert_contains "$max_line" '"updated_at":"2038-01-19T03:14:07.999999Z"' "TIMESTAMP(6) in UTC"
assert_contains "$max_line" '"created_at":"2024-02-29T23:59:59.999"' "DATETIME(3)"
assert_contains "$max_line" '"name":"Max 😀 𝄞 id"' "4-byte UTF-8"
assert_contains "$max_line" '"brand":null,"category":null,"skus":[]' "missing one-to-one null, no SKUs []"
assert_contains "$max_line" '"relation":{"name":"product"}}' "root join field"
e_line=$(line_of 1000001 products)
assert_contains "$e_line" '"weight":0.3,' "FLOAT 0.1+0.2"
assert_contains "$e_line" "{\"id\":18446744073709551614,\"sku_code\":\"EDGE-1\"" "BIGINT UNSIGNED sku id"
assert_contains "$e_line" '"warehouse_id":99999,"warehouse":null' "SKU whose warehouse is missing"
assert_contains "$e_line" '"warehouse_id":null,"warehouse":null' "SKU without warehouse"
assert_contains "$e_line" '"barcodes":[{"id":9000001,"barcode":"EDGEEAN","kind":"EAN13"}]' "relation WHERE excludes INTERNAL"
assert_contains "$e_line" '{"tag_id":99999,"tag":null}' "link to a missing tag"
assert_contains "$(line_of 1000002 products)" '"skus":[]' "product without SKUs"
assert_contains "$(line_of reply-9000002 replies)" "\"routing\":\"$MAX\"" "grandchild routed by the root id"

# ---- OpenSearch: the generated index body accepts every document
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" --yes "$TEST_TMP/mapping.json" \
    >"$TEST_TMP/import.out" 2>&1 || { cat "$TEST_TMP/import.out" >&2; fail "mapping import"; }
"$SEARCHSYNC_BIN" mapping body --config "$TEST_TMP/c.ini" products >"$TEST_TMP/body.json" \
    2>"$TEST_TMP/body.err" || { cat "$TEST_TMP/body.err" >&2; fail "mapping body"; }
search_put "/$IDX" "$(cat "$TEST_TMP/body.json")" >/dev/null || fail "index body refused"
cat >"$TEST_TMP/mkbulk.py" <<'PY'
import json, sys
idx, out = sys.argv[1], sys.argv[2]
n, part, f = 0, 0, None
for path in sys.argv[3:]:
    for line in open(path, encoding='utf-8'):
        o = json.loads(line)
        if o.get('absent'):
            continue
        if n % 5000 == 0:
            if f: f.close()
            f = open('%s.%03d' % (out, part), 'w', encoding='utf-8'); part += 1
        meta = {'_index': idx, '_id': o['id']}
        if o['routing'] is not None:
            meta['routing'] = o['routing']
        f.write(json.dumps({'index': meta}) + '\n')
        f.write(json.dumps(o['doc'], ensure_ascii=False) + '\n')
        n += 1
if f: f.close()
print(n)
PY
# (the bodies go through python's json only to be split into bulk files;
# the exact text was compared above)
total=$(python3 "$TEST_TMP/mkbulk.py" "$IDX" "$TEST_TMP/bulk" \
    "$TEST_TMP/products.ndjson" "$TEST_TMP/reviews.ndjson" "$TEST_TMP/replies.ndjson")
for f in "$TEST_TMP"/bulk.[0-9]*; do
    r=$(curl -sS -m 120 -H 'Content-Type: application/x-ndjson' --data-binary "@$f" "$SEARCH_URL/_bulk")
    if [ "$(jq -r .errors <<<"$r")" != false ]; then
        jq -c '[(.items // [])[] | .index | select(.error)][:3], .error' <<<"$r" >&2 || printf '%.500s\n' "$r" >&2
        fail "bulk refused documents"
    fi
done
assert_eq "$total" "$(search_count "$IDX")" "every built document indexed"
hits() { search_post "/$IDX/_search" "$1" | jq -c '[.hits.hits[]._id] | sort'; }
assert_eq '["1000001"]' "$(hits '{"query":{"nested":{"path":"skus","query":{"nested":{"path":"skus.barcodes","query":{"term":{"skus.barcodes.barcode":"EDGEEAN"}}}}}}}')" "3-level nested query"
assert_eq '["1000001"]' "$(hits '{"query":{"nested":{"path":"skus","query":{"bool":{"must":[{"term":{"skus.sku_code":"EDGE-3"}},{"term":{"skus.warehouse.id":1}}]}}}}}')" "object inside a nested array"
assert_eq '[]' "$(hits '{"query":{"nested":{"path":"skus","query":{"term":{"skus.barcodes.barcode":"EDGEINT"}}}}}')" "WHERE-excluded barcode absent"
assert_eq "[\"$MAX\"]" "$(hits '{"query":{"has_child":{"type":"review","query":{"has_child":{"type":"reply","query":{"match":{"body":"grandchild"}}}}}}}')" "grandchild -> child -> root join"
assert_eq '["review-9000001"]' "$(hits '{"query":{"bool":{"must":[{"has_parent":{"parent_type":"product","query":{"term":{"id":1000001}}}}]}}}')" "child finds its parent"
r=$(search_post "/$IDX/_search" '{"size":10,"query":{"ids":{"values":["reply-9000001","reply-9000002","review-9000002"]}}}' |
    jq -c '[.hits.hits[] | [._id, ._routing]] | sort')
assert_eq "[[\"reply-9000001\",\"1000001\"],[\"reply-9000002\",\"$MAX\"],[\"review-9000002\",\"$MAX\"]]" "$r" "children carry their root's routing"
# every child on its root's shard: the join query returns each parent once per child type
nrev=$(mysql_q "SELECT COUNT(DISTINCT product_id) FROM reviews r WHERE EXISTS (SELECT 1 FROM products p WHERE p.id = r.product_id)" "$D")
assert_eq "$nrev" "$(search_count "$IDX" '{"query":{"has_child":{"type":"review","query":{"match_all":{}}}}}')" "has_child finds every reviewed product"

# ---- rows by primary key range (docbuild_level.c fetch_keyed), and its
# fallback when the key went with a schema change the mapping was not
# judged against yet: the same documents either way, each compared with SQL
mysql_q "CREATE TABLE kp (id INT PRIMARY KEY, name VARCHAR(20));
CREATE TABLE kc (id INT PRIMARY KEY, kp_id INT NOT NULL, v INT, KEY (kp_id));
INSERT INTO kp SELECT seq, CONCAT('p', seq) FROM seq_1_to_60;
INSERT INTO kc SELECT seq, (seq - 1) DIV 3 + 1, seq * 7 FROM seq_1_to_150;
INSERT INTO kc VALUES (250, 5, -1), (251, 59, -2);" "$D"
jq -n --arg p "$D.kp" --arg c "$D.kc" '{version: 1, indices: [{alias: "kp", shards: 1, replicas: 0,
    tables: [{table: $p, columns: [{name: "id", key: true}, "name"], relations: [{column: "id",
    table: $c, join_column: "kp_id", extend_name: "kids", nested: true, columns: ["id", "v"]}]}]}]}' \
    >"$TEST_TMP/kp.json"
kdump() { "$DUMP" --config "$TEST_TMP/c.ini" --mapping "$TEST_TMP/kp.json" --index kp "$@"; }
# each kp's kids as [id, v] pairs by SQL, in key order
kp_oracle() {
    mysql_q "SELECT kp.id, JSON_ARRAYAGG(JSON_ARRAY(kc.id, kc.v) ORDER BY kc.id) FROM kp LEFT JOIN kc
             ON kc.kp_id = kp.id GROUP BY kp.id ORDER BY kp.id" "$D" |
        python3 -c 'import sys, json
for l in sys.stdin:
    k, a = l.rstrip("\n").split("\t")
    print(k, json.dumps([e for e in json.loads(a) if e[0] is not None]))'
}
# the elements in the order the builder gives them: the join column, then the key
kids() { jq -r '"\(.id) \([.doc.kids[] | [.id, .v]] | tojson)"' | sed 's/,/, /g'; }
seq 1 60 | kdump - >"$TEST_TMP/kp1.ndjson" 2>"$TEST_TMP/kp1.err" || { cat "$TEST_TMP/kp1.err" >&2; fail "kp build"; }
assert_contains "$(tail -1 "$TEST_TMP/kp1.err")" "keyed 1 spread 0" "kc read by its key range"
assert_eq "$(kp_oracle)" "$(kids <"$TEST_TMP/kp1.ndjson")" "kp documents by key range = SQL"
seq 1 60 | kdump --sql-before "ALTER TABLE \`$D\`.kc DROP PRIMARY KEY" - >"$TEST_TMP/kp2.ndjson" \
    2>"$TEST_TMP/kp2.err" || { cat "$TEST_TMP/kp2.err" >&2; fail "kp build, primary key dropped"; }
assert_contains "$(tail -1 "$TEST_TMP/kp2.err")" "keyed 0" "no key range without a primary key"
assert_eq "$(kp_oracle)" "$(kids <"$TEST_TMP/kp2.ndjson")" "kp documents, primary key dropped = SQL"
mysql_q "ALTER TABLE kc ADD PRIMARY KEY (id)" "$D"
seq 1 60 | kdump --sql-before "INSERT INTO \`$D\`.kc SELECT seq, seq % 60 + 1, 0 FROM \`$D\`.seq_2000_to_2100" - \
    >"$TEST_TMP/kp3.ndjson" 2>"$TEST_TMP/kp3.err" || { cat "$TEST_TMP/kp3.err" >&2; fail "kp build, spread keys"; }
assert_contains "$(tail -1 "$TEST_TMP/kp3.err")" "keyed 0 spread 1" "keys too spread: read plainly"
assert_eq "$(kp_oracle)" "$(kids <"$TEST_TMP/kp3.ndjson")" "kp documents, spread keys = SQL"

# ---- throughput: all products again, nothing printed
mysql_q "SELECT id FROM products ORDER BY id" "$D" >"$TEST_TMP/ids"
dump --quiet - <"$TEST_TMP/ids" 2>"$TEST_TMP/bench.err" || { cat "$TEST_TMP/bench.err" >&2; fail "bench run"; }
log "BENCH docbuild products=$(wc -l <"$TEST_TMP/ids"): $(tail -1 "$TEST_TMP/bench.err")"
pass
