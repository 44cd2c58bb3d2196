#!/usr/bin/env bash
# t_run_random.sh — the randomized oracle test of `searchsync run`:
# a demo shop is synced from the binlog, then RANDOM_OPS (20000) random
# inserts, updates, deletes, foreign-key moves, primary-key changes and
# relation-table changes hit EVERY table of the demo mapping
# (tests/fixtures/random_ops.sql: single statements, transactions of 2..6
# operations, some rolled back, multi-row statements), while the daemon is
# SIGKILLed at random moments RANDOM_KILLS (3) times and restarted (it resumes
# from its checkpoint). When it has caught up, every document behind the
# products alias (3 primary shards; products > skus > sku_barcodes nesting,
# skus.warehouse objects, products / reviews / review_replies join chain) and
# behind the brands alias equals the one the SQL oracle
# (tests/integration/oracle_lib.sh) computes from MariaDB; routing is checked,
# a document found twice by id (e.g. on two shards) or without its row fails
# (tests/integration/compare_docs.py). The daemon log has no ERROR and no
# dead letter, the dead_letters table is empty.
#
# Knobs (environment):
#   RANDOM_SEED      seed of the operations (printed; a failure replays with it)
#   RANDOM_OPS       operations (default 20000)
#   RANDOM_KILLS     SIGKILLs of the daemon during the run (default 3; 0 = none)
#   RANDOM_PRODUCTS  demo size (default 500 products)
#   RANDOM_TXN_PCT   percent of steps that are transactions (default 75; the
#                    rest are single statements). The daemon's cost is per
#                    transaction (one touching reviews/replies refreshes the
#                    index and looks up child copies), so this sets the run time
#   RANDOM_TXN_MAX   operations per transaction: 2..RANDOM_TXN_MAX (default 6)
#   RANDOM_CATCHUP_S time the daemon gets to catch up after the operations
#   RANDOM_DECK      replaces the operation weights (random_ops.sql's deck
#                    form, e.g. 'vm,vd,yi,'), to chase one kind of operation
#   RANDOM_CHUNKS    the operations run as this many CALLs (default kills + 1)
#   RANDOM_KEEP_DIR  where a failing run leaves its dumps (default /tmp)
#   RANDOM_KEEP_DB   set: keep the databases (the suite's reset drops them
#                    after the test anyway)
#   RANDOM_REBUILDS_ONLY  set: the mapping without area_update (SKU changes
#                    rebuild their products whole, as every other change)
#   RANDOM_BACKLOG   set: the first CALL runs while the daemon is stopped
#                    (SIGTERM), so the restarted daemon reads it while behind:
#                    transactions built together (sync/sources/binlog_source.c)
#   RANDOM_EXPECT_GROUPS  set: fail unless the daemon built some transactions
#                    together and made some builds' child copy lookups
#                    together (its stop line counts both)
#   SEARCHSYNC_TEST_ROUTE_SLICE  set: the daemon slices fan-outs over that many
#                    documents (the test fails unless it built some slices)
# Replay of a failure: the log prints the seed, the demo size and every CALL
# (seed, count); generate.sh with the same --products, load
# tests/fixtures/random_ops.sql, run the same CALLs: same rows (updated_at
# aside). tests/integration/long_run_random.sh runs 200k operations.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
require_bin
command -v python3 >/dev/null || skip "python3 needed for the oracle comparison"

SEED="${RANDOM_SEED:-${SEARCHSYNC_SEED:-$(( (RANDOM << 15 | RANDOM) % 1000000000 ))}}"
OPS="${RANDOM_OPS:-20000}"
KILLS="${RANDOM_KILLS:-3}"
PRODUCTS="${RANDOM_PRODUCTS:-500}"
TXN_PCT="${RANDOM_TXN_PCT:-75}"
TXN_MAX="${RANDOM_TXN_MAX:-6}"
CHUNKS="${RANDOM_CHUNKS:-$((KILLS + 1))}"
CATCHUP_S="${RANDOM_CATCHUP_S:-$((120 + OPS / 40))}"
RANDOM=$SEED # the kill moments and pauses follow the seed too (timing does not)
REPLAY="RANDOM_SEED=$SEED RANDOM_OPS=$OPS RANDOM_KILLS=$KILLS RANDOM_PRODUCTS=$PRODUCTS RANDOM_CHUNKS=$CHUNKS RANDOM_TXN_PCT=$TXN_PCT RANDOM_TXN_MAX=$TXN_MAX${RANDOM_DECK:+ RANDOM_DECK=$RANDOM_DECK}"
log "seed $SEED: $OPS operations in $CHUNKS calls, $KILLS kills, $PRODUCTS products (replay: $REPLAY)"

D=$(unique_name rshop)
G=${D}_gen
meta=$(unique_name rmeta)
PIDX=$(unique_name rproducts)
BIDX=$(unique_name rbrands)
if [ -z "${RANDOM_KEEP_DB:-}" ]; then
    on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$D\`; DROP DATABASE IF EXISTS \`$G\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1"
else
    log "RANDOM_KEEP_DB: databases $D (synced), $G (generated) and $meta (metadata) are kept"
fi
on_exit "curl -s -m 30 -XDELETE '$SEARCH_URL/${PIDX}_v1,${BIDX}_v1' >/dev/null 2>&1"

# ---- the demo rows, generated aside ($G, not in the binlog); $D gets the
# same tables, empty, and the random-operation routines
log "generating $PRODUCTS products into $G"
bash "$SEARCHSYNC_SRCDIR/sql/demo/generate.sh" --products "$PRODUCTS" --db "$G" \
    --host "$MYSQL_HOST" --port "$MYSQL_PORT" >"$TEST_TMP/gen.out" 2>&1 || {
    cat "$TEST_TMP/gen.out" >&2; fail "generate.sh failed"; }
TABLES="brands categories warehouses tags products skus sku_barcodes product_tags reviews review_replies"
{
    echo "CREATE DATABASE \`$D\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;"
    for t in $TABLES; do echo "CREATE TABLE \`$D\`.$t LIKE \`$G\`.$t;"; done
} | mysql_file /dev/stdin || fail "creating $D"
mysql_file "$SEARCHSYNC_SRCDIR/tests/fixtures/random_ops.sql" "$D" || fail "loading random_ops.sql"

# ---- the demo mapping on $D, unique aliases, every index at least 3 primary
# shards; categories synced live (the delay_effect entry removed, the relation
# refreshes its parents), the rest (area_update on skus, the row-image brands
# index) kept
oracle_demo_mapping "$D" "$PIDX" "$BIDX" '.indices[].shards |= ([., 3] | max)
    | if env.RANDOM_REBUILDS_ONLY then walk(if type == "object" then del(.area_update) else . end) else . end' \
    >"$TEST_TMP/mapping.json"
assert_eq 3 "$(jq --arg p "$PIDX" '.indices[] | select(.alias == $p) | .shards' "$TEST_TMP/mapping.json")" "mapping: 3 primary shards"
assert_eq 0 "$(jq '[.. | objects | select(.delay_effect == true)] | length' "$TEST_TMP/mapping.json")" "mapping: no delay-effect table"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = random
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $((7400 + $$ % 500))
start = now
[metadata]
database = $meta
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
[admin]
listen =
[log]
level = info
INI
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/mapping.json" --yes \
    >"$TEST_TMP/import.out" 2>&1 || fail "import: $(cat "$TEST_TMP/import.out")"

RUNLOG="$TEST_TMP/run.log"
STARTS=0
start_daemon() {
    STARTS=$((STARTS + 1))
    echo "=== start $STARTS at $(date -u +%T.%N)" >>"$RUNLOG"
    daemon_start "$TEST_TMP/c.ini" "$RUNLOG"
}
kill_daemon() { # SIGKILL, no drain, no checkpoint save
    daemon_alive || fail "the daemon died before kill $1: $(tail -20 "$RUNLOG")"
    daemon_kill
    echo "=== SIGKILL $1 at $(date -u +%T.%N)" >>"$RUNLOG"
    DAEMON=""
}
keep_artifacts() {
    local dir="${RANDOM_KEEP_DIR:-/tmp}/t_run_random-$SEED-$$"
    mkdir -p "$dir" && cp -r "$TEST_TMP"/. "$dir"/ 2>/dev/null
    echo "--- artifacts (dumps, oracle, daemon log, mapping): $dir"
    echo "--- daemon log (last 40 lines)"
    tail -40 "$RUNLOG" 2>/dev/null
    echo "--- seed $SEED (replay: $REPLAY)"
}
on_exit '[ "$rc" = 0 ] || keep_artifacts'

start_daemon
wait_until 60 "aliases $PIDX and $BIDX exist" bash -c \
    "curl -sf '$SEARCH_URL/_alias/$PIDX' >/dev/null && curl -sf '$SEARCH_URL/_alias/$BIDX' >/dev/null"
daemon_wait_ready # the reader is at "now" once it has connected

# ---- the initial rows go through the binlog (no reindex command yet)
t0=$(date +%s)
for t in $TABLES; do
    mysql_q "INSERT INTO \`$D\`.$t SELECT * FROM \`$G\`.$t" || fail "initial load of $t"
done
# a first checkpoint before any kill: with start = now, a daemon killed before
# its first checkpoint would restart at "now" again (nothing to resume from)
checkpoint() { mysql_q "SELECT position FROM \`$meta\`.offsets WHERE source = 'random'" 2>/dev/null; }
has_checkpoint() { [ -n "$(checkpoint)" ]; }
wait_until 60 "a first checkpoint" has_checkpoint
log "initial load: $(mysql_q "SELECT COUNT(*) FROM products" "$D") products, $(mysql_q "SELECT COUNT(*) FROM skus" "$D") skus, $(mysql_q "SELECT COUNT(*) FROM reviews" "$D") reviews in the binlog"

# ---- random operations in $CHUNKS calls; a SIGKILL at a random moment of
# each of the first $KILLS calls (the daemon still works through the backlog
# then), a random pause, a restart
per=$(( (OPS + CHUNKS - 1) / CHUNKS ))
done_ops=0
kills=0
for ((c = 1; c <= CHUNKS; c++)); do
    n=$per
    [ $((done_ops + n)) -le "$OPS" ] || n=$((OPS - done_ops))
    [ "$n" -gt 0 ] || break
    cseed=$((SEED * 1000 + c))
    log "CALL random_ops($cseed, $n)"
    backlog=""
    if [ -n "${RANDOM_BACKLOG:-}" ] && [ "$c" = 1 ]; then # a backlog for a stopped daemon
        daemon_stop
        DAEMON=""
        echo "=== stopped for a backlog at $(date -u +%T.%N)" >>"$RUNLOG"
        backlog=1
    fi
    mysql_q "SET @rop_deck = '${RANDOM_DECK:-}', @rop_txn_pct = $TXN_PCT, @rop_txn_max = $TXN_MAX; CALL random_ops($cseed, $n)" "$D" >"$TEST_TMP/ops.out.$c" 2>&1 &
    ops_pid=$!
    if [ -z "$backlog" ] && [ "$kills" -lt "$KILLS" ] && [ "$c" -le "$KILLS" ]; then
        sleep "$((RANDOM % 20 / 10)).$((RANDOM % 10))"
        daemon_alive || fail "the daemon stopped: $(tail -20 "$RUNLOG")"
        kills=$((kills + 1))
        kill_daemon "$kills"
        sleep "0.$((RANDOM % 10))"
        start_daemon
    fi
    if [ -n "$backlog" ]; then # the backlog is read while behind
        wait "$ops_pid" || fail "CALL random_ops($cseed, $n) failed: $(cat "$TEST_TMP/ops.out.$c")"
        start_daemon
    fi
    wait "$ops_pid" || fail "CALL random_ops($cseed, $n) failed: $(cat "$TEST_TMP/ops.out.$c")"
    done_ops=$((done_ops + n))
done
# kills left over (RANDOM_CHUNKS < kills + 1): while the daemon catches up
while [ "$kills" -lt "$KILLS" ]; do
    sleep "$((RANDOM % 15 / 10)).$((RANDOM % 10))"
    kills=$((kills + 1))
    kill_daemon "$kills"
    start_daemon
done
ops_secs=$(( $(date +%s) - t0 ))
# what ran: counts per operation kind over the calls
cat "$TEST_TMP"/ops.out.* | awk -F'\t' '$1 != "rop_kind" && $1 != "last_error" { n[$1] += $2 } END { for (k in n) printf "%s=%s ", k, n[k]; print "" }' \
    | tr ' ' '\n' | sort | tr '\n' ' ' >"$TEST_TMP/ops_summary"
log "operations done in ${ops_secs}s: $(cat "$TEST_TMP/ops_summary")"
assert_contains " $(cat "$TEST_TMP/ops_summary")" " ops=$OPS " "every operation ran"
assert_contains " $(cat "$TEST_TMP/ops_summary")" " errors=0 " "no operation failed ($(grep -h last_error "$TEST_TMP"/ops.out.* | sort -u | tr '\n' ' '))"
assert_eq "$KILLS" "$kills" "SIGKILLs"

# ---- wait until the daemon has caught up: a marker change after everything;
# its checkpoint (the acknowledged low-water mark) reaches the marker's end
mk=$(mysql_q "SELECT MIN(id) FROM products" "$D")
mysql_q "UPDATE products SET name = 'marker $SEED' WHERE id = $mk" "$D"
marker_pos=$(mysql_binlog_pos | tr '\t' ':')
caught_up() { # the checkpoint at the marker, or past it but for its own saves
    _checkpoint_past "$meta" random "${marker_pos%:*}" "${marker_pos##*:}"
}
t1=$(date +%s)
for ((i = 0; ; i++)); do
    caught_up && break
    daemon_alive || fail "the daemon stopped: $(tail -20 "$RUNLOG")"
    [ $(( $(date +%s) - t1 )) -lt "$CATCHUP_S" ] ||
        fail "not caught up after ${CATCHUP_S}s: checkpoint $(checkpoint), marker at $marker_pos"
    sleep 0.5
done
log "caught up $(( $(date +%s) - t1 ))s after the last operation (marker at $marker_pos)"
assert_eq "marker $SEED" "$(search_doc "$PIDX" "$mk" | jq -r .name)" "the marker reached the engine"

# graceful stop: drains, exits 0
daemon_stop
rc_d=$DAEMON_RC
DAEMON=""
assert_eq 0 "$rc_d" "SIGTERM after the run: clean exit"
stops="$(grep -o 'stopped after [0-9]* transactions ([0-9]* of them built together in [0-9]* groups' "$RUNLOG" || true)"
log "daemon stops: $(tr '\n' ';' <<<"$stops")"
if [ -n "${RANDOM_EXPECT_GROUPS:-}" ]; then
    grouped=$(sed -n 's/.*(\([0-9]*\) of them built together.*/\1/p' <<<"$stops" | awk '{s += $1} END {print s + 0}')
    assert_true "transactions read while behind were built together ($grouped)" test "$grouped" -gt 100
    # and their child copy lookups made together (sync/pipeline/child_copies.c),
    # the checkpoint held meanwhile: the oracle below finds no copy left
    waits=$(grep -o "child copy lookups ([0-9]* builds' made with a later one's" "$RUNLOG" |
            sed 's/.*(\([0-9]*\) builds.*/\1/' | awk '{s += $1} END {print s + 0}')
    log "builds whose child copy lookup was made with a later one's: $waits"
    assert_true "child copy lookups of builds read while behind were made together ($waits)" test "$waits" -gt 0
fi
if [ -n "${SEARCHSYNC_TEST_ROUTE_SLICE:-}" ]; then
    sliced=$(grep -o '([0-9]* slices of large fan-outs' "$RUNLOG" | tr -dc '0-9\n' | awk '{s += $1} END {print s + 0}')
    assert_true "fan-outs over $SEARCHSYNC_TEST_ROUTE_SLICE documents were built in slices ($sliced)" test "$sliced" -gt 10
fi

# ---- the daemon's own account: restarts resumed, no errors, no dead letters
# (a kill may land before a start has logged anything: count the others)
assert_eq 1 "$(grep -c 'has no checkpoint' "$RUNLOG")" "only the first start had no checkpoint"
[ "$KILLS" = 0 ] || assert_true "restarts resumed from the checkpoint" \
    test "$(grep -c 'resuming source random at' "$RUNLOG")" -ge 1
errs=$(grep -E ' (ERROR) \[|dead letter' "$RUNLOG" | head -5 || true)
assert_eq "" "$errs" "no ERROR and no dead letter in the daemon log"
assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM \`$meta\`.dead_letters")" "no dead letters"
warns=$(grep -c ' WARN  \[' "$RUNLOG" || true)
[ "$warns" = 0 ] || log "daemon warnings: $warns, e.g. $(grep ' WARN  \[' "$RUNLOG" | head -3)"

# ---- the index: 3 primary shards
assert_eq 3 "$(search_get "/$PIDX/_settings" | jq -r '[.[] | .settings.index.number_of_shards][0]')" "products index: 3 primary shards"
assert_eq 3 "$(search_get "/$BIDX/_settings" | jq -r '[.[] | .settings.index.number_of_shards][0]')" "brands index: 3 primary shards"

# ---- engine vs oracle
oracle_dump "$D" "$TEST_TMP/oracle" || fail "oracle queries failed"
engine_dump "$PIDX" "$TEST_TMP/products.engine" 2>"$TEST_TMP/dump.err" || {
    cat "$TEST_TMP/dump.err"; fail "engine dump of $PIDX"; }
engine_dump "$BIDX" "$TEST_TMP/brands.engine" 2>>"$TEST_TMP/dump.err" || {
    cat "$TEST_TMP/dump.err"; fail "engine dump of $BIDX"; }
log "$(tr '\n' ' ' <"$TEST_TMP/dump.err")"
o="$TEST_TMP/oracle"
log "oracle: $(wc -l <"$o/products.oracle") products, $(wc -l <"$o/reviews.oracle") reviews, $(wc -l <"$o/replies.oracle") replies, $(wc -l <"$o/brands.oracle") brands"
_LIB_ASSERTS=$((_LIB_ASSERTS + 1))
compare_docs "$TEST_TMP/products.engine" "$o/products.oracle,$o/reviews.oracle,$o/replies.oracle" \
    --numbers value --ignore-field ss_version --ignore-field ss_hash --ignore-field ss_key_hash --label "$PIDX" --show 8 >"$TEST_TMP/cmp.products" ||
    { cat "$TEST_TMP/cmp.products"; fail "products index differs from the SQL oracle (seed $SEED)"; }
log "$(cat "$TEST_TMP/cmp.products")"
_LIB_ASSERTS=$((_LIB_ASSERTS + 1))
compare_docs "$TEST_TMP/brands.engine" "$o/brands.oracle" --numbers value --ignore-field ss_version --ignore-field ss_hash --ignore-field ss_key_hash --label "$BIDX" \
    >"$TEST_TMP/cmp.brands" ||
    { cat "$TEST_TMP/cmp.brands"; fail "brands index differs from the SQL oracle (seed $SEED)"; }
log "$(cat "$TEST_TMP/cmp.brands")"
# the run was not trivially empty: moved/re-keyed/orphaned shapes exist
assert_true "children of products that do not exist (moved or deleted parents) were covered" \
    test "$(mysql_q "SELECT COUNT(*) FROM reviews r WHERE NOT EXISTS (SELECT 1 FROM products p WHERE p.id = r.product_id)" "$D")" -gt 0
assert_true "excluded INTERNAL barcodes exist" \
    test "$(mysql_q "SELECT COUNT(*) FROM sku_barcodes WHERE kind = 'INTERNAL'" "$D")" -gt 0
log "BENCH run_random ops=$OPS kills=$KILLS operations ${ops_secs}s, total $(( $(date +%s) - t0 ))s"
pass
