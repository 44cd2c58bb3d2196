#!/usr/bin/env bash
# tests/bench/bench_sync.sh — `searchsync run` end to end: MySQL
# commit to searchable document, on the demo shop, on the servers run.sh
# started. One daemon (`start = now`, the demo mapping rewritten to a private
# database, plus a root-only index `flat` of a copy of `products` without
# relations) runs through three phases; tests/bench/sync_driver.py drives them
# and prints the figures:
#
#  1. lag   a steady BENCH_LAG_RATE row changes/s (default 2000) of product
#           price updates and SKU stock updates, in transactions that also
#           write a probe (a sequence number in products.weight of product 1).
#           Lags per probe, from its commit as the writer saw it return:
#           - acknowledged: the daemon's low-water mark (GET /api/v1/live,
#             acknowledged_position, polled every 10 ms) is at or past the
#             binlog position after the commit: built, delivered and
#             acknowledged by the engine;
#           - saved checkpoint: the same in the metadata table (polled every
#             20 ms, saved every 100 ms here);
#           - searchable: a _search on the probe's id (every BENCH_POLL_MS,
#             default 10) returns the document with the version searchsync
#             gives that commit (binlog file and position) or a newer one;
#           - searchable data: the search returns the probe's value or a
#             newer one. Documents are rebuilt from MySQL, so when the daemon
#             is behind, a document built for an old transaction already
#             carries newer data: this is how fresh search results are, not
#             how far behind the pipeline is.
#           BENCH_SEARCHABLE=0 drops the _search poller (at 10 ms it costs
#           the engine about a core, which the other lags then pay for).
#           With BENCH_DELIVERED=1 the same two for a realtime GET (off by
#           default: a realtime GET of an unrefreshed document makes the
#           shard refresh, which costs the engine). p50/p90/p99/max, and the
#           p99 of each tenth of the run to show spikes and trends. The runs
#           are BENCH_LAG_RUNS, each TICK_MS:REFRESH:SECONDS (one transaction
#           every TICK_MS; REFRESH is the index refresh_interval, "default" =
#           the engine's, 1s in OpenSearch; a fourth field, :RATE, overrides
#           BENCH_LAG_RATE for that run); default
#           "10:default:60 100:default:30 10:100ms:30": 20-row transactions at
#           the default refresh, 200-row transactions, and 20-row
#           transactions with a 100 ms refresh. Before them: BENCH_WARMUP
#           (20) s of the same writes, not measured (a freshly started engine
#           burns seconds of CPU compiling), then 5 s of the pollers alone,
#           to show what they cost the engine.
#  2. root  BENCH_ROOT_CHANGES (100000) UPDATEs of the root-only table, in
#           transactions of BENCH_TXN (500) rows, as fast as one client can.
#  3. nested BENCH_NESTED_CHANGES (80000) changes of SKUs (stock updates) and
#           product_tags (links to a new tag inserted, then deleted), same
#           transactions, rebuilding the product documents with nested SKUs,
#           barcodes and tags.
#  4. childbulk  one UPDATE of BENCH_CHILD_ROWS (default: every) SKU rows,
#           the time until every product document holds it (the saved
#           checkpoint past the commit), then `searchsync reindex` of the
#           products index: a bulk UPDATE of child rows should reach
#           every root in <= 2x the time a reindex of those roots takes
#           (not in the default phases).
#  5. moves BENCH_MOVES (20000) reviews, child documents of products (routed
#           by their product), moved to another product, BENCH_MOVES_TXN (4)
#           a transaction, every BENCH_MOVES_META-th (10; 0: none) also
#           updating a category (a delay_effect table: its change snapshot
#           ends a group of transactions built together, as metadata
#           changes do in a shop): each move leaves a copy under the old
#           routing that the daemon looks up and deletes (not in the default
#           phases; BENCH_GROUP=1 in a second run looks each transaction's
#           up on its own, the way every lookup went before they were made
#           together while the reader is behind).
#     For 2, 3 and 5: the time from the first commit until the daemon's saved
#     checkpoint (metadata table `offsets`, saved every 100 ms here) is at or
#     past the binlog position after the last commit; changes/s = N / time.
#     The writer's own rate is printed beside it.
#     Before the first measured run of a phase, BENCH_BURST_WARMUP (20000)
#     changes of the same kind run unmeasured: a fresh engine compiles (JIT)
#     and merges the first sync's segments, and the baselines run warm.
#     The daemon's /metrics give documents per bulk request.
#  Per phase: CPU seconds (user+sys) of the daemon, MariaDB and the engine,
#  and the daemon's RSS and high-water mark (VmHWM).
#  Baselines after the phases (same servers, same documents):
#     builder alone (tests/tools/docbuild_dump --quiet, no engine) and a plain
#     parallel bulk load of the same documents, as the daemon wrote them (read
#     back from its index) (BENCH_PAR curl processes, batches of 500, no
#     versions) into an index with the same body, then the same again over
#     it, then 3 times more; each with the engine's CPU per document.
# Knobs: BENCH_PRODUCTS (20000), the ones above, BENCH_PAR (4), BENCH_PHASES
# (lag,root,nested: a comma list), BENCH_BASELINES (1; 0 skips them),
# BENCH_GROUP ([source] group_transactions; default: the daemon's, 64; 1
# builds every transaction on its own, for a before/after in one run),
# BENCH_HELPERS, BENCH_BATCH_MAX, BENCH_LINGER_MS and BENCH_GROUP_COMMIT
# ([delivery] helpers, batch_max, linger_ms, group_commit), BENCH_RESULTS (a
# file: each lag run appends its figures as one JSON line, tagged BENCH_TAG;
# tests/bench/bench_lag_curve.sh draws them),
# BENCH_FLAT_MODE (re-query; row-image: the root-only table's documents
# from the binlog's row images, no reads).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
SEARCHSYNC_SRCDIR="${SEARCHSYNC_SRCDIR:-$(cd "$here/../.." && pwd)}"
. "$SEARCHSYNC_HARNESS_DIR/env.sh"
BIN="${SEARCHSYNC_BIN:-$PWD/searchsync}"
[ -x "$BIN" ] || { echo "bench_sync: $BIN not built"; exit 1; }
DUMP="$(dirname "$BIN")/tests/tools/docbuild_dump"
command -v python3 >/dev/null || { echo "bench_sync: python3 is needed"; exit 1; }
NP="${BENCH_PRODUCTS:-20000}"
PAR="${BENCH_PAR:-4}"
export BENCH_LAG_RATE="${BENCH_LAG_RATE:-2000}" BENCH_LAG_RUNS="${BENCH_LAG_RUNS:-10:default:60 100:default:30 10:100ms:30}"
export BENCH_POLL_MS="${BENCH_POLL_MS:-10}" BENCH_DELIVERED="${BENCH_DELIVERED:-}" BENCH_WARMUP="${BENCH_WARMUP:-20}"
export BENCH_ROOT_CHANGES="${BENCH_ROOT_CHANGES:-100000}" BENCH_NESTED_CHANGES="${BENCH_NESTED_CHANGES:-80000}"
export BENCH_TXN="${BENCH_TXN:-500}"
PHASES="${BENCH_PHASES:-lag,root,nested}"

D="benchsync_$$"
META="benchsync_meta_$$"
P="bsync$$"          # alias prefix: ${P}_products, ${P}_brands, ${P}_flat
tmp="$(mktemp -d "${TMPDIR:-/tmp}/bench-sync.XXXXXX")"
q() { mariadb --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -u root --batch --skip-column-names "$@"; }
DAEMON=""
cleanup() {
    set +e
    if [ -n "$DAEMON" ] && kill -0 "$DAEMON" 2>/dev/null; then
        kill -TERM "$DAEMON"; wait "$DAEMON"
    fi
    q -e "DROP DATABASE IF EXISTS \`$D\`; DROP DATABASE IF EXISTS \`$META\`" >/dev/null 2>&1
    curl -s -XDELETE "$SEARCH_URL/${P}_*" >/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT

echo "bench_sync: $NP demo products in $D, engine $SEARCH_URL, MariaDB $MYSQL_HOST:$MYSQL_PORT"
t0=$(date +%s.%N)
bash "$SEARCHSYNC_SRCDIR/sql/demo/generate.sh" --products "$NP" --db "$D" \
    --host "$MYSQL_HOST" --port "$MYSQL_PORT" >"$tmp/gen.out" 2>&1 || { cat "$tmp/gen.out"; exit 1; }
# the root-only table: products' columns, no relations; a tag that no product
# has yet (the nested phase links it and unlinks it)
q "$D" -e "SET SESSION sql_log_bin = 0;
  CREATE TABLE flat LIKE products;
  INSERT INTO flat SELECT * FROM products;
  INSERT INTO tags (id, name) VALUES (100001, 'bench-sync-tag');
  UPDATE products SET weight = 0 WHERE id = 1;
  ANALYZE TABLE flat"  >/dev/null
echo "data generated in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s: $(q "$D" -e \
    "SELECT CONCAT((SELECT COUNT(*) FROM products), ' products, ', (SELECT COUNT(*) FROM skus), ' skus, ',
     (SELECT COUNT(*) FROM sku_barcodes), ' barcodes, ', (SELECT COUNT(*) FROM product_tags), ' tag links, ',
     (SELECT COUNT(*) FROM flat), ' root-only rows')")"

# the demo mapping on $D with private aliases, plus the root-only index
flatcols="$(jq -c '.indices[0].tables[0].columns | map(del(.extend_name))' "$SEARCHSYNC_SRCDIR/sql/demo/mapping.json")"
sed "s/\"shop\./\"$D./g" "$SEARCHSYNC_SRCDIR/sql/demo/mapping.json" |
    jq --arg p "$P" --arg t "$D.flat" --argjson cols "$flatcols" --arg mode "${BENCH_FLAT_MODE:-re-query}" '
      .indices |= map(.alias = ($p + "_" + .alias))
      | .indices += [{alias: ($p + "_flat"), shards: 3, replicas: 0,
                      tables: [{table: $t, columns: $cols, mode: $mode}]}]' >"$tmp/mapping.json"
# the admin server: the lag phase polls GET /api/v1/live for the position the
# engine acknowledged (in memory, before the checkpoint is saved)
ADMIN_PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
ADMIN_TOKEN="$(od -An -N16 -tx1 /dev/urandom | tr -d " \n")"
cat >"$tmp/c.ini" <<INI
[source]
name = bench
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = 7401
start = now
${BENCH_GROUP:+group_transactions = $BENCH_GROUP}
[metadata]
database = $META
[search]
urls = $SEARCH_URL
[delivery]
checkpoint_interval_ms = 100
${BENCH_HELPERS:+helpers = $BENCH_HELPERS}
${BENCH_BATCH_MAX:+batch_max = $BENCH_BATCH_MAX}
${BENCH_LINGER_MS:+linger_ms = $BENCH_LINGER_MS}
${BENCH_GROUP_COMMIT:+group_commit = $BENCH_GROUP_COMMIT}
# the driver waits for the checkpoint to reach the binlog's end, which may
# end in the daemon's own save: saved at the same pace (real changes are
# saved every checkpoint_interval_ms either way)
idle_checkpoint_interval_ms = 100
[admin]
listen = 127.0.0.1:$ADMIN_PORT
token = $ADMIN_TOKEN
[log]
level = info
INI
"$BIN" mapping import --config "$tmp/c.ini" "$tmp/mapping.json" --yes >"$tmp/import.out" 2>&1 ||
    { cat "$tmp/import.out"; exit 1; }
"$BIN" run --config "$tmp/c.ini" >"$tmp/run.log" 2>&1 &
DAEMON=$!
# the first sync (a reindex per index config) builds every alias
all_aliases() { for a in flat products brands; do curl -sf "$SEARCH_URL/_alias/${P}_$a" >/dev/null || return 1; done; }
for _ in $(seq 1 1500); do
    all_aliases && break
    kill -0 "$DAEMON" 2>/dev/null || { echo "bench_sync: the daemon exited:"; cat "$tmp/run.log"; exit 1; }
    sleep 0.2
done
all_aliases || { echo "bench_sync: the first sync did not finish in 300 s"; tail "$tmp/run.log"; exit 1; }
grep -o '\[reindex\] .*live: .*' "$tmp/run.log" | sed 's/^/first sync: /'
sleep 1 # the reader is at "now" once it has connected
echo "daemon pid $DAEMON: [delivery] 8 workers, ${BENCH_HELPERS:-4} helpers, batch_max ${BENCH_BATCH_MAX:-500}, linger_ms ${BENCH_LINGER_MS:-0}, group_commit ${BENCH_GROUP_COMMIT:-true}, flush_interval_ms 1000," \
     "checkpoint_interval_ms 100; index refresh_interval: $(curl -s "$SEARCH_URL/${P}_products/_settings?include_defaults=true" |
     jq -r '[.[] | (.settings.index.refresh_interval // .defaults.index.refresh_interval)][0]')"

rc=0
python3 "$here/sync_driver.py" --mysql-port "$MYSQL_PORT" --db "$D" --meta "$META" --source bench \
    --search "$SEARCH_URL" --prefix "$P" --daemon "$DAEMON" --engine-pgid "$SEARCH_PID" \
    --mysql-pgid "$MYSQL_PID" --phases "$PHASES" --admin "http://127.0.0.1:$ADMIN_PORT" \
    --token "$ADMIN_TOKEN" --bin "$BIN" --config "$tmp/c.ini" || rc=1

# the daemon's own view, and anything it complained about
kill -TERM "$DAEMON"; wait "$DAEMON" || echo "daemon exit status $?"
DAEMON=""
echo "daemon: $(grep -o 'stopped after.*' "$tmp/run.log" || echo 'no stop line')"
if grep -Eq ' (WARN|ERROR) ' "$tmp/run.log"; then
    echo "daemon warnings/errors ($(grep -Ec ' (WARN|ERROR) ' "$tmp/run.log")), first 10:"
    grep -E ' (WARN|ERROR) ' "$tmp/run.log" | head -10
else
    echo "daemon log: no warnings or errors"
fi
[ "$rc" = 0 ] || { echo "--- daemon log (last 20 lines)"; tail -20 "$tmp/run.log"; }

# ---- baselines: the builder alone, and a plain bulk load of the same documents
if [ "${BENCH_BASELINES:-1}" = 0 ]; then
    exit $rc
elif [ ! -x "$DUMP" ]; then
    echo "baselines skipped: $DUMP not built (make check_PROGRAMS)"
    exit $rc
fi
# post_parts — the $PAR parts of $tmp/bulk.ndjson in parallel curl processes
# (one per part, 500 documents a request), then a refresh
post_parts() {
    local f c pids=() args
    for f in "$tmp"/part-??; do
        args=()
        for c in "$f".b-*; do
            [ ${#args[@]} -gt 0 ] && args+=(--next)
            args+=(-s -o /dev/null -H 'Content-Type: application/x-ndjson' --data-binary "@$c" "$SEARCH_URL/${P}_plain/_bulk")
        done
        curl "${args[@]}" &
        pids+=($!)
    done
    wait "${pids[@]}"
    curl -s -XPOST "$SEARCH_URL/${P}_plain/_refresh" >/dev/null
}
# engine_cpu — CPU seconds (user + system) of the engine's process group so far
engine_cpu() {
    python3 -c '
import os, sys
g, t = int(sys.argv[1]), 0
for p in os.listdir("/proc"):
    try:
        f = open("/proc/%s/stat" % p).read().rsplit(")", 1)[1].split()
        if int(f[2]) == g:
            t += int(f[11]) + int(f[12])
    except (OSError, ValueError, IndexError):
        pass
print(t / os.sysconf("SC_CLK_TCK"))' "$SEARCH_PID"
}
baseline() { # alias table label
    local alias="$1" table="$2" label="$3" t0 t1 f
    q "$D" -e "SELECT id FROM $table ORDER BY id" >"$tmp/ids"
    "$DUMP" --config "$tmp/c.ini" --mapping "$tmp/mapping.json" --index "$alias" --quiet - \
        <"$tmp/ids" 2>"$tmp/dump.err" >/dev/null || { cat "$tmp/dump.err"; return 1; }
    echo "baseline $label, builder alone (docbuild_dump, no engine): $(tail -1 "$tmp/dump.err")"
    # the documents as the daemon wrote them (read back from its index: the
    # version and hash fields it adds included), posted without versions
    python3 - "$SEARCH_URL" "$alias" >"$tmp/bulk.ndjson" <<'PY'
import json, sys, urllib.request
url, alias = sys.argv[1], sys.argv[2]
def req(path, body):
    r = urllib.request.Request(url + path, json.dumps(body).encode(), {'Content-Type': 'application/json'})
    return json.loads(urllib.request.urlopen(r).read())
j = req('/%s/_search?scroll=1m' % alias, {'size': 2000, 'sort': ['_doc']})
out = sys.stdout
while j['hits']['hits']:
    for h in j['hits']['hits']:
        out.write(json.dumps({'index': {'_id': h['_id']}}) + '\n' + json.dumps(h['_source'], separators=(',', ':'), ensure_ascii=False) + '\n')
    j = req('/_search/scroll', {'scroll': '1m', 'scroll_id': j['_scroll_id']})
PY
    local n; n="$(wc -l <"$tmp/ids")"
    rm -f "$tmp"/part-*
    split -n "l/$PAR" -d "$tmp/bulk.ndjson" "$tmp/part-"
    "$BIN" mapping body --config "$tmp/c.ini" "$alias" >"$tmp/body.json" 2>/dev/null
    curl -s -XPUT "$SEARCH_URL/${P}_plain" -H 'Content-Type: application/json' --data-binary "@$tmp/body.json" >/dev/null
    for f in "$tmp"/part-*; do split -l 1000 -d -a 5 "$f" "$f.b-"; done
    local e0 e1
    e0=$(engine_cpu); t0=$(date +%s.%N)
    post_parts
    t1=$(date +%s.%N); e1=$(engine_cpu)
    local cnt; cnt="$(curl -s "$SEARCH_URL/${P}_plain/_count" | jq .count)"
    awk -v n="$n" -v c="$cnt" -v a="$t0" -v b="$t1" -v l="$label" -v p="$PAR" -v e="$(awk -v x="$e0" -v y="$e1" 'BEGIN{print y - x}')" -v by="$(LC_ALL=C awk 'NR % 2 == 0 {s += length($0) + 1} END {print s}' "$tmp/bulk.ndjson")" \
        'BEGIN { printf "baseline %s, plain curl bulk of the same %d documents (%d in the index, %.1f KB each, %d parallel, 500 a batch): %.0f docs/s; engine CPU %.2f s = %.0f us a document%s\n",
                 l, n, c, by / n / 1024, p, n / (b - a), e, 1e6 * e / n,
                 c == n ? "" : " (NOT VALID: the engine refused some items)" }'
    # the same again over the loaded index: every document replaced, as the
    # sync phases replace them (an update costs the engine more than an insert)
    e0=$(engine_cpu); t0=$(date +%s.%N)
    post_parts
    t1=$(date +%s.%N); e1=$(engine_cpu)
    awk -v n="$n" -v a="$t0" -v b="$t1" -v l="$label" -v e="$(awk -v x="$e0" -v y="$e1" 'BEGIN{print y - x}')" \
        'BEGIN { printf "baseline %s, the same plain bulk again over the loaded index (every document replaced): %.0f docs/s; engine CPU %.2f s = %.0f us a document\n", l, n / (b - a), e, 1e6 * e / n }'
    # three times more: each document replaced 3 times in a row, as the
    # root phase's 100k changes of 34k rows replace them
    e0=$(engine_cpu); t0=$(date +%s.%N)
    post_parts; post_parts; post_parts
    t1=$(date +%s.%N); e1=$(engine_cpu)
    awk -v n="$n" -v a="$t0" -v b="$t1" -v l="$label" -v e="$(awk -v x="$e0" -v y="$e1" 'BEGIN{print y - x}')" \
        'BEGIN { printf "baseline %s, the same plain bulk 3 times more (each document replaced 3 times): %.0f docs/s; engine CPU %.2f s = %.0f us a document\n", l, 3 * n / (b - a), e, 1e6 * e / (3 * n) }'
    curl -s -XDELETE "$SEARCH_URL/${P}_plain" >/dev/null
}
baseline "${P}_flat" flat "root-only" || rc=1
baseline "${P}_products" products "products" || rc=1
exit $rc
