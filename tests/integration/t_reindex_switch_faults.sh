#!/usr/bin/env bash
# tests/integration/t_reindex_switch_faults.sh — a reindex whose switch meets
# an engine that is briefly unavailable, against real MariaDB + OpenSearch.
# The daemon talks to the engine through tests/tools/fault_proxy.py, which
# forwards everything but answers the alias move (POST /_aliases) with 503
# while a flag file exists, as a restarting node does. The finished build
# must not be rolled back: the switch waits, and once the engine answers the
# alias moves to the new version, the run is done and every row has its
# document.
. "$(dirname "$0")/lib.sh"
require_bin
command -v python3 >/dev/null || skip "python3 needed for the fault proxy"

db="$(unique_name swfault)"
meta="$(unique_name meta)"
flag="$TEST_TMP/aliases_down"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${db}_*?expand_wildcards=all' >/dev/null"
python3 "$SEARCHSYNC_SRCDIR/tests/tools/fault_proxy.py" "$TEST_TMP/proxy.port" "$SEARCH_URL" \
    POST '^/_aliases' "$flag" 2>"$TEST_TMP/proxy.err" &
proxy=$!
on_exit "kill $proxy 2>/dev/null"
wait_until 10 "the fault proxy listens" test -s "$TEST_TMP/proxy.port"
PROXY_URL="http://127.0.0.1:$(cat "$TEST_TMP/proxy.port")"

mysql_q "CREATE DATABASE \`$db\`"
mysql_q "CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(50) NOT NULL);
         INSERT INTO items SELECT seq, CONCAT('item ', seq) FROM seq_1_to_2000" "$db"
cat >"$TEST_TMP/mapping.json" <<JSON
{"version": 1, "indices": [
  {"alias": "${db}_items", "shards": 1, "replicas": 0, "tables": [
    {"table": "$db.items",
     "columns": [{"name": "id", "type": "long", "key": true}, {"name": "name", "type": "keyword"}]}]}
]}
JSON
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = swfault
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = 7333
start = now
heartbeat_ms = 300
[metadata]
database = $meta
[search]
urls = $PROXY_URL
[reindex]
page_size = 200
[log]
level = info
INI
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/mapping.json" --yes \
    >"$TEST_TMP/import.out" 2>&1 || fail "import: $(cat "$TEST_TMP/import.out")"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 30 lines)"; tail -30 "$TEST_TMP/run.log"; }'
daemon_wait_log "live changes no longer written to ${db}_items_v1" 30 # the first sync

# the alias move refused while the flag exists; the reindex's pages go through
touch "$flag"
"$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/c.ini" "${db}_items" --no-wait >"$TEST_TMP/r.out" 2>&1 ||
    fail "reindex: $(cat "$TEST_TMP/r.out")"
refused() { [ "$(wc -l <"$flag.refused" 2>/dev/null || echo 0)" -ge 3 ]; }
wait_until 60 "the switch refused 3 times" refused
assert_eq "switching" "$(mysql_q "SELECT state FROM index_configs WHERE alias = '${db}_items'" "$meta")" \
    "the build waits in its switch"
assert_eq "${db}_items_v1" "$(curl -s "$SEARCH_URL/_alias/${db}_items" | jq -r 'keys | join(",")')" \
    "meanwhile the alias stays on v1"
rm -f "$flag"
wait_until 30 "the alias moved once the engine answered" bash -c \
    "curl -s '$SEARCH_URL/_alias/${db}_items' | jq -e 'has(\"${db}_items_v2\")' >/dev/null"
assert_eq "${db}_items_v2" "$(curl -s "$SEARCH_URL/_alias/${db}_items" | jq -r 'keys | join(",")')" "the alias on v2 only"
wait_until 20 "the run closed" bash -c \
    "[ \"\$(mariadb --no-defaults -h $MYSQL_HOST -P $MYSQL_PORT -uroot -N -B -e \"SELECT status FROM reindex_runs WHERE version = 2\" '$meta')\" = done ]"
assert_eq "available 2 0" "$(mysql_q "SELECT state, current_version, building_version FROM index_configs WHERE alias = '${db}_items'" "$meta" | tr '\t' ' ')" \
    "the config is available on v2"
search_refresh "${db}_items"
assert_eq "$(mysql_q "SELECT COUNT(*) FROM items" "$db")" "$(search_count "${db}_items")" "every row has its document in v2"
assert_contains "$(grep 'the switch goes on when the engine answers' "$TEST_TMP/run.log" | head -1)" "HTTP 503" \
    "the log says the switch waits for the engine, and why"
assert_eq "" "$(grep -E 'ERROR' "$TEST_TMP/run.log" || true)" "no errors in the daemon log"
daemon_stop
pass
