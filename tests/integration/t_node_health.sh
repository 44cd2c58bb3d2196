#!/usr/bin/env bash
# tests/integration/t_node_health.sh — the node's health (docs/operations.md,
# "The node's health") under systemd's notify protocol, with a real AF_UNIX
# datagram socket standing in for systemd's and real MariaDB + OpenSearch.
# The node's bound is small here (short timeouts: 2 x 4 s + 10 s = 18 s):
#   outage   the engine SIGSTOPped for longer than the bound, under writes:
#            a wait the node can name — the watchdog is pinged throughout,
#            nothing is said unwell
#   wedged   an admin call held on the node's request thread past the bound
#            (the test hook SEARCHSYNC_TEST_NODE_SLOW_*: POST .../resync waits
#            28 s before it runs): the watchdog stops pinging and the log says
#            which subsystem and why; `searchsync status --json` (valid against
#            docs/status.schema.json, strictly) and GET /api/v1/status show
#            the node unwell, `ok` false, the subsystem in `errors`; the text
#            status prints UNWELL
#   clears   once the call ran: pings again, the log says so, status is well
. "$(dirname "$0")/lib.sh"
require_bin
db="$(unique_name nh)"
meta="$(unique_name meta)"
alias="$(unique_name nh)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
# whatever happens, the engine is not left stopped for the next test
on_exit "bash '$HARNESS/servers.sh' resume opensearch >/dev/null 2>&1"
mysql_q "CREATE DATABASE \`$db\`; CREATE TABLE \`$db\`.t (id INT PRIMARY KEY, v VARCHAR(20)); INSERT INTO \`$db\`.t VALUES (1, 'a'), (2, 'b')"
PORT="$(free_port)"
TOKEN="$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = nh
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $((7490 + $$ % 40))
start = now
heartbeat_ms = 500
connect_timeout_ms = 1000
read_timeout_ms = 3000
[metadata]
database = $meta
[search]
urls = $SEARCH_URL
connect_timeout_ms = 1000
timeout_ms = 3000
[delivery]
drain_timeout_ms = 3000
[admin]
listen = 127.0.0.1:$PORT
[log]
level = info
INI
BOUND=18000
export SEARCHSYNC_ADMIN_TOKEN="$TOKEN"
import_one_table "$alias" "$db.t"

# status_json FILE — `searchsync status --json` into FILE (exit 0 or 3)
status_json() {
    local rc=0
    "$SEARCHSYNC_BIN" status --config "$TEST_TMP/c.ini" --json >"$1" 2>"$1.err" || rc=$?
    [ "$rc" = 0 ] || [ "$rc" = 3 ] || fail "status --json exited $rc: $(cat "$1.err")"
    status_schema_check "$1" || fail "status --json does not match docs/status.schema.json: $(cat "$1")"
}
node_healthy_is() { # true|false — the running node's state says so
    status_json "$TEST_TMP/st.json"
    [ "$(jq -r '[.nodes[] | select(.role != "stopped") | .state.healthy] | first' "$TEST_TMP/st.json")" = "$1" ]
}

# systemd's side of sd_notify (lib.sh)
notify_listen

export SEARCHSYNC_TEST_NODE_SLOW_MS=28000 SEARCHSYNC_TEST_NODE_SLOW_WHAT=/resync
NOTIFY_SOCKET="$sock" WATCHDOG_USEC=2000000 daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 40 lines)"; tail -40 "$TEST_TMP/run.log"; }'
daemon_wait_ready 60
wait_until 30 "the node's state says it is well" node_healthy_is true
assert_eq "[]" "$(jq -c '[.nodes[] | select(.role != "stopped") | .state.unwell[]]' "$TEST_TMP/st.json")" "nothing unwell at start"

# ---- outage: the engine stopped past the bound is a wait, not a wedge
mysql_q "INSERT INTO \`$db\`.t VALUES (3, 'c')"
log "SIGSTOP engine for $((BOUND / 1000 + 6)) s"
bash "$HARNESS/servers.sh" pause opensearch >/dev/null
n0=$(pings)
(for i in $(seq 4 20); do mysql_q "INSERT INTO \`$db\`.t VALUES ($i, 'w')"; sleep 1; done) &
writer=$!
sleep $((BOUND / 1000 + 6))
n1=$(pings)
bash "$HARNESS/servers.sh" resume opensearch >/dev/null
wait "$writer"
log "pings while the engine was stopped: $((n1 - n0))"
[ $((n1 - n0)) -ge $((BOUND / 1000)) ] || fail "the watchdog was not pinged while the engine was stopped ($((n1 - n0)) pings in $((BOUND / 1000 + 6)) s)"
if grep -q "not pinging systemd's watchdog" "$TEST_TMP/run.log"; then
    fail "an engine outage was taken for a wedge: $(grep "not pinging" "$TEST_TMP/run.log")"
fi
wait_until 60 "the writes reach the engine" \
    bash -c "[ \"\$(curl -s '$SEARCH_URL/$alias/_count' | jq .count)\" = 20 ]"

# ---- wedged: an admin call held on the node's request thread past the bound
log "POST resync, held $((SEARCHSYNC_TEST_NODE_SLOW_MS / 1000)) s on the node"
curl -sS -m 90 -XPOST -o "$TEST_TMP/resync.out" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
    -H 'Content-Type: application/json' -d '{"ids":["1"]}' \
    "http://127.0.0.1:$PORT/api/v1/indices/$alias/resync" >"$TEST_TMP/resync.code" 2>&1 &
call=$!
wait_until 40 "the watchdog stops, naming the request" \
    grep -q "not pinging systemd's watchdog: admin requests: admin call .*/resync has run for more than $BOUND ms" "$TEST_TMP/run.log"
n2=$(pings)
sleep 3
assert_eq "$n2" "$(pings)" "no ping while the request thread is wedged"
wait_until 10 "status says the node is unwell" node_healthy_is false
assert_eq "admin requests" "$(jq -r '[.nodes[] | select(.role != "stopped") | .state.unwell[0].subsystem] | first' "$TEST_TMP/st.json")" "the unwell subsystem"
assert_eq false "$(jq -r .ok "$TEST_TMP/st.json")" "status ok"
assert_true "the subsystem in errors" jq -e '[.errors[] | select(test("^node .*: admin requests: admin call .*/resync has run for more than"))] | length == 1' "$TEST_TMP/st.json"
curl -sS -m 10 -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/api/v1/status" >"$TEST_TMP/api.json"
assert_true "GET /api/v1/status: the node unwell" jq -e '[.nodes[] | select(.role != "stopped") | .state.healthy] == [false] and .ok == false' "$TEST_TMP/api.json"
"$SEARCHSYNC_BIN" status --config "$TEST_TMP/c.ini" >"$TEST_TMP/st.txt" 2>&1 || true
assert_contains "$(cat "$TEST_TMP/st.txt")" "UNWELL admin requests: admin call" "the text status"

# ---- clears: the call runs, the node is well again
wait "$call" || true
assert_eq 200 "$(cat "$TEST_TMP/resync.code")" "the held resync is answered ($(cat "$TEST_TMP/resync.out"))"
wait_until 10 "the watchdog is pinged again" grep -q "the watchdog is pinged again" "$TEST_TMP/run.log"
n3=$(pings)
wait_until 10 "pings again" pinged $((n3 + 2))
wait_until 10 "status says the node is well again" node_healthy_is true
assert_true "no node in errors" jq -e '[.errors[] | select(startswith("node "))] | length == 0' "$TEST_TMP/st.json"
daemon_stop
assert_eq 0 "$DAEMON_RC" "a clean exit"
pass
