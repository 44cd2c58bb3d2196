#!/usr/bin/env bash
# tests/integration/t_run_shards.sh — one index over a family of shard tables
# (table patterns, docs/mapping.md "Shard tables"), against real MariaDB +
# OpenSearch, the SQL oracle after each step.
#
# 16 shards: orders_01..orders_08 in each of two databases P_1 and P_2, each
# with its own order_items_NN (nested `items`, paired by the placeholders) and
# a shared brands table (object `brand`, in P_common). Keys collide across
# shards (every orders table has ids 1..N): ids carry the shard.
#
#   first sync   the daemon's first build reads every shard
#   writer       random changes on random shards (orders, items moved
#                between orders, brands renamed: every shard's documents
#                that embed it, in the delayed run: brands are
#                delay-effect), seeded by SEARCHSYNC_SEED
#   new shard    CREATE TABLE orders_09 + order_items_09 at run time, rows
#                written: it joins without a reindex
#   shard w/rows a filled pair of tables renamed into the family under the
#                writer: its rows read into the live version, no reindex
#   pt-osc       a swap of one shard's table under the writer: no stop, no
#                reindex
#   dropped      DROP TABLE of a shard: its documents go, no reindex
#   reindex      a new version built from every shard
#   status, ids  resync of a document by its shard-qualified id
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
require_bin
seed="${SEARCHSYNC_SEED:-$RANDOM}"
log "seed $seed"
RANDOM=$seed
P="$(unique_name shp)"
meta="$(unique_name meta)"
alias="$(unique_name shp)"
ROWS=60
dbs=("${P}_1" "${P}_2")
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`${P}_1\`; DROP DATABASE IF EXISTS \`${P}_2\`; DROP DATABASE IF EXISTS \`${P}_common\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
mysql_q "CREATE DATABASE \`${P}_common\`"
mysql_q "CREATE TABLE brands (id INT PRIMARY KEY, name VARCHAR(40));
  INSERT INTO brands SELECT seq, CONCAT('brand ', seq) FROM seq_1_to_10" "${P}_common"
make_shard() { # DB N: the pair of tables, ROWS orders, 2 items each
    mysql_q "CREATE TABLE orders_$2 (id INT PRIMARY KEY, brand_id INT, total DECIMAL(10,2), note VARCHAR(40));
      CREATE TABLE order_items_$2 (id INT PRIMARY KEY, order_id INT, qty INT, KEY (order_id));
      INSERT INTO orders_$2 SELECT seq, seq % 10 + 1, seq * 1.25, CONCAT('$1 $2 #', seq) FROM seq_1_to_$ROWS;
      INSERT INTO order_items_$2 SELECT seq, (seq - 1) % $ROWS + 1, seq FROM seq_1_to_$((2 * ROWS));" "$1"
}
shards=()
for d in "${dbs[@]}"; do
    mysql_q "CREATE DATABASE \`$d\`"
    for n in 01 02 03 04 05 06 07 08; do make_shard "$d" "$n"; shards+=("$d.$n"); done
done
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = shp
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $((7700 + $$ % 80))
start = now
schema_settle_ms = 10000
[metadata]
database = $meta
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 20
checkpoint_interval_ms = 200
INI
jq -n --arg p "$P" --arg a "$alias" '{version: 1, indices: [{alias: $a, shards: 2, replicas: 0,
  tables: [{table: ($p + "_{s:[0-9]+}.orders_{n:[0-9]+}"),
    columns: [{name: "id", key: true}, {name: "brand_id", extend_name: "brand"}, "total", "note"],
    relations: [
      {column: "id", table: ($p + "_{s}.order_items_{n}"), join_column: "order_id", nested: true,
       extend_name: "items", columns: [{name: "id", key: true}, "qty"]},
      {column: "brand_id", table: ($p + "_common.brands"), join_column: "id",
       columns: ["id", "name"]}]},
    {table: ($p + "_common.brands"), delay_effect: true}]}]}' >"$TEST_TMP/map.json"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/map.json" --yes \
    >"$TEST_TMP/import.out" 2>&1 || fail "import: $(cat "$TEST_TMP/import.out")"
assert_contains "$(cat "$TEST_TMP/import.out")" "_{s:[0-9]+}.orders_{n:[0-9]+}" "the plan shows the pattern"
# mapping generate, asked for one shard, proposes the family
"$SEARCHSYNC_BIN" mapping generate --config "$TEST_TMP/c.ini" "${dbs[0]}.orders_03" \
    >"$TEST_TMP/gen.json" 2>"$TEST_TMP/gen.err" || fail "mapping generate: $(cat "$TEST_TMP/gen.err")"
assert_eq "${P}_{s:[0-9]+}.orders_{n:[0-9]+}" "$(jq -r '.indices[0].tables[0].table' "$TEST_TMP/gen.json")" \
    "mapping generate proposes the shard family's pattern"
assert_contains "$(cat "$TEST_TMP/gen.err")" "is one shard of 16 table(s)" "and says why"

# the oracle: every shard's documents, computed by MariaDB (a query a shard)
oracle() {
    local d n
    : >"$TEST_TMP/oracle.ndjson"
    for d in $(mysql_q "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME REGEXP '^${P}_[0-9]+\$' ORDER BY 1"); do
        for n in $(mysql_q "SELECT SUBSTRING(TABLE_NAME, 8) FROM information_schema.TABLES WHERE TABLE_SCHEMA = '$d' AND TABLE_NAME REGEXP '^orders_[0-9]+\$' ORDER BY 1"); do
            oracle_query "$d" "SET SESSION group_concat_max_len = 16777216;
SELECT JSON_OBJECT('id', CONCAT('$d.orders_$n:', o.id), 'routing', NULL, 'doc', JSON_OBJECT(
  'id', o.id, 'brand_id', o.brand_id, 'total', CAST(o.total AS CHAR), 'note', o.note, 'ss_shard', '$d.orders_$n',
  'items', COALESCE((SELECT JSON_ARRAYAGG(JSON_OBJECT('id', i.id, 'qty', i.qty)) FROM order_items_$n i WHERE i.order_id = o.id), JSON_ARRAY()),
  'brand', (SELECT JSON_OBJECT('id', b.id, 'name', b.name) FROM \`${P}_common\`.brands b WHERE b.id = o.brand_id)))
  FROM orders_$n o" >>"$TEST_TMP/oracle.ndjson" || return 1
        done
    done
}
same_as_sql() {
    oracle 2>"$TEST_TMP/cmp.out" || return 1
    search_refresh "$alias" >/dev/null
    engine_dump "$alias" "$TEST_TMP/engine.ndjson" 2>"$TEST_TMP/cmp.out" &&
        python3 "$SEARCHSYNC_SRCDIR/tests/integration/compare_docs.py" --numbers value \
            --ignore-field ss_version --ignore-field ss_hash --ignore-field ss_key_hash \
            --label "$alias" --show 5 "$TEST_TMP/engine.ndjson" "$TEST_TMP/oracle.ndjson" >"$TEST_TMP/cmp.out" 2>&1
}
check_oracle() { # LABEL
    wait_checkpoint "$meta" shp 60
    # brands are delay-effect: their renames reach every shard's documents
    # in the delayed run
    "$SEARCHSYNC_BIN" delayed-run --config "$TEST_TMP/c.ini" >"$TEST_TMP/delayed.out" 2>&1 ||
        fail "$1: delayed-run: $(tail -5 "$TEST_TMP/delayed.out")"
    WAIT_UNTIL_DIAG='tail -c 600 "$TEST_TMP/cmp.out"; head -c 600 "$TEST_TMP/oracle.ndjson"' wait_until 60 "$1: every document equals SQL" same_as_sql
    _LIB_ASSERTS=$((_LIB_ASSERTS + 1))
    log "$1: $(tail -1 "$TEST_TMP/cmp.out")"
}
version() { mysql_q "SELECT current_version FROM \`$meta\`.index_configs WHERE alias = '$alias'"; }
no_stop() {
    assert_eq "" "$(mysql_q "SELECT COALESCE(stopped_reason, '') FROM \`$meta\`.index_configs WHERE alias = '$alias'")" "$1: the index is not stopped"
}

# the writer: random changes on random shards until $TEST_TMP/stop exists
writer() {
    local i=0 d n sql
    while [ ! -e "$TEST_TMP/stop" ]; do
        i=$((i + 1))
        local s=${shards[$((RANDOM % ${#shards[@]}))]}
        d=${s%.*} n=${s##*.}
        case $((RANDOM % 8)) in
        0) sql="INSERT INTO \`$d\`.orders_$n VALUES ($((1000 + i)), $((RANDOM % 10 + 1)), $RANDOM / 100, 'new $i');
               INSERT INTO \`$d\`.order_items_$n VALUES ($((1000 + i)), $((1000 + i)), $RANDOM)" ;;
        1|2) sql="UPDATE \`$d\`.orders_$n SET note = 'up $i', total = total + 1 WHERE id = $((RANDOM % ROWS + 1))" ;;
        3) sql="DELETE FROM \`$d\`.orders_$n WHERE id = $((RANDOM % ROWS + 1))" ;;
        4) sql="UPDATE \`$d\`.order_items_$n SET qty = qty + 1 WHERE id = $((RANDOM % (2 * ROWS) + 1))" ;;
        5) sql="UPDATE \`$d\`.order_items_$n SET order_id = $((RANDOM % ROWS + 1)) WHERE id = $((RANDOM % (2 * ROWS) + 1))" ;;
        6) sql="DELETE FROM \`$d\`.order_items_$n WHERE id = $((RANDOM % (2 * ROWS) + 1))" ;;
        7) sql="UPDATE \`${P}_common\`.brands SET name = 'brand $RANDOM' WHERE id = $((RANDOM % 10 + 1))" ;;
        esac
        mysql_q "START TRANSACTION; $sql; COMMIT" 2>>"$TEST_TMP/writer.err" || true
        sleep 0.02
    done
    echo "$i" >"$TEST_TMP/writes"
}
writer_for() { # SECONDS
    rm -f "$TEST_TMP/stop"
    writer &
    local wpid=$!
    sleep "$1"
    touch "$TEST_TMP/stop"
    wait "$wpid"
}

daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 60 lines)"; tail -60 "$TEST_TMP/run.log"; }'
daemon_wait_log "$alias: version 1 queued in " 60
daemon_wait_log "$alias: live changes no longer written to ${alias}_v1" 120
assert_contains "$(grep "$alias: version 1 queued" "$TEST_TMP/run.log")" "in each of 16 shard(s)" "the first build reads every shard"
check_oracle "first sync of 16 shards"
assert_eq "$((16 * ROWS))" "$(search_count "$alias")" "one document per order of every shard (keys collide across shards)"

writer_for 15
check_oracle "after the writer on random shards ($(cat "$TEST_TMP/writes") transactions)"

# ---- a new shard at run time: no reindex. Its orders table first, read and
# judged by the daemon (the shard left out: its items table is missing),
# then the items table, whose CREATE completes the shard
mysql_q "CREATE TABLE orders_09 (id INT PRIMARY KEY, brand_id INT, total DECIMAL(10,2), note VARCHAR(40))" "${dbs[0]}"
mysql_q "UPDATE orders_01 SET note = 'after orders_09' WHERE id = 1" "${dbs[0]}"
wait_checkpoint "$meta" shp 60
if grep -q "shard ${dbs[0]}.orders_09 joins" "$TEST_TMP/run.log"; then
    fail "shard ${dbs[0]}.orders_09 joined before its items table existed"
fi
mysql_q "CREATE TABLE order_items_09 (id INT PRIMARY KEY, order_id INT, qty INT, KEY (order_id))" "${dbs[0]}"
daemon_wait_log "index $alias: shard ${dbs[0]}.orders_09 joins" 30
mysql_q "INSERT INTO orders_09 SELECT seq, seq % 10 + 1, seq, CONCAT('nine ', seq) FROM seq_1_to_$ROWS;
  INSERT INTO order_items_09 SELECT seq, (seq - 1) % $ROWS + 1, seq FROM seq_1_to_$((2 * ROWS))" "${dbs[0]}"
shards+=("${dbs[0]}.09")
writer_for 5
check_oracle "a shard created at run time"
assert_eq 1 "$(version)" "the new shard joined without a reindex"

# ---- a shard that appears with rows (renamed into the family): read into
# the live version while its changes are written, no reindex
mysql_q "CREATE TABLE staging_orders (id INT PRIMARY KEY, brand_id INT, total DECIMAL(10,2), note VARCHAR(40));
  CREATE TABLE staging_items (id INT PRIMARY KEY, order_id INT, qty INT, KEY (order_id));
  INSERT INTO staging_orders SELECT seq, seq % 10 + 1, seq * 2, CONCAT('ten ', seq) FROM seq_1_to_$((3 * ROWS));
  INSERT INTO staging_items SELECT seq, (seq - 1) % $((3 * ROWS)) + 1, seq FROM seq_1_to_$((6 * ROWS))" "${dbs[1]}"
rm -f "$TEST_TMP/stop"
writer &
wpid=$!
mysql_q "RENAME TABLE staging_items TO order_items_10, staging_orders TO orders_10" "${dbs[1]}"
shards+=("${dbs[1]}.10")
daemon_wait_log "index $alias: shard ${dbs[1]}.orders_10 joined: " 60
sleep 2
touch "$TEST_TMP/stop"
wait "$wpid"
check_oracle "a shard renamed into the family with its rows"
assert_eq 1 "$(version)" "the shard with rows joined without a reindex"
assert_contains "$(mysql_q "SELECT shards_read FROM \`$meta\`.index_configs WHERE alias = '$alias'")" \
    "${dbs[1]}.orders_10" "the live version records the shard as read"
"$SEARCHSYNC_BIN" status --config "$TEST_TMP/c.ini" --json >"$TEST_TMP/st.json" 2>/dev/null || true
assert_eq "${P}_{s:[0-9]+}.orders_{n:[0-9]+} 18" \
    "$(jq -r --arg a "$alias" '.indices[] | select(.alias == $a) | "\(.shards.pattern) \(.shards.read | length)"' "$TEST_TMP/st.json")" \
    "status shows the pattern and the 18 shards read"
assert_contains "$("$SEARCHSYNC_BIN" status --config "$TEST_TMP/c.ini" 2>/dev/null)" "shards of ${P}_{s:[0-9]+}.orders_{n:[0-9]+}: 18 read" "status text too"

# ---- pt-online-schema-change on one shard's table, under the writer
rm -f "$TEST_TMP/stop"
writer &
wpid=$!
pt-online-schema-change --execute --alter "ADD COLUMN extra INT, ADD INDEX (note)" \
    "D=${dbs[1]},t=orders_03,h=127.0.0.1,P=$MYSQL_PORT,u=root" --recursion-method=none \
    --no-check-replication-filters --no-version-check --charset=utf8mb4 --set-vars=lock_wait_timeout=5 \
    --tries=swap_tables:10:0.5,drop_triggers:10:0.5 >"$TEST_TMP/ptosc.log" 2>&1 ||
    fail "pt-online-schema-change: $(tail -5 "$TEST_TMP/ptosc.log")"
sleep 2
touch "$TEST_TMP/stop"
wait "$wpid"
check_oracle "a pt-osc swap on one shard"
no_stop "a pt-osc swap on one shard"
assert_eq 1 "$(version)" "the swap needed no reindex"

# ---- a shard dropped: its documents go
mysql_q "DROP TABLE orders_08; DROP TABLE order_items_08" "${dbs[1]}"
daemon_wait_log "index $alias: shard ${dbs[1]}.orders_08 is gone: its " 30
shards=("${shards[@]/${dbs[1]}.08}")
shards=($(printf '%s\n' "${shards[@]}" | grep .))
check_oracle "a shard dropped"
no_stop "a shard dropped"
assert_eq 1 "$(version)" "the drop needed no reindex"

# ---- resync by a shard-qualified id
mysql_q "UPDATE orders_02 SET note = 'behind its back' WHERE id = 7" "${dbs[1]}" # (read live too)
wait_checkpoint "$meta" shp 30
"$SEARCHSYNC_BIN" resync --config "$TEST_TMP/c.ini" "$alias" --ids "${dbs[1]}.orders_02:7" >"$TEST_TMP/resync.out" 2>&1 ||
    fail "resync by a shard's id: $(cat "$TEST_TMP/resync.out")"
st=0; "$SEARCHSYNC_BIN" resync --config "$TEST_TMP/c.ini" "$alias" --ids 7 >"$TEST_TMP/resync2.out" 2>&1 || st=$?
assert_eq 2 "$st" "resync of an id without its shard: a usage error"
assert_contains "$(cat "$TEST_TMP/resync2.out")" "id template" "it says how ids are made"

# ---- check and repair across shards: planted differences in two shards
wait_checkpoint "$meta" shp 30
v="${alias}_v$(version)"
# rows the writer left (it deletes some at random)
gone_id="${dbs[0]}.orders_03:$(mysql_q "SELECT MIN(id) FROM orders_03" "${dbs[0]}")"
edit_id="${dbs[1]}.orders_05:$(mysql_q "SELECT MIN(id) FROM orders_05" "${dbs[1]}")"
extra_id="${dbs[1]}.orders_05:777777"
search_delete "/$v/_doc/$gone_id" >/dev/null
search_post "/$v/_update/$edit_id" '{"doc":{"note":"tampered"}}' >/dev/null
search_put "/$v/_doc/$extra_id" '{"id":777777,"note":"not in MySQL","ss_shard":"'"${dbs[1]}"'.orders_05"}' >/dev/null
search_refresh "$alias" >/dev/null
st=0; "$SEARCHSYNC_BIN" check --config "$TEST_TMP/c.ini" --json --settle 20 "$alias" >"$TEST_TMP/check.json" 2>"$TEST_TMP/check.err" || st=$?
assert_eq 3 "$st" "check finds the planted differences and leaves them (exit 3; $(tail -2 "$TEST_TMP/check.err"))"
assert_eq "$gone_id" "$(jq -r '.missing[]' "$TEST_TMP/check.json")" "the deleted document of one shard is missing"
assert_eq "$extra_id" "$(jq -r '.extra[]' "$TEST_TMP/check.json")" "the added document is extra"
assert_eq "$edit_id" "$(jq -r '.different[].id' "$TEST_TMP/check.json")" "the edited document of another shard differs"
st=0; "$SEARCHSYNC_BIN" check --config "$TEST_TMP/c.ini" --json --settle 20 --repair "$alias" >"$TEST_TMP/repair.json" 2>&1 || st=$?
assert_eq 0 "$st" "check --repair repairs them"
check_oracle "after check --repair"
st=0; "$SEARCHSYNC_BIN" check --config "$TEST_TMP/c.ini" --json --settle 20 "$alias" >"$TEST_TMP/check2.json" 2>&1 || st=$?
assert_eq 0 "$st" "a second check finds nothing ($(jq -c '{missing,extra,different}' "$TEST_TMP/check2.json" 2>/dev/null))"

# ---- a reindex reads every shard again
writer_for 3
"$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/c.ini" "$alias" >"$TEST_TMP/reindex.out" 2>&1 ||
    fail "reindex: $(cat "$TEST_TMP/reindex.out")"
check_oracle "after a reindex of every shard"
assert_eq 2 "$(version)" "version 2 is live"
daemon_alive || fail "the daemon exited"
daemon_stop
assert_eq 0 "$DAEMON_RC" "a clean stop"
pass
