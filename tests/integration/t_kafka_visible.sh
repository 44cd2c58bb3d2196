#!/usr/bin/env bash
# t_kafka_visible.sh — a Kafka message read while its transaction is in the
# binlog but not yet visible: the documents it names are read once it is.
#
# The real Maxwell (tests/harness/maxwell.sh) reads a MariaDB of the test's
# own whose commits are held between their binlog write and their
# visibility by lossless semi-sync with no replica to acknowledge
# (semi_sync_lib.sh): Maxwell's message of each reaches Kafka, and the
# daemon, while other sessions still read the rows from before it. The same
# happens, for a shorter moment, to every commit on a busy machine. Five
# probes are held 3 s (4.5 s under load); the last 10 s (12 s), beyond the
# 5 s a read waits before it asks the server how long it holds commits, and
# then waits that long.
#
# A daemon (`[source] kind = kafka` reading Maxwell's topics, the server's
# items with a store object, nested parts and notes as child documents:
# oracle_lib.sh's items mapping) is caught up; then semi_sync_lib.sh's six
# probes are committed, each asserted held and its message in Kafka before
# its commit returned. Caught up again, every document equals the SQL
# oracle, although no later change touched the rows the probes changed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
. "$(dirname "$0")/producer_lib.sh"
. "$(dirname "$0")/semi_sync_lib.sh"
require_bin
for t in kcat java mvn jq; do
    command -v "$t" >/dev/null || fail "$t missing: run tests/harness/deps.sh"
done
HOLD_MS=3000 HOLD_LONG_MS=10000
# on the load tier's busy box Maxwell may take more than 3 s to put a
# message in Kafka, and a probe whose message comes after its commit proves
# nothing: held longer there, still under the 5 s a read first waits
[ -z "${SEARCHSYNC_LOAD:-}" ] || HOLD_MS=4500 HOLD_LONG_MS=12000

# ---------------------------------------------------------------- servers
extra_mariadb src
MYSQL_PORT=$(extra_port src) # every helper below (and the oracle) reads this server
maxwell_servers
meta_q() { mysql_q "$1"; }

D=vis META=meta
mysql_q "CREATE DATABASE $D; CREATE DATABASE mxs;
CREATE USER 'mx'@'%' IDENTIFIED BY 'mx-pw'; GRANT ALL ON mxs.* TO 'mx'@'%';
GRANT SELECT, REPLICATION CLIENT, REPLICATION SLAVE ON *.* TO 'mx'@'%'" || fail "Maxwell's user"
semi_sync_tables "$D"

PRE="vis$$"
MXDIR="$TEST_TMP/maxwell"
maxwell() { # start|stop
    SEARCHSYNC_MAXWELL_DIR="$MXDIR" KAFKA_BOOTSTRAP="$KAFKA_BOOTSTRAP" MAXWELL_HOST="$MYSQL_HOST" \
        MAXWELL_PORT="$MYSQL_PORT" MAXWELL_USER=mx MAXWELL_PASSWORD=mx-pw MAXWELL_SCHEMA=mxs \
        MAXWELL_INCLUDE="$D" MAXWELL_TOPIC="$PRE.%{database}.%{table}" MAXWELL_DDL_TOPIC="$PRE.ddl" \
        bash "$HARNESS/maxwell.sh" "$1" >>"$MXDIR.log" 2>&1
}
on_exit "SEARCHSYNC_MAXWELL_DIR='$MXDIR' bash '$HARNESS/maxwell.sh' stop >/dev/null 2>&1"

# ---------------------------------------------------------------- the daemon
ALIAS=$(unique_name vis)
on_exit "curl -s -m 30 -XDELETE '$SEARCH_URL/${ALIAS}_v1' >/dev/null 2>&1"
maxwell_ini "$TEST_TMP/c.ini" "ss-vis-$$"
oracle_items_mapping "$D" "$ALIAS" >"$TEST_TMP/mapping.json"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/mapping.json" --yes \
    >"$TEST_TMP/import.out" 2>&1 || fail "import: $(cat "$TEST_TMP/import.out")"
RUNLOG="$TEST_TMP/run.log"
[ -z "${KAFKA_VIS_KEEP:-}" ] || on_exit "mkdir -p '$KAFKA_VIS_KEEP'; cp '$RUNLOG' '$MXDIR/maxwell.log' '$KAFKA_VIS_KEEP'/"
on_exit '[ "$rc" = 0 ] || { echo "--- the daemon log (last 25 lines)"; tail -25 "$RUNLOG"; }'
daemon_start "$TEST_TMP/c.ini" "$RUNLOG"
daemon_wait_ready 60
daemon_wait_log "$ALIAS: version 1 live" 120
maxwell start || fail "Maxwell did not start: $(tail -5 "$MXDIR.log")"

# a row changed in every table first: each topic exists (and has its
# leader, and the daemon's group has its partitions: a rebalance delays
# reading) before a probe's message is the first one Maxwell sends there
mysql_q "UPDATE stores SET city = 'Bergen' WHERE id = 1; UPDATE items SET qty = qty + 1 WHERE id = 1;
         UPDATE item_parts SET n = n + 1 WHERE id = 1; UPDATE notes SET body = 'warm' WHERE id = 1" "$D" ||
    fail "the first changes"
maxwell_caught_up "the first changes"
oracle_check_items "$D" "$ALIAS" "the first changes"

# ---------------------------------------------------------------- the probes
on_exit "mysql_q 'SET GLOBAL rpl_semi_sync_master_enabled = OFF' >/dev/null 2>&1"
in_kafka() { topic_has "$PRE.$D.$1" "$2"; } # TABLE JQ: Maxwell sent the row
semi_sync_probes "$D" in_kafka 5

maxwell_caught_up "the probes"
oracle_check_items "$D" "$ALIAS" "the probes"
# (whether the daemon said it waited past 5 s depends on where in its
# snapshot's statements the hold found it: the documents are the proof)
log "the daemon said it waited for a held commit $(grep -c 'holds commits up to' "$RUNLOG" || true) time(s)"
assert_eq "" "$(grep -h ' ERROR \[' "$RUNLOG" | head -5 || true)" "no ERROR in the daemon's log"
pass
