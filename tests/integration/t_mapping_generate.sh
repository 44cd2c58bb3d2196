#!/usr/bin/env bash
# tests/integration/t_mapping_generate.sh — `searchsync mapping generate`:
# on the demo shop (no foreign keys) the relations are guessed from
# `<table>_id` names, said on stderr, and the file imports; on a schema with
# foreign keys (an object, a guessed object, a nested array and a
# many-to-many through a link table) the generated file imports and `run`
# syncs documents equal to an SQL oracle, before and after changes (BIGINT
# UNSIGNED values above 2^63-1 in an unsigned_long field). Also: a
# mapping whose root lists no columns and marks no key maps every column and
# takes the primary key.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
require_bin

meta=$(unique_name meta)
lib=$(unique_name lib)
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$meta\`; DROP DATABASE IF EXISTS \`$lib\`; DROP DATABASE IF EXISTS shop' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/books_v1' >/dev/null"
mysql_q 'DROP DATABASE IF EXISTS shop'
mysql_file "$SEARCHSYNC_SRCDIR/sql/demo/schema.sql"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = gen
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = 7311
[metadata]
database = $meta
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
INI
gen() { # gen ARGS...: sets out, err, rc
    set +e
    out=$("$SEARCHSYNC_BIN" mapping generate --config "$TEST_TMP/c.ini" "$@" 2>"$TEST_TMP/err")
    rc=$?
    set -e
    err=$(cat "$TEST_TMP/err")
}

# ---- the demo shop: guesses only, a many-to-many through product_tags
gen shop.products
assert_eq 0 "$rc" "generate shop.products ($err)"
printf '%s\n' "$out" >"$TEST_TMP/shop.json"
assert_eq "brand category tags reviews skus" \
    "$(jq -r '[.indices[0].tables[0].relations[].extend_name] | join(" ")' "$TEST_TMP/shop.json")" \
    "relations proposed for shop.products"
assert_eq "shop.tags" "$(jq -r '.indices[0].tables[0].relations[] | select(.extend_name=="tags") | .relations[0].table' "$TEST_TMP/shop.json")" \
    "many-to-many through the link table product_tags"
assert_eq "true" "$(jq -r '.indices[0].tables[0].relations[] | select(.extend_name=="tags") | .flatten' "$TEST_TMP/shop.json")" \
    "the many-to-many is flattened (the tags themselves as elements)"
assert_eq "id" "$(jq -r '.indices[0].tables[0].columns[] | select(.key) | .name' "$TEST_TMP/shop.json")" "primary key marked"
assert_eq 11 "$(jq '.indices[0].tables[0].columns | length' "$TEST_TMP/shop.json")" "every column of products"
assert_contains "$err" "guessed (no foreign key): shop.products.brand_id -> shop.brands.id" "guesses said on stderr"
# no --replicas: what the engine's data nodes hold (the suite's engine is one
# node: none, or its indices would stay yellow)
assert_eq "1 $(curl -s "$SEARCH_URL/_cluster/health" | jq .number_of_data_nodes)" "1 1" "the suite's engine has one data node"
assert_eq 0 "$(jq '.indices[0].replicas' "$TEST_TMP/shop.json")" "replicas proposed for a one-node engine: 0"
gen shop.products --dialect opensearch-2
assert_eq null "$(printf '%s' "$out" | jq '.indices[0].replicas')" "--dialect (the engine not asked): replicas left to the import"
set +e
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" --dry-run "$TEST_TMP/shop.json" >"$TEST_TMP/imp" 2>&1
rc=$?
set -e
assert_eq 0 "$rc" "the generated demo mapping imports: $(cat "$TEST_TMP/imp")"
gen shop.nope
assert_eq 2 "$rc" "an unknown table: exit 2"
assert_contains "$err" "no table shop.nope" "an unknown table named"
gen shop.products --depth 0
assert_eq 0 "$(printf '%s' "$out" | jq '.indices[0].tables[0].relations // [] | length')" "--depth 0: the root only"
gen shop.products --depth 1 --include brands,shop.reviews
assert_eq "brand reviews" "$(printf '%s' "$out" | jq -r '[.indices[0].tables[0].relations[].extend_name] | join(" ")')" "--include limits the relations"

# ---- a schema with foreign keys: generated, imported, synced
mysql_q "CREATE DATABASE \`$lib\`"
mysql_q "
CREATE TABLE authors (id INT PRIMARY KEY, name VARCHAR(100) NOT NULL);
CREATE TABLE publishers (id INT PRIMARY KEY, name VARCHAR(100) NOT NULL);
CREATE TABLE genres (id INT PRIMARY KEY, name VARCHAR(50) NOT NULL);
CREATE TABLE books (id INT PRIMARY KEY, author_id INT NULL, publisher_id INT NULL,
  title VARCHAR(200) NOT NULL, pages INT NULL, copies BIGINT UNSIGNED NULL,
  FOREIGN KEY (author_id) REFERENCES authors (id));
CREATE TABLE book_genres (book_id INT NOT NULL, genre_id INT NOT NULL, PRIMARY KEY (book_id, genre_id),
  FOREIGN KEY (book_id) REFERENCES books (id), FOREIGN KEY (genre_id) REFERENCES genres (id));
CREATE TABLE loans (id INT PRIMARY KEY, book_id INT NOT NULL, borrower VARCHAR(50) NOT NULL,
  FOREIGN KEY (book_id) REFERENCES books (id));
INSERT INTO authors VALUES (1, 'Le Guin'), (2, 'Pratchett');
INSERT INTO publishers VALUES (1, 'Ace'), (2, 'Gollancz');
INSERT INTO genres VALUES (1, 'fantasy'), (2, 'sf'), (3, 'humour');
INSERT INTO books VALUES (1, 1, 1, 'The Dispossessed', 387, 18446744073709551615), (2, 2, 2, 'Mort', 243, 9223372036854775808),
  (3, 2, NULL, 'Guards! Guards!', NULL, NULL), (4, NULL, 9, 'Anonymous', 10, 0);
INSERT INTO book_genres VALUES (1, 2), (2, 1), (2, 3), (3, 1), (3, 3);
INSERT INTO loans VALUES (1, 2, 'ann'), (2, 2, 'bob'), (3, 1, 'cy');" "$lib"
gen "$lib.books" --replicas 0
assert_eq 0 "$rc" "generate $lib.books ($err)"
printf '%s\n' "$out" >"$TEST_TMP/books.json"
assert_eq "author publisher genres loans" \
    "$(jq -r '[.indices[0].tables[0].relations[].extend_name] | join(" ")' "$TEST_TMP/books.json")" \
    "relations along foreign keys, and one guess"
assert_contains "$err" "guessed (no foreign key): $lib.books.publisher_id -> $lib.publishers.id" "the guess said"
case "$err" in *"books.author_id ->"*) fail "a foreign key reported as a guess: $err" ;; esac
# BIGINT UNSIGNED: unsigned_long on this engine (OpenSearch 2.19); long on
# one without it, with a note that values above 2^63-1 would be refused
assert_eq unsigned_long "$(jq -r '.indices[0].tables[0].columns[] | select(.name == "copies") | .type' "$TEST_TMP/books.json")" \
    "BIGINT UNSIGNED proposed as unsigned_long (the engine has it)"
case "$err" in *"mapped as long"*) fail "a note on BIGINT UNSIGNED though the engine has unsigned_long: $err" ;; esac
gen "$lib.books" --replicas 0 --dialect opensearch-1
assert_eq long "$(printf '%s' "$out" | jq -r '.indices[0].tables[0].columns[] | select(.name == "copies") | .type')" \
    "BIGINT UNSIGNED as long for an engine without unsigned_long"
assert_contains "$err" "$lib.books.copies is BIGINT UNSIGNED, mapped as long: this engine has no unsigned_long" \
    "the note on what a value above 2^63-1 would do"
# a sample document: the first book as the proposed mapping builds it
sample="$(sed -n '/a document as this mapping builds it (the first row of '"$lib"'.books):/{n;p}' "$TEST_TMP/err")"
assert_eq "$(mysql_q "SELECT MIN(id) FROM books" "$lib")" "$(jq -r .id <<<"$sample")" "the sample is the first book"
assert_eq "$(mysql_q "SELECT title FROM books ORDER BY id LIMIT 1" "$lib")" "$(jq -r .title <<<"$sample")" "the sample's title equals SQL"
assert_eq "$(mysql_q "SELECT COUNT(*) FROM loans WHERE book_id = (SELECT MIN(id) FROM books)" "$lib")" \
    "$(jq '.loans | length' <<<"$sample")" "the sample's loans equal SQL"
assert_eq "$(mysql_q "SELECT GROUP_CONCAT(g.name ORDER BY g.id) FROM book_genres x JOIN genres g ON g.id = x.genre_id WHERE x.book_id = (SELECT MIN(id) FROM books)" "$lib")" \
    "$(jq -r '[.genres[].name] | join(",")' <<<"$sample")" "the sample's genres are the genre rows themselves"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" --yes "$TEST_TMP/books.json" >"$TEST_TMP/imp" 2>&1 ||
    fail "import of the generated mapping: $(cat "$TEST_TMP/imp")"

oracle_books() {
    oracle_query "$lib" "SELECT JSON_OBJECT('id', CAST(b.id AS CHAR), 'routing', NULL, 'doc', JSON_OBJECT(
  'id', b.id, 'author_id', b.author_id, 'publisher_id', b.publisher_id, 'title', b.title, 'pages', b.pages,
  'copies', b.copies,
  'author', JSON_EXTRACT((SELECT JSON_OBJECT('id', a.id, 'name', a.name) FROM authors a WHERE a.id = b.author_id), '\$'),
  'publisher', JSON_EXTRACT((SELECT JSON_OBJECT('id', p.id, 'name', p.name) FROM publishers p WHERE p.id = b.publisher_id), '\$'),
  'genres', COALESCE(JSON_EXTRACT((SELECT JSON_ARRAYAGG(JSON_OBJECT('id', g.id, 'name', g.name)
      ORDER BY x.genre_id) FROM book_genres x JOIN genres g ON g.id = x.genre_id WHERE x.book_id = b.id), '\$'), JSON_ARRAY()),
  'loans', COALESCE(JSON_EXTRACT((SELECT JSON_ARRAYAGG(JSON_OBJECT('id', l.id, 'book_id', l.book_id,
      'borrower', l.borrower) ORDER BY l.id) FROM loans l WHERE l.book_id = b.id), '\$'), JSON_ARRAY())))
FROM books b ORDER BY b.id"
}
check_books() {
    oracle_books >"$TEST_TMP/books.oracle" || fail "$1: oracle query"
    search_refresh books
    engine_dump books "$TEST_TMP/books.engine"
    _LIB_ASSERTS=$((_LIB_ASSERTS + 1))
    compare_docs "$TEST_TMP/books.engine" "$TEST_TMP/books.oracle" --numbers value \
        --ignore-field ss_version --ignore-field ss_hash --ignore-field ss_key_hash --label "books ($1)" --show 5 >"$TEST_TMP/cmp.out" ||
        { cat "$TEST_TMP/cmp.out"; fail "$1: the index differs from the SQL oracle"; }
}
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
wait_until 60 "the first build of books" bash -c \
    "[ \"\$(curl -s '$SEARCH_URL/books/_count' | jq .count)\" = 4 ]" ||
    fail "books not built: $(tail -20 "$TEST_TMP/run.log")"
daemon_wait_ready
check_books "first build"
mysql_q "UPDATE genres SET name = 'science fiction' WHERE id = 2;
INSERT INTO loans VALUES (4, 3, 'dee'); DELETE FROM loans WHERE id = 1;
INSERT INTO book_genres VALUES (4, 2); UPDATE authors SET name = 'Terry Pratchett' WHERE id = 2;
INSERT INTO publishers VALUES (9, 'Late'); INSERT INTO books VALUES (5, 1, 9, 'Lavinia', 279, 18446744073709551614);
UPDATE books SET copies = 18446744073709551615 WHERE id = 4; UPDATE books SET copies = 9223372036854775807 WHERE id = 1;
SET FOREIGN_KEY_CHECKS = 0; INSERT INTO book_genres VALUES (1, 99), (5, 3)" "$lib"
wait_checkpoint "$meta" gen 30
check_books "after changes (a link to a genre not there yet gives no element)"
assert_eq 1 "$(curl -s "$SEARCH_URL/books/_doc/1" | jq '._source.genres | length')" "book 1: the dangling link left out"
# the missing genre arrives: the book linked to it gets it, through the link table
mysql_q "INSERT INTO genres VALUES (99, 'utopia'); UPDATE genres SET name = 'comedy' WHERE id = 3" "$lib"
wait_checkpoint "$meta" gen 30
check_books "after the linked rows changed"
assert_eq "science fiction,utopia" "$(curl -s "$SEARCH_URL/books/_doc/1" | jq -r '[._source.genres[].name] | join(",")')" "book 1 has the late genre"
daemon_stop

# ---- a composite primary key: a document's id is one column, so generate
# says how to add one; given a column unique on its own, it takes that
mysql_q "CREATE TABLE order_lines (order_no VARCHAR(10) NOT NULL, line INT NOT NULL, qty INT,
  PRIMARY KEY (order_no, line))" "$lib"
gen "$lib.order_lines" --replicas 0
assert_eq 2 "$rc" "a composite primary key without a unique column: exit 2"
assert_contains "$err" "has a primary key of 2 columns (\`order_no\`, \`line\`) and no column unique on its own" \
    "the composite key named"
assert_contains "$err" "ADD COLUMN doc_id VARCHAR(255) AS (CONCAT_WS(':', \`order_no\`, \`line\`)) STORED" "and how to add one"
mysql_q "ALTER TABLE order_lines ADD COLUMN doc_id VARCHAR(255) AS (CONCAT_WS(':', order_no, line)) STORED,
  ADD UNIQUE (doc_id)" "$lib"
gen "$lib.order_lines" --replicas 0
assert_eq 0 "$rc" "with a unique column ($err)"
assert_eq doc_id "$(printf '%s' "$out" | jq -r '[.indices[0].tables[0].columns[] | select(.key) | .name] | join(",")')" \
    "the unique column is the key"
printf '%s\n' "$out" >"$TEST_TMP/lines.json"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" --dry-run "$TEST_TMP/lines.json" >"$TEST_TMP/imp" 2>&1 ||
    fail "the generated mapping with the unique key: $(cat "$TEST_TMP/imp")"
jq '.indices[0].tables[0].columns |= map(if .name == "order_no" or .name == "line" then .key = true else del(.key) end)' \
    "$TEST_TMP/lines.json" >"$TEST_TMP/lines2.json"
set +e
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" --dry-run "$TEST_TMP/lines2.json" >"$TEST_TMP/imp" 2>&1
rc=$?
set -e
assert_eq 2 "$rc" "two key columns marked by hand: refused"
assert_contains "$(cat "$TEST_TMP/imp")" "root table with 2 key columns (order_no, line" "the two keys named"

# ---- no "columns" and no key: every column, the primary key
cat >"$TEST_TMP/bare.json" <<JSON
{"version": 1, "indices": [{"alias": "loans", "replicas": 0, "tables": [{"table": "$lib.loans",
  "relations": [{"column": "book_id", "table": "$lib.books", "join_column": "id", "extend_name": "book"}]}]}]}
JSON
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" --yes "$TEST_TMP/bare.json" >"$TEST_TMP/imp" 2>&1 ||
    fail "a mapping without columns or key: $(cat "$TEST_TMP/imp")"
"$SEARCHSYNC_BIN" mapping export --config "$TEST_TMP/c.ini" "$TEST_TMP/exp.json"
assert_eq "id book_id borrower" "$(jq -r '[.indices[] | select(.alias=="loans") | .tables[0].columns[].name] | join(" ")' "$TEST_TMP/exp.json")" \
    "no columns: every column of the root"
assert_eq "id" "$(jq -r '.indices[] | select(.alias=="loans") | .tables[0].columns[] | select(.key) | .name' "$TEST_TMP/exp.json")" \
    "no key: the primary key"
assert_eq 6 "$(jq '.indices[] | select(.alias=="loans") | .tables[0].relations[0].columns | length' "$TEST_TMP/exp.json")" \
    "a relation without columns: every column"
pass
