#!/usr/bin/env bash
# t_kafka_canal.sh — the real canal as searchsync's input.
#
# canal 1.1.4 (tests/harness/canal.sh: jars from Maven Central, the server's
# and the instance's configuration written for the harness in
# tests/harness/canal/) reads MySQL 8.0.15 (tests/harness/mysql8.sh, with
# binlog_row_metadata=MINIMAL: canal 1.1.4 cannot parse FULL's ENUM/SET
# metadata, nor MariaDB 10.11's DDL events; canal.sh's header) and writes
# its flat messages (canal.mq.flatMessage=true) to the harness's Kafka
# 3.9.1: one topic, canal's default partition 0, DDL in the same topic. Its
# JVM runs at UTC+08:00 (canal writes TIMESTAMP text in that zone) and the
# daemon says so (canal_tz_offset). A daemon (`[source] kind = kafka`)
# feeds two indices: a re-query one (tests/integration/producer_ops.sql's `wide`
# with its children `part` nested) and a row-image one (`wide`, every
# column but two canal 1.1.4 loses: the latin1 one, whose text it decodes
# as UTF-8 (é and € arrive as U+FFFD), and the TIME one, whose ±100:MM:SS
# it sends as ±00:MM:SS (docs/kafka.md, canal).
#
# The table spans MySQL's types at their limits (producer_ops.sql says which):
# BINARY/VARBINARY/BLOB with 0x00 bytes (canal writes them as \u0000
# characters), BIGINT UNSIGNED keys above 2^63, DECIMAL(65,30), zero dates,
# TIME ±838 h, YEAR 0000, emoji, JSON with big integers, ENUM/SET (canal
# 1.1.4 sends their index and bit mask), BIT. The daemon starts on the empty
# tables; canal starts; the edge rows and random rows are inserted; a seeded
# DML stream (column changes, inserts, deletes, re-inserts, key changes,
# transactions, children moved between parents) runs while the daemon and
# canal are SIGKILLed and restarted; a column is added to `wide` (an ALTER
# message). Once a sentinel row has reached the topic's end and the
# daemon's saved offsets: every document of both indices equals the SQL
# oracle computed from MySQL, no dead letter was written, and no ERROR was
# logged. Then `part` is truncated (canal's TRUNCATE message: the re-query
# index rebuilt) and the documents are compared again.
#
# Knobs: SEARCHSYNC_SEED (the DML's seed; printed), SEARCHSYNC_LONG=1 (the
# long tier: 2,400 operations, 150 roots, four kill rounds, then the same
# with KAFKA_CN_HASHED=1), KAFKA_CN_OPS
# (operations), KAFKA_CN_HASHED=1 (the topic's 3 partitions, canal hashing
# rows by primary key: canal.mq.partitionsNum, canal.mq.partitionHash),
# KAFKA_CN_KEEP (a directory the logs are copied to),
# KAFKA_RESULTS (a directory: one TSV row per canal setting exercised and
# its result, kafka-canal.tsv, for scripts/kafka-doc.sh).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
. "$(dirname "$0")/producer_lib.sh"
require_bin
for t in kcat java mvn jq python3; do
    command -v "$t" >/dev/null || fail "$t missing: run tests/harness/deps.sh"
done

LONG="${SEARCHSYNC_LONG:-}"
OPS="${KAFKA_CN_OPS:-$([ -n "$LONG" ] && echo 2400 || echo 300)}"
ROUNDS=$([ -n "$LONG" ] && echo 4 || echo 1)
SEED="${SEARCHSYNC_SEED:-}"
[ -n "$SEED" ] || SEED=$(( (RANDOM << 15 | RANDOM) % 2147483646 + 1 ))
SEED=$(( SEED % 2147483646 + 1 ))
log "seed $SEED, $OPS operations, $ROUNDS kill round(s)"
# the settings this run exercises (docs/kafka.md's table: scripts/kafka-doc.sh)
kafka_live "canal$([ -z "${KAFKA_CN_HASHED:-}" ] || echo :hashed)" 1.1.4 "$SEED" "canal.serverMode=kafka" "canal.mq.flatMessage=true" "canal.mq.topic" \
    "$([ -n "${KAFKA_CN_HASHED:-}" ] && echo "canal.mq.partitionsNum, canal.mq.partitionHash" ||
        echo "canal.mq.partition=0 (the default: one partition)")" "canal.instance.filter.regex" \
    "canal.mq.canalBatchSize, canal.instance.transaction.size" "canal.instance.filter.query.ddl=false (the default)" \
    "canal.instance.tsdb.enable" "canal.instance.connectionCharset=UTF-8" "JVM time zone (-Duser.timezone)" \
    "canal.instance.gtidon"

# ---------------------------------------------------------------- servers
kdir="$TEST_TMP/kafka"
KAFKA_PARTITIONS=3 SEARCHSYNC_KAFKA_DIR="$kdir" bash "$HARNESS/kafka.sh" start >"$TEST_TMP/kafka-start.log" 2>&1 ||
    { cat "$TEST_TMP/kafka-start.log"; fail "the harness's Kafka did not start"; }
on_exit "SEARCHSYNC_KAFKA_DIR='$kdir' bash '$HARNESS/kafka.sh' stop >/dev/null 2>&1"
. "$kdir/kafka.env"
# the daemon's metadata stays on the suite's MariaDB (its checkpoints are
# no business of canal's)
META_HOST="$MYSQL_HOST" META_PORT="$MYSQL_PORT"
meta_q() { mariadb --no-defaults -h "$META_HOST" -P "$META_PORT" -u root --batch --skip-column-names -e "$1"; }
export MYSQL8_EXTRA_ARGS="--binlog-row-metadata=MINIMAL"
use_mysql8
unset MYSQL8_EXTRA_ARGS
log "kafka on $KAFKA_BOOTSTRAP, MySQL $MYSQL_VERSION on $MYSQL_HOST:$MYSQL_PORT"

frc=0
bash "$HARNESS/canal.sh" fetch >"$TEST_TMP/canal-fetch.log" 2>&1 || frc=$?
if [ "$frc" != 0 ]; then
    cat "$TEST_TMP/canal-fetch.log"
    [ "$frc" = 3 ] && skip "Maven Central is not reachable: canal cannot be had"
    fail "resolving canal from Maven Central"
fi

# canal's user (mysql_native_password: canal.sh's header)
CNU="cn_$$"
mysql_q "CREATE USER '$CNU'@'%' IDENTIFIED WITH mysql_native_password BY 'cn-pw';
         GRANT SELECT, REPLICATION CLIENT, REPLICATION SLAVE ON *.* TO '$CNU'@'%'" || fail "creating canal's user"

# ---------------------------------------------------------------- the tables
producer_tables cn

PRE="sscn$$"
# KAFKA_CN_HASHED=1: the topic's 3 partitions, rows hashed by primary key
HASHED=""
[ -z "${KAFKA_CN_HASHED:-}" ] || HASHED='canal.mq.partitionsNum=3
canal.mq.partitionHash=.*\\..*:$pk$'
CNDIR="$TEST_TMP/canal"
canal() { # start|kill|stop|restart
    SEARCHSYNC_CANAL_DIR="$CNDIR" KAFKA_BOOTSTRAP="$KAFKA_BOOTSTRAP" CANAL_HOST="$MYSQL_HOST" \
        CANAL_PORT="$MYSQL_PORT" CANAL_USER="$CNU" CANAL_PASSWORD=cn-pw CANAL_INCLUDE="$D" \
        CANAL_TOPIC="$PRE" CANAL_TZ=Asia/Shanghai CANAL_SERVER_ID=$((7000 + $$ % 20000)) \
        CANAL_INSTANCE_PROPS="$HASHED" bash "$HARNESS/canal.sh" "$1" >>"$CNDIR.log" 2>&1
}
on_exit "SEARCHSYNC_CANAL_DIR='$CNDIR' bash '$HARNESS/canal.sh' stop >/dev/null 2>&1"
on_exit "[ \"\$rc\" = 0 ] || { echo '--- canal: its warnings and errors'; grep -aE ' (WARN|ERROR) |Exception' '$CNDIR/canal.log' | grep -v 'find start position\\|init table black' | tail -15 | cut -c1-400; tail -5 '$CNDIR.log'; }"

# ---------------------------------------------------------------- the daemon
META=$(unique_name cnmeta)
ALIAS_RQ=$(unique_name cnrq)
ALIAS_RI=$(unique_name cnri)
on_exit "meta_q 'DROP DATABASE IF EXISTS \`$META\`' >/dev/null 2>&1"
on_exit "curl -s -m 30 -XDELETE '$SEARCH_URL/${ALIAS_RQ}_v1,${ALIAS_RI}_v1' >/dev/null 2>&1"
cat >"$TEST_TMP/c.ini" <<INI
[source]
kind = kafka
name = canal
host = $MYSQL_HOST
port = $MYSQL_PORT
user = root
start = beginning
[kafka]
brokers = $KAFKA_BOOTSTRAP
topic_regex = ^$PRE\$
group = ss-cn-$$
canal_tz_offset = +08:00
[metadata]
host = $META_HOST
port = $META_PORT
database = $META
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
idle_checkpoint_interval_ms = 500
INI
# (the column the test adds at the end, extra, is in neither index)
# what canal 1.1.4 loses: latin1 text (decoded as UTF-8) and a TIME of
# exactly 100 hours (sent as 00:MM:SS): not in the row-image index
LOST="l1 t0"
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
[ -z "${KAFKA_CN_KEEP:-}" ] || on_exit "mkdir -p '$KAFKA_CN_KEEP'; cp '$RUNLOG' '$CNDIR/canal.log' '$KAFKA_CN_KEEP'/"

# ---------------------------------------------------------------- caught up
FENCE=0
caught_up() { # WHAT
    local i e="$TEST_TMP/ends" t0=$(date +%s) t1
    FENCE=$((FENCE + 1))
    sqlrun "INSERT INTO fence VALUES ($FENCE, '$1')" || fail "the sentinel row"
    for ((i = 0; ; i++)); do
        topic_has "$PRE" --arg n "$FENCE" \
            'select(.table == "fence" and .type == "INSERT" and any(.data[]; .id == $n))' && break
        [ "$i" -lt 1500 ] || fail "$1: canal did not send the sentinel row in 300 s; it logged last: $(grep -a ' [A-Z]* ' "$CNDIR/canal.log" | tail -3 | cut -c1-300)"
        sleep 0.2
    done
    t1=$(date +%s)
    : >"$e.prev"
    for ((i = 0; ; i++)); do
        ends "$PRE" >"$e"
        cmp -s "$e" "$e.prev" && break
        cp "$e" "$e.prev"
        sleep 1
    done
    for ((i = 0; ; i++)); do
        reached "$META" "$e" && break
        [ "$i" -lt 1500 ] || fail "$1: the daemon's saved offsets did not reach the topic's end in 300 s: saved $(saved "$META" | tr '\n' ' '), ends $(tr '\n' ' ' <"$e")"
        sleep 0.2
    done
    log "$1: caught up (sentinel sent after $((t1 - t0)) s, offsets saved after $(($(date +%s) - t1)) s)"
}

# ---------------------------------------------------------------- the checks
check_docs() { # WHAT
    local a o
    producer_oracle "$TEST_TMP/rq.oracle" "$TEST_TMP/ri.oracle" $LOST
    PRODUCER_BAD=""
    for a in "$ALIAS_RQ:rq" "$ALIAS_RI:ri"; do
        o="${a##*:}" a="${a%:*}"
        PRODUCER_SHOW=8 producer_compare "$1" "$a" "$TEST_TMP/$o.oracle" "$a ($o)"
    done
    [ -z "$PRODUCER_BAD" ] || soft_fail "$1:$PRODUCER_BAD differ(s) from the SQL oracle (seed $SEED)"
}
no_dead_letters() { producer_dead_letters "$1" "$META"; }

# ---------------------------------------------------------------- the first rows
# the daemon first, on the empty tables: its indices are built (empty)
# before there is a row, so every document comes from canal's messages
daemon_start "$TEST_TMP/c.ini" "$RUNLOG"
daemon_wait_ready 60
daemon_wait_log "$ALIAS_RQ: version 1 live" 120
daemon_wait_log "$ALIAS_RI: version 1 live" 120
canal start || fail "canal did not start: $(tail -5 "$CNDIR.log")"
ROOTS=$([ -n "$LONG" ] && echo 150 || echo 40)
producer_fill "$ROOTS" 100 "$TEST_TMP/state"
log "rows: $(mysql_q "SELECT COUNT(*) FROM wide" "$D") wide, $(mysql_q "SELECT COUNT(*) FROM part" "$D") part"
caught_up "the first rows"
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
    canal kill && canal start || fail "round $r: canal did not come back: $(tail -5 "$CNDIR.log")"
    log "round $r: canal SIGKILLed and restarted"
done
wait "$DML" || fail "the DML failed: $(tail -5 "$TEST_TMP/dml.out")"
log "$OPS operations in $(($(date +%s) - t0)) s: $(mysql_q "SELECT COUNT(*) FROM wide" "$D") wide rows, $(mysql_q "SELECT COUNT(*) FROM part" "$D") parts"
# a column added (canal's ALTER message), then rows changed in it
sqlrun "ALTER TABLE wide ADD COLUMN extra INT; UPDATE wide SET extra = 7, y = 0 WHERE id % 3 = 0" || fail "the ALTER"
caught_up "the stream"
check_docs "the stream"
no_dead_letters "the stream"

# canal sends a TRUNCATE as a DDL message: the re-query index, which nests
# the table, is rebuilt from MySQL
sqlrun "TRUNCATE TABLE part" || fail "TRUNCATE TABLE part"
caught_up "the TRUNCATE"
producer_rebuilt "$RUNLOG" "$ALIAS_RQ" "TRUNCATE TABLE $D.part"
check_docs "the TRUNCATE"
no_dead_letters "the TRUNCATE"

# ---------------------------------------------------------------- what was read and said
# every message canal sent: rows of the test's tables, the ALTER and the
# TRUNCATE, nothing else (no transaction markers, no heartbeats in flat mode)
n=$(kcat -b "$KAFKA_BOOTSTRAP" -C -t "$PRE" -e -q -f '%s\n' |
    jq -r '(if .isDdl then "ddl " else "" end) + .database + "." + (.table // "") + " " + .type' |
    sed "s/^\(ddl \)\?$D\./\1D./" | sort | uniq -c | tr -s ' ' | tr '\n' ',')
log "canal's messages: $n"
assert_contains "$n" "ddl D.wide ALTER" "canal sent the ALTER as a DDL message (read, the types read again)"
assert_contains "$n" "ddl D.part TRUNCATE" "canal sent the TRUNCATE as a DDL message"
assert_eq "" "$(tr ',' '\n' <<<"$n" | grep -vE '^ ?[0-9]+ (ddl )?D\.(wide|part|fence) (INSERT|UPDATE|DELETE|ALTER|TRUNCATE)$' | grep . || true)" \
    "canal sent rows of the test's tables and DDL only"
if [ -n "$HASHED" ]; then
    # canal's messages have no key: the warning about a table read from
    # several partitions names canal's own setting, not a message key
    assert_contains "$(cat "$RUNLOG")" "table $D.wide comes from $PRE partition" "the daemon saw wide in several partitions"
    assert_contains "$(cat "$RUNLOG")" "canal.mq.partitionHash = $D.wide:\$pk\$" \
        "... and said canal's setting that keeps one row in one partition"
fi
assert_eq 0 "$(grep -c 'is a dead letter' "$RUNLOG" || true)" "the daemon logged no dead letter"
errs=$(grep -h ' ERROR \[' "$RUNLOG" | head -5 || true)
assert_eq "" "$errs" "no ERROR in the daemon's log"
[ ${#FAILS[@]} = 0 ] || fail "$(printf '%s; ' "${FAILS[@]}")"
if [ -n "$LONG" ] && [ -z "$HASHED" ]; then
    log "---- the same with canal hashing rows by primary key over 3 partitions"
    daemon_stop
    canal stop
    KAFKA_CN_HASHED=1 bash "$0" || fail "the run with hashed partitions failed"
fi
pass
