#!/usr/bin/env bash
# tests/bench/bench_shards.sh — an index over shard tables beside one table of
# the same total size, in the same run (docs/mapping.md, "Shard tables").
#
# Two index configs in one mapping, one daemon: `one` reads orders_all (N
# orders, 2 items each, nested), `sharded` reads the same rows split over
# BENCH_SHARDS tables orders_00.. (placeholders, its own order_items_NN each).
# Then BENCH_ROUNDS rounds (default 3), the order swapped every round, of:
#   - build: `searchsync reindex` of each, documents/s from reindex_runs
#   - follow: with the daemon stopped, BENCH_UPDATES single-row UPDATE
#     transactions on the index's tables (spread over the shards for the
#     sharded one); the daemon started again; documents/s from its start to
#     the checkpoint passing the last of them
# and, once, a shard that joins with its rows: a filled pair of tables
# renamed into the family, timed from the RENAME to the daemon's "joined",
# at BENCH_JOIN_SIZES rows (default "10000 100000"): its documents/s,
# against the index's size (the join reads the shard, not the index).
# Target: the sharded rates within 10% of the one-table rates (medians).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
SEARCHSYNC_SRCDIR="${SEARCHSYNC_SRCDIR:-$(cd "$here/../.." && pwd)}"
. "$SEARCHSYNC_HARNESS_DIR/env.sh"
BIN="${SEARCHSYNC_BIN:-$PWD/searchsync}"
[ -x "$BIN" ] || BIN="$SEARCHSYNC_SRCDIR/searchsync"
N="${BENCH_ROWS:-200000}"
S="${BENCH_SHARDS:-16}"
ROUNDS="${BENCH_ROUNDS:-3}"
UPDATES="${BENCH_UPDATES:-20000}"
JOINS="${BENCH_JOIN_SIZES:-10000 100000}"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/bench-shards.XXXXXX")"
P="bshard$$"
meta="${P}_meta"
DAEMON=""
cleanup() {
    [ -n "$DAEMON" ] && kill -9 "$DAEMON" 2>/dev/null
    curl -s -XDELETE "$SEARCH_URL/${P}_*?expand_wildcards=all" >/dev/null
    q -e "DROP DATABASE IF EXISTS \`$P\`; DROP DATABASE IF EXISTS \`$meta\`" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
q() { mariadb --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -u root -N -B "$@"; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", b - a}'; }

per=$((N / S))
echo "bench_shards: $N orders (2 items each) in one table, and in $S shard tables of $per; $ROUNDS rounds"
q -e "CREATE DATABASE \`$P\`"
table_sql() { # NAME ITEMS FROM TO
    echo "CREATE TABLE $1 (id INT PRIMARY KEY, brand_id INT, total DECIMAL(10,2), note VARCHAR(40));
      CREATE TABLE $2 (id INT PRIMARY KEY, order_id INT, qty INT, KEY (order_id));
      INSERT INTO $1 SELECT seq, seq % 100, seq * 1.5, CONCAT('order ', seq) FROM seq_$3_to_$4;
      INSERT INTO $2 SELECT seq, (seq + 1) DIV 2, seq FROM seq_$((2 * $3 - 1))_to_$((2 * $4));"
}
q "$P" -e "$(table_sql orders_all items_all 1 "$N")"
for ((s = 0; s < S; s++)); do
    n=$(printf '%02d' "$s")
    q "$P" -e "$(table_sql "orders_$n" "order_items_$n" $((s * per + 1)) $(((s + 1) * per)))"
done
cat >"$tmp/c.ini" <<INI
[source]
name = bshard
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = 7990
start = now
[metadata]
database = $meta
[search]
urls = $SEARCH_URL
INI
jq -n --arg p "$P" '{version: 1, indices: [
  {alias: ($p + "_one"), replicas: 0, tables: [{table: ($p + ".orders_all"),
    columns: [{name: "id", key: true}, "brand_id", "total", "note"],
    relations: [{column: "id", table: ($p + ".items_all"), join_column: "order_id", nested: true,
                 extend_name: "items", columns: [{name: "id", key: true}, "qty"]}]}]},
  {alias: ($p + "_sharded"), replicas: 0, unique_keys: true, tables: [{table: ($p + ".orders_{n:[0-9]+}"),
    columns: [{name: "id", key: true}, "brand_id", "total", "note"],
    relations: [{column: "id", table: ($p + ".order_items_{n}"), join_column: "order_id", nested: true,
                 extend_name: "items", columns: [{name: "id", key: true}, "qty"]}]}]}]}' >"$tmp/map.json"
"$BIN" mapping import --config "$tmp/c.ini" "$tmp/map.json" --yes >"$tmp/import.out" 2>&1 ||
    { cat "$tmp/import.out"; exit 1; }
start_daemon() {
    "$BIN" run --config "$tmp/c.ini" >>"$tmp/run.log" 2>&1 &
    DAEMON=$!
}
stop_daemon() { kill "$DAEMON"; wait "$DAEMON" 2>/dev/null || true; DAEMON=""; }
passed() { # FILE:POS: the source's checkpoint is at or past it
    local c
    c="$("$BIN" status --config "$tmp/c.ini" --json 2>/dev/null | jq -r '.source.checkpoint // empty')"
    [ -n "$c" ] || return 1
    awk -v c="$c" -v t="$1" 'BEGIN {split(c, a, ":"); split(t, b, ":");
        exit !(a[1] > b[1] || (a[1] == b[1] && a[2] + 0 >= b[2] + 0))}'
}
wait_for() { # SECONDS CMD...
    local s=$1 i
    shift
    for ((i = 0; i < s * 10; i++)); do "$@" && return 0; sleep 0.1; done
    echo "bench_shards: timed out: $*"; tail -20 "$tmp/run.log"; exit 1
}
live() { # ALIAS VERSION
    [ "$(q "$meta" -e "SELECT current_version FROM index_configs WHERE alias = '$1'")" = "$2" ]
}
start_daemon
wait_for 600 live "${P}_one" 1
wait_for 600 live "${P}_sharded" 1
declare -A ver=([one]=1 [sharded]=1)
build_once() { # one|sharded: sets rate
    local a="${P}_$1" docs s
    "$BIN" reindex --config "$tmp/c.ini" "$a" >"$tmp/reindex.out" 2>&1 || { cat "$tmp/reindex.out"; exit 1; }
    ver[$1]=$((ver[$1] + 1))
    read -r docs s <<<"$(q "$meta" -e "SELECT r.docs_written, TIMESTAMPDIFF(MICROSECOND, r.started_at, r.finished_at) / 1e6
        FROM reindex_runs r WHERE r.alias = '$a' AND r.version = ${ver[$1]}")"
    rate=$(awk -v d="$docs" -v s="$s" 'BEGIN {printf "%.0f", d / s}')
    echo "    build $1 (v${ver[$1]}): $docs documents in $s s = $rate docs/s"
}
follow_once() { # one|sharded: sets rate
    local t0 t1 i
    stop_daemon
    : >"$tmp/updates.sql"
    for ((i = 0; i < UPDATES; i++)); do
        local id=$((RANDOM * 32768 % N + RANDOM % N))
        id=$((id % N + 1))
        if [ "$1" = one ]; then
            echo "UPDATE orders_all SET note = 'u$i' WHERE id = $id;"
        else
            printf 'UPDATE orders_%02d SET note = %su%d%s WHERE id = %d;\n' $(((id - 1) / per)) "'" "$i" "'" "$id"
        fi
    done >"$tmp/updates.sql"
    q "$P" <"$tmp/updates.sql"
    local end
    end="$(q -e "SHOW MASTER STATUS" | awk '{print $1 ":" $2}')"
    t0=$(now)
    start_daemon
    wait_for 900 passed "$end"
    t1=$(now)
    rate=$(awk -v n="$UPDATES" -v a="$t0" -v b="$t1" 'BEGIN {printf "%.0f", n / (b - a)}')
    echo "    follow $1: $UPDATES single-row transactions caught up in $(secs "$t0" "$t1") s from the start = $rate docs/s"
}
median() { sort -n | awk '{v[NR] = $1} END {m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.0f (range %.0f-%.0f)", m, v[1], v[NR]}'; }
: >"$tmp/b_one"; : >"$tmp/b_sharded"; : >"$tmp/f_one"; : >"$tmp/f_sharded"
for ((r = 1; r <= ROUNDS; r++)); do
    echo "  round $r"
    order=(one sharded)
    [ $((r % 2)) = 0 ] && order=(sharded one)
    for x in "${order[@]}"; do build_once "$x"; echo "$rate" >>"$tmp/b_$x"; done
    for x in "${order[@]}"; do follow_once "$x"; echo "$rate" >>"$tmp/f_$x"; done
done
bo=$(median <"$tmp/b_one"); bs=$(median <"$tmp/b_sharded")
fo=$(median <"$tmp/f_one"); fs=$(median <"$tmp/f_sharded")
echo "  build, docs/s (median of $ROUNDS): one table $bo, $S shards $bs: $(awk -v a="${bs%% *}" -v b="${bo%% *}" 'BEGIN {printf "%.0f%%", 100 * a / b}') of one table"
echo "  follow, docs/s (median of $ROUNDS): one table $fo, $S shards $fs: $(awk -v a="${fs%% *}" -v b="${fo%% *}" 'BEGIN {printf "%.0f%%", 100 * a / b}') of one table"
# a shard joining with its rows
idx_docs=$(curl -s "$SEARCH_URL/${P}_sharded/_count" | jq .count)
k=90
for size in $JOINS; do
    k=$((k + 1))
    q "$P" -e "$(table_sql "staging_$k" "staging_items_$k" $((N + 1)) $((N + size)))"
    t0=$(now)
    q "$P" -e "RENAME TABLE staging_items_$k TO order_items_$k, staging_$k TO orders_$k"
    wait_for 1800 grep -q "shard $P.orders_$k joined" "$tmp/run.log"
    t1=$(now)
    echo "  a shard of $size rows joins an index of $idx_docs documents in $(secs "$t0" "$t1") s: $(awk -v n="$size" -v a="$t0" -v b="$t1" 'BEGIN {printf "%.0f", n / (b - a)}') docs/s"
    idx_docs=$((idx_docs + size))
done
stop_daemon
