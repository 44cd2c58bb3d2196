#!/usr/bin/env bash
# tests/integration/t_run_checkpoint_group.sh — the checkpoint follows the
# binlog past transactions of tables the mapping does not read, also when
# they are grouped with checkpoint saves read back (the metadata on the
# source; sync/sources/binlog_source.c):
#
#   quiet      caught up and idle, the daemon's own save read back does not
#              make it save again (at most the one after catching up, in
#              2 s, with checkpoint_interval_ms = 100)
#   grouped    the daemon SIGSTOPped while another daemon's saves (rows of
#              the metadata's offsets) alternate with transactions of a
#              table the mapping does not read (60 kB each: more than the
#              client library reads at once, so the next one waits on the
#              socket): after SIGCONT the reader is behind and builds them
#              as one group, and the checkpoint
#              must pass them within seconds, not after the idle interval
#              (a minute). Under the load tier the delayed run's last
#              metadata writes after a save met this (t_cluster_delayed,
#              its wait for the checkpoint timed out).
. "$(dirname "$0")/lib.sh"
require_bin
db="$(unique_name cg)"
meta="$(unique_name meta)"
alias="$(unique_name cg)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
mysql_q "CREATE DATABASE \`$db\`; CREATE TABLE \`$db\`.t (id INT PRIMARY KEY, v VARCHAR(20));
         CREATE TABLE \`$db\`.other (id INT PRIMARY KEY, pad LONGTEXT); INSERT INTO \`$db\`.t VALUES (1, 'a')"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = cg
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = 7391
start = now
heartbeat_ms = 300
group_transactions = 64
[metadata]
database = $meta
[search]
urls = $SEARCH_URL
[delivery]
checkpoint_interval_ms = 100
idle_checkpoint_interval_ms = 60000
INI
import_one_table "$alias" "$db.t"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
daemon_wait_log "$alias: live changes no longer written to ${alias}_v1" 60
mysql_q "INSERT INTO \`$db\`.t VALUES (2, 'b')"
wait_checkpoint "$meta" cg 30

# ---- quiet: idle, its own saves read back do not feed themselves
sleep 1
read -r f p <<<"$(mysql_binlog_pos)"
sleep 2
saves="$(mysql_q "SHOW BINLOG EVENTS IN '$f' FROM $p" | awk -F'\t' -v t="($meta.offsets)" '$3 == "Table_map" && index($6, t)' | wc -l)"
assert_true "idle, the checkpoint is not saved again and again ($saves saves in 2 s)" test "$saves" -le 1

# ---- grouped: saves read back and other transactions, read as one group
kill -STOP "$DAEMON"
on_exit "kill -CONT $DAEMON 2>/dev/null"
for k in $(seq 1 20); do
    mysql_q "INSERT INTO \`$meta\`.offsets (source, position, txn_seq) VALUES ('cg_other_$k', 'x:4', 1);
             INSERT INTO \`$db\`.other VALUES ($k, REPEAT('x', 60000))"
done
sleep 0.5
kill -CONT "$DAEMON"
t0="$(date +%s)"
wait_checkpoint "$meta" cg 20
log "the checkpoint passed the grouped transactions $(( $(date +%s) - t0 )) s after SIGCONT"
# the mapped table still syncs after them
mysql_q "INSERT INTO \`$db\`.t VALUES (3, 'c')"
wait_checkpoint "$meta" cg 30
search_refresh "$alias"
assert_eq 3 "$(search_count "$alias")" "the three rows are documents"
daemon_stop
assert_eq 0 "$DAEMON_RC" "the daemon stops cleanly"
pass
