#!/usr/bin/env bash
# tests/bench/bench_check.sh — the consistency check beside a
# reindex of the same index in the same run.
#
# On the demo shop with BENCH_CHECK_PRODUCTS products (default 280000: about
# 1M documents with their reviews and replies as child documents):
#   1. `searchsync run` starts on the filled database (its first sync builds v1)
#   2. the baseline: `searchsync reindex` of the same index (v2), wall time
#      and CPU of the daemon, MariaDB and the engine
#   3. `searchsync check` of the clean index: wall time, the command's CPU,
#      MariaDB's and the engine's; documents fetched (target 0)
#   4. 10 documents changed behind searchsync's back in the engine (4
#      written again with a changed name, 3 deleted, 3 added); the check
#      again: the differences it finds (10), documents fetched (target <= 1%
#      of the documents) and wall time (target <= 30% of the reindex)
#   5. the same index with `--deep` (every document compared by content):
#      what the fast check saves
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
SEARCHSYNC_SRCDIR="${SEARCHSYNC_SRCDIR:-$(cd "$here/../.." && pwd)}"
. "$SEARCHSYNC_HARNESS_DIR/env.sh"
BIN="${SEARCHSYNC_BIN:-$PWD/searchsync}"
[ -x "$BIN" ] || BIN="$SEARCHSYNC_SRCDIR/searchsync"
N="${BENCH_CHECK_PRODUCTS:-280000}"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/bench-check.XXXXXX")"
meta="bcheck$$"
DAEMON=""
cleanup() {
    [ -n "$DAEMON" ] && kill -9 "$DAEMON" 2>/dev/null
    curl -s -XDELETE "$SEARCH_URL/products_v*,brands_v*?expand_wildcards=all" >/dev/null
    q -e "DROP DATABASE IF EXISTS \`$meta\`" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
q() { mariadb --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -u root -N -B "$@"; }
TCK="$(getconf CLK_TCK)"
cpu_of() { sed 's/^.*) //' "/proc/$1/stat" | awk -v t="$TCK" '{printf "%.2f", ($12 + $13) / t}'; }
engine_cpu() {
    local pg p
    pg="$(ps -o pgid= -p "$SEARCH_PID" | tr -d ' ')"
    for p in $(ps -o pid= -g "$pg"); do cpu_of "$p" 2>/dev/null; echo; done | awk '{s += $1} END {printf "%.2f", s}'
}
dcpu() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f", b - a}'; }

echo "  generating $N demo products ..."
bash "$SEARCHSYNC_SRCDIR/sql/demo/generate.sh" --products "$N" >/dev/null
cat >"$tmp/c.ini" <<INI
[source]
name = shop
host = $MYSQL_HOST
port = $MYSQL_PORT
user = root
server_id = $((8100 + $$ % 90))
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
for _ in $(seq 1 1200); do
    [ "$(q "$meta" -e "SELECT current_version FROM index_configs WHERE alias = 'products'" 2>/dev/null)" = 1 ] && break
    sleep 0.5
done
docs="$(curl -s "$SEARCH_URL/products/_count" | jq .count)"
echo "  products index: $docs documents"

# the baseline: a reindex of the same index
c0="$(cpu_of "$DAEMON")"; m0="$(cpu_of "$MYSQL_PID")"; e0="$(engine_cpu)"
t0=$(date +%s.%N)
"$BIN" reindex --config "$tmp/c.ini" products >"$tmp/reindex.out" 2>&1 || { cat "$tmp/reindex.out"; exit 1; }
t1=$(date +%s.%N)
reindex_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}')
echo "  reindex (baseline): $reindex_s s; CPU s: daemon $(dcpu "$c0" "$(cpu_of "$DAEMON")"), MariaDB $(dcpu "$m0" "$(cpu_of "$MYSQL_PID")"), engine $(dcpu "$e0" "$(engine_cpu)")"

check_once() { # LABEL [CHECK OPTIONS]
    local label="$1" m0 e0 out t
    shift
    m0="$(cpu_of "$MYSQL_PID")"; e0="$(engine_cpu)"
    TIMEFORMAT='%R %U %S'
    t="$({ time "$BIN" check --config "$tmp/c.ini" --json "$@" products >"$tmp/check.json" 2>"$tmp/check.err" || true; } 2>&1)"
    read -r wall usr sys <<<"$t"
    out="$tmp/check.json"
    [ -s "$out" ] || { cat "$tmp/check.err"; exit 1; }
    echo "  check ($label): $wall s ($(awk -v w="$wall" -v r="$reindex_s" 'BEGIN {printf "%.0f", 100 * w / r}')% of the reindex);" \
         "CPU s: check $(awk -v u="$usr" -v s="$sys" 'BEGIN {printf "%.1f", u + s}'), MariaDB $(dcpu "$m0" "$(cpu_of "$MYSQL_PID")"), engine $(dcpu "$e0" "$(engine_cpu)");" \
         "$(jq -r '"\(.rows) rows, \(.engine_documents) documents, \(.buckets) buckets (\(.buckets_differed) differed), \(.ids_listed) ids listed, \(.documents_fetched) documents fetched, differences: \((.missing | length) + (.extra | length) + (.different | length))"' "$out")"
    echo "    fetched: $(jq -r --argjson d "$docs" '"\(.documents_fetched) of \($d) = \(100 * .documents_fetched / $d)%"' "$out")"
}
check_once clean

# 10 documents changed behind searchsync's back
ids=($(q -e "SELECT id FROM shop.products ORDER BY id LIMIT 7"))
for i in 0 1 2 3; do # written again by another hand: _source changed, without searchsync's fields
    curl -s "$SEARCH_URL/products_v2/_doc/${ids[$i]}" | jq -c '._source | del(.ss_version, .ss_hash, .ss_key_hash) | .name = "drift"' >"$tmp/doc.json"
    curl -s -XPUT "$SEARCH_URL/products_v2/_doc/${ids[$i]}" -H 'Content-Type: application/json' --data-binary @"$tmp/doc.json" >/dev/null
done
for i in 4 5 6; do curl -s -XDELETE "$SEARCH_URL/products_v2/_doc/${ids[$i]}" >/dev/null; done
for i in 1 2 3; do
    curl -s -XPUT "$SEARCH_URL/products_v2/_doc/99900000$i" -H 'Content-Type: application/json' -d '{"name":"extra","relation":{"name":"product"}}' >/dev/null
done
curl -s -XPOST "$SEARCH_URL/products/_refresh" >/dev/null
check_once "10 differ"
check_once "10 differ, --deep" --deep
