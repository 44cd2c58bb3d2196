#!/usr/bin/env bash
# tests/integration/t_run_idle_rotate.sh — the source's binlog rotates while
# nothing mapped is written (FLUSH BINARY LOGS; a server restart does the
# same): the checkpoint follows the reader into the new file at its next
# idle heartbeat (or with the first checkpoint save read back there, when
# an acknowledgement came after the rotation), so `status` says caught up
# (exit 0) without waiting for a write; a change after it, and one after a restart of the daemon from the
# moved checkpoint, are synced (the documents equal to SQL). The checkpoints
# are kept in a database of the source server itself, the README's layout.
. "$(dirname "$0")/lib.sh"
require_bin
db="$(unique_name ir)"
meta="$(unique_name irmeta)"
alias="$(unique_name ir)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
mysql_q "CREATE DATABASE \`$db\`"
mysql_q "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(40));
  INSERT INTO t SELECT seq, CONCAT('v', seq) FROM seq_1_to_50" "$db"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = ir
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $((7700 + $$ % 80))
start = now
heartbeat_ms = 300
[metadata]
database = $meta
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 20
checkpoint_interval_ms = 200
INI
import_one_table "$alias" "$db.t"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
daemon_wait_ready
daemon_wait_log "$alias: version 1 live" 60

status_ok() { "$SEARCHSYNC_BIN" status --config "$TEST_TMP/c.ini" >"$TEST_TMP/status.txt" 2>&1; }
checkpoint_file() { mysql_q "SELECT SUBSTRING_INDEX(position, ':', 1) FROM \`$meta\`.offsets WHERE source = 'ir'"; }
binlog_file() { mysql_q "SHOW MASTER STATUS" | cut -f1; }
in_new_file() { [ "$(checkpoint_file)" = "$(binlog_file)" ] && status_ok; }
doc_v() { search_get "/$alias/_doc/$1" | jq -r '._source.v // empty'; }

# a change, synced; then the binlog rotates twice with nothing written
mysql_q "UPDATE t SET v = 'before' WHERE id = 1" "$db"
wait_until 30 "the change before the rotation is searchable" eval '[ "$(doc_v 1)" = before ]'
wait_until 30 "status caught up before the rotation" status_ok
was="$(binlog_file)"
mysql_q "FLUSH BINARY LOGS"
mysql_q "FLUSH BINARY LOGS"
log "the binlog rotated from $was to $(binlog_file) with nothing written"
t0=$(date +%s)
wait_until 20 "the checkpoint in the binlog's new file and status caught up (exit 0)" in_new_file
log "caught up in the new file $(($(date +%s) - t0)) s after the rotation: checkpoint $(checkpoint_file)"

# a change after it is synced, and one after a restart from the moved checkpoint
mysql_q "UPDATE t SET v = 'after' WHERE id = 2" "$db"
wait_until 30 "the change after the rotation is searchable" eval '[ "$(doc_v 2)" = after ]'
daemon_stop
assert_eq 0 "$DAEMON_RC" "the daemon stops cleanly"
mysql_q "UPDATE t SET v = 'while stopped' WHERE id = 3; DELETE FROM t WHERE id = 4" "$db"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
daemon_wait_ready
wait_until 30 "the changes made while the daemon was stopped are searchable" \
    eval '[ "$(doc_v 3)" = "while stopped" ] && [ -z "$(doc_v 4)" ]'
search_refresh "$alias"
assert_eq "$(mysql_q "SELECT COUNT(*) FROM t" "$db")" "$(search_count "$alias")" "as many documents as rows"
assert_eq "$(mysql_q "SELECT GROUP_CONCAT(v ORDER BY id) FROM t" "$db")" \
    "$(search_req GET "/$alias/_search?size=100&sort=id" | jq -r '[.hits.hits[]._source.v] | join(",")')" \
    "every document equals its row"
wait_until 30 "status caught up at the end" status_ok
daemon_stop
pass
