#!/usr/bin/env bash
# tests/integration/t_run_from_current.sh — the checkpoint's binlog file was
# purged while the daemon was down:
#
#   status   says the checkpoint's file is gone and exits 3
#   run      refuses with a message that says how to go on (exit 1)
#   --from-current  starts at the binlog's end and rebuilds every index: the
#            rows changed in the gap are in the documents (SQL oracle), and
#            later changes flow as usual
. "$(dirname "$0")/lib.sh"
require_bin
db="$(unique_name fc)"
meta="$(unique_name meta)"
alias="$(unique_name fc)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
mysql_q "CREATE DATABASE \`$db\`; CREATE TABLE \`$db\`.t (id INT PRIMARY KEY, v VARCHAR(20));
         INSERT INTO \`$db\`.t VALUES (1, 'a'), (2, 'b')"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = fc
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = 7391
start = now
[metadata]
database = $meta
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 20
INI
import_one_table "$alias" "$db.t"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
daemon_wait_log "$alias: live changes no longer written to ${alias}_v1" 60
daemon_stop
# the gap: changes, then the binlog that holds them and the checkpoint purged
mysql_q "UPDATE \`$db\`.t SET v = 'gap' WHERE id = 1; INSERT INTO \`$db\`.t VALUES (3, 'gap-new'); DELETE FROM \`$db\`.t WHERE id = 2"
ckpt_file="$(mysql_q "SELECT SUBSTRING_INDEX(position, ':', 1) FROM \`$meta\`.offsets WHERE source = 'fc'")"
# (MariaDB keeps a file until its binlog checkpoint passed it: flush twice,
# then purge until the checkpoint's file is gone)
mysql_q "FLUSH BINARY LOGS"
mysql_q "FLUSH BINARY LOGS"
purged() {
    mysql_q "PURGE BINARY LOGS TO '$(mysql_q 'SHOW MASTER STATUS' | cut -f1)'"
    ! mysql_q "SHOW BINARY LOGS" | cut -f1 | grep -qx "$ckpt_file"
}
wait_until 20 "the checkpoint's binlog file $ckpt_file is purged" purged
st=0; "$SEARCHSYNC_BIN" status --config "$TEST_TMP/c.ini" >"$TEST_TMP/status.out" 2>&1 || st=$?
assert_eq 3 "$st" "status exits 3 with the checkpoint's file purged"
assert_contains "$(cat "$TEST_TMP/status.out")" "no longer on the source (purged)" "status says why"
st=0; "$SEARCHSYNC_BIN" run --config "$TEST_TMP/c.ini" >"$TEST_TMP/refused.log" 2>&1 || st=$?
assert_eq 1 "$st" "run refuses a purged checkpoint (exit 1)"
assert_contains "$(cat "$TEST_TMP/refused.log")" "--from-current" "and says how to go on"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run2.log" --from-current
daemon_wait_log "$alias: version 2 live" 60
assert_contains "$(cat "$TEST_TMP/run2.log")" "--from-current: the binlog from" "what was skipped is said"
mysql_q "INSERT INTO \`$db\`.t VALUES (4, 'after')"
wait_checkpoint "$meta" fc 30
search_refresh "$alias"
want="$(mysql_q "SELECT id, v FROM \`$db\`.t ORDER BY id" | md5sum)"
have="$(search_req POST "/$alias/_search" '{"size":100,"sort":[{"id":"asc"}]}' | jq -r '.hits.hits[]._source | [.id, .v] | @tsv' | md5sum)"
assert_eq "$want" "$have" "every document equals SQL, the gap's changes included"
st=0; "$SEARCHSYNC_BIN" status --config "$TEST_TMP/c.ini" >/dev/null 2>&1 || st=$?
assert_eq 0 "$st" "status is ok again"
daemon_stop
pass
