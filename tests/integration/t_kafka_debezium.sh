#!/usr/bin/env bash
# t_kafka_debezium.sh — the real Debezium connector as searchsync's input.
#
# Kafka Connect 4.3.0 standalone runs debezium-connector-mysql 3.6.1.Final
# (tests/harness/connect.sh, jars from Maven Central) against MySQL 8.0.15
# (tests/harness/mysql8.sh, GTIDs on) and the harness's Kafka 3.9.1
# (3 partitions a topic), twice: the JSON converter with schemas on and with
# schemas off, both with Debezium's default modes (precise decimals,
# adaptive_time_microseconds, bytes, long), transaction metadata, heartbeats
# every second and notifications to a topic. A daemon per worker
# (`[source] kind = kafka`, topic_regex over every topic the connector
# writes: data, schema changes, transactions, heartbeats, notifications)
# feeds two indices: a re-query one (tests/integration/producer_ops.sql's
# `wide` with its children `part` nested) and a row-image one (`wide`).
#
# The table spans MySQL's types at their limits (producer_ops.sql says which),
# with the values that went wrong before: YEAR 0000 (streamed as 1900,
# snapshotted as 2000), DECIMALs whose base64 is all digits ("9260",
# "0000"), binary whose base64 is hex digits. Debezium snapshots it; then a
# seeded DML stream (column changes, inserts, deletes, re-inserts, key
# changes, transactions, children moved between parents) runs while the
# daemon of the schemas-on worker and the schemas-off Connect worker are
# SIGKILLed and restarted; the schemas-off daemon is SIGKILLed and restarted
# with [kafka] debezium_* stating the connector's modes (before that, it
# reads without them: values that can be read two ways are re-read from
# MySQL). Then an incremental snapshot of both tables is asked through the
# connector's signal table while more changes run (its chunks' read events
# between them). Then the nested table is truncated, which the connector's
# default skipped.operations=t sends nowhere: `searchsync check` finds the
# documents that still nest its rows, and `check --repair` mends them.
# After the snapshot, the stream, the incremental snapshot and the repair,
# once a sentinel row has reached every topic's end and the daemons' saved
# offsets: every document of the four indices equals the SQL oracle
# computed from the server, no
# dead letter was written (heartbeats, transaction markers, schema changes,
# notifications and tombstones are consumed silently), the control topics'
# offsets were saved, and the row-image indices said once which values they
# re-read from MySQL and why.
#
# KAFKA_DBZ_MODES=other runs the same with the connector's other modes
# instead of its defaults (t_kafka_debezium_modes): schemas on with
# decimal.handling.mode=double, binary.handling.mode=base64-url-safe;
# schemas off with decimal.handling.mode=string, binary.handling.mode=hex
# (stated after the first round as for the defaults); both with
# time.precision.mode=connect and bigint.unsigned.handling.mode=precise (the
# table's key is BIGINT UNSIGNED: message keys in base64 too), and
# skipped.operations=none: after the stream the nested child table is
# truncated (a truncate event, no rows) and changed again. Values these
# modes lose (a DECIMAL wider than a double, TIME beyond 24 h, microseconds)
# must still reach every index exactly: read again from MySQL.
#
# Knobs: SEARCHSYNC_SEED (the DML's seed; printed), SEARCHSYNC_LONG=1 (the
# long tier: 2,400 operations, kill rounds of both daemons and both workers
# (without it, one round kills both daemons and the schemas-off worker),
# then the same on the suite's MariaDB through debezium-connector-mariadb
# 3.5.0.Final), KAFKA_DBZ_OPS (operations), KAFKA_DBZ_SERVER (mysql |
# mariadb), KAFKA_DBZ_KEEP (a directory the daemons' and workers' logs are
# copied to).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
. "$(dirname "$0")/producer_lib.sh"
require_bin
for t in kcat java mvn jq python3; do
    command -v "$t" >/dev/null || fail "$t missing: run tests/harness/deps.sh"
done

SERVER="${KAFKA_DBZ_SERVER:-mysql}"
MODES="${KAFKA_DBZ_MODES:-default}"
LONG="${SEARCHSYNC_LONG:-}"
OPS="${KAFKA_DBZ_OPS:-$([ -n "$LONG" ] && echo 2400 || echo 300)}"
ROUNDS=$([ -n "$LONG" ] && echo 4 || echo 1)
SEED="${SEARCHSYNC_SEED:-}"
[ -n "$SEED" ] || SEED=$(( (RANDOM << 15 | RANDOM) % 2147483646 + 1 ))
SEED=$(( SEED % 2147483646 + 1 ))
log "seed $SEED, $OPS operations, $ROUNDS kill round(s), server $SERVER, the connector's $MODES modes"

# ---------------------------------------------------------------- servers
kdir="$TEST_TMP/kafka"
KAFKA_PARTITIONS=3 SEARCHSYNC_KAFKA_DIR="$kdir" bash "$HARNESS/kafka.sh" start >"$TEST_TMP/kafka-start.log" 2>&1 ||
    { cat "$TEST_TMP/kafka-start.log"; fail "the harness's Kafka did not start"; }
on_exit "SEARCHSYNC_KAFKA_DIR='$kdir' bash '$HARNESS/kafka.sh' stop >/dev/null 2>&1"
. "$kdir/kafka.env"
# the daemons' metadata stays on the suite's MariaDB: on the server Debezium
# reads, every checkpoint save would be a transaction in its binlog (and two
# transaction markers in Kafka) for the workers to wade through
META_HOST="$MYSQL_HOST" META_PORT="$MYSQL_PORT"
meta_q() { mariadb --no-defaults -h "$META_HOST" -P "$META_PORT" -u root --batch --skip-column-names -e "$1"; }
case "$SERVER" in
    mysql)
        use_mysql8
        FLAVOUR=mysql
        GRANTS="SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT"
        # MySQL 8's defaults: TLS, caching_sha2_password
        DRIVER_PROPS="" ;;
    mariadb)
        FLAVOUR=mariadb
        GRANTS="SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, BINLOG MONITOR"
        # MariaDB Connector/J reads YEAR as a date by default and throws on
        # YEAR 0000, killing the snapshot: read it as a number
        DRIVER_PROPS="driver.yearIsDateType=false" ;;
    *) fail "KAFKA_DBZ_SERVER=$SERVER: expected mysql or mariadb" ;;
esac
log "kafka on $KAFKA_BOOTSTRAP, $SERVER on $MYSQL_HOST:$MYSQL_PORT"
# the connector's modes of each worker (over connect.sh's defaults), and
# what the schemas-off daemon is told of them after the first round
declare -A MODE_PROPS
case "$MODES" in
    default)
        MODE_PROPS=([on]="" [off]="")
        STATED_ON=""
        LIVE_MODES=("decimal.handling.mode precise (default)" "time.precision.mode adaptive_time_microseconds (default)"
            "binary.handling.mode bytes (default), base64, base64-url-safe" "bigint.unsigned.handling.mode long (default)"
            "skipped.operations t (default)")
        STATED="debezium_decimal_handling_mode = precise
debezium_time_precision_mode = adaptive_time_microseconds
debezium_binary_handling_mode = bytes" ;;
    other)
        MODE_PROPS=([on]="decimal.handling.mode=double
time.precision.mode=connect
binary.handling.mode=base64-url-safe
bigint.unsigned.handling.mode=precise
skipped.operations=none" [off]="decimal.handling.mode=string
time.precision.mode=connect
binary.handling.mode=hex
bigint.unsigned.handling.mode=precise
skipped.operations=none")
        LIVE_MODES=("decimal.handling.mode string" "decimal.handling.mode double" "time.precision.mode connect"
            "binary.handling.mode bytes (default), base64, base64-url-safe" "binary.handling.mode hex"
            "bigint.unsigned.handling.mode precise" "skipped.operations none")
        STATED="debezium_decimal_handling_mode = string
debezium_time_precision_mode = connect
debezium_binary_handling_mode = hex"
        # base64 and hex are both a string in the schema: the schemas-on
        # daemon is told the binary mode after the first round too
        STATED_ON="debezium_binary_handling_mode = base64-url-safe" ;;
    *) fail "KAFKA_DBZ_MODES=$MODES: expected default or other" ;;
esac
# the connector settings this run exercises (docs/kafka.md's table: scripts/kafka-doc.sh)
LIVE_MARIADB=()
[ "$SERVER" = mysql ] || LIVE_MARIADB=("MariaDB connector: driver.yearIsDateType false")
kafka_live "debezium$([ "$SERVER" = mysql ] || echo "-$SERVER")$([ "$MODES" = default ] || echo ":modes")" \
    "$([ "$SERVER" = mysql ] && echo 3.6.1.Final || echo 3.5.0.Final)" "$SEED" \
    "value.converter org.apache.kafka.connect.json.JsonConverter" "value.converter.schemas.enable true" \
    "value.converter.schemas.enable false" "${LIVE_MODES[@]}" \
    "include.schema.changes true (default)" "provide.transaction.metadata true" "heartbeat.interval.ms any" \
    "notification.enabled.channels sink" "tombstones.on.delete true (default) / false" \
    "signal.data.collection a table of the server (incremental snapshots)" \
    "${LIVE_MARIADB[@]}"

# Debezium's user: the privileges its documentation lists (no LOCK TABLES:
# the snapshot takes a global read lock, which RELOAD allows)
DBZ_USER="dbz_$$"
mysql_q "CREATE USER '$DBZ_USER'@'%' IDENTIFIED BY 'dbz-pw'; GRANT $GRANTS ON *.* TO '$DBZ_USER'@'%'" ||
    fail "creating Debezium's user"
on_exit "mysql_q \"DROP USER IF EXISTS '$DBZ_USER'@'%'\" >/dev/null 2>&1"

# ---------------------------------------------------------------- the tables
producer_tables dbz
# the connector's signal table (signal.data.collection): an ad-hoc
# incremental snapshot is asked by a row in it, and the connector writes
# its chunks' watermarks there (INSERT)
mysql_q "CREATE TABLE dbz_signal (id VARCHAR(64) NOT NULL PRIMARY KEY, type VARCHAR(32) NOT NULL,
    data TEXT NULL); GRANT INSERT ON \`$D\`.dbz_signal TO '$DBZ_USER'@'%'" "$D" || fail "the signal table"

# ---------------------------------------------------------------- Kafka Connect
PRE="ssdbz$$"
# two replicas of one server: two server ids (with one id twice, the server
# drops the first worker's connection when the second connects: its task fails)
declare -A CDIR SID=([on]=$((5000 + $$ % 20000 * 2)) [off]=$((5001 + $$ % 20000 * 2)))
connect() { # on|off start|kill|stop|restart
    local mode="$1" act="$2"
    SEARCHSYNC_CONNECT_DIR="${CDIR[$mode]}" CONNECT_FLAVOUR="$FLAVOUR" KAFKA_BOOTSTRAP="$KAFKA_BOOTSTRAP" \
        DBZ_HOST="$MYSQL_HOST" DBZ_PORT="$MYSQL_PORT" DBZ_USER="$DBZ_USER" DBZ_PASSWORD=dbz-pw \
        DBZ_DATABASES="$D" DBZ_PREFIX="$PRE$mode" DBZ_SCHEMAS="$mode" CONNECT_HEAP=384m \
        DBZ_SERVER_ID="${SID[$mode]}" \
        DBZ_PROPS="notification.enabled.channels=sink
notification.sink.topic.name=$PRE$mode.notifications
signal.enabled.channels=source
signal.data.collection=$D.dbz_signal
${MODE_PROPS[$mode]}
$DRIVER_PROPS" bash "$HARNESS/connect.sh" "$act" >>"${CDIR[$mode]}.log" 2>&1
}
for mode in on off; do
    CDIR[$mode]="$TEST_TMP/connect-$mode"
    on_exit "SEARCHSYNC_CONNECT_DIR='${CDIR[$mode]}' bash '$HARNESS/connect.sh' stop >/dev/null 2>&1"
    on_exit "[ \"\$rc\" = 0 ] || { echo '--- Connect ($mode) log, its warnings and errors'; grep -E ' (WARN|ERROR) ' '${CDIR[$mode]}/connect.log' | tail -15; tail -5 '${CDIR[$mode]}.log'; }"
done
frc=0
CONNECT_FLAVOUR=$FLAVOUR bash "$HARNESS/connect.sh" fetch >"$TEST_TMP/connect-fetch.log" 2>&1 || frc=$?
if [ "$frc" != 0 ]; then
    cat "$TEST_TMP/connect-fetch.log"
    [ "$frc" = 3 ] && skip "Maven Central is not reachable: Kafka Connect and Debezium cannot be had"
    fail "resolving Kafka Connect and Debezium $FLAVOUR from Maven Central"
fi

# ---------------------------------------------------------------- the daemons
declare -A META ALIAS_RQ ALIAS_RI PID
for mode in on off; do
    META[$mode]=$(unique_name dbzmeta_$mode)
    ALIAS_RQ[$mode]=$(unique_name dbzrq_$mode)
    ALIAS_RI[$mode]=$(unique_name dbzri_$mode)
    on_exit "meta_q 'DROP DATABASE IF EXISTS \`${META[$mode]}\`' >/dev/null 2>&1"
    on_exit "curl -s -m 30 -XDELETE '$SEARCH_URL/${ALIAS_RQ[$mode]}_v1,${ALIAS_RI[$mode]}_v1' >/dev/null 2>&1"
done
config() { # MODE [EXTRA-KAFKA-LINES]
    cat <<INI
[source]
kind = kafka
name = dbz-$1-$$
host = $MYSQL_HOST
port = $MYSQL_PORT
user = root
start = beginning
[kafka]
brokers = $KAFKA_BOOTSTRAP
topic_regex = (__debezium-heartbeat\\.)?$PRE$1(\\..*)?\$
group = ss-dbz-$1-$$
${2:-}
[metadata]
host = $META_HOST
port = $META_PORT
database = ${META[$1]}
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
idle_checkpoint_interval_ms = 500
[log]
level = ${KAFKA_DBZ_LOG_LEVEL:-info}
INI
}
# every column of wide; BIGINT UNSIGNED as unsigned_long (a long refuses 2^63 and up)
WIDE_MAPPED=$(mysql_q "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = '$D'
    AND TABLE_NAME = 'wide' ORDER BY ORDINAL_POSITION" |
    jq -R . | jq -s 'map(if . == "id" then {name: ., type: "unsigned_long", key: true}
                         elif . == "biu" then {name: ., type: "unsigned_long"} else . end)')
for mode in on off; do
    config "$mode" >"$TEST_TMP/$mode.ini"
    jq -n --arg rq "${ALIAS_RQ[$mode]}" --arg ri "${ALIAS_RI[$mode]}" --arg w "$D.wide" --arg p "$D.part" \
        --argjson cols "$WIDE_MAPPED" \
        '{version: 1, indices: [
           {alias: $rq, shards: 1, replicas: 0, tables: [{table: $w, columns: $cols, relations: [
              {column: "id", table: $p, join_column: "wide_id", extend_name: "parts", nested: true,
               columns: ["id", {name: "wide_id", type: "unsigned_long"}, "label", "amount", "at"]}]}]},
           {alias: $ri, shards: 1, replicas: 0, tables: [{table: $w, columns: $cols, mode: "row-image"}]}]}' \
        >"$TEST_TMP/mapping-$mode.json"
    "$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/$mode.ini" "$TEST_TMP/mapping-$mode.json" --yes \
        >"$TEST_TMP/import-$mode.out" 2>&1 || fail "import ($mode): $(cat "$TEST_TMP/import-$mode.out")"
done
start() { daemon_start "$TEST_TMP/$1.ini" "$TEST_TMP/run-$1.log"; PID[$1]=$DAEMON; }
use() { DAEMON=${PID[$1]}; DAEMON_LOG="$TEST_TMP/run-$1.log"; _DAEMON_LOG_AT=0; }
on_exit '[ "$rc" = 0 ] || for n in on off; do echo "--- the $n daemon log (last 25 lines)"; tail -25 "$TEST_TMP/run-$n.log"; done'
[ -z "${KAFKA_DBZ_KEEP:-}" ] || on_exit "mkdir -p '$KAFKA_DBZ_KEEP'; cp \"\$TEST_TMP\"/run-*.log '$KAFKA_DBZ_KEEP'/; for m in on off; do cp '$TEST_TMP'/connect-\$m/connect.log '$KAFKA_DBZ_KEEP'/connect-\$m.log; done; cp \"\$MYSQL_LOG\" '$KAFKA_DBZ_KEEP'/ 2>/dev/null"

# ---------------------------------------------------------------- caught up
# (ends, saved, reached and topic_has: producer_lib.sh)
sentinel_sent() { # MODE
    topic_has "$PRE$1.$D.fence" --argjson n "$FENCE" 'select(. != null) | (.payload // .) | select(.after.id == $n)'
}
FENCE=0
# a sentinel row after everything so far; once each worker sent it, the
# data topics' ends are taken (twice, until they stand) and the daemons'
# saved offsets (acknowledged by the engine) must reach them
caught_up() { # WHAT
    local mode i e t0=$(date +%s) t1 t2
    FENCE=$((FENCE + 1))
    mysql_q "INSERT INTO fence VALUES ($FENCE, '$1')" "$D" || fail "the sentinel row"
    for mode in on off; do
        for ((i = 0; ; i++)); do
            sentinel_sent "$mode" && break
            [ $(($(date +%s) - t0)) -lt 300 ] || fail "$1: the schemas-$mode worker did not send the sentinel row in 300 s; the server's binlog end: $(mysql_q 'SHOW MASTER STATUS' | cut -f1,2); the worker said last: $(grep 'records sent during' "${CDIR[$mode]}/connect.log" | tail -1 | cut -c1-300); the fence topic holds: $(kcat -b "$KAFKA_BOOTSTRAP" -C -t "$PRE$mode.$D.fence" -e -q -f '%s\n' 2>/dev/null | jq -c '(.payload // .).after' 2>/dev/null | tr '\n' ' ')"
            sleep 0.2
        done
        t1=$(date +%s)
        e="$TEST_TMP/ends-$mode"
        : >"$e.prev"
        for ((i = 0; ; i++)); do
            for t in wide part fence; do ends "$PRE$mode.$D.$t"; done | sort >"$e"
            cmp -s "$e" "$e.prev" && break
            cp "$e" "$e.prev"
            sleep 1
        done
        t2=$(date +%s)
        for ((i = 0; ; i++)); do
            reached "${META[$mode]}" "$e" && break
            [ "$i" -lt 1500 ] || fail "$1: the $mode daemon's saved offsets did not reach the topics' ends in 300 s: saved $(saved "${META[$mode]}" | tr '\n' ' '), ends $(tr '\n' ' ' <"$e")"
            sleep 0.2
        done
        log "$1: schemas $mode caught up (sentinel sent after $((t1 - t0)) s, topics' ends stood after $((t2 - t1)) s, offsets saved after $(($(date +%s) - t2)) s)"
        t0=$(date +%s)
    done
}

# ---------------------------------------------------------------- the checks
check_docs() { # WHAT
    local mode a o
    producer_oracle "$TEST_TMP/rq.oracle" "$TEST_TMP/ri.oracle"
    PRODUCER_BAD=""
    for mode in on off; do
        for a in "${ALIAS_RQ[$mode]}:rq" "${ALIAS_RI[$mode]}:ri"; do
            o="${a##*:}" a="${a%:*}"
            producer_compare "$1" "$a" "$TEST_TMP/$o.oracle" "$a (schemas $mode, $o)"
        done
    done
    [ -z "$PRODUCER_BAD" ] || soft_fail "$1:$PRODUCER_BAD differ(s) from the SQL oracle (seed $SEED)"
}
no_dead_letters() { # WHAT
    local mode
    for mode in on off; do producer_dead_letters "$1" "${META[$mode]}" "the $mode daemon's metadata"; done
}

# ---------------------------------------------------------------- the snapshot
# the daemons first, on the empty tables: their indices are built (empty)
# before there is a row, so every document comes from Debezium's messages,
# the snapshot's too (an index built from the rows would hide them: its
# pages are newer than the snapshot)
start on
start off
for n in on off; do
    use $n
    daemon_wait_ready 60
    daemon_wait_log "${ALIAS_RQ[$n]}: version 1 live" 120
    daemon_wait_log "${ALIAS_RI[$n]}: version 1 live" 120
done
ROOTS=$([ -n "$LONG" ] && echo 150 || echo 40)
producer_fill "$ROOTS" 100 "$TEST_TMP/state"
log "snapshot rows: $(mysql_q "SELECT COUNT(*) FROM wide" "$D") wide, $(mysql_q "SELECT COUNT(*) FROM part" "$D") part"
t0=$(date +%s)
connect on start & pon=$!
connect off start & poff=$!
wait $pon || fail "Connect (schemas on) did not start: $(tail -5 "${CDIR[on]}.log")"
wait $poff || fail "Connect (schemas off) did not start: $(tail -5 "${CDIR[off]}.log")"
for mode in on off; do connect "$mode" wait-snapshot || fail "the snapshot of the schemas-$mode worker"; done
log "both workers snapshotted in $(($(date +%s) - t0)) s"
caught_up "the snapshot"
check_docs "the snapshot"
no_dead_letters "the snapshot"

# ---------------------------------------------------------------- the snapshot's DROPs
# The snapshot writes DROP TABLE IF EXISTS for every table and DROP DATABASE
# IF EXISTS to the schema change topic before its CREATEs. The daemons were
# built before it, so rows deleted between their builds and the snapshot
# would be in no message: each index is rebuilt from MySQL, once for the
# whole snapshot, not once per statement (each cancelling the one before).
for mode in on off; do
    use $mode
    for a in "${ALIAS_RQ[$mode]}" "${ALIAS_RI[$mode]}"; do
        daemon_wait_log "] $a: version 2 live" 120
        l="$(grep -a "$a" "$TEST_TMP/run-$mode.log")"
        assert_contains "$l" "is a statement of the producer's snapshot at" \
            "$a (schemas $mode): the snapshot's DROP is said to be a snapshot's, and rebuilt since version 1 was read before it"
        assert_eq 1 "$(grep -c "index $a: .* rebuilt from MySQL as version" <<<"$l")" \
            "$a (schemas $mode): one rebuild for the snapshot's statements: $(grep -E 'rebuilt from MySQL as|cancelled' <<<"$l" | cut -c1-200)"
        assert_eq 0 "$(grep -c "$a: build of version [0-9]* cancelled" <<<"$l")" \
            "$a (schemas $mode): no build cancelled by a later statement of the snapshot"
    done
done
# A daemon added after the snapshot, reading the schemas-on worker's topics
# from their start, as searchsync added to a running pipeline is: its
# indices are built from MySQL after the snapshot, so its statements are no
# reason to build them again, and the documents still equal the oracle. A
# third index reads `wide` as a shard (a table pattern): the snapshot's DROP
# of it is no shard going, so none of its documents is deleted.
META[late]=$(unique_name dbzmeta_late)
ALIAS_RQ[late]=$(unique_name dbzrq_late)
ALIAS_RI[late]=$(unique_name dbzri_late)
ALIAS_SH=$(unique_name dbzsh_late)
on_exit "meta_q 'DROP DATABASE IF EXISTS \`${META[late]}\`' >/dev/null 2>&1"
on_exit "curl -s -m 30 -XDELETE '$SEARCH_URL/${ALIAS_RQ[late]}_v*,${ALIAS_RI[late]}_v*,${ALIAS_SH}_v*' >/dev/null 2>&1"
config on | sed -e "s/^name = .*/name = dbz-late-$$/" -e "s/^group = .*/group = ss-dbz-late-$$/" \
    -e "s/^database = .*/database = ${META[late]}/" >"$TEST_TMP/late.ini"
jq --arg rq "${ALIAS_RQ[late]}" --arg ri "${ALIAS_RI[late]}" --arg sh "$ALIAS_SH" --arg w "$D.{t:wide}" \
    '.indices[0].alias = $rq | .indices[1].alias = $ri | .indices += [{alias: $sh, shards: 1, replicas: 0,
       tables: [{table: $w, columns: [{name: "id", type: "unsigned_long", key: true}, "vc"]}]}]' \
    "$TEST_TMP/mapping-on.json" >"$TEST_TMP/mapping-late.json"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/late.ini" "$TEST_TMP/mapping-late.json" --yes \
    >"$TEST_TMP/import-late.out" 2>&1 || fail "import (late): $(cat "$TEST_TMP/import-late.out")"
start late
use late
daemon_wait_ready 60
daemon_wait_log "${ALIAS_RQ[late]}: version 1 live" 120
daemon_wait_log "${ALIAS_RI[late]}: version 1 live" 120
daemon_wait_log "$ALIAS_SH: version 1 live" 120
for ((i = 0; ; i++)); do
    reached "${META[late]}" "$TEST_TMP/ends-on" && break
    [ "$i" -lt 1500 ] || fail "the daemon added after the snapshot: its saved offsets did not reach the topics' ends in 300 s: saved $(saved "${META[late]}" | tr '\n' ' ')"
    sleep 0.2
done
# (the offsets move past a statement before the supervisor has judged it:
# its decision is logged within a round, each of which takes every
# statement queued; then 5 s for one read after a round had begun)
for a in "${ALIAS_RQ[late]}" "${ALIAS_RI[late]}" "$ALIAS_SH"; do
    wait_until 60 "$a (added after the snapshot): the snapshot's DROPs judged" \
        grep -aq "index $a: .*a statement of the producer's snapshot" "$TEST_TMP/run-late.log"
done
sleep 5
for a in "${ALIAS_RQ[late]}" "${ALIAS_RI[late]}" "$ALIAS_SH"; do
    l="$(grep -a "$a" "$TEST_TMP/run-late.log")"
    assert_contains "$l" "is not a reason to rebuild it: version 1 " \
        "$a (added after the snapshot): the snapshot's DROPs are no reason to rebuild it"
    assert_eq 0 "$(grep -c "rebuilt from MySQL as version\|: version 2 \|_v2" <<<"$l")" \
        "$a (added after the snapshot): no second version: $(grep -E 'rebuilt from MySQL as|version 2' <<<"$l" | cut -c1-200)"
done
producer_oracle "$TEST_TMP/rq.oracle" "$TEST_TMP/ri.oracle"
PRODUCER_BAD=""
producer_compare "the daemon added after the snapshot" "${ALIAS_RQ[late]}" "$TEST_TMP/rq.oracle" "${ALIAS_RQ[late]} (late, rq)"
producer_compare "the daemon added after the snapshot" "${ALIAS_RI[late]}" "$TEST_TMP/ri.oracle" "${ALIAS_RI[late]} (late, ri)"
[ -z "$PRODUCER_BAD" ] || soft_fail "the daemon added after the snapshot:$PRODUCER_BAD differ(s) from the SQL oracle (seed $SEED)"
producer_dead_letters "the daemon added after the snapshot" "${META[late]}"
assert_eq "$(mysql_q "SELECT COUNT(*) FROM wide" "$D")" "$(search_count "$ALIAS_SH")" \
    "$ALIAS_SH: every row of the shard $D.wide is a document after the snapshot's DROP TABLE IF EXISTS of it"
assert_eq 0 "$(grep -ac "shard .* is gone" "$TEST_TMP/run-late.log")" "no shard goes for a snapshot's DROP"
daemon_stop

# ---------------------------------------------------------------- the stream
# the DML in chunks, in the background, while daemons and workers are killed
CHUNK=25
declare -A STATED_AT # the daemon's log lines before its restart with the modes stated
kill_daemon() { # MODE [CONFIG-EXTRA]
    use "$1"
    daemon_kill
    [ $# -lt 2 ] || config "$1" "$2" >"$TEST_TMP/$1.ini"
    start "$1"
    daemon_wait_ready 60
}
t0=$(date +%s)
producer_dml "$TEST_TMP/state" >"$TEST_TMP/dml.out" 2>&1 &
DML=$!
on_exit "kill $DML 2>/dev/null"
for ((r = 1; r <= ROUNDS; r++)); do
    sleep 2
    [ "$r" != 1 ] || FIRST_RUN_LINES=$(wc -l <"$TEST_TMP/run-on.log")
    if [ "$r" = 1 ] && [ -n "$STATED_ON" ]; then
        kill_daemon on "$STATED_ON"
        STATED_AT[on]=$(wc -l <"$TEST_TMP/run-on.log")
    else
        kill_daemon on
    fi
    log "round $r: the schemas-on daemon SIGKILLed and restarted"
    sleep 1
    # the worker's SIGKILL: its messages since its last committed offsets
    # are sent again
    connect off kill && connect off start || fail "round $r: Connect (schemas off) did not come back: $(tail -5 "${CDIR[off]}.log")"
    log "round $r: the schemas-off Connect worker SIGKILLed and restarted"
    sleep 1
    if [ "$r" = 1 ]; then
        kill_daemon off "$STATED"
        STATED_AT[off]=$(wc -l <"$TEST_TMP/run-off.log")
        log "round $r: the schemas-off daemon SIGKILLed, restarted with the connector's modes stated"
    else
        kill_daemon off
        connect on kill && connect on start || fail "round $r: Connect (schemas on) did not come back"
        log "round $r: the schemas-off daemon and the schemas-on worker SIGKILLed and restarted"
    fi
done
wait "$DML" || fail "the DML failed: $(tail -5 "$TEST_TMP/dml.out")"
if [ "$MODES" = other ]; then
    # a truncate event carries no rows: the re-query indices, which nest
    # the table, are rebuilt from MySQL; the changes after it are applied
    sqlrun "TRUNCATE TABLE part" || fail "TRUNCATE TABLE part"
    sqlrun "SET @ops_state = $SEED; CALL ops_ops($CHUNK)" >/dev/null || fail "the changes after the TRUNCATE"
    log "part truncated, then $CHUNK more operations: $(mysql_q "SELECT COUNT(*) FROM part" "$D") parts"
fi
log "$OPS operations in $(($(date +%s) - t0)) s: $(mysql_q "SELECT COUNT(*) FROM wide" "$D") wide rows, $(mysql_q "SELECT COUNT(*) FROM part" "$D") parts"
caught_up "the stream"
if [ "$MODES" = other ]; then
    for mode in on off; do producer_rebuilt "$TEST_TMP/run-$mode.log" "${ALIAS_RQ[$mode]}" "TRUNCATE TABLE $D.part"; done
fi
check_docs "the stream"
no_dead_letters "the stream"

# an incremental snapshot, asked as when a table is added to a running
# connector or an index was lost: its chunks' rows (op "r", snapshot
# "incremental") come between live changes, which run meanwhile
reads() { # MODE: the read events (op "r") in the wide topic so far
    kcat -b "$KAFKA_BOOTSTRAP" -C -t "$PRE$1.$D.wide" -e -q -f '%s\n' 2>/dev/null |
        jq -c 'select(. != null) | (.payload // .) | select(.op == "r") | .source.snapshot' 2>/dev/null | wc -l
}
declare -A READS0
for mode in on off; do READS0[$mode]=$(reads "$mode"); done
# the row-image indices emptied behind the daemon's back, as an index lost:
# only the snapshot's read events bring every document back
for mode in on off; do
    curl -sf -m 30 -XPOST -H 'Content-Type: application/json' "$SEARCH_URL/${ALIAS_RI[$mode]}/_delete_by_query?refresh=true" \
        -d '{"query":{"match_all":{}}}' >/dev/null || fail "emptying ${ALIAS_RI[$mode]}"
done
sqlrun "INSERT INTO dbz_signal VALUES ('incr-$SEED', 'execute-snapshot',
    '{\"data-collections\": [\"$D.wide\", \"$D.part\"], \"type\": \"incremental\"}')" ||
    fail "the incremental snapshot's signal"
sqlrun "SET @ops_state = $((SEED + 1)); CALL ops_ops($((CHUNK * 4)))" >/dev/null || fail "the changes beside the incremental snapshot"
t0=$(date +%s)
for mode in on off; do
    until topic_has "$PRE$mode.notifications" 'select((.payload // .) | .aggregate_type == "Incremental Snapshot" and .type == "COMPLETED")'; do
        [ $(($(date +%s) - t0)) -lt 300 ] || fail "the schemas-$mode worker's incremental snapshot did not complete in 300 s: $(grep -i 'incremental' "${CDIR[$mode]}/connect.log" | tail -3 | cut -c1-300)"
        sleep 0.5
    done
    n=$(reads "$mode")
    assert_true "the schemas-$mode worker sent the incremental snapshot's rows (read events: ${READS0[$mode]} before, $n after)" \
        test "$n" -gt "${READS0[$mode]}"
done
log "incremental snapshots of wide and part completed in $(($(date +%s) - t0)) s, $((CHUNK * 4)) operations beside them"
caught_up "the incremental snapshot"
check_docs "the incremental snapshot"
no_dead_letters "the incremental snapshot"

if [ "$MODES" = default ]; then
    # the connector's default skipped.operations=t: a TRUNCATE is in no
    # topic, so the documents nesting the table's rows keep them until a
    # check repairs them (docs/kafka.md)
    sqlrun "TRUNCATE TABLE part" || fail "TRUNCATE TABLE part"
    caught_up "the TRUNCATE"
    for mode in on off; do producer_repair "$TEST_TMP/$mode.ini" "${ALIAS_RQ[$mode]}"; done
    check_docs "check --repair after the TRUNCATE"
fi

# ---------------------------------------------------------------- what was said and read
for mode in on off; do
    saved "${META[$mode]}" >"$TEST_TMP/saved-$mode"
    for t in "$PRE$mode/" "$PRE$mode.transaction/" "__debezium-heartbeat.$PRE$mode/" "$PRE$mode.notifications/"; do
        assert_true "the $mode daemon saved offsets of ${t%/} (read, nothing applied)" grep -q "^$t" "$TEST_TMP/saved-$mode"
    done
    n=$(grep -c 'is a dead letter' "$TEST_TMP/run-$mode.log" || true)
    assert_eq 0 "$n" "the $mode daemon logged no dead letter"
done
assert_contains "$(cat "$TEST_TMP/run-on.log")" "index ${ALIAS_RI[on]} (mode row-image): column y of $D.wide: a snapshot's YEAR 2000" \
    "the row-image index re-reads a snapshot's YEAR 2000 from MySQL, said once"
assert_eq 1 "$(head -n "$FIRST_RUN_LINES" "$TEST_TMP/run-on.log" | grep -c "index ${ALIAS_RI[on]} (mode row-image): column y of")" \
    "... said once per column (by the daemon before its first restart)"
if [ "$MODES" = default ]; then
    assert_contains "$(cat "$TEST_TMP/run-off.log")" "is a decimal number (decimal.handling.mode=string) and also the base64 of one" \
        "without the stated mode, a DECIMAL whose base64 is all digits is re-read from MySQL, said"
else
    on_log=$(cat "$TEST_TMP/run-on.log")
    assert_contains "$on_log" "came as a double (decimal.handling.mode=double), which holds 15 significant digits: DECIMAL(65,30)" \
        "a DECIMAL wider than a double's digits is re-read from MySQL, said"
    assert_contains "$on_log" "a null TIME under time.precision.mode=connect" "a null TIME under connect is re-read, said"
    assert_contains "$on_log" "time.precision.mode=connect sends DATETIME(6) in milliseconds" \
        "a DATETIME(6) under connect is re-read, said"
fi
# once told, a daemon reads every value its modes can say one way only:
# what it still re-reads is what the connector lost (a rounded DECIMAL, a
# TIME sent as null, lost microseconds, a snapshot's YEAR or FLOAT)
for mode in "${!STATED_AT[@]}"; do
    n=$(tail -n +$((STATED_AT[$mode] + 1)) "$TEST_TMP/run-$mode.log" | grep -c -E 'nothing says which|no schema saying' || true)
    assert_eq 0 "$n" "the $mode daemon, told the connector's modes, has no value that reads two ways"
done
errs=$(grep -h ' ERROR \[' "$TEST_TMP"/run-*.log | head -5 || true)
assert_eq "" "$errs" "no ERROR in the daemons' logs"

[ ${#FAILS[@]} = 0 ] || fail "$(printf '%s; ' "${FAILS[@]}")"
for n in on off; do
    use $n
    daemon_stop
    assert_eq 0 "$DAEMON_RC" "the $n daemon stops on SIGTERM with exit 0"
    connect "$n" stop
done
if [ -n "$LONG" ] && [ "$SERVER" = mysql ] && [ -z "${KAFKA_DBZ_SERVER:-}" ]; then
    log "---- the same on MariaDB, through debezium-connector-mariadb"
    KAFKA_DBZ_SERVER=mariadb bash "$0" || fail "the MariaDB run failed"
fi
pass
