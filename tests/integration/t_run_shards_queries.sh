#!/usr/bin/env bash
# tests/integration/t_run_shards_queries.sh — the statements a change set
# costs do not grow with the number of shards its rows fall on
# (sync/pipeline/docbuild_units.c), against real MariaDB + OpenSearch, the
# SQL oracle after each step.
#
# One mapping, two index configs over the same rows: `one` reads orders_all
# (nested items with a where, a shared brands object), `sharded` the same
# orders split over 16 tables orders_00..orders_15 (each with its own
# order_items_NN, by placeholders). With [source] group_transactions = 1
# every transaction is one change set. T transactions each change rows of
# every shard (orders and items); the same transactions on the one table.
# The server's Com_stmt_prepare counts the statements the builds ran (the
# document builder is the daemon's only user of prepared statements): the
# sharded index may cost no more than the one table, where one statement per
# shard and level costs 16 times as many. Then one shard's string column
# gets another collation, which a UNION refuses: the documents stay right.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
require_bin
seed="${SEARCHSYNC_SEED:-$RANDOM}"
log "seed $seed"
RANDOM=$seed
P="$(unique_name shq)"
meta="$(unique_name meta)"
S=16
PER=40
T=12
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$P\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${P}_*?expand_wildcards=all' >/dev/null"
mysql_q "CREATE DATABASE \`$P\`"
pair_sql() { # ORDERS ITEMS FROM TO: orders FROM..TO, 2 items each (item ids 2*FROM-1..2*TO)
    echo "CREATE TABLE $1 (id INT PRIMARY KEY, brand_id INT, total DECIMAL(10,2),
        note VARCHAR(40) CHARACTER SET utf8mb4, at DATETIME(3));
      CREATE TABLE $2 (id INT PRIMARY KEY, order_id INT, qty INT, KEY (order_id));
      INSERT INTO $1 SELECT seq, seq % 5 + 1, seq * 1.25, CONCAT('ordre n°', seq),
        TIMESTAMP('2024-01-01 00:00:00.125') + INTERVAL seq MINUTE FROM seq_$3_to_$4;
      INSERT INTO $2 SELECT seq, (seq + 1) DIV 2, seq % 7 FROM seq_$((2 * $3 - 1))_to_$((2 * $4));"
}
mysql_q "CREATE TABLE brands (id INT PRIMARY KEY, name VARCHAR(40));
  INSERT INTO brands SELECT seq, CONCAT('brand ', seq) FROM seq_1_to_5;
  $(pair_sql orders_all items_all 1 $((S * PER)))" "$P"
for ((s = 0; s < S; s++)); do
    n=$(printf '%02d' "$s")
    mysql_q "$(pair_sql "orders_$n" "order_items_$n" $((s * PER + 1)) $(((s + 1) * PER)))" "$P"
done
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = shq
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $((7600 + $$ % 80))
start = now
group_transactions = 1
[metadata]
database = $meta
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 20
checkpoint_interval_ms = 200
INI
jq -n --arg p "$P" '
  def cfg($alias; $orders; $items): {alias: $alias, replicas: 0, tables: [{table: ($p + "." + $orders),
    columns: [{name: "id", key: true}, "brand_id", "total", "note", "at"],
    relations: [
      {column: "id", table: ($p + "." + $items), join_column: "order_id", nested: true,
       extend_name: "items", where: "qty > 0", columns: [{name: "id", key: true}, "qty"]},
      {column: "brand_id", table: ($p + ".brands"), join_column: "id", extend_name: "brand",
       columns: ["id", "name"]}]}]};
  {version: 1, indices: [cfg($p + "_one"; "orders_all"; "items_all"),
                         cfg($p + "_sharded"; "orders_{n:[0-9]+}"; "order_items_{n}")]}' >"$TEST_TMP/map.json"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/map.json" --yes \
    >"$TEST_TMP/import.out" 2>&1 || fail "import: $(cat "$TEST_TMP/import.out")"

# the oracle: the documents of one index config, computed by MariaDB
doc_sql() { # ORDERS ITEMS ID-PREFIX SHARD-FIELD
    echo "SELECT JSON_OBJECT('id', CONCAT('$3', o.id), 'routing', NULL, 'doc', JSON_OBJECT(
  'id', o.id, 'brand_id', o.brand_id, 'total', CAST(o.total AS CHAR), 'note', o.note,
  'at', $(_oracle_dt o.at 3) $4,
  'items', COALESCE((SELECT JSON_ARRAYAGG(JSON_OBJECT('id', i.id, 'qty', i.qty) ORDER BY i.id)
                     FROM $2 i WHERE i.order_id = o.id AND i.qty > 0), JSON_ARRAY()),
  'brand', (SELECT JSON_OBJECT('id', b.id, 'name', b.name) FROM brands b WHERE b.id = o.brand_id)))
  FROM $1 o"
}
oracle() { # one|sharded
    local s n
    if [ "$1" = one ]; then
        oracle_query "$P" "$(doc_sql orders_all items_all '' '')" >"$TEST_TMP/oracle.ndjson"
        return
    fi
    : >"$TEST_TMP/oracle.ndjson"
    for ((s = 0; s < S; s++)); do
        n=$(printf '%02d' "$s")
        oracle_query "$P" "$(doc_sql "orders_$n" "order_items_$n" "$P.orders_$n:" ", 'ss_shard', '$P.orders_$n'")" \
            >>"$TEST_TMP/oracle.ndjson" || return 1
    done
}
same_as_sql() { # one|sharded
    oracle "$1" 2>"$TEST_TMP/cmp.out" || return 1
    search_refresh "${P}_$1" >/dev/null
    engine_dump "${P}_$1" "$TEST_TMP/engine.ndjson" 2>"$TEST_TMP/cmp.out" &&
        python3 "$SEARCHSYNC_SRCDIR/tests/integration/compare_docs.py" --numbers value \
            --ignore-field ss_version --ignore-field ss_hash --ignore-field ss_key_hash \
            --label "${P}_$1" --show 5 "$TEST_TMP/engine.ndjson" "$TEST_TMP/oracle.ndjson" >"$TEST_TMP/cmp.out" 2>&1
}
check_oracle() { # one|sharded LABEL
    wait_checkpoint "$meta" shq 120
    WAIT_UNTIL_DIAG='tail -c 600 "$TEST_TMP/cmp.out"; head -c 600 "$TEST_TMP/oracle.ndjson"' \
        wait_until 60 "$2: every document of ${P}_$1 equals SQL" same_as_sql "$1"
    _LIB_ASSERTS=$((_LIB_ASSERTS + 1))
    log "$2: $(tail -1 "$TEST_TMP/cmp.out")"
}
prepares() { mysql_q "SHOW GLOBAL STATUS LIKE 'Com_stmt_prepare'" | cut -f2; }

daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 60 lines)"; tail -60 "$TEST_TMP/run.log"; }'
daemon_wait_log "${P}_one: live changes no longer written to ${P}_one_v1" 180
daemon_wait_log "${P}_sharded: live changes no longer written to ${P}_sharded_v1" 180
check_oracle one "first build"
check_oracle sharded "first build of $S shards"

# T transactions, each changing PER/10 orders and as many items of every
# shard (random rows, the same ones in both families): one change set each
: >"$TEST_TMP/rows"
for ((t = 0; t < T; t++)); do
    for ((s = 0; s < S; s++)); do
        for ((k = 0; k < PER / 10; k++)); do
            echo "$t $s $((s * PER + RANDOM % PER + 1)) $((2 * s * PER + RANDOM % (2 * PER) + 1)) $((RANDOM % 5))"
        done
    done
done >"$TEST_TMP/rows"
changes() { # one|sharded: the T transactions on that family's tables
    local t s id item qty cur=-1 o i
    while read -r t s id item qty; do
        if [ "$t" != "$cur" ]; then
            [ "$cur" = -1 ] || echo "COMMIT;"
            echo "START TRANSACTION;"
            cur=$t
        fi
        o=orders_all i=items_all
        [ "$1" = sharded ] && o=$(printf 'orders_%02d' "$s") i=$(printf 'order_items_%02d' "$s")
        echo "UPDATE $o SET note = 'change $t.$id', total = total + 1 WHERE id = $id;"
        echo "UPDATE $i SET qty = $qty WHERE id = $item;"
    done <"$TEST_TMP/rows"
    echo "COMMIT;"
}
declare -A used
for x in sharded one; do
    wait_checkpoint "$meta" shq 120
    before=$(prepares)
    changes "$x" >"$TEST_TMP/changes.sql"
    mysql_q "$(cat "$TEST_TMP/changes.sql")" "$P"
    check_oracle "$x" "$T transactions over every shard"
    used[$x]=$(($(prepares) - before))
    log "$x: $T transactions built with ${used[$x]} statement(s)"
done
assert_true "the builds of the one table ran statements (${used[one]})" test "${used[one]}" -gt 0
assert_true "the sharded index's builds cost no more statements than the one table's (${used[sharded]} vs ${used[one]}; one a shard and level: $((S * used[one])))" \
    test "${used[sharded]}" -le $((used[one] + used[one] / 4))

# a shard whose string column has another collation (the same type in the
# mapping): the server refuses the UNION ("Illegal mix of collations"), the
# shards are read one statement each, the documents are the same
mysql_q "ALTER TABLE orders_15 MODIFY note VARCHAR(40) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci" "$P"
wait_checkpoint "$meta" shq 120
before=$(prepares)
changes sharded >"$TEST_TMP/changes.sql"
mysql_q "$(cat "$TEST_TMP/changes.sql")" "$P"
check_oracle sharded "a shard of another collation"
log "sharded, a shard of another collation: $T transactions built with $(($(prepares) - before)) statement(s)"
daemon_stop
pass
