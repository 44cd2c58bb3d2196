#!/usr/bin/env bash
# t_run_semi_sync.sh — the binlog reader on a server with lossless
# semi-sync: a transaction read from the binlog while its commit is held
# for a replica's acknowledgement is built once it is visible, however long
# the server holds it.
#
# A MariaDB of the test's own holds each probe's commit between its binlog
# write (sent to the daemon, a replica) and its rows becoming visible
# (semi_sync_lib.sh: AFTER_SYNC, no replica to acknowledge): the first three
# 3 s, the last three 10 s, beyond the 5 s a transaction's reads wait
# before they ask the server how long it holds commits. The daemon reads
# the server's items with a store object, nested parts and notes as child
# documents (oracle_lib.sh's items mapping). After the six probes and a last plain
# transaction: every document equals the SQL oracle, although no later
# change touched the probes' rows (without the wait past 5 s, 8 of 31
# documents differ).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
. "$(dirname "$0")/semi_sync_lib.sh"
require_bin
HOLD_MS=3000 HOLD_LONG_MS=10000

extra_mariadb src
MYSQL_PORT=$(extra_port src) # every helper below (and the oracle) reads this server
D=semi
mysql_q "CREATE DATABASE $D" || fail "the database"
semi_sync_tables "$D"
ALIAS=$(unique_name semi)
on_exit "curl -s -m 30 -XDELETE '$SEARCH_URL/${ALIAS}_v1' >/dev/null 2>&1"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = semi
host = $MYSQL_HOST
port = $MYSQL_PORT
user = root
server_id = $((7900 + $$ % 90))
[metadata]
host = $MYSQL_HOST
port = $MYSQL_PORT
database = meta
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
INI
oracle_items_mapping "$D" "$ALIAS" >"$TEST_TMP/mapping.json"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/mapping.json" --yes \
    >"$TEST_TMP/import.out" 2>&1 || fail "import: $(cat "$TEST_TMP/import.out")"
RUNLOG="$TEST_TMP/run.log"
daemon_start "$TEST_TMP/c.ini" "$RUNLOG"
daemon_wait_ready 60
daemon_wait_log "$ALIAS: version 1 live" 120
oracle_check_items "$D" "$ALIAS" "the build"

on_exit "mysql_q 'SET GLOBAL rpl_semi_sync_master_enabled = OFF' >/dev/null 2>&1"
semi_sync_probes "$D" "" 3
mysql_q "INSERT INTO fence VALUES (1, 'after the probes')" "$D" || fail "the last transaction"
wait_checkpoint meta semi 60
oracle_check_items "$D" "$ALIAS" "the probes"
log "the daemon said it waited for a held commit $(grep -c 'holds commits up to' "$RUNLOG" || true) time(s)"
assert_eq "" "$(grep -h ' ERROR \[' "$RUNLOG" | head -5 || true)" "no ERROR in the daemon's log"
pass
