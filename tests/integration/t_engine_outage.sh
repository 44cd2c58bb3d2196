#!/usr/bin/env bash
# tests/integration/t_engine_outage.sh — engine outages are handled like
# source outages, against real MariaDB + OpenSearch:
#
#   down at start  `searchsync run` started while the engine is stopped logs
#                  that it waits (WARN, with a timestamp), keeps waiting, and
#                  syncs once the engine is restarted: the index equals the
#                  SQL oracle.
#   hung engine    the engine SIGSTOPped under writes: a log line within ~10 s
#                  (requests without an answer), a recovery line after SIGCONT,
#                  and no change lost: the index equals the SQL oracle.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
require_bin
map="$SEARCHSYNC_SRCDIR/sql/demo/mapping.json"
bash "$SEARCHSYNC_SRCDIR/sql/demo/generate.sh" --products 100 >/dev/null
meta="$(unique_name meta)"
on_exit "bash '$HARNESS/servers.sh' resume opensearch >/dev/null 2>&1; mysql_q 'DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/products_v*,brands_v*,warehouses_v*?ignore_unavailable=true' >/dev/null"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = shop
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = 7319
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

# ---- down at start
log "engine stopped; starting the daemon"
bash "$HARNESS/servers.sh" kill opensearch >/dev/null
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 40 lines)"; tail -40 "$TEST_TMP/run.log"; }'
ts='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z'
wait_until 20 "the daemon says it waits for the engine" \
    grep -qE "$ts WARN +\[search\] the search engine at .* does not answer" "$TEST_TMP/run.log"
mysql_q "UPDATE shop.products SET name = 'changed while the engine was down' WHERE id = 3"
sleep 3
assert_true "the daemon still runs, waiting" kill -0 "$DAEMON"
assert_eq 1 "$(grep -c "does not answer" "$TEST_TMP/run.log")" "the wait is said once"
log "restarting the engine"
bash "$HARNESS/servers.sh" restart opensearch >"$TEST_TMP/restart.log" 2>&1 ||
    { tail -20 "$TEST_TMP/restart.log"; fail "engine restart"; }
. "$SEARCHSYNC_HARNESS_DIR/env.sh"
wait_until 60 "the daemon says the engine answers" grep -q "the search engine answers after" "$TEST_TMP/run.log"
wait_until 60 "the first sync's dual writes ended" \
    grep -q "products: live changes no longer written to products_v1" "$TEST_TMP/run.log"

marker_n=0
marker() { # a change after the others; wait until it and everything before is delivered
    marker_n=$((marker_n + 1))
    mysql_q "UPDATE shop.products SET name = 'marker $marker_n' WHERE id = 100"
    wait_until 60 "marker $marker_n delivered" bash -c \
        "curl -s '$SEARCH_URL/products/_doc/100' | jq -e '._source.name == \"marker $marker_n\"' >/dev/null"
    wait_checkpoint "$meta" shop 30
    search_refresh products
}
marker
oracle_check_products shop products "engine down at start"

# ---- hung engine under writes
writes() {
    local i
    for ((i = 1; i <= 150; i++)); do
        mysql_q "UPDATE shop.products SET name = CONCAT('w', $i, ' ', id) WHERE id = $((i % 90 + 1));
                 UPDATE shop.skus SET stock = stock + 1 WHERE product_id = $((i % 90 + 1))"
        sleep 0.08
    done
}
writes &
wpid=$!
sleep 2
log "SIGSTOP engine"
t0=$(date +%s)
bash "$HARNESS/servers.sh" pause opensearch >/dev/null
wait_until 12 "a line about requests without an answer" \
    grep -qE "$ts WARN +\[deliver\] a request to the search engine has had no answer" "$TEST_TMP/run.log"
said=$(($(date +%s) - t0))
log "the stall was said after ${said} s"
sleep $((8 - said > 0 ? 8 - said : 0))
log "SIGCONT engine"
bash "$HARNESS/servers.sh" resume opensearch >/dev/null
wait_until 30 "a recovery line" grep -q "the search engine answers again after" "$TEST_TMP/run.log"
wait "$wpid"
marker
oracle_check_products shop products "engine hung under writes"
assert_eq 1 "$(grep -c "has had no answer" "$TEST_TMP/run.log")" "the stall is said once"
assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM \`$meta\`.dead_letters")" "no dead letters"

kill -TERM "$DAEMON"
rc=0
wait "$DAEMON" || rc=$?
assert_eq 0 "$rc" "the daemon stops cleanly on SIGTERM"
pass
