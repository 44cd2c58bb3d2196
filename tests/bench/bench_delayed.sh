#!/usr/bin/env bash
# tests/bench/bench_delayed.sh — the delayed run beside a reindex
# of the same documents, in the same run.
#
# On the demo shop with BENCH_DELAYED_PRODUCTS products (default 100000), all
# put in one category before the first sync:
#   1. `searchsync run` starts on the filled database (its first sync builds v1)
#   2. the baseline: `searchsync reindex products` (v2): wall time, and the
#      product documents it wrote per second
#   3. the category renamed: the daemon writes one change snapshot and
#      rewrites no product (checked); then `searchsync delayed-run`: wall
#      time, product documents rebuilt per second (target >= 90% of the
#      reindex's rate), and every product carries the new name (checked)
#   4. the binlog reader's lag during the run: a probe renames one product
#      every 200 ms and times until the engine shows it (target < 1 s at the
#      worst), beside the same probe while nothing else runs
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
SEARCHSYNC_SRCDIR="${SEARCHSYNC_SRCDIR:-$(cd "$here/../.." && pwd)}"
. "$SEARCHSYNC_HARNESS_DIR/env.sh"
BIN="${SEARCHSYNC_BIN:-$PWD/searchsync}"
[ -x "$BIN" ] || BIN="$SEARCHSYNC_SRCDIR/searchsync"
N="${BENCH_DELAYED_PRODUCTS:-100000}"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/bench-delayed.XXXXXX")"
meta="bdelayed$$"
DAEMON="" PROBE=""
cleanup() {
    [ -n "$PROBE" ] && kill "$PROBE" 2>/dev/null
    [ -n "$DAEMON" ] && kill -9 "$DAEMON" 2>/dev/null
    curl -s -XDELETE "$SEARCH_URL/products_v*,brands_v*?expand_wildcards=all" >/dev/null
    q -e "DROP DATABASE IF EXISTS \`$meta\`" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
q() { mariadb --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -u root -N -B "$@"; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", b - a}'; }
count() { # QUERY_JSON
    curl -s -XPOST "$SEARCH_URL/products/_refresh" >/dev/null
    curl -s -H 'Content-Type: application/json' -XPOST "$SEARCH_URL/products/_count" -d "$1" | jq .count
}

echo "  generating $N demo products, all in one category ..."
bash "$SEARCHSYNC_SRCDIR/sql/demo/generate.sh" --products "$N" >/dev/null
cat_id="$(q shop -e "SELECT MIN(id) FROM categories")"
q shop -e "SET sql_log_bin = 0; UPDATE products SET category_id = $cat_id"
cat >"$tmp/c.ini" <<INI
[source]
name = shop
host = $MYSQL_HOST
port = $MYSQL_PORT
user = root
server_id = $((8200 + $$ % 90))
start = now
[metadata]
database = $meta
[search]
urls = $SEARCH_URL
[log]
level = warn
INI
"$BIN" mapping import --config "$tmp/c.ini" "$SEARCHSYNC_SRCDIR/sql/demo/mapping.json" --yes >/dev/null
"$BIN" run --config "$tmp/c.ini" >"$tmp/run.log" 2>&1 &
DAEMON=$!
for i in $(seq 1 1200); do
    [ "$(q "$meta" -e "SELECT current_version FROM index_configs WHERE alias = 'products'" 2>/dev/null)" = 1 ] && break
    [ "$i" = 1200 ] && { echo "  the first sync did not finish in 600 s"; tail -5 "$tmp/run.log"; exit 1; }
    sleep 0.5
done
docs="$(count '{"query":{"match_all":{}}}')"
nroots="$(q shop -e "SELECT COUNT(*) FROM products")"
echo "  products index: $docs documents, $nroots of them products"

# the probe: one product renamed every 200 ms, the time until the engine has it
probe() { # OUT SECONDS
    local out=$1 end_at i t0 t1 got
    end_at=$(($(date +%s) + $2))
    i=0
    : >"$out"
    while [ "$(date +%s)" -lt "$end_at" ] && [ ! -e "$tmp/probe.stop" ]; do
        i=$((i + 1))
        t0=$(now)
        q shop -e "UPDATE products SET name = 'probe $i' WHERE id = 1"
        for _ in $(seq 1 200); do
            got="$(curl -s "$SEARCH_URL/products/_doc/1?routing=1&realtime=true" | jq -r ._source.name)"
            [ "$got" = "probe $i" ] && break
            sleep 0.02
        done
        t1=$(now)
        echo "$(secs "$t0" "$t1")" >>"$out"
        sleep 0.2
    done
}
stats() { # FILE -> "median X s, worst Y s over N probes"
    sort -n "$1" | awk '{v[NR] = $1} END {if (!NR) {print "no probe"; exit}
        printf "median %.2f s, worst %.2f s over %d probes", v[int((NR + 1) / 2)], v[NR], NR}'
}
probe "$tmp/idle.lat" 5
echo "  reader lag, idle: $(stats "$tmp/idle.lat")"

# the baseline: a reindex of the same documents
t0=$(now)
"$BIN" reindex --config "$tmp/c.ini" products >"$tmp/reindex.out" 2>&1 || { cat "$tmp/reindex.out"; exit 1; }
t1=$(now)
reindex_s=$(secs "$t0" "$t1")
reindex_rate=$(awk -v n="$nroots" -v s="$reindex_s" 'BEGIN {printf "%.0f", n / s}')
all_rate=$(awk -v n="$docs" -v s="$reindex_s" 'BEGIN {printf "%.0f", n / s}')
echo "  reindex (baseline): $reindex_s s; $reindex_rate products/s ($all_rate documents/s with the child documents)"

# the rename: one snapshot, no product rewritten by the binlog reader
v_before="$(curl -s "$SEARCH_URL/products/_doc/2?routing=2" | jq ._source.ss_version)"
q shop -e "UPDATE categories SET name = 'renamed by the bench' WHERE id = $cat_id"
for i in $(seq 1 100); do
    [ "$(q "$meta" -e "SELECT COUNT(*) FROM change_snapshots WHERE status = 'init'")" -ge 1 ] && break
    [ "$i" = 100 ] && { echo "  the rename made no change snapshot in 10 s"; exit 1; }
    sleep 0.1
done
sleep 1
[ "$(curl -s "$SEARCH_URL/products/_doc/2?routing=2" | jq ._source.ss_version)" = "$v_before" ] ||
    { echo "  the rename rewrote a product before the delayed run"; exit 1; }
echo "  rename: $(q "$meta" -e "SELECT COUNT(*) FROM change_snapshots WHERE status = 'init'") snapshot(s) waiting; 0 products rewritten by the binlog reader"

rm -f "$tmp/probe.stop"
probe "$tmp/run.lat" 600 &
PROBE=$!
t0=$(now)
# shellcheck disable=SC2086 # (BENCH_DELAYED_ARGS: options of delayed-run, word-split)
"$BIN" delayed-run --config "$tmp/c.ini" ${BENCH_DELAYED_ARGS:-} >"$tmp/delayed.out" 2>&1 ||
    { cat "$tmp/delayed.out"; exit 1; }
t1=$(now)
touch "$tmp/probe.stop"
wait "$PROBE" 2>/dev/null || true
PROBE=""
run_s=$(secs "$t0" "$t1")
rebuilt="$(sed -n 's/^  \([0-9]*\) document(s) rebuilt.*/\1/p' "$tmp/delayed.out")"
run_rate=$(awk -v n="$rebuilt" -v s="$run_s" 'BEGIN {printf "%.0f", n / s}')
pct=$(awk -v a="$run_rate" -v b="$reindex_rate" 'BEGIN {printf "%.0f", 100 * a / b}')
echo "  delayed run${BENCH_DELAYED_ARGS:+ ($BENCH_DELAYED_ARGS)}: $run_s s; $rebuilt products rebuilt, $run_rate products/s = $pct% of the reindex's rate (target >= 90%)"
sed -n 's/^  time: /  delayed run phases: /p' "$tmp/delayed.out"
renamed="$(count '{"query":{"match":{"category.name":"renamed by the bench"}}}')"
echo "  products with the new name: $renamed of $nroots"
[ "$renamed" = "$nroots" ] || { echo "  not every product has the new name"; exit 1; }
echo "  reader lag during the run: $(stats "$tmp/run.lat") (target worst < 1 s)"
