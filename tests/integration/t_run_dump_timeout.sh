#!/usr/bin/env bash
# tests/integration/t_run_dump_timeout.sh — the binlog stream survives a
# reader held back by backpressure for longer than the server's
# net_write_timeout (under load the server used to drop the dump
# connection about every 70 s, "Lost connection to server during query
# (2013)"), against real MariaDB + OpenSearch.
#
# The server's global net_write_timeout is lowered to 2 s; the engine's bulk
# writes are held 8 s by tests/tools/fault_proxy.py (hold mode) while ~30 MB
# of binlog arrive, so the daemon's reader blocks on delivery's high-water
# mark (20) and the server's socket buffers fill. The reader sets its dump
# session's own net_write_timeout (src/binlog/reader.c): no 'connection lost'
# in the daemon log, and every row has its document afterwards.
. "$(dirname "$0")/lib.sh"
require_bin
command -v python3 >/dev/null || skip "python3 needed for the fault proxy"

db="$(unique_name dumpto)"
meta="$(unique_name meta)"
flag="$TEST_TMP/hold"
old_nwt=$(mysql_q "SELECT @@global.net_write_timeout")
on_exit "mysql_q 'SET GLOBAL net_write_timeout = $old_nwt' >/dev/null 2>&1"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${db}_*?expand_wildcards=all' >/dev/null"
python3 "$SEARCHSYNC_SRCDIR/tests/tools/fault_proxy.py" "$TEST_TMP/proxy.port" "$SEARCH_URL" \
    POST '/_bulk' "$flag" hold '.' 2>"$TEST_TMP/proxy.err" &
proxy=$!
on_exit "kill $proxy 2>/dev/null"
wait_until 10 "the fault proxy listens" test -s "$TEST_TMP/proxy.port"

mysql_q "CREATE DATABASE \`$db\`"
mysql_q "CREATE TABLE items (id INT PRIMARY KEY, body TEXT NOT NULL)" "$db"
cat >"$TEST_TMP/mapping.json" <<JSON
{"version": 1, "indices": [
  {"alias": "${db}_items", "shards": 1, "replicas": 0, "tables": [
    {"table": "$db.items",
     "columns": [{"name": "id", "type": "long", "key": true}, {"name": "body", "type": "keyword", "index": false}]}]}
]}
JSON
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = dumpto
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $((7950 + $$ % 40))
start = now
[metadata]
database = $meta
[search]
urls = http://127.0.0.1:$(cat "$TEST_TMP/proxy.port")
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
high_watermark = 20
[admin]
listen =
[log]
level = info
INI
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/mapping.json" --yes \
    >"$TEST_TMP/import.out" 2>&1 || fail "import: $(cat "$TEST_TMP/import.out")"
mysql_q "SET GLOBAL net_write_timeout = 2" # sessions take it when they connect
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 20 lines)"; tail -20 "$TEST_TMP/run.log"; }'
wait_until 60 "the first version is live" grep -q "live changes no longer written to ${db}_items_v1" "$TEST_TMP/run.log"
sleep 1

touch "$flag"
# 3000 transactions of 10 KB each: the reader blocks after 20 of them
for ((i = 1; i <= 3000; i++)); do
    echo "INSERT INTO items VALUES ($i, REPEAT('x', 10000));"
done | mysql_file /dev/stdin "$db" || fail "inserting the rows"
wait_until 30 "a bulk request is held" test -s "$flag.held"
sleep 8
rm -f "$flag"
wait_checkpoint "$meta" dumpto 120
kill -0 "$DAEMON" || fail "the daemon stopped"
assert_eq 3000 "$(search_count "${db}_items")" "every row has its document"
assert_eq 0 "$(grep -c 'connection lost' "$TEST_TMP/run.log" || true)" "the binlog stream was not dropped while the reader waited on delivery"
pass
