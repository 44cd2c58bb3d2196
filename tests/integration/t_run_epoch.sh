#!/usr/bin/env bash
# tests/integration/t_run_epoch.sh — failover to a server with unrelated, lower
# binlog positions (epochs, docs/operations.md). The daemon first syncs from server A.
# Switched to a fresh server B, its writes carry smaller versions than the
# stored documents and the engine refuses them as stale. After `searchsync
# epoch bump --reset-checkpoint` they land, because the epoch outranks every
# position written before.
. "$(dirname "$0")/lib.sh"
require_bin
map="$SEARCHSYNC_SRCDIR/sql/demo/mapping.json"
bash "$SEARCHSYNC_SRCDIR/sql/demo/generate.sh" --products 200 >/dev/null
# push server A's binlog well past where a fresh server starts
mysql_q "CREATE DATABASE IF NOT EXISTS test; CREATE TABLE IF NOT EXISTS test.pad (id INT PRIMARY KEY, b LONGTEXT); REPLACE INTO test.pad VALUES (1, REPEAT('x', 2000000))"
# server B: fresh, the same shop
export SEARCHSYNC_HARNESS_DIR_B="$TEST_TMP/b"
# (the client tools read MYSQL_HOST from the environment: hide server A from them)
env -u MYSQL_HOST -u MYSQL_PORT SEARCHSYNC_HARNESS_DIR="$SEARCHSYNC_HARNESS_DIR_B" bash "$HARNESS/mariadb.sh" start >"$TEST_TMP/b.log" 2>&1 || fail "second MariaDB did not start: $(tail -5 "$TEST_TMP/b.log")"
on_exit 'env -u MYSQL_HOST -u MYSQL_PORT SEARCHSYNC_HARNESS_DIR="$SEARCHSYNC_HARNESS_DIR_B" bash "$HARNESS/mariadb.sh" stop >/dev/null 2>&1'
B_PORT="$(. "$SEARCHSYNC_HARNESS_DIR_B/mariadb.env"; echo "$MYSQL_PORT")"
bash "$SEARCHSYNC_SRCDIR/sql/demo/generate.sh" --products 200 --host 127.0.0.1 --port "$B_PORT" --user root >/dev/null
qb() { mariadb --no-defaults -h 127.0.0.1 -P "$B_PORT" -u root --batch --skip-column-names -e "$1"; }

meta="$(unique_name meta)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/products_v1,brands_v1' >/dev/null"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 30 lines)"; tail -30 "$TEST_TMP/run.log"; }'
# the admin API, for the delivery counters in GET /metrics
ADMIN_PORT="$(free_port)"
SEARCHSYNC_ADMIN_TOKEN="$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')"
export SEARCHSYNC_ADMIN_TOKEN
metric() { # metric NAME: its value in the running daemon's GET /metrics
    curl -sS -m 30 -H "Authorization: Bearer $SEARCHSYNC_ADMIN_TOKEN" "http://127.0.0.1:$ADMIN_PORT/metrics" |
        awk -v n="$1" '$1 == n || index($1, n "{") == 1 {print $2}'
}
config() { # config PORT SERVER_ID: the source changes, the metadata stays on A
    cat >"$TEST_TMP/c.ini" <<INI
[source]
name = shop
host = 127.0.0.1
port = $1
user = root
server_id = $2
start = now
[metadata]
host = 127.0.0.1
port = $MYSQL_PORT
user = root
database = $meta
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
[admin]
listen = 127.0.0.1:$ADMIN_PORT
INI
}
named() { # named ID NAME: product ID's document is named NAME
    curl -s "$SEARCH_URL/products/_doc/$1" | jq -e --arg n "$2" '._source.name == $n' >/dev/null
}
name_of() { curl -s "$SEARCH_URL/products/_doc/$1" | jq -r ._source.name; }

config "$MYSQL_PORT" 7401
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$map" --yes >/dev/null
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
wait_until 30 "index created" bash -c "curl -sf '$SEARCH_URL/_alias/products' >/dev/null"
daemon_wait_ready
mysql_q "UPDATE shop.products SET name = 'from A' WHERE id = 1"
wait_until 30 "A's write indexed" bash -c "curl -s '$SEARCH_URL/products/_doc/1' | jq -e '._source.name == \"from A\"' >/dev/null"
daemon_stop
va="$(curl -s "$SEARCH_URL/products/_doc/1" | jq ._version)"

# failover to B without a bump: B's versions are lower, the engine keeps A's
# document. That the document did not change says something only once the
# daemon is known to have read B's update and delivered it: a product inserted
# on B after it reaches the engine, the checkpoint passes the update, and the
# engine refused that write as stale (the delivery counter in /metrics)
config "$B_PORT" 7402
mysql_q "DELETE FROM \`$meta\`.offsets WHERE source = 'shop'" # (what --reset-checkpoint does, without the bump)
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
daemon_wait_ready # start = now: B's position saved, the reader connected
qb "UPDATE shop.products SET name = 'from B, no bump' WHERE id = 1"
qb "INSERT INTO shop.products (id, name, price, created_at) VALUES (900001, 'new on B', 1.00, NOW(3))"
read -r b_file b_pos <<<"$(qb 'SHOW MASTER STATUS' | cut -f1,2)"
wait_until 30 "B's new product indexed (the daemon reads B)" named 900001 "new on B"
wait_until 30 "the checkpoint of B at or past its update ($b_file:$b_pos)" checkpoint_reached "$meta" shop "$b_file" "$b_pos"
stale="$(metric searchsync_delivery_index_stale_total)"
assert_true "the engine refused B's update as stale (stale writes counted: ${stale:-none})" test "${stale:-0}" -ge 1
daemon_stop
assert_eq 0 "$DAEMON_RC" "SIGTERM: clean exit"
assert_eq "from A" "$(name_of 1)" "without a bump, B's lower versions lose against A's document"
assert_true "the daemon counted the refusals as stale, not as errors" grep -q "drain complete" "$TEST_TMP/run.log"

# the bump: epoch + 1 and the checkpoint reset; B's next write lands
out="$("$SEARCHSYNC_BIN" epoch bump --config "$TEST_TMP/c.ini" --reset-checkpoint)" || fail "epoch bump: $out"
assert_contains "$out" "products	epoch 1" "products is at epoch 1"
assert_contains "$out" "checkpoint of source shop reset" "the checkpoint was reset"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
daemon_wait_ready
qb "UPDATE shop.products SET name = 'from B after bump' WHERE id = 1"
wait_until 30 "B's write after the bump indexed" named 1 "from B after bump"
daemon_stop
assert_eq "from B after bump" "$(name_of 1)" "after the bump B's write lands"
vb="$(curl -s "$SEARCH_URL/products/_doc/1" | jq ._version)"
assert_true "the new version ($vb) outranks A's ($va)" test "$vb" -gt "$va"
assert_eq 1 "$(( vb >> 53 ))" "the version carries epoch 1 in its top bits"
set +e
"$SEARCHSYNC_BIN" epoch bump --config "$TEST_TMP/c.ini" --index nosuch >"$TEST_TMP/o" 2>&1; rc2=$?
set -e
assert_eq 2 "$rc2" "bump of an unknown index: usage error"
pass
