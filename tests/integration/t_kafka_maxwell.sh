#!/usr/bin/env bash
# t_kafka_maxwell.sh — the real Maxwell as searchsync's input.
#
# Maxwell 1.17.0 (tests/harness/maxwell.sh, jars from Maven Central; why that
# version and MariaDB only: the script's header) reads the suite's MariaDB
# with its Kafka producer (binlog positions and xoffsets on, DDL to a topic
# of its own, partitioned by primary key) into the harness's Kafka 3.9.1
# (3 partitions a topic; Maxwell writes to its PLAINTEXT listener). A
# daemon (`[source] kind = kafka`, topic_regex over every topic Maxwell
# writes: data, DDL, its bootstrap requests), which reads, and whose
# `check` reads, through the broker's SASL_SSL listener (SCRAM-SHA-512, the
# password from a file, the test CA: kafka.sh KAFKA_SECURE=1; at the end a
# wrong password, which `source list` must show as the source down with the
# brokers' refusal, and up again once the brokers take it), feeds
# two indices: a re-query one (tests/integration/producer_ops.sql's `wide` with
# its children `part` nested) and a row-image one (`wide`, every column
# Maxwell sends as the table holds it: not the TIME and fractional-second
# columns, which Maxwell 1.17.0 sends wrapped at 24 h and without their
# fraction — docs/kafka.md, Maxwell).
#
# The table spans the types at their limits (producer_ops.sql says which), with
# the values Maxwell misreads: YEAR 0000 (sent as 1900), latin1 € and the
# other Windows-1252 characters (sent as C1 controls), MariaDB's JSON (sent
# as its text). The daemon starts on the empty tables; the edge rows and
# random rows are inserted while Maxwell streams; Maxwell bootstraps
# `part` (its bootstrap-start/-insert/-complete messages); a seeded DML
# stream (column changes, inserts, deletes, re-inserts, key changes,
# transactions, children moved between parents) runs while the daemon and
# Maxwell are SIGKILLed and restarted; a column is added to `wide` (a
# table-alter message). Once a sentinel row has reached the topics' ends and
# the daemon's saved offsets: every document of both indices equals the SQL
# oracle computed from MariaDB, no dead letter was written, the bootstrap's
# and DDL topics' offsets were saved (consumed silently), and no ERROR was
# logged. Then `part` is truncated, which Maxwell sends nowhere: `searchsync
# check` finds the documents that still nest its rows, `check --repair`
# mends them.
#
# Knobs: SEARCHSYNC_SEED (the DML's seed; printed), SEARCHSYNC_LONG=1 (the
# long tier: 2,400 operations, 150 roots, four kill rounds), KAFKA_MX_OPS
# (operations), KAFKA_MX_KEEP (a directory the logs are copied to).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
. "$(dirname "$0")/producer_lib.sh"
require_bin
for t in kcat java mvn jq python3; do
    command -v "$t" >/dev/null || fail "$t missing: run tests/harness/deps.sh"
done

LONG="${SEARCHSYNC_LONG:-}"
OPS="${KAFKA_MX_OPS:-$([ -n "$LONG" ] && echo 2400 || echo 300)}"
ROUNDS=$([ -n "$LONG" ] && echo 4 || echo 1)
SEED="${SEARCHSYNC_SEED:-}"
[ -n "$SEED" ] || SEED=$(( (RANDOM << 15 | RANDOM) % 2147483646 + 1 ))
SEED=$(( SEED % 2147483646 + 1 ))
log "seed $SEED, $OPS operations, $ROUNDS kill round(s)"
# the settings this run exercises (docs/kafka.md's table: scripts/kafka-doc.sh)
kafka_live maxwell 1.17.0 "$SEED" "producer=kafka" "output_binlog_position=true" "output_xoffset=true" \
    "output_commit_info (xid, commit)" "output_ddl=true" "producer_partition_by" \
    "kafka_topic with %{database}/%{table}, ddl_kafka_topic" "kafka_key_format" "bootstrapper=async / sync" "filter"

# ---------------------------------------------------------------- servers
KAFKA_SECURE=1 maxwell_servers
meta_q() { mysql_q "$1"; }

# Maxwell's user and its own database (positions, schemas, bootstrap requests)
MXU="mx_$$" MXS="mxs_$$"
mysql_q "CREATE USER '$MXU'@'%' IDENTIFIED BY 'mx-pw'; GRANT ALL ON \`$MXS\`.* TO '$MXU'@'%';
         GRANT SELECT, REPLICATION CLIENT, REPLICATION SLAVE ON *.* TO '$MXU'@'%'" || fail "creating Maxwell's user"
on_exit "mysql_q \"DROP USER IF EXISTS '$MXU'@'%'; DROP DATABASE IF EXISTS \\\`$MXS\\\`\" >/dev/null 2>&1"

# ---------------------------------------------------------------- the tables
OPS_FLAVOUR=maxwell # the values Maxwell misreads, in the DML (producer_ops.sql)
producer_tables mx

PRE="ssmx$$"
MXDIR="$TEST_TMP/maxwell"
maxwell() { # start|kill|stop|restart
    SEARCHSYNC_MAXWELL_DIR="$MXDIR" KAFKA_BOOTSTRAP="$KAFKA_BOOTSTRAP" MAXWELL_HOST="$MYSQL_HOST" \
        MAXWELL_PORT="$MYSQL_PORT" MAXWELL_USER="$MXU" MAXWELL_PASSWORD=mx-pw MAXWELL_SCHEMA="$MXS" \
        MAXWELL_INCLUDE="$D" MAXWELL_TOPIC="$PRE.%{database}.%{table}" MAXWELL_DDL_TOPIC="$PRE.ddl" \
        MAXWELL_SERVER_ID=$((7000 + $$ % 20000)) bash "$HARNESS/maxwell.sh" "$1" >>"$MXDIR.log" 2>&1
}
on_exit "SEARCHSYNC_MAXWELL_DIR='$MXDIR' bash '$HARNESS/maxwell.sh' stop >/dev/null 2>&1"
on_exit "[ \"\$rc\" = 0 ] || { echo '--- Maxwell: its warnings and errors'; grep -aE ' (WARN|ERROR) |Exception' '$MXDIR/maxwell.log' | grep -v 'Unhandled QueryEvent' | tail -15; tail -5 '$MXDIR.log'; }"

# ---------------------------------------------------------------- the daemon
META=$(unique_name mxmeta)
ALIAS_RQ=$(unique_name mxrq)
ALIAS_RI=$(unique_name mxri)
on_exit "meta_q 'DROP DATABASE IF EXISTS \`$META\`' >/dev/null 2>&1"
on_exit "curl -s -m 30 -XDELETE '$SEARCH_URL/${ALIAS_RQ}_v1,${ALIAS_RI}_v1' >/dev/null 2>&1"
maxwell_ini "$TEST_TMP/c.ini" "ss-mx-$$"
# (the column the test adds at the end, extra, is in neither index)
# what Maxwell 1.17.0 loses: TIME (wrapped at 24 h, no fraction) and the
# fractions of DATETIME/TIMESTAMP (docs/kafka.md): not in the row-image index
LOST="t0 t6 dt3 dt6 ts6"
jq -n --arg rq "$ALIAS_RQ" --arg ri "$ALIAS_RI" --arg w "$D.wide" --arg p "$D.part" \
    --argjson all "$(cols_json)" --argjson kept "$(cols_json $LOST)" \
    '{version: 1, indices: [
       {alias: $rq, shards: 1, replicas: 0, tables: [{table: $w, columns: $all, relations: [
          {column: "id", table: $p, join_column: "wide_id", extend_name: "parts", nested: true,
           columns: ["id", {name: "wide_id", type: "unsigned_long"}, "label", "amount", "at"]}]}]},
       {alias: $ri, shards: 1, replicas: 0, tables: [{table: $w, columns: $kept, mode: "row-image"}]}]}' \
    >"$TEST_TMP/mapping.json"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/mapping.json" --yes \
    >"$TEST_TMP/import.out" 2>&1 || fail "import: $(cat "$TEST_TMP/import.out")"
RUNLOG="$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- the daemon log (last 25 lines)"; tail -25 "$RUNLOG"; }'
[ -z "${KAFKA_MX_KEEP:-}" ] || on_exit "mkdir -p '$KAFKA_MX_KEEP'; cp '$RUNLOG' '$MXDIR/maxwell.log' '$KAFKA_MX_KEEP'/"

# ---------------------------------------------------------------- the checks
check_docs() { # WHAT
    local a o
    producer_oracle "$TEST_TMP/rq.oracle" "$TEST_TMP/ri.oracle" $LOST
    PRODUCER_BAD=""
    for a in "$ALIAS_RQ:rq" "$ALIAS_RI:ri"; do
        o="${a##*:}" a="${a%:*}"
        producer_compare "$1" "$a" "$TEST_TMP/$o.oracle" "$a ($o)"
    done
    [ -z "$PRODUCER_BAD" ] || soft_fail "$1:$PRODUCER_BAD differ(s) from the SQL oracle (seed $SEED)"
}
no_dead_letters() { producer_dead_letters "$1" "$META"; }

# ---------------------------------------------------------------- the first rows
# the daemon first, on the empty tables: its indices are built (empty)
# before there is a row, so every document comes from Maxwell's messages
daemon_start "$TEST_TMP/c.ini" "$RUNLOG"
daemon_wait_ready 60
daemon_wait_log "$ALIAS_RQ: version 1 live" 120
daemon_wait_log "$ALIAS_RI: version 1 live" 120
maxwell start || fail "Maxwell did not start: $(tail -5 "$MXDIR.log")"
ROOTS=$([ -n "$LONG" ] && echo 150 || echo 40)
producer_fill "$ROOTS" 100 "$TEST_TMP/state"
log "rows: $(mysql_q "SELECT COUNT(*) FROM wide" "$D") wide, $(mysql_q "SELECT COUNT(*) FROM part" "$D") part"
# Maxwell's bootstrap of part: its rows again, between bootstrap-start and -complete
mysql_q "INSERT INTO \`$MXS\`.bootstrap (database_name, table_name) VALUES ('$D', 'part')" || fail "the bootstrap request"
bootstrap_done() {
    kcat -b "$KAFKA_BOOTSTRAP" -C -t "$PRE.$D.part" -e -q -f '%s\n' 2>/dev/null | grep -q '"type":"bootstrap-complete"'
}
wait_until 120 "Maxwell's bootstrap of part completes (its bootstrap-complete message)" bootstrap_done
maxwell_caught_up "the first rows"
n=$(kcat -b "$KAFKA_BOOTSTRAP" -C -t "$PRE.$D.part" -e -q -f '%s\n' | jq -r .type | sort | uniq -c | tr -s ' ' | tr '\n' ',')
log "part's topic: $n"
assert_contains "$n" "1 bootstrap-complete" "Maxwell sent the bootstrap's end"
assert_contains "$n" "100 bootstrap-insert" "Maxwell sent the bootstrap's rows"
check_docs "the first rows"
no_dead_letters "the first rows"

# ---------------------------------------------------------------- the stream
CHUNK=25
t0=$(date +%s)
producer_dml "$TEST_TMP/state" >"$TEST_TMP/dml.out" 2>&1 &
DML=$!
on_exit "kill $DML 2>/dev/null"
for ((r = 1; r <= ROUNDS; r++)); do
    sleep 2
    daemon_kill
    daemon_start "$TEST_TMP/c.ini" "$RUNLOG"
    daemon_wait_ready 60
    log "round $r: the daemon SIGKILLed and restarted"
    sleep 1
    maxwell kill && maxwell start || fail "round $r: Maxwell did not come back: $(tail -5 "$MXDIR.log")"
    log "round $r: Maxwell SIGKILLed and restarted"
done
wait "$DML" || fail "the DML failed: $(tail -5 "$TEST_TMP/dml.out")"
log "$OPS operations in $(($(date +%s) - t0)) s: $(mysql_q "SELECT COUNT(*) FROM wide" "$D") wide rows, $(mysql_q "SELECT COUNT(*) FROM part" "$D") parts"
# a column added (Maxwell's table-alter), then rows changed in it
sqlrun "ALTER TABLE wide ADD COLUMN extra INT; UPDATE wide SET extra = 7, y = 0 WHERE id % 3 = 0" || fail "the ALTER"
maxwell_caught_up "the stream"
check_docs "the stream"
no_dead_letters "the stream"

# Maxwell sends nothing for a TRUNCATE (it ignores the statement): the
# documents nesting the table's rows keep them until a check repairs them
sqlrun "TRUNCATE TABLE part" || fail "TRUNCATE TABLE part"
maxwell_caught_up "the TRUNCATE"
producer_repair "$TEST_TMP/c.ini" "$ALIAS_RQ"
check_docs "check --repair after the TRUNCATE"

# ---------------------------------------------------------------- what was read and said
saved "$META" >"$TEST_TMP/saved"
assert_true "the daemon saved offsets of Maxwell's DDL topic (read, nothing applied)" grep -q "^$PRE.ddl/" "$TEST_TMP/saved"
# Maxwell 1.17's producer does not retry a send refused while Kafka elects
# the leader of a topic it has just created (NotLeaderForPartitionException
# in its log, seen on a busy box): then its bootstrap row never reached
# Kafka, and there is no offset to save
if [ -n "$(ends "$PRE.$MXS.bootstrap")" ]; then
    assert_true "the daemon saved offsets of Maxwell's bootstrap requests (a table no index reads)" \
        grep -q "^$PRE.$MXS.bootstrap/" "$TEST_TMP/saved"
else
    log "Maxwell sent nothing to $PRE.$MXS.bootstrap (its producer: $(grep -a -m1 -o 'NotLeaderForPartitionException.*bootstrap' "$MXDIR/maxwell.log" | cut -c1-120))"
fi
assert_true "the daemon read through the SASL_SSL listener" \
    grep -q "from Kafka (brokers $KAFKA_SASL_SSL_BOOTSTRAP over sasl_ssl" "$RUNLOG"
assert_eq 0 "$(grep -c 'is a dead letter' "$RUNLOG" || true)" "the daemon logged no dead letter"
errs=$(grep -h ' ERROR \[' "$RUNLOG" | head -5 || true)
assert_eq "" "$errs" "no ERROR in the daemon's log"

# ---------------------------------------------------------------- refused by the brokers
# a wrong password: the daemon says why, and the source is down in status
# (`source list`, the UI) with that reason, between librdkafka's retries too
daemon_stop
printf 'wrong-pw\n' >"$TEST_TMP/c.ini.kafka-password"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/refused.log"
source_state() {
    "$SEARCHSYNC_BIN" source list --config "$TEST_TMP/c.ini" --json 2>/dev/null |
        jq -r '.sources[] | select(.name == "maxwell") | "\(.source_up) \(.source_error)"'
}
refused_listed() { case "$(source_state)" in "false "*"check [kafka] sasl_mechanism, sasl_username and sasl_password"*) return 0 ;; esac; return 1; }
wait_until 40 "source list says the source is down, refused by the brokers" refused_listed
assert_true "the daemon logged the refusal as an ERROR naming the keys" \
    grep -q "ERROR \[kafka\] .*SASL authentication error.*check \[kafka\] sasl_mechanism" "$TEST_TMP/refused.log"
sleep 12
assert_true "still down 12 s later (after librdkafka's retries)" refused_listed
# the brokers' side mended (the user's password there becomes the one the
# daemon has): the source is up again without a restart
SEARCHSYNC_KAFKA_DIR="$TEST_TMP/kafka" bash "$HARNESS/kafka.sh" scram "$KAFKA_SASL_USER" wrong-pw \
    >"$TEST_TMP/scram.log" 2>&1 || fail "changing the broker's SCRAM credentials: $(tail -5 "$TEST_TMP/scram.log")"
up_listed() { [ "$(source_state)" = "true null" ]; }
wait_until 40 "source list says the source is up again, without a restart" up_listed
assert_true "the daemon said the brokers take it again" \
    grep -q "the brokers take the source's settings again" "$TEST_TMP/refused.log"
assert_eq 0 "$(grep -c 'wrong-pw' "$TEST_TMP/refused.log" || true)" "the password is not in the log"
daemon_stop
[ ${#FAILS[@]} = 0 ] || fail "$(printf '%s; ' "${FAILS[@]}")"
pass
