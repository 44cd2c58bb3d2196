#!/usr/bin/env bash
# tests/integration/t_reindex_engine_restart.sh — a version is built with its
# translog written asynchronously (the engine acknowledges a batch before it
# is on disk), so an engine that restarts mid-build may lose writes the jobs'
# cursors are already past. Against real MariaDB + OpenSearch:
#
#   restart     the engine is SIGKILLed and restarted while v2 is built (once
#               its first pages were acknowledged), with a writer changing
#               products the whole time: v2 is never
#               switched to; it fails ("the engine restarted while v2 was
#               built"), is rolled back and queued again as v3, which the
#               `searchsync reindex` command follows to the end (exit 0).
#               Every document behind the alias then equals the SQL oracle,
#               v2's index is gone, and its pages in flight left no dead
#               letters and no job errors.
#   settings    while built a version writes its translog asynchronously;
#               after the switch it is back to the default
#   bounded     with the two builds before it lost the same way (recorded in
#               reindex_runs), a third is not queued again: the command exits
#               1 and says so, the alias stays
#   left behind a failed build's index still in the engine is deleted at the
#               daemon's next start
# Sizes: REINDEX_PRODUCTS (default 3000).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
require_bin
command -v python3 >/dev/null || skip "python3 needed for the oracle comparison"
N="${REINDEX_PRODUCTS:-3000}"
bash "$SEARCHSYNC_SRCDIR/sql/demo/generate.sh" --products "$N" >/dev/null
meta="$(unique_name meta)"
curl -s -XDELETE "$SEARCH_URL/products*,brands*?expand_wildcards=all" >/dev/null # left by others
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/products_v*,brands_v*?expand_wildcards=all' >/dev/null"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = shop
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = 7331
start = now
heartbeat_ms = 500
[metadata]
database = $meta
reload_interval_ms = 300
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
[reindex]
buckets = 4
page_size = 100
[log]
level = info
INI
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$SEARCHSYNC_SRCDIR/sql/demo/mapping.json" --yes \
    >"$TEST_TMP/import.out" 2>&1 || fail "import: $(cat "$TEST_TMP/import.out")"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 40 lines)"; tail -40 "$TEST_TMP/run.log"; }'
meta_q() { mysql_q "$1" "$meta"; }
alias_target() { curl -s "$SEARCH_URL/_alias/$1" | jq -r 'keys | join(",")'; }
settings_of() { curl -s "$SEARCH_URL/$1/_settings" | jq -r '.[].settings.index | "\(.refresh_interval) \(.translog.durability)"'; }
wait_until $((120 + N / 1000)) "first sync: alias products -> products_v1" bash -c "curl -s '$SEARCH_URL/_alias/products' | jq -e 'has(\"products_v1\")' >/dev/null" ||
    fail "no first sync: $(tail -20 "$TEST_TMP/run.log")"
assert_eq "null null" "$(settings_of products_v1)" "v1 after its switch: refresh and translog back to the defaults"

# reindex v(N) in the background; once its first pages are acknowledged the
# engine is SIGKILLed and restarted (the jobs wait for it)
restart_engine_mid_build() { # $1: the version being built
    "$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/c.ini" products >"$TEST_TMP/reindex$1.out" 2>&1 &
    REINDEX=$!
    on_exit "kill $REINDEX 2>/dev/null"
    wait_until 60 "v$1's first pages acknowledged" bash -c \
        "[ \"\$(mariadb --no-defaults -h $MYSQL_HOST -P $MYSQL_PORT -uroot -N -B -e 'SELECT COALESCE(SUM(rows_read), 0) FROM jobs WHERE version = $1' '$meta')\" -gt 0 ]"
    local during
    during="$(settings_of "products_v$1")"
    bash "$HARNESS/servers.sh" kill opensearch >/dev/null
    assert_eq "-1 async" "$during" "v$1 while built: no refreshes, translog written asynchronously"
    log "v$1: $(meta_q "SELECT SUM(rows_read) FROM jobs WHERE version = $1") rows acknowledged when the engine was SIGKILLed"
    assert_eq "$1" "$(meta_q "SELECT building_version FROM index_configs WHERE alias = 'products'")" "the kill came mid-build"
    sleep 1
    bash "$HARNESS/servers.sh" restart opensearch >"$TEST_TMP/restart$1.log" 2>&1 ||
        { tail -20 "$TEST_TMP/restart$1.log"; fail "engine restart"; }
    . "$SEARCHSYNC_HARNESS_DIR/env.sh"
}

# ---- restart: v2 rolled back and queued again as v3, with a writer running
cat >"$TEST_TMP/writer.sh" <<'SH'
i=0
while [ ! -f "$STOP" ]; do
    i=$((i + 1))
    p=$(( (i * 7919) % N + 1 ))
    mariadb --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -u root shop -e "
      UPDATE products SET name = CONCAT('w', $i, ' ', LEFT(name, 40)), price = price + 1 WHERE id = $p;
      UPDATE skus SET stock = stock + 1 WHERE product_id = $(( (i * 104729) % N + 1 ));" || exit 1
    sleep 0.05
done
SH
export STOP="$TEST_TMP/stop" N MYSQL_HOST MYSQL_PORT
bash "$TEST_TMP/writer.sh" &
WRITER=$!
on_exit "touch '$TEST_TMP/stop'; kill $WRITER 2>/dev/null"
restart_engine_mid_build 2
st=0; wait "$REINDEX" || st=$?
touch "$TEST_TMP/stop"; wait "$WRITER" || fail "the writer failed"
out="$(cat "$TEST_TMP/reindex2.out")"
assert_eq 0 "$st" "the reindex command ends well, following the build queued again: $(tail -3 "$TEST_TMP/reindex2.out")"
assert_contains "$out" "products v2 failed: the engine restarted while v2 was built (primary terms 1,1,1, now 2,2,2)" "it says why v2 was dropped"
assert_contains "$out" "following products v3, queued in place of v2" "and follows the build queued in its place"
assert_contains "$out" "products v3 is live" "which finishes"
assert_eq "products_v3" "$(alias_target products)" "the alias points at v3"
assert_true "v2's index is gone" bash -c "! curl -sf '$SEARCH_URL/products_v2' -o /dev/null"
assert_eq "failed" "$(meta_q "SELECT status FROM reindex_runs WHERE alias = 'products' AND version = 2")" "v2's run: failed"
assert_contains "$(meta_q "SELECT error_text FROM reindex_runs WHERE alias = 'products' AND version = 2")" "; queued again" "v2's run: queued again"
assert_eq "done" "$(meta_q "SELECT status FROM reindex_runs WHERE alias = 'products' AND version = 3")" "v3's run: done"
assert_eq 0 "$(meta_q "SELECT COUNT(*) FROM job_errors e JOIN reindex_runs r ON r.id = e.run_id WHERE r.version = 2")" \
    "v2's pages in flight when its index went: no job errors"
assert_eq 0 "$(meta_q "SELECT COUNT(*) FROM dead_letters WHERE index_name = 'products_v2'")" "nor dead letters"
assert_eq "null null" "$(settings_of products_v3)" "v3 after its switch: refresh and translog back to the defaults"
mysql_q "UPDATE shop.products SET name = 'after the restart' WHERE id = 1"
wait_until 60 "a live change after the rebuild" bash -c "curl -s '$SEARCH_URL/products/_doc/1' | jq -e '._source.name == \"after the restart\"' >/dev/null"
wait_checkpoint "$meta" shop
search_refresh products
oracle_check_products shop products "after a build lost to an engine restart"

# ---- bounded: the third build in a row lost this way is not queued again
id="$(meta_q "SELECT id FROM index_configs WHERE alias = 'products'")"
meta_q "INSERT INTO reindex_runs (source, index_id, alias, version, status, error_text, finished_at) VALUES
        ('shop', $id, 'products', 901, 'failed', 'the engine restarted while v901 was built (test); queued again', NOW(3)),
        ('shop', $id, 'products', 902, 'failed', 'the engine restarted while v902 was built (test); queued again', NOW(3))"
restart_engine_mid_build 903
st=0; wait "$REINDEX" || st=$?
assert_eq 1 "$st" "the third lost build in a row: the command exits 1"
assert_contains "$(cat "$TEST_TMP/reindex903.out")" "not queued again: the third build in a row" "and says why"
assert_eq "products_v3" "$(alias_target products)" "the alias stays on v3"
assert_eq "available 3 0" "$(meta_q "SELECT state, current_version, building_version FROM index_configs WHERE alias = 'products'" | tr '\t' ' ')" \
    "no build queued, the previous state"
# ---- left behind: a failed build's index still in the engine (a daemon
# stopped between the failure and deleting it) goes at the next start
daemon_stop
curl -s -XPUT "$SEARCH_URL/products_v2" >/dev/null
assert_true "products_v2 re-created by hand" curl -sf "$SEARCH_URL/products_v2" -o /dev/null
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
wait_until 30 "the failed build's index deleted at the start" bash -c "! curl -sf '$SEARCH_URL/products_v2' -o /dev/null"
assert_contains "$(cat "$TEST_TMP/run.log")" "deleted products_v2, left behind by a build that did not go live" "the log says so"
assert_eq "products_v3" "$(alias_target products)" "the live version untouched"
daemon_stop
pass
