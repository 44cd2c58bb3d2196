# tests/integration/oracle_lib.sh — the SQL ORACLE of the demo shop's search
# documents, and the engine-side dump to compare it with. Sourced by
# integration tests after lib.sh (t_docbuild.sh, t_run_random.sh, ...).
#
# The oracle computes every document of the demo mapping (sql/demo/mapping.json)
# independently of the document builder, by SQL in MariaDB (JSON_OBJECT /
# JSON_ARRAYAGG / correlated subqueries, values formatted to docs/binlog.md "Values" with
# CAST and DATE_FORMAT):
#   products.oracle  root documents (id = product id, no routing, join field;
#                    tags from product_tags, whose primary key makes the
#                    mapping's DISTINCT a no-op)
#   reviews.oracle   child documents review-<id>, routed by their product id
#                    (even when that product row is gone: the review's own
#                    parent column is the routing)
#   replies.oracle   grandchildren reply-<id>, routed by their review's product
#                    id; a reply whose review is gone has no document
#   brands.oracle    documents of the `brands` alias (one per brand row)
# FLOAT columns come from CAST(x AS CHAR), which MariaDB writes with 6
# significant digits: exact for values of up to 6 digits (the demo's and
# random_ops.sql's), not for e.g. 26.714285 (MariaDB: 26.7143).
# One NDJSON line per document: {"id": "...", "routing": "..."|null, "doc": {...}}
# — the shape tests/tools/docbuild_dump prints and engine_dump writes, so
# tests/integration/compare_docs.py compares any two of them.
#
# Functions:
#   oracle_dump DB OUTDIR        write the four .oracle files for database DB
#   oracle_query DB SQL          run SQL, print MariaDB's JSON text raw
#   oracle_items_mapping DB ALIAS     the items mapping that oracle is of
#   oracle_check_items DB ALIAS LABEL  ALIAS equals DB's items oracle (below)
#   engine_dump ALIAS OUTFILE    every document the engine holds behind ALIAS
#                                (scroll over all shards: _id, _routing,
#                                _source, _index), same NDJSON shape
#   compare_docs ACTUAL ORACLE [compare_docs.py options...]
#                                compare, print the verdict line; on a
#                                difference print the report and return 1
#   oracle_check_products DB ALIAS LABEL
#                                an assertion (lib.sh): every document
#                                behind ALIAS equals the products, reviews
#                                and replies oracles of DB (ss_version aside)
#   oracle_compare_employees DB ALIAS
#                                the hr schema of tests/tools/hr_writer.py:
#                                writes $TEST_TMP/emp.oracle (employees with
#                                their department object and nested skills)
#                                and emp.engine (behind ALIAS), compares them
#                                into $TEST_TMP/compare.out; 1 on a difference
#   oracle_demo_mapping DB PRODUCTS BRANDS [JQ]
#                                the demo mapping (sql/demo/mapping.json) on
#                                database DB with its two aliases renamed,
#                                without delay-effect tables (the oracle has
#                                no delayed run: categories refresh their
#                                products live), then filter JQ, on stdout
# shellcheck shell=bash

ORACLE_LIB_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# oracle_query DB SQL — --raw: the JSON text as MariaDB wrote it (batch mode
# would escape \ and \n)
oracle_query() {
    mariadb --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -u root --batch --raw \
        --skip-column-names --default-character-set=utf8mb4 --database="$1" -e "$2"
}

# SQL fragments: DATETIME(n) as 2024-01-31T12:00:00.123, TIMESTAMP(6) in UTC
_oracle_dt() { echo "LEFT(DATE_FORMAT($1, '%Y-%m-%dT%H:%i:%s.%f'), $((20 + $2)))"; }
_oracle_ts6() { echo "CONCAT(DATE_FORMAT($1, '%Y-%m-%dT%H:%i:%s.%f'), 'Z')"; }

oracle_sql_products() {
    cat <<SQL
SET SESSION time_zone = '+00:00';
SET SESSION group_concat_max_len = 16777216;
SELECT JSON_OBJECT('id', CAST(p.id AS CHAR), 'routing', NULL, 'doc', JSON_OBJECT(
  'id', p.id, 'brand_id', p.brand_id, 'category_id', p.category_id, 'name', p.name,
  'description', p.description, 'price', CAST(p.price AS CHAR), 'status', CAST(p.status AS CHAR),
  'created_at', $(_oracle_dt p.created_at 3), 'updated_at', $(_oracle_ts6 p.updated_at),
  'weight', JSON_EXTRACT(CAST(p.weight AS CHAR), '\$'), 'attrs', JSON_EXTRACT(p.attrs, '\$'),
  'brand', JSON_EXTRACT((SELECT JSON_OBJECT('id', b.id, 'name', b.name, 'country', b.country,
                         'founded', b.founded + 0) FROM brands b WHERE b.id = p.brand_id), '\$'),
  'category', JSON_EXTRACT((SELECT JSON_OBJECT('id', c.id, 'name', c.name, 'slug', c.slug)
                            FROM categories c WHERE c.id = p.category_id), '\$'),
  'skus', COALESCE(JSON_EXTRACT((SELECT JSON_ARRAYAGG(JSON_OBJECT('id', s.id, 'sku_code', s.sku_code,
      'color', s.color, 'size', s.size, 'price', CAST(s.price AS CHAR), 'stock', s.stock,
      'warehouse_id', s.warehouse_id,
      'warehouse', JSON_EXTRACT((SELECT JSON_OBJECT('id', w.id, 'code', w.code, 'name', w.name,
                     'city', w.city, 'country', w.country) FROM warehouses w WHERE w.id = s.warehouse_id), '\$'),
      'barcodes', COALESCE(JSON_EXTRACT((SELECT JSON_ARRAYAGG(JSON_OBJECT('id', x.id, 'barcode', x.barcode,
                     'kind', CAST(x.kind AS CHAR))) FROM sku_barcodes x
                     WHERE x.sku_id = s.id AND x.kind <> 'INTERNAL'), '\$'), JSON_ARRAY())))
      FROM skus s WHERE s.product_id = p.id), '\$'), JSON_ARRAY()),
  'tags', COALESCE(JSON_EXTRACT((SELECT JSON_ARRAYAGG(JSON_OBJECT('tag_id', t.tag_id,
      'tag', JSON_EXTRACT((SELECT JSON_OBJECT('id', g.id, 'name', g.name) FROM tags g WHERE g.id = t.tag_id), '\$')))
      FROM product_tags t WHERE t.product_id = p.id), '\$'), JSON_ARRAY()),
  'relation', JSON_OBJECT('name', 'product')))
FROM products p ORDER BY p.id
SQL
}

oracle_sql_reviews() {
    cat <<SQL
SET SESSION time_zone = '+00:00';
SELECT JSON_OBJECT('id', CONCAT('review-', r.id), 'routing', CAST(r.product_id AS CHAR), 'doc', JSON_OBJECT(
  'id', r.id, 'product_id', r.product_id, 'rating', r.rating, 'title', r.title, 'body', r.body,
  'author', r.author, 'created_at', $(_oracle_dt r.created_at 3),
  'relation', JSON_OBJECT('name', 'review', 'parent', CAST(r.product_id AS CHAR))))
FROM reviews r ORDER BY r.id
SQL
}

oracle_sql_replies() {
    cat <<SQL
SET SESSION time_zone = '+00:00';
SELECT JSON_OBJECT('id', CONCAT('reply-', y.id), 'routing', CAST(r.product_id AS CHAR), 'doc', JSON_OBJECT(
  'id', y.id, 'review_id', y.review_id, 'author', y.author, 'body', y.body,
  'created_at', $(_oracle_dt y.created_at 3),
  'relation', JSON_OBJECT('name', 'reply', 'parent', CONCAT('review-', y.review_id))))
FROM review_replies y JOIN reviews r ON r.id = y.review_id ORDER BY y.id
SQL
}

oracle_sql_brands() {
    cat <<SQL
SET SESSION time_zone = '+00:00';
SELECT JSON_OBJECT('id', CAST(b.id AS CHAR), 'routing', NULL, 'doc', JSON_OBJECT(
  'id', b.id, 'name', b.name, 'country', b.country, 'founded', b.founded + 0,
  'website', b.website, 'updated_at', $(_oracle_ts6 b.updated_at)))
FROM brands b ORDER BY b.id
SQL
}

# oracle_dump DB OUTDIR — OUTDIR/{products,reviews,replies,brands}.oracle
oracle_dump() {
    local db="$1" out="$2" t
    mkdir -p "$out"
    for t in products reviews replies brands; do
        oracle_query "$db" "$("oracle_sql_$t")" >"$out/$t.oracle" || {
            echo "oracle_dump: the $t oracle query failed on $db" >&2
            return 1
        }
    done
}

# engine_dump ALIAS OUTFILE — every document behind ALIAS (all shards)
engine_dump() {
    python3 "$ORACLE_LIB_DIR/engine_dump.py" "$SEARCH_URL" "$1" >"$2"
}

# compare_docs ACTUAL ORACLE [options] — see compare_docs.py --help
compare_docs() {
    local actual="$1" oracle="$2" out
    shift 2
    out="$(mktemp "${TEST_TMP:-/tmp}/compare.XXXXXX")"
    if python3 "$ORACLE_LIB_DIR/compare_docs.py" "$@" "$actual" "$oracle" >"$out" 2>&1; then
        tail -1 "$out"
        rm -f "$out"
        return 0
    fi
    cat "$out"
    rm -f "$out"
    return 1
}

# oracle_compare_employees DB ALIAS — see the header; the caller decides
# what a difference means (its dumps stay in $TEST_TMP for it)
oracle_compare_employees() {
    oracle_query "$1" "
SELECT JSON_OBJECT('id', CAST(e.id AS CHAR), 'routing', NULL, 'doc', JSON_OBJECT(
  'id', e.id, 'name', e.name, 'salary', CAST(e.salary AS CHAR),
  'hired', DATE_FORMAT(e.hired, '%Y-%m-%dT%H:%i:%s'), 'active', e.active, 'attrs', e.attrs,
  'department_id', e.department_id,
  'department', (SELECT JSON_OBJECT('id', d.id, 'name', d.name, 'budget', CAST(d.budget AS CHAR),
                 'location', d.location) FROM department d WHERE d.id = e.department_id),
  'skills', (SELECT JSON_ARRAYAGG(JSON_OBJECT('id', s.id, 'name', s.name, 'level', s.level))
             FROM skill s WHERE s.employee_id = e.id)))
FROM employee e" >"$TEST_TMP/emp.oracle" || { echo "the employees oracle query failed on $1" >"$TEST_TMP/compare.out"; return 1; }
    engine_dump "$2" "$TEST_TMP/emp.engine" 2>"$TEST_TMP/compare.out" || return 1
    # an employee without skills: null in the oracle, [] or absent in a
    # document; attrs is JSON text in the oracle, parsed here (python keeps
    # its integers exact, where jq would read them as doubles)
    python3 - "$TEST_TMP/emp.oracle" "$TEST_TMP/emp.engine" <<'PY'
import json, sys
for p, oracle in ((sys.argv[1], True), (sys.argv[2], False)):
    out = []
    for line in open(p):
        d = json.loads(line)
        if oracle:
            if d["doc"].get("skills") is None:
                d["doc"]["skills"] = []
            if isinstance(d["doc"]["attrs"], str):
                d["doc"]["attrs"] = json.loads(d["doc"]["attrs"])
        else:
            d["doc"].setdefault("skills", [])
        out.append(json.dumps(d))
    open(p, "w").write("\n".join(out) + ("\n" if out else ""))
PY
    compare_docs "$TEST_TMP/emp.engine" "$TEST_TMP/emp.oracle" --numbers value \
        --ignore-field ss_version --ignore-field ss_hash --ignore-field ss_key_hash \
        --label "$2" >"$TEST_TMP/compare.out"
}

# oracle_check_items DB ALIAS LABEL — one assertion of lib.sh: the documents
# behind ALIAS equal DB's items oracle, computed by the server: the mapping of
# t_mysql_only, t_mysql_gtid and t_source_versions (items with a store object
# from stores and nested parts from item_parts; notes as child documents)
# oracle_items_mapping DB ALIAS — the mapping oracle_check_items is the
# oracle of (items with a store object and nested parts, notes as child
# documents), on stdout
oracle_items_mapping() {
    cat <<JSON
{"version": 1, "indices": [{"alias": "$2", "shards": 1, "replicas": 0, "history_retention": 1, "tables": [
  {"table": "$1.items", "join_name": "item", "bucket_column": "id",
   "columns": [{"name": "id", "type": "long", "key": true}, {"name": "store_id", "type": "long", "extend_name": "store"},
               {"name": "name", "type": "text", "keyword": true}, {"name": "qty", "type": "integer"},
               {"name": "price", "type": "keyword"}, {"name": "created_at", "type": "date"}],
   "relations": [
     {"column": "store_id", "table": "$1.stores", "join_column": "id",
      "columns": [{"name": "id", "type": "long"}, {"name": "name", "type": "keyword"}, {"name": "city", "type": "text"}]},
     {"column": "id", "table": "$1.item_parts", "join_column": "item_id", "extend_name": "parts", "nested": true,
      "area_update": true,
      "columns": [{"name": "id", "type": "long", "key": true}, {"name": "label", "type": "keyword"},
                  {"name": "n", "type": "integer"}]}]},
  {"table": "$1.notes", "join_name": "note", "parent": "$1.items", "parent_column": "item_id",
   "columns": [{"name": "id", "type": "long", "key": true}, {"name": "item_id", "type": "long"},
               {"name": "body", "type": "text"}]}]}]}
JSON
}

oracle_check_items() {
    oracle_query "$1" "SET SESSION time_zone = '+00:00';
SELECT JSON_OBJECT('id', CAST(i.id AS CHAR), 'routing', NULL, 'doc', JSON_OBJECT(
  'id', i.id, 'store_id', i.store_id, 'name', i.name, 'qty', i.qty, 'price', CAST(i.price AS CHAR),
  'created_at', $(_oracle_dt i.created_at 3),
  'store', JSON_EXTRACT((SELECT JSON_OBJECT('id', s.id, 'name', s.name, 'city', s.city)
                         FROM stores s WHERE s.id = i.store_id), '\$'),
  'parts', COALESCE(JSON_EXTRACT((SELECT JSON_ARRAYAGG(JSON_OBJECT('id', p.id, 'label', p.label, 'n', p.n))
                                  FROM item_parts p WHERE p.item_id = i.id), '\$'), JSON_ARRAY()),
  'relation', JSON_OBJECT('name', 'item')))
FROM items i ORDER BY i.id" >"$TEST_TMP/items.oracle" || fail "$3: the items oracle query"
    oracle_query "$1" "SELECT JSON_OBJECT('id', CONCAT('note-', n.id), 'routing', CAST(n.item_id AS CHAR),
  'doc', JSON_OBJECT('id', n.id, 'item_id', n.item_id, 'body', n.body,
                     'relation', JSON_OBJECT('name', 'note', 'parent', CAST(n.item_id AS CHAR))))
FROM notes n ORDER BY n.id" >"$TEST_TMP/notes.oracle" || fail "$3: the notes oracle query"
    search_refresh "$2"
    engine_dump "$2" "$TEST_TMP/engine.ndjson" 2>"$TEST_TMP/dump.err" || {
        cat "$TEST_TMP/dump.err"; fail "$3: engine dump"; }
    _LIB_ASSERTS=$((_LIB_ASSERTS + 1))
    compare_docs "$TEST_TMP/engine.ndjson" "$TEST_TMP/items.oracle,$TEST_TMP/notes.oracle" --numbers value \
        --ignore-field ss_version --ignore-field ss_hash --ignore-field ss_key_hash \
        --label "$2 ($3)" --show 5 >"$TEST_TMP/cmp.out" ||
        { cat "$TEST_TMP/cmp.out"; fail "$3: the index differs from the SQL oracle"; }
    log "$(cat "$TEST_TMP/cmp.out")"
}

oracle_demo_mapping() {
    sed "s/\"shop\./\"$1./g" "$SEARCHSYNC_SRCDIR/sql/demo/mapping.json" |
        jq --arg p "$2" --arg b "$3" '
            .indices |= map(if .alias == "products" then .alias = $p elif .alias == "brands" then .alias = $b else . end)
            | .indices[].tables |= map(select(.delay_effect != true))
            | walk(if type == "object" and (.table // "" | endswith(".categories")) then del(.refresh_parent) else . end)
            | '"${4:-.}"
}

# oracle_check_products DB ALIAS LABEL — one assertion of lib.sh: the
# documents behind ALIAS (products, reviews, replies) equal DB's oracle
oracle_check_products() {
    local o="$TEST_TMP/oracle"
    oracle_dump "$1" "$o" || fail "$3: oracle queries failed"
    engine_dump "$2" "$TEST_TMP/engine.ndjson" 2>"$TEST_TMP/dump.err" || {
        cat "$TEST_TMP/dump.err"; fail "$3: engine dump"; }
    _LIB_ASSERTS=$((_LIB_ASSERTS + 1))
    compare_docs "$TEST_TMP/engine.ndjson" "$o/products.oracle,$o/reviews.oracle,$o/replies.oracle" \
        --numbers value --ignore-field ss_version --ignore-field ss_hash --ignore-field ss_key_hash --label "$2 ($3)" --show 5 >"$TEST_TMP/cmp.out" ||
        { cat "$TEST_TMP/cmp.out"; fail "$3: the index differs from the SQL oracle"; }
    log "$(cat "$TEST_TMP/cmp.out")"
}
