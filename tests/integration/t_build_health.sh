#!/usr/bin/env bash
# tests/integration/t_build_health.sh — the "build workers" row of the node's
# health (docs/operations.md, "The node's health"), with real MariaDB and
# OpenSearch and a real AF_UNIX datagram socket standing in for systemd's.
# The node's bound is small here (short timeouts: 2 x 4 s + 10 s = 18 s):
#   idle     no build under way: the node is well
#   stalled  a session holds LOCK TABLES ... WRITE on `stores`, a relation
#            table every page's snapshot opens, while version 2 is built:
#            each page read waits on it until [source] read_timeout_ms drops
#            it, and is tried again (no page read, so no progress, the server
#            answering: not an outage). Past the bound the watchdog stops
#            pinging and logs "build workers", and status --json (valid
#            against docs/status.schema.json), the text status and GET
#            /api/v1/status name it
#   clears   the lock goes: the pages are read, the node is well again, the
#            version goes live, and every document equals the SQL oracle
#            computed by the server
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
require_bin
db="$(unique_name bh)"
meta="$(unique_name meta)"
alias="$(unique_name bh)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
mysql_q "CREATE DATABASE \`$db\`"
mysql_q "USE \`$db\`;
CREATE TABLE stores (id INT PRIMARY KEY, name VARCHAR(50) NOT NULL, city VARCHAR(50) NULL);
CREATE TABLE items (id BIGINT PRIMARY KEY, store_id INT NULL, name VARCHAR(100) NOT NULL,
  qty INT NULL, price DECIMAL(10,2) NULL, created_at DATETIME(3) NOT NULL);
CREATE TABLE item_parts (id BIGINT PRIMARY KEY, item_id BIGINT NOT NULL, label VARCHAR(50) NOT NULL, n INT NOT NULL);
CREATE TABLE notes (id BIGINT PRIMARY KEY, item_id BIGINT NOT NULL, body VARCHAR(200) NOT NULL);
CREATE TABLE nums (seq INT PRIMARY KEY);
INSERT INTO nums VALUES ($(seq -s '),(' 1 400));
INSERT INTO stores VALUES (1, 'north', 'Oslo'), (2, 'south', NULL), (3, 'east', 'Riga');
INSERT INTO items SELECT seq, 1 + seq % 4, CONCAT('item ', seq), IF(seq % 5 = 0, NULL, seq * 3),
  IF(seq % 7 = 0, NULL, seq * 1.25), TIMESTAMP('2024-01-31 12:00:00.125') + INTERVAL seq MINUTE FROM nums;
INSERT INTO item_parts SELECT seq, 1 + seq % 97, CONCAT('part-', seq), seq FROM nums;
INSERT INTO notes SELECT seq, 1 + seq % 53, CONCAT('note ', seq) FROM nums WHERE seq <= 120;"
oracle_items_mapping "$db" "$alias" >"$TEST_TMP/mapping.json"
PORT="$(free_port)"
TOKEN="$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = bh
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $((7530 + $$ % 40))
start = now
heartbeat_ms = 500
connect_timeout_ms = 1000
read_timeout_ms = 3000
[metadata]
database = $meta
reload_interval_ms = 300
[search]
urls = $SEARCH_URL
connect_timeout_ms = 1000
timeout_ms = 3000
[delivery]
drain_timeout_ms = 3000
flush_interval_ms = 50
[reindex]
buckets = 2
page_size = 50
[admin]
listen = 127.0.0.1:$PORT
[log]
level = info
INI
BOUND=18000
export SEARCHSYNC_ADMIN_TOKEN="$TOKEN"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" --yes "$TEST_TMP/mapping.json" >"$TEST_TMP/import.out" 2>&1 ||
    fail "mapping import: $(cat "$TEST_TMP/import.out")"

status_json() { # FILE — `searchsync status --json` into FILE (exit 0 or 3), validated
    local rc=0
    "$SEARCHSYNC_BIN" status --config "$TEST_TMP/c.ini" --json >"$1" 2>"$1.err" || rc=$?
    [ "$rc" = 0 ] || [ "$rc" = 3 ] || fail "status --json exited $rc: $(cat "$1.err")"
    status_schema_check "$1" || fail "status --json does not match docs/status.schema.json: $(cat "$1")"
}
node_healthy_is() { # true|false — the running node's state says so
    status_json "$TEST_TMP/st.json"
    [ "$(jq -r '[.nodes[] | select(.role != "stopped") | .state.healthy] | first' "$TEST_TMP/st.json")" = "$1" ]
}
unwell_subsystems() { jq -r '[.nodes[] | select(.role != "stopped") | .state.unwell[].subsystem] | join(",")' "$TEST_TMP/st.json"; }
live_version() { mysql_q "SELECT current_version FROM \`$meta\`.index_configs WHERE alias = '$alias'"; }
live_version_is() { [ "$(live_version)" = "$1" ]; }

# systemd's side of sd_notify (lib.sh)
notify_listen

NOTIFY_SOCKET="$sock" WATCHDOG_USEC=2000000 daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 40 lines)"; tail -40 "$TEST_TMP/run.log"; }'
daemon_wait_ready 60
wait_until 60 "the first build is live" live_version_is 1
oracle_check_items "$db" "$alias" "the first build"

# ---- idle: no build under way is well
wait_until 30 "the node's state says it is well" node_healthy_is true
assert_eq "" "$(unwell_subsystems)" "nothing unwell with no build"

# ---- stalled: every page's snapshot waits on the lock of stores
lock_table "\`$db\`.stores"
# a failure before unlock_table: the session holding it ends with the test
on_exit 'held=$(_lock_holder_id); [ -z "$held" ] || mysql_q "KILL $held" >/dev/null 2>&1'
"$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/c.ini" "$alias" --no-wait >"$TEST_TMP/reindex.out" 2>&1 ||
    fail "reindex: $(cat "$TEST_TMP/reindex.out")"
wait_until 30 "a page read waits on the lock" has_output lock_waiter stores
t0=$(date +%s)
log "a page read waits on the lock of stores; the bound is $BOUND ms"
wait_until 40 "the watchdog stops, naming the build workers" \
    grep -q "not pinging systemd's watchdog: build workers: $alias v2 (worker [0-9]*, bucket [0-9]*): has read, delivered or waited on no page for more than $BOUND ms" "$TEST_TMP/run.log"
t1=$(date +%s)
log "flagged $((t1 - t0)) s after the first page read waited on the lock"
[ $((t1 - t0)) -ge $((BOUND / 1000 - 4)) ] || fail "flagged before the bound: $((t1 - t0)) s"
n0=$(pings)
sleep 2
assert_eq "$n0" "$(pings)" "no ping while a build worker is stalled"
wait_until 10 "status says the node is unwell" node_healthy_is false
assert_contains "$(unwell_subsystems)" "build workers" "the unwell subsystem"
assert_eq false "$(jq -r .ok "$TEST_TMP/st.json")" "status ok"
assert_true "the subsystem in errors" jq -e '[.errors[] | select(test("^node .*: build workers: .* v2 \\(worker [0-9]+, bucket [0-9]+\\): has read, delivered or waited on no page"))] | length >= 1' "$TEST_TMP/st.json"
curl -sS -m 10 -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/api/v1/status" >"$TEST_TMP/api.json"
assert_true "GET /api/v1/status: the build workers unwell" jq -e '[.nodes[] | select(.role != "stopped") | .state.unwell[].subsystem] | index("build workers") != null' "$TEST_TMP/api.json"
"$SEARCHSYNC_BIN" status --config "$TEST_TMP/c.ini" >"$TEST_TMP/st.txt" 2>&1 || true
assert_contains "$(cat "$TEST_TMP/st.txt")" "UNWELL build workers: $alias v2" "the text status"
assert_eq 1 "$(live_version)" "version 1 still live while version 2 waits"

# ---- clears: the lock goes, the pages are read, the version goes live
unlock_table
log "lock released $(( $(date +%s) - t0 )) s after the first wait"
wait_until 60 "version 2 is live" live_version_is 2
wait_until 10 "the watchdog is pinged again" grep -q "the watchdog is pinged again" "$TEST_TMP/run.log"
n1=$(pings)
wait_until 10 "pings again" pinged $((n1 + 2))
wait_until 10 "status says the node is well again" node_healthy_is true
assert_true "no node in errors" jq -e '[.errors[] | select(startswith("node "))] | length == 0' "$TEST_TMP/st.json"
if grep -q "version 2 failed" "$TEST_TMP/run.log"; then fail "the build failed: $(grep "failed" "$TEST_TMP/run.log" | head -3)"; fi
oracle_check_items "$db" "$alias" "version 2, built across the stall"
assert_eq "${alias}_v2" "$(curl -s "$SEARCH_URL/_alias/$alias" | jq -r 'keys[0]')" "the alias on version 2"
daemon_stop
assert_eq 0 "$DAEMON_RC" "a clean exit"
pass
