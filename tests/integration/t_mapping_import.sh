#!/usr/bin/env bash
# tests/integration/t_mapping_import.sh — `searchsync mapping import|export|body`
# against real MariaDB (demo schema, sql/demo/schema.sql) and OpenSearch:
# the plan (dry run, confirmation, changes, reindex, removal), the metadata
# rows, the import -> export round trip of sql/demo/mapping.json, bad mappings
# refused with exit 2 and a message naming file, JSON path and column, and the
# generated index bodies accepted by the engine with nested, join (parent /
# child / grandchild routed by the root) and strict fields.
. "$(dirname "$0")/lib.sh"
require_bin

meta=$(unique_name meta)
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1"
mysql_q 'DROP DATABASE IF EXISTS shop'
on_exit "mysql_q 'DROP DATABASE IF EXISTS shop' >/dev/null 2>&1"
mysql_file "$SEARCHSYNC_SRCDIR/sql/demo/schema.sql"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = demo
host = 127.0.0.1
port = $MYSQL_PORT
user = root
[metadata]
database = $meta
[search]
urls = $SEARCH_URL
INI
demo="$SEARCHSYNC_SRCDIR/sql/demo/mapping.json"
ss() { "$SEARCHSYNC_BIN" mapping "$@" 2>"$TEST_TMP/err"; }
run() { # run CMD...: sets out, err, rc
    set +e
    out=$("$SEARCHSYNC_BIN" mapping "$@" 2>"$TEST_TMP/err" </dev/null); rc=$?
    set -e
    err=$(grep -v ' INFO ' "$TEST_TMP/err" || true)
}

# ---- dry run: the plan, nothing saved
run import --config "$TEST_TMP/c.ini" --dry-run "$demo"
assert_eq 0 "$rc" "dry run exit code ($err)"
assert_contains "$out" "+ index products (4 tables) -- needs a first build (reindex)" "plan adds products"
assert_contains "$out" "+ index brands" "plan adds brands"
assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM \`$meta\`.index_configs")" "dry run saved nothing"

# ---- not confirmed (stdin is not a terminal, no --yes): refused, nothing saved
run import --config "$TEST_TMP/c.ini" "$demo"
assert_eq 2 "$rc" "unconfirmed import exit code"
assert_contains "$err" "not applied (confirm with --yes)" "unconfirmed import explained"
assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM \`$meta\`.index_configs")" "unconfirmed: nothing saved"

# ---- applied
run import --config "$TEST_TMP/c.ini" --yes "$demo"
assert_eq 0 "$rc" "import --yes ($err)"
assert_contains "$out" "applied" "import applied"
q() { mysql_q "$1" "$meta"; }
assert_eq "brands products" "$(q "SELECT GROUP_CONCAT(alias ORDER BY alias SEPARATOR ' ') FROM index_configs WHERE source='demo'")" "index configs"
assert_eq "unavailable 0 0" "$(q "SELECT CONCAT_WS(' ', state, current_version, epoch) FROM index_configs WHERE alias='products'")" "new index state"
assert_eq 5 "$(q "SELECT COUNT(*) FROM table_configs")" "table configs"
assert_eq "shop.products shop.reviews product_id" "$(q "SELECT CONCAT_WS(' ', CONCAT(parent_db,'.',parent_table), CONCAT(db_name,'.',table_name), parent_column) FROM table_configs WHERE join_name='review'")" "child table row"
assert_eq 4 "$(q "SELECT COUNT(*) FROM mapping_relations WHERE parent_relation_id = 0")" "first-level relations"
assert_eq "barcodes tag warehouse" "$(q "SELECT GROUP_CONCAT(COALESCE(r.extend_name, c.extend_name) ORDER BY 1 SEPARATOR ' ') FROM mapping_relations r LEFT JOIN mapping_columns c ON c.table_id = r.table_id AND c.relation_id = r.parent_relation_id AND c.name = r.search_column WHERE r.parent_relation_id > 0")" "nested relations with extend names (column's when the relation has none)"
assert_eq "kind <> 'INTERNAL'" "$(q "SELECT where_sql FROM mapping_relations WHERE related_table='sku_barcodes'")" "where condition stored"
assert_eq "json object" "$(q "SELECT CONCAT_WS(' ', mysql_type, engine_type) FROM mapping_columns WHERE name='attrs'")" "MariaDB JSON column recognised"
assert_eq 1 "$(q "SELECT COUNT(*) FROM sync_log WHERE event='mapping_import'")" "import logged"

# ---- round trip: export equals the imported canonical file, to a path and to stdout
run export --config "$TEST_TMP/c.ini" "$TEST_TMP/exported.json"
assert_eq 0 "$rc" "export ($err)"
assert_true "export equals sql/demo/mapping.json byte for byte" cmp "$demo" "$TEST_TMP/exported.json"
run export --config "$TEST_TMP/c.ini"
assert_eq "$(cat "$demo")" "$out" "export to stdout"
run import --config "$TEST_TMP/c.ini" --yes "$TEST_TMP/exported.json"
assert_contains "$out" "no changes" "re-import of the export changes nothing"

# MySQL 8 writes integer types without display widths: the same types
sed 's/"bigint(20) unsigned"/"bigint unsigned"/; s/"int(10) unsigned"/"int unsigned"/' "$demo" >"$TEST_TMP/mysql8.json"
run import --config "$TEST_TMP/c.ini" --dry-run "$TEST_TMP/mysql8.json"
assert_contains "$out" "no changes" "integer display widths do not matter"

# ---- changes: replicas only (no reindex) vs a type change (reindex)
jq '(.indices[] | select(.alias=="brands") | .replicas) = 1' "$demo" >"$TEST_TMP/replicas.json"
run import --config "$TEST_TMP/c.ini" --dry-run "$TEST_TMP/replicas.json"
assert_contains "$out" "~ index brands" "replica change planned"
assert_contains "$out" "~ replicas 0 -> 1" "replica change shown"
case "$out" in *reindex*) fail "a replica change must not need a reindex: $out" ;; esac
# "replicas" left out: what the engine's data nodes can hold, 0 on the suite's
# one-node engine (1 would leave every index yellow): the stored 0 stays
jq 'del(.indices[].replicas)' "$demo" >"$TEST_TMP/noreplicas.json"
run import --config "$TEST_TMP/c.ini" --dry-run "$TEST_TMP/noreplicas.json"
assert_contains "$out" "no changes" "no replicas in the file: the engine's default, 0 on one node ($out)"
jq '(.indices[0].tables[0].columns[] | select(.name=="status") | .type) = "text"' "$demo" >"$TEST_TMP/type.json"
run import --config "$TEST_TMP/c.ini" --dry-run "$TEST_TMP/type.json"
assert_contains "$out" "~ index products -- generated mapping changed: needs a reindex" "type change needs a reindex"
assert_contains "$out" "~ table shop.products" "changed table named"

# ---- bad mappings: exit 2, file + JSON path + names; nothing changed
bad() { # bad FILE EXPECTED_FRAGMENT MSG
    run import --config "$TEST_TMP/c.ini" --yes "$1"
    assert_eq 2 "$rc" "$3: exit code (out: $out err: $err)"
    assert_contains "$err" "$2" "$3: message"
}
jq '.indices[0].tables[0].columns += [{"name":"colour"}]' "$demo" >"$TEST_TMP/bad1.json"
bad "$TEST_TMP/bad1.json" "$TEST_TMP/bad1.json: 1 problem:" "unknown column"
assert_contains "$err" '$.indices[0] (index products).tables[0] (table shop.products).columns[11] (column shop.products.colour): no such column in the source' "unknown column: path and names"
jq '(.indices[0].tables[0].columns[] | select(.name=="price") | .type) = "integer"' "$demo" >"$TEST_TMP/bad2.json"
bad "$TEST_TMP/bad2.json" "(column shop.products.price): type mismatch: engine type integer cannot hold MySQL decimal(12,2)" "type mismatch"
jq '.indices[1].tables[0].table = "shop.nope"' "$demo" >"$TEST_TMP/bad3.json"
bad "$TEST_TMP/bad3.json" "table shop.nope does not exist in the source" "unknown table"
jq '.indices[0].tables[0].relations[0].relations = [{"column":"id","extend_name":"back","table":"shop.products","join_column":"brand_id","nested":true,"columns":["id"]}]' "$demo" >"$TEST_TMP/bad4.json"
bad "$TEST_TMP/bad4.json" "relation cycle: shop.products -> shop.brands -> shop.products" "relation cycle"
# a root without a marked key takes the source's primary key: the same mapping
jq '(.indices[1].tables[0].columns[] | select(.name=="id")) |= del(.key)' "$demo" >"$TEST_TMP/nokey.json"
run import --config "$TEST_TMP/c.ini" --dry-run "$TEST_TMP/nokey.json"
assert_contains "$out" "no changes" "root without a marked key takes the primary key ($err)"
jq '.indices[0].tables[2] |= del(.parent_column)' "$demo" >"$TEST_TMP/bad6.json"
bad "$TEST_TMP/bad6.json" "parent/child child without \"parent_column\"" "child without parent column"
printf '{"version": 1, "indices": [' >"$TEST_TMP/bad7.json"
bad "$TEST_TMP/bad7.json" "$TEST_TMP/bad7.json: \$: not valid JSON" "syntax error"
jq '.indices[0].tables[0].relations[2].nestd = true' "$demo" >"$TEST_TMP/bad8.json"
bad "$TEST_TMP/bad8.json" '$.indices[0].tables[0].relations[2]: unknown key "nestd"' "typo in a key"
jq '.indices[0].tables[0].relations[2].relations[1].where = "kindd = 1"' "$demo" >"$TEST_TMP/bad9.json"
bad "$TEST_TMP/bad9.json" "tables[0] (table shop.products).relations[2] (relation to shop.skus).relations[1] (relation to shop.sku_barcodes): where \"kindd = 1\" fails on the source: Unknown column 'kindd'" "broken where condition"
run export --config "$TEST_TMP/c.ini"
assert_eq "$(cat "$demo")" "$out" "bad imports changed nothing"

# ---- usage
run frobnicate --config "$TEST_TMP/c.ini"
assert_eq 2 "$rc" "unknown verb: exit 2"
run import --config "$TEST_TMP/c.ini" "$TEST_TMP/missing.json"
assert_eq 2 "$rc" "missing file: exit 2"
assert_contains "$err" "cannot read $TEST_TMP/missing.json" "missing file named"

# ---- the engine accepts the generated bodies and nested / join documents
for alias in products brands; do
    run body --config "$TEST_TMP/c.ini" "$alias"
    assert_eq 0 "$rc" "body $alias ($err)"
    idx=$(unique_name "t_${alias}")
    on_exit "SEARCH_ALLOW_ERROR=1 search_delete /$idx >/dev/null 2>&1"
    search_put "/$idx" "$out" >/dev/null || fail "engine refused the generated $alias body"
    eval "idx_$alias=$idx"
done
P=$idx_products
search_put "/$P/_doc/1?routing=1" '{"id":1,"brand_id":7,"category_id":3,"name":"Trail shoe","description":"light and fast","price":"129.90","status":"active","created_at":"2024-01-02T03:04:05.678","updated_at":"2024-01-02T03:04:05.678901Z","weight":1.1,"attrs":{"a":[1,2]},"brand":{"id":7,"name":"Acme","country":"DE","founded":1990},"category":{"id":3,"name":"Shoes","slug":"shoes"},"skus":[{"id":10,"sku_code":"S-10","color":"red","size":"42","price":"129.90","stock":5,"warehouse_id":2,"warehouse":{"id":2,"code":"W2","name":"North","city":"Oslo","country":"NO"},"barcodes":[{"id":100,"barcode":"4006381333931","kind":"EAN13"}]},{"id":11,"sku_code":"S-11","color":"blue","size":"43","price":"99.00","stock":0,"warehouse_id":null,"barcodes":[]}],"tags":[{"tag_id":4,"tag":{"id":4,"name":"outdoor"}}],"relation":{"name":"product"},"ss_version":12345}' >/dev/null || fail "product document refused"
search_put "/$P/_doc/review-5?routing=1" '{"id":5,"product_id":1,"rating":4,"title":"good","body":"comfortable","author":"bo","created_at":"2024-02-01T00:00:00.000","relation":{"name":"review","parent":"1"}}' >/dev/null || fail "review child refused"
search_put "/$P/_doc/reply-9?routing=1" '{"id":9,"review_id":5,"author":"al","body":"thanks","created_at":"2024-02-02T00:00:00.000","relation":{"name":"reply","parent":"review-5"}}' >/dev/null || fail "reply grandchild refused"
search_refresh "$P"
hits() { search_post "/$P/_search" "$1" | jq -c '[.hits.hits[]._id]'; }
assert_eq '["1"]' "$(hits '{"query":{"nested":{"path":"skus","query":{"nested":{"path":"skus.barcodes","query":{"term":{"skus.barcodes.barcode":"4006381333931"}}}}}}}')" "3-level nested query"
assert_eq '["1"]' "$(hits '{"query":{"nested":{"path":"skus","query":{"bool":{"must":[{"term":{"skus.color":"red"}},{"term":{"skus.warehouse.code":"W2"}}]}}}}}')" "object inside a nested array"
assert_eq '[]' "$(hits '{"query":{"nested":{"path":"skus","query":{"bool":{"must":[{"term":{"skus.color":"blue"}},{"term":{"skus.warehouse.code":"W2"}}]}}}}}')" "nested keeps elements apart"
assert_eq '["1"]' "$(hits '{"query":{"has_child":{"type":"review","query":{"has_child":{"type":"reply","query":{"match":{"body":"thanks"}}}}}}}')" "grandchild -> child -> root join"
assert_eq '["review-5"]' "$(hits '{"query":{"has_parent":{"parent_type":"product","query":{"term":{"id":1}}}}}')" "child finds its parent"
assert_eq '["1"]' "$(hits '{"query":{"match":{"all_text":"trail"}}}')" "copy_to target"
assert_eq '["1"]' "$(hits '{"query":{"term":{"name.keyword":"Trail shoe"}}}')" "keyword subfield"
assert_eq '["1"]' "$(hits '{"query":{"range":{"price":{"gte":129.9,"lte":129.9}}}}')" "scaled_float price"
set +e
SEARCH_ALLOW_ERROR=1 search_put "/$P/_doc/2?routing=2" '{"id":2,"colour":"red","relation":{"name":"product"}}' >"$TEST_TMP/strict.out"
set -e
assert_contains "$(cat "$TEST_TMP/strict.out")" "strict_dynamic_mapping_exception" "unknown fields refused (dynamic strict)"
search_put "/$idx_brands/_doc/7" '{"id":7,"name":"Acme","country":"DE","founded":1990,"website":null,"updated_at":"2024-01-01T00:00:00.000000Z"}' >/dev/null || fail "brand document refused"

# ---- removal: an index config left out of the file is removed
jq '.indices |= map(select(.alias=="brands"))' "$demo" >"$TEST_TMP/only_brands.json"
run import --config "$TEST_TMP/c.ini" --yes "$TEST_TMP/only_brands.json"
assert_contains "$out" "- index products (its engine indices are left in place)" "removal planned"
assert_eq "brands" "$(q "SELECT GROUP_CONCAT(alias) FROM index_configs")" "products removed"
assert_eq 0 "$(q "SELECT COUNT(*) FROM mapping_relations")" "its relations removed"
assert_eq 1 "$(q "SELECT COUNT(*) FROM table_configs")" "its tables removed"
pass
