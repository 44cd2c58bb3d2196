#!/usr/bin/env bash
# tests/integration/t_reindex_late_page.sh — a page of a reindex acknowledged
# later than the version being built keeps deletes ([reindex] gc_deletes_s):
# it may have brought back a document deleted since it was read, so that
# version is never switched to. The daemon talks to the engine through
# tests/tools/fault_proxy.py, which holds the version's bulk requests while a
# flag file exists. With gc_deletes_s = 10 the version is created with
# index.gc_deletes = 10s; a page held 12 s fails the build (rolled back, said
# in the log and the run), which is queued again and goes live; every row has
# its document, the alias never pointed at the failed version.
. "$(dirname "$0")/lib.sh"
require_bin
command -v python3 >/dev/null || skip "python3 needed for the fault proxy"

db="$(unique_name late)"
meta="$(unique_name meta)"
flag="$TEST_TMP/hold"
alias="${db}_items"
on_exit "curl -s -XDELETE '$SEARCH_URL/${alias}_*?expand_wildcards=all' >/dev/null"
python3 "$SEARCHSYNC_SRCDIR/tests/tools/fault_proxy.py" "$TEST_TMP/proxy.port" "$SEARCH_URL" \
    POST '_bulk' "$flag" hold "\"_index\":\"${alias}_v2\"" 2>"$TEST_TMP/proxy.err" &
proxy=$!
on_exit "rm -f '$flag'; kill $proxy 2>/dev/null"
wait_until 10 "the fault proxy listens" test -s "$TEST_TMP/proxy.port"

mysql_q "CREATE DATABASE \`$db\`"
mysql_q "CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(50) NOT NULL);
         INSERT INTO items SELECT seq, CONCAT('item ', seq) FROM seq_1_to_2000" "$db"
cat >"$TEST_TMP/mapping.json" <<JSON
{"version": 1, "indices": [
  {"alias": "$alias", "shards": 1, "replicas": 0, "tables": [
    {"table": "$db.items",
     "columns": [{"name": "id", "type": "long", "key": true}, {"name": "name", "type": "keyword"}]}]}
]}
JSON
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = late
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = 7341
start = now
[metadata]
database = $meta
[search]
urls = http://127.0.0.1:$(cat "$TEST_TMP/proxy.port")
[reindex]
buckets = 1
page_size = 400
gc_deletes_s = 10
[log]
level = info
INI
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/mapping.json" --yes \
    >"$TEST_TMP/import.out" 2>&1 || fail "import: $(cat "$TEST_TMP/import.out")"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 30 lines)"; tail -30 "$TEST_TMP/run.log"; }'
daemon_wait_log "live changes no longer written to ${alias}_v1" 60 # the first sync

touch "$flag"
"$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/c.ini" "$alias" --no-wait >"$TEST_TMP/r.out" 2>&1 ||
    fail "reindex: $(cat "$TEST_TMP/r.out")"
assert_eq 10s "$(curl -s "$SEARCH_URL/${alias}_v2/_settings" | jq -r '.[].settings.index.gc_deletes')" \
    "the version being built keeps deletes for [reindex] gc_deletes_s"
wait_until 30 "a page of v2 is held" test -s "$flag.held"
sleep 12
rm -f "$flag"
daemon_wait_log "version 2 failed and was rolled back: a page of v2 was acknowledged" 60
daemon_wait_log "${alias}: version 3 live" 120
assert_eq "${alias}_v3" "$(curl -s "$SEARCH_URL/_alias/$alias" | jq -r 'keys | join(",")')" \
    "the alias went from v1 to v3"
assert_eq "failed" "$(mysql_q "SELECT status FROM reindex_runs WHERE version = 2" "$meta")" \
    "the run of v2 is recorded failed"
assert_contains "$(mysql_q "SELECT error_text FROM reindex_runs WHERE version = 2" "$meta")" \
    "gc_deletes_s" "its error names the setting"
search_refresh "$alias"
assert_eq 2000 "$(search_count "$alias")" "every row has its document in v3"
assert_eq null "$(curl -s "$SEARCH_URL/${alias}_v3/_settings" | jq -r '.[].settings.index.gc_deletes')" \
    "the live version's gc_deletes is back to the engine's default"
pass
