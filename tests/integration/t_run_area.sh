#!/usr/bin/env bash
# tests/integration/t_run_area.sh — the three ways `searchsync run` changes a
# document, against real MariaDB + OpenSearch, and live mapping reload (the
# demo mapping, products without their JSON and FLOAT columns):
#
#   area-update  skus (area_update in the demo mapping): a SKU updated, two
#                SKUs of one product in one transaction, a SKU moved to
#                another product, deleted, inserted, a barcode leaving the
#                relation's WHERE, a warehouse renamed (one-to-one inside the
#                element) — each product's skus array equals SQL's (the
#                oracle), and the daemon sent element scripts, not documents;
#                a product changed together with its SKU is rebuilt whole.
#   row-image    brands (mode row-image): insert, update, key change, delete —
#                each document equals the row as SQL formats it.
#   resilience   the daemon's connections dropped, MariaDB restarted, its read
#                connection killed in the middle of a transaction's reads: it
#                goes on, and that transaction is read again
#   reload       a new index config imported while the daemon runs is created
#                and synced within seconds, without a restart; an edit that no
#                longer validates is refused in the log and sync goes on.
. "$(dirname "$0")/lib.sh"
require_bin
# the demo mapping without products' attrs (JSON) and weight (FLOAT): with
# them, its skus would rebuild whole documents (t_run_area_json)
map="$TEST_TMP/demo_mapping.json"
jq '(.indices[] | select(.alias == "products") | .tables[0].columns) |= map(select(.name != "attrs" and .name != "weight"))' \
    "$SEARCHSYNC_SRCDIR/sql/demo/mapping.json" >"$map"
bash "$SEARCHSYNC_SRCDIR/sql/demo/generate.sh" --products 200 >/dev/null
meta="$(unique_name meta)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/products_v1,brands_v1,warehouses_v1?ignore_unavailable=true' >/dev/null"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = shop
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = 7311
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
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$map" --yes >"$TEST_TMP/import.out" 2>&1 ||
    fail "import: $(cat "$TEST_TMP/import.out")"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 40 lines)"; tail -40 "$TEST_TMP/run.log"; }'
wait_until 30 "alias products exists" bash -c "curl -sf '$SEARCH_URL/_alias/products' >/dev/null" ||
    fail "daemon did not create the index: $(tail -20 "$TEST_TMP/run.log")"
daemon_wait_log "products: live changes no longer written to products_v1" 30 # the first sync's dual writes ended
sleep 1

marker_n=0
marker() { # a root change after the others; wait until it and everything before is delivered
    marker_n=$((marker_n + 1))
    mysql_q "UPDATE shop.products SET name = 'marker $marker_n' WHERE id = 200"
    wait_until 30 "marker $marker_n delivered" bash -c \
        "curl -s '$SEARCH_URL/products/_doc/200' | jq -e '._source.name == \"marker $marker_n\"' >/dev/null"
    wait_checkpoint "$meta" shop 30
    search_refresh products
}
# the oracle: a product's skus as SQL has them (sorted by id), and the engine's
skus_sql() {
    mysql_q "SET SESSION time_zone = '+00:00';
    SELECT COALESCE(JSON_ARRAYAGG(JSON_OBJECT('id', s.id, 'sku_code', s.sku_code, 'color', s.color,
      'size', s.size, 'price', CAST(s.price AS CHAR), 'stock', s.stock, 'warehouse_id', s.warehouse_id,
      'warehouse', JSON_EXTRACT((SELECT JSON_OBJECT('id', w.id, 'code', w.code, 'name', w.name,
          'city', w.city, 'country', w.country) FROM shop.warehouses w WHERE w.id = s.warehouse_id), '\$'),
      'barcodes', COALESCE(JSON_EXTRACT((SELECT JSON_ARRAYAGG(JSON_OBJECT('id', x.id, 'barcode', x.barcode,
          'kind', CAST(x.kind AS CHAR))) FROM shop.sku_barcodes x
          WHERE x.sku_id = s.id AND x.kind <> 'INTERNAL'), '\$'), JSON_ARRAY()))), JSON_ARRAY())
    FROM shop.skus s WHERE s.product_id = $1" | jq -S -c 'map(.barcodes |= sort_by(.id)) | sort_by(.id)'
}
skus_doc() {
    curl -s "$SEARCH_URL/products/_doc/$1" | jq -S -c '._source.skus | map(.barcodes |= sort_by(.id)) | sort_by(.id)'
}
check_skus() { assert_eq "$(skus_sql "$1")" "$(skus_doc "$1")" "$2 (product $1)"; }

# every product document exists first (a root change rebuilds it whole)
mysql_q "UPDATE shop.products SET updated_at = NOW(6) WHERE id BETWEEN 1 AND 20"
marker
assert_eq "$(mysql_q "SELECT COUNT(*) FROM shop.products WHERE id <= 20")" "$(search_count products '{"query":{"bool":{"filter":[{"range":{"id":{"lte":20}}},{"term":{"relation":"product"}}]}}}')" "products 1..20 indexed"
for p in 1 2 3 4; do check_skus "$p" "starting point"; done

s1="$(mysql_q 'SELECT id FROM shop.skus WHERE product_id = 1 ORDER BY id LIMIT 1')"
read -r s2a s2b <<<"$(mysql_q 'SELECT GROUP_CONCAT(id ORDER BY id SEPARATOR " ") FROM (SELECT id FROM shop.skus WHERE product_id = 2 ORDER BY id LIMIT 2) x')"
s3="$(mysql_q 'SELECT id FROM shop.skus WHERE product_id = 3 ORDER BY id LIMIT 1')"
s4="$(mysql_q 'SELECT id FROM shop.skus WHERE product_id = 4 ORDER BY id DESC LIMIT 1')"
b5="$(mysql_q "SELECT b.id FROM shop.sku_barcodes b JOIN shop.skus s ON s.id = b.sku_id WHERE s.product_id = 5 AND b.kind <> 'INTERNAL' ORDER BY b.id LIMIT 1")"
[ -n "$s1" ] && [ -n "$s2b" ] && [ -n "$s3" ] && [ -n "$s4" ] && [ -n "$b5" ] || fail "demo data lacks the SKUs this test needs"
w6="$(mysql_q 'SELECT warehouse_id FROM shop.skus WHERE product_id = 6 AND warehouse_id IS NOT NULL LIMIT 1')"
mysql_q "UPDATE shop.products SET updated_at = NOW(6) WHERE id IN (5, 6)"
marker

mysql_q "UPDATE shop.skus SET color = 'area-red', stock = 4242 WHERE id = $s1"
mysql_q "BEGIN; UPDATE shop.skus SET color = 'both-1' WHERE id = $s2a; UPDATE shop.skus SET size = 'XXL' WHERE id = $s2b; COMMIT"
mysql_q "UPDATE shop.skus SET product_id = 4 WHERE id = $s3"
mysql_q "DELETE FROM shop.sku_barcodes WHERE sku_id = $s4; DELETE FROM shop.skus WHERE id = $s4"
mysql_q "INSERT INTO shop.skus (id, product_id, sku_code, color, size, price, stock, warehouse_id)
         SELECT MAX(id) + 1, 1, 'AREA-NEW', 'green', 'S', 1.50, 7, $w6 FROM shop.skus"
mysql_q "UPDATE shop.sku_barcodes SET kind = 'INTERNAL' WHERE id = $b5"
mysql_q "UPDATE shop.warehouses SET name = 'Renamed warehouse' WHERE id = $w6"
marker
check_skus 1 "area-update: one SKU changed and one inserted"
check_skus 2 "area-update: two SKUs of one product in one transaction"
check_skus 3 "area-update: the moved SKU left its old product"
check_skus 4 "area-update: the moved SKU joined its new product, the deleted one is gone"
check_skus 5 "area-update: a barcode that stops matching WHERE leaves the element"
check_skus 6 "area-update: a renamed warehouse reaches the element"
assert_eq "AREA-NEW" "$(curl -s "$SEARCH_URL/products/_doc/1" | jq -r '._source.skus[-1].sku_code')" \
    "a new element goes after the smaller keys"
assert_eq "$(mysql_q 'SELECT name FROM shop.products WHERE id = 3')" \
    "$(curl -s "$SEARCH_URL/products/_doc/3" | jq -r ._source.name)" "the rest of the document is untouched"

# a product and its SKU in one transaction: rebuilt whole (and equal)
mysql_q "BEGIN; UPDATE shop.products SET name = 'whole rebuild' WHERE id = 7;
         UPDATE shop.skus SET color = 'with-root' WHERE product_id = 7; COMMIT"
marker
check_skus 7 "a root change with its SKUs in one transaction"
assert_eq "whole rebuild" "$(curl -s "$SEARCH_URL/products/_doc/7" | jq -r ._source.name)" "root field too"

# ---- row-image: brands
brand_sql() {
    mysql_q "SET SESSION time_zone = '+00:00'; SELECT JSON_OBJECT('id', id, 'name', name, 'country', country,
      'founded', founded + 0, 'website', website,
      'updated_at', CONCAT(DATE_FORMAT(updated_at, '%Y-%m-%dT%H:%i:%s.%f'), 'Z')) FROM shop.brands WHERE id = $1" | jq -S -c .
}
brand_doc() { curl -s "$SEARCH_URL/brands/_doc/$1" | jq -S -c '._source | del(.ss_version, .ss_hash, .ss_key_hash)'; }
mysql_q "INSERT INTO shop.brands (id, name, country, founded, website) VALUES (90001, 'Row Image Co', 'NZ', 1999, NULL)"
mysql_q "UPDATE shop.brands SET name = 'Brand renamed', website = 'https://example.org/ü' WHERE id = 1"
mysql_q "INSERT INTO shop.brands (id, name, country) VALUES (90002, 'Short lived', 'FR'); DELETE FROM shop.brands WHERE id = 90002"
mysql_q "UPDATE shop.brands SET id = 90003 WHERE id = 2"
mysql_q "BEGIN; UPDATE shop.brands SET country = 'AA' WHERE id = 3; UPDATE shop.brands SET country = 'BB' WHERE id = 3; COMMIT"
marker
search_refresh brands
for b in 90001 1 90003 3; do
    assert_eq "$(brand_sql "$b")" "$(brand_doc "$b")" "row-image: brand $b = its row"
done
assert_eq false "$(curl -s "$SEARCH_URL/brands/_doc/90002" | jq .found)" "row-image: deleted brand gone"
assert_eq false "$(curl -s "$SEARCH_URL/brands/_doc/2" | jq .found)" "row-image: the old id of a key change is gone"

# ---- live reload: a new index config while running
jq '.indices += [{alias: "warehouses", shards: 1, replicas: 0, tables: [{table: "shop.warehouses",
     mode: "row-image", columns: [{name: "id", key: true}, {name: "code"}, {name: "name"}, {name: "city"}]}]}]' \
    "$map" >"$TEST_TMP/map2.json"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/map2.json" --yes >"$TEST_TMP/import2.out" 2>&1 ||
    fail "import 2: $(cat "$TEST_TMP/import2.out")"
wait_until 20 "the daemon created the new index" bash -c "curl -sf '$SEARCH_URL/_alias/warehouses' >/dev/null" ||
    fail "the new index config was not picked up: $(tail -5 "$TEST_TMP/run.log")"
mysql_q "UPDATE shop.warehouses SET city = 'Reloaded City' WHERE id = $w6"
wait_until 20 "warehouse synced to the new index" bash -c \
    "curl -s '$SEARCH_URL/warehouses/_doc/$w6' | jq -e '._source.city == \"Reloaded City\"' >/dev/null"
assert_contains "$(cat "$TEST_TMP/run.log")" "mapping reloaded: 3 index config(s)" "reload logged"
check_skus 6 "the same change still reaches the product (area-update)"

# an edit that no longer validates is refused; sync goes on with the running mapping
mysql_q "UPDATE \`$meta\`.mapping_columns SET name = 'no_such_column' WHERE name = 'city' AND relation_id = 0
         AND table_id = (SELECT id FROM \`$meta\`.table_configs WHERE table_name = 'warehouses' AND index_id =
            (SELECT id FROM \`$meta\`.index_configs WHERE alias = 'warehouses'))"
wait_until 20 "the bad edit is reported" grep -q "the edited mapping is not applied" "$TEST_TMP/run.log"
assert_contains "$(grep 'the edited mapping is not applied' "$TEST_TMP/run.log")" "no_such_column" "the message names the column"
mysql_q "UPDATE shop.warehouses SET city = 'Still Synced' WHERE id = $w6"
wait_until 20 "sync goes on" bash -c \
    "curl -s '$SEARCH_URL/warehouses/_doc/$w6' | jq -e '._source.city == \"Still Synced\"' >/dev/null"
assert_eq 1 "$(grep -c 'the edited mapping is not applied' "$TEST_TMP/run.log")" "said once per edit"

# query connections survive being dropped (an idle timeout on the server
# side looks the same: every connection but ours killed) and a server restart
for id in $(mysql_q "SELECT id FROM information_schema.PROCESSLIST WHERE id <> CONNECTION_ID() AND user = 'root'"); do
    mysql_q "KILL $id" 2>/dev/null || true
done
mysql_q "UPDATE shop.products SET name = 'after the connections dropped' WHERE id = 9"
wait_until 30 "a change after the connections were dropped" bash -c \
    "curl -s '$SEARCH_URL/products/_doc/9' | jq -e '._source.name == \"after the connections dropped\"' >/dev/null" ||
    fail "not synced after dropped connections: $(tail -5 "$TEST_TMP/run.log")"
bash "$SEARCHSYNC_SRCDIR/tests/harness/servers.sh" restart mariadb >/dev/null 2>&1 || fail "mariadb restart"
mysql_q "UPDATE shop.products SET name = 'after a server restart' WHERE id = 10"
wait_until 60 "a change after a server restart" bash -c \
    "curl -s '$SEARCH_URL/products/_doc/10' | jq -e '._source.name == \"after a server restart\"' >/dev/null" ||
    fail "not synced after a server restart: $(tail -5 "$TEST_TMP/run.log")"
check_skus 1 "after the restart, element scripts still right"
# a connection lost in the middle of a transaction's reads: the daemon's read
# of categories (product 11's rebuild) waits on a table lock, and its
# connection is killed right there. The transaction is read again from the
# binlog once the source answers: not lost, and the daemon does not stop.
lock_table shop.categories
mysql_q "UPDATE shop.products SET name = 'read again' WHERE id = 11"
wait_until 20 "the daemon's read waits on the lock" has_output lock_waiter categories
mysql_q "KILL $(lock_waiter categories)"
unlock_table
wait_until 30 "the transaction read again" bash -c \
    "curl -s '$SEARCH_URL/products/_doc/11' | jq -e '._source.name == \"read again\"' >/dev/null" ||
    fail "not synced after a lost read: $(tail -5 "$TEST_TMP/run.log")"
grep -E "connection was lost in the middle|connection lost|reachable again" "$TEST_TMP/run.log" | tail -4
assert_true "the daemon still runs after losing a read" daemon_alive
assert_contains "$(grep 'reads failed midway' "$TEST_TMP/run.log")" "is read again from mysql-bin." "the log says the transaction is read again, and from where"
assert_eq "$(mysql_q "SELECT c.name FROM shop.products p JOIN shop.categories c ON c.id = p.category_id WHERE p.id = 11")" \
    "$(curl -s "$SEARCH_URL/products/_doc/11" | jq -r '._source.category.name')" "product 11's category as SQL has it"
check_skus 11 "after the lost read"

# `searchsync status` while it runs
marker
sleep 0.5
st=0
"$SEARCHSYNC_BIN" status --config "$TEST_TMP/c.ini" >"$TEST_TMP/status.out" 2>&1 || st=$?
assert_eq 0 "$st" "status: exit 0 (nothing waiting)"
assert_contains "$(cat "$TEST_TMP/status.out")" "engine: alias products -> products_v1," "status: where the alias points"
assert_contains "$(cat "$TEST_TMP/status.out")" "  checkpoint  mysql-bin." "status: the checkpoint"
assert_contains "$(cat "$TEST_TMP/status.out")" "warehouses  state available, version 1" "status: the reloaded index config"
# idle, with the metadata on the source: the checkpoint sits one save short
# of the binlog's end (each save is a binlog transaction), and status counts
# bytes that hold only saves as caught up
wait_until 20 "status: caught up while idle" bash -c \
    "'$SEARCHSYNC_BIN' status --config '$TEST_TMP/c.ini' | grep -q 'bytes behind: caught up'" ||
    fail "status while idle: $("$SEARCHSYNC_BIN" status --config "$TEST_TMP/c.ini" 2>&1 | sed -n 2,3p)"
# and an idle daemon stops writing them: with checkpoint_interval_ms = 100 it
# used to write ten a second, each read back as the next one's reason (now
# one per idle_checkpoint_interval_ms, default a minute)
sleep 1
p1="$(mysql_binlog_pos)"
sleep 2
assert_eq "$p1" "$(mysql_binlog_pos)" "idle: no checkpoint saves written for 2 s"

# an alias deleted behind the daemon's back: its writes fail as dead letters
# instead of auto-creating a concrete index named like the alias
curl -s -XDELETE "$SEARCH_URL/brands_v1" >/dev/null
mysql_q "UPDATE shop.brands SET name = 'No alias any more' WHERE id = 3"
wait_until 20 "the write became a dead letter" bash -c \
    "[ \"\$(mariadb --no-defaults -h $MYSQL_HOST -P $MYSQL_PORT -uroot -N -B -e \"SELECT COUNT(*) FROM \\\`$meta\\\`.dead_letters WHERE index_name = 'brands'\")\" -ge 1 ]"
assert_eq 404 "$(curl -s -o /dev/null -w '%{http_code}' "$SEARCH_URL/brands")" "no index named like the alias was created"
st=0
"$SEARCHSYNC_BIN" status --config "$TEST_TMP/c.ini" >"$TEST_TMP/status2.out" 2>&1 || st=$?
assert_eq 3 "$st" "status: exit 3 while dead letters wait"

daemon_stop
assert_eq 0 "$DAEMON_RC" "SIGTERM: clean exit"
# stopped: caught up after its last save; status itself writes nothing to
# the binlog (it used to re-create the metadata database each time); a change
# made meanwhile is reported as behind
p0="$(mysql_binlog_pos)"
"$SEARCHSYNC_BIN" status --config "$TEST_TMP/c.ini" >"$TEST_TMP/status3.out" 2>&1 || true
assert_eq "$p0" "$(mysql_binlog_pos)" "status adds nothing to the binlog"
assert_contains "$(sed -n 3p "$TEST_TMP/status3.out")" "caught up" "status after the stop: caught up"
mysql_q "UPDATE shop.products SET name = 'after the stop' WHERE id = 12"
"$SEARCHSYNC_BIN" status --config "$TEST_TMP/c.ini" >"$TEST_TMP/status4.out" 2>&1 || true
assert_true "status: a change made after the stop is not caught up ($(sed -n 3p "$TEST_TMP/status4.out"))" \
    bash -c "sed -n 3p '$TEST_TMP/status4.out' | grep 'bytes behind)\$'"
scripts="$(grep -o '[0-9]* element scripts' "$TEST_TMP/run.log" | awk '{print $1}')"
assert_true "element scripts were sent ($scripts)" test "${scripts:-0}" -ge 6
assert_eq "" "$(grep -i 'dead letter' "$TEST_TMP/run.log" | grep -v 'index=brands ' || true)" "no other dead letters"
pass
