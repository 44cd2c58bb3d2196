#!/usr/bin/env bash
# tests/integration/t_reindex_dual_write_refused.sh — a live change the
# version being built refuses (its dual write, sent to that index by name) is
# a dead letter, whatever name the source's index configs are recorded under
# ([source] mapping: several sources share one), never dropped as a write to
# a cancelled build (sync/node/daemon.c, live_dead_letter;
# src/deliver/store.c, dl_store_put_if_version looked the version up under
# the source's own name, found none and dropped the write).
#
# One source, `[source] mapping` naming its index configs otherwise. v1 is
# live; a reindex builds v2 slowly (pages of 10 of its 100 rows, their read snapshots
# held 1.5 s by SEARCHSYNC_TEST_READ_VIEW_PAUSE_MS while a file exists); v2 is given
# index.mapping.nested_objects.limit = 1, and an order (500) with 2 items is
# inserted: v1 takes it through the alias, v2 refuses its dual write (400).
# The dead letter is listed for <alias>_v2 and the log says nothing was
# dropped. The build is then cancelled (reindex --reset).
. "$(dirname "$0")/lib.sh"
require_bin
db="$(unique_name dw)"
meta="$(unique_name dwmeta)"
alias="$(unique_name dworders)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
mysql_q "CREATE DATABASE \`$db\`;
  CREATE TABLE \`$db\`.orders (id INT PRIMARY KEY, note VARCHAR(20));
  CREATE TABLE \`$db\`.items (id INT PRIMARY KEY, order_id INT, sku VARCHAR(20), KEY (order_id));
  INSERT INTO \`$db\`.orders SELECT seq, 'o' FROM \`$db\`.seq_1_to_100;
  INSERT INTO \`$db\`.items SELECT seq, seq, 'one' FROM \`$db\`.seq_1_to_100"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = dwsource
mapping = dwshared
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $((7990 + $$ % 9))
start = now
[metadata]
database = $meta
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 20
[reindex]
poll_interval_ms = 100
buckets = 1
page_size = 10
INI
jq -n --arg db "$db" --arg alias "$alias" '{version: 1, indices: [{alias: $alias, shards: 1, replicas: 0, sources: ["dwsource"],
    tables: [{table: ($db + ".orders"), columns: [{name: "id", key: true}, {name: "note"}],
      relations: [{column: "id", table: ($db + ".items"), join_column: "order_id", nested: true,
                   extend_name: "items", columns: [{name: "id", key: true}, {name: "sku"}]}]}]}]}' >"$TEST_TMP/map.json"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/map.json" --yes >"$TEST_TMP/import.out" 2>&1 ||
    fail "import: $(cat "$TEST_TMP/import.out")"
export SEARCHSYNC_TEST_READ_VIEW_PAUSE_MS=1500 SEARCHSYNC_TEST_READ_VIEW_PAUSE_IF="$TEST_TMP/slow"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 40 lines)"; tail -40 "$TEST_TMP/run.log"; }'
daemon_wait_log "$alias: live changes no longer written to ${alias}_v1" 60

touch "$TEST_TMP/slow"
"$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/c.ini" "$alias" >"$TEST_TMP/reindex.out" 2>&1 &
rpid=$!
wait_until 30 "the daemon writes live changes to v2 too" grep -q "$alias: live changes from .* on are also written to ${alias}_v2" "$TEST_TMP/run.log"
search_put "/${alias}_v2/_settings" '{"index.mapping.nested_objects.limit": 1}' >/dev/null ||
    fail "setting v2's nested objects limit"
mysql_q "BEGIN; INSERT INTO \`$db\`.orders VALUES (500, 'two items');
  INSERT INTO \`$db\`.items VALUES (501, 500, 'a'), (502, 500, 'b'); COMMIT"
listed() {
    "$SEARCHSYNC_BIN" dead-letters list --config "$TEST_TMP/c.ini" >"$TEST_TMP/dl.json" 2>&1 &&
        jq -e --arg ix "${alias}_v2" 'select(.doc_id == "500" and .index == $ix)' "$TEST_TMP/dl.json" >/dev/null
}
wait_until 30 "v2's refusal of order 500 is a dead letter of ${alias}_v2" listed
assert_eq "" "$(grep 'dropped a write' "$TEST_TMP/run.log" || true)" "no write was dropped as one to a cancelled build"
wait_until 20 "v1 took order 500 through the alias" bash -c "curl -s '$SEARCH_URL/$alias/_doc/500' | jq -e '._source.items | length == 2' >/dev/null"

rm -f "$TEST_TMP/slow"
"$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/c.ini" "$alias" --reset >"$TEST_TMP/reset.out" 2>&1 ||
    fail "reindex --reset: $(cat "$TEST_TMP/reset.out")"
wait "$rpid" 2>/dev/null || true
assert_eq "${alias}_v1" "$(search_req GET "/_alias/$alias" | jq -r 'keys | join(",")')" "the alias stays on v1"
daemon_stop
[ "$DAEMON_RC" = 0 ] || fail "the daemon exited $DAEMON_RC: $(tail -5 "$TEST_TMP/run.log")"
pass
