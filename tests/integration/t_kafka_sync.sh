#!/usr/bin/env bash
# t_kafka_sync.sh — `searchsync run` with [source] kind = kafka:
# the demo shop changed in MariaDB (an initial load, then random_ops.sql's
# inserts, updates, deletes, key moves and transactions on every table), the
# changes read back from the binlog with `searchsync tail` and turned into
# Kafka messages by this test's own producer (Python below: it shares no code
# with src/mq) in two formats, produced with kcat to a real Kafka
# (tests/harness/kafka.sh, KRaft, 3 partitions a topic):
#   cdc.canal     canal-json, all values as MySQL text, keyed by table (a
#                 table in one partition), several rows a message, no binlog
#                 coordinates: versions from the time documents are read
#   cdc.debezium  Debezium envelope with schemas (base64 DECIMAL, epoch-ms
#                 DATETIME(3), ISO TIMESTAMP), keyed by primary key (a table
#                 over three partitions), source.file/pos: binlog versions;
#                 deletes followed by null-value tombstones, a key change
#                 as delete + tombstone + create (as the connector writes)
#   cdc.maxwell   Maxwell JSON (typed values, exact DECIMAL numbers, "old" of
#                 updates), keyed by primary key, position + xoffset: binlog
#                 versions
# Three daemons (three sources, their own metadata schemas and aliases) read
# one topic each. Checked: every document behind both products aliases equals the
# SQL oracle (tests/integration/oracle_lib.sh: nested skus, tags, reviews and
# replies as children), the brands row-image index equals its oracle too;
# each daemon is SIGKILLed while a second batch of messages is read and
# restarted: it resumes from its saved offsets and nothing is lost; a
# malformed message in the canal topic is a dead letter holding its exact
# bytes and the messages after it are applied; the saved offsets reach each
# topic's end and are committed to the consumer group; a topic added at run
# time (`searchsync topics add`) is read within seconds, without a restart;
# the admin API lists the topics with their saved offsets and lag (GET
# /api/v1/topics), the topic deleted in Kafka while read is a warning and a
# dead letter, not a stop: the other topic's changes reach the engine and
# the topic is read again once created; DELETE and POST /api/v1/topics
# (404, 400s), and the UI's Topics screen adds and removes a topic
# (t_kafka_topics.mjs in a real Chromium).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
require_bin
command -v kcat >/dev/null || fail "kcat missing: run tests/harness/deps.sh"
command -v python3 >/dev/null || fail "python3 missing: run tests/harness/deps.sh"

OPS="${KAFKA_SYNC_OPS:-1500}"
PRODUCTS="${KAFKA_SYNC_PRODUCTS:-60}"

# ---------------------------------------------------------------- Kafka
kdir="$TEST_TMP/kafka"
KAFKA_PARTITIONS=3 SEARCHSYNC_KAFKA_DIR="$kdir" bash "$HARNESS/kafka.sh" start >"$TEST_TMP/kafka-start.log" 2>&1 ||
    { cat "$TEST_TMP/kafka-start.log"; fail "the harness's Kafka did not start"; }
on_exit "SEARCHSYNC_KAFKA_DIR='$kdir' bash '$HARNESS/kafka.sh' stop >/dev/null 2>&1"
. "$kdir/kafka.env"
log "kafka on $KAFKA_BOOTSTRAP"

# ---------------------------------------------------------------- the shop
D=$(unique_name kshop)
G=${D}_gen
M1=$(unique_name kmeta_canal)
M2=$(unique_name kmeta_dbz)
M3=$(unique_name kmeta_mxw)
P1=$(unique_name kp_canal) B1=$(unique_name kb_canal)
P2=$(unique_name kp_dbz) B2=$(unique_name kb_dbz)
P3=$(unique_name kp_mxw) B3=$(unique_name kb_mxw)
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$D\`; DROP DATABASE IF EXISTS \`$G\`; DROP DATABASE IF EXISTS \`$M1\`; DROP DATABASE IF EXISTS \`$M2\`; DROP DATABASE IF EXISTS \`$M3\`' >/dev/null 2>&1"
on_exit "curl -s -m 30 -XDELETE '$SEARCH_URL/${P1}_v1,${B1}_v1,${P2}_v1,${B2}_v1,${P3}_v1,${B3}_v1' >/dev/null 2>&1"
bash "$SEARCHSYNC_SRCDIR/sql/demo/generate.sh" --products "$PRODUCTS" --db "$G" \
    --host "$MYSQL_HOST" --port "$MYSQL_PORT" >"$TEST_TMP/gen.out" 2>&1 || {
    cat "$TEST_TMP/gen.out" >&2; fail "generate.sh failed"; }
TABLES="brands categories warehouses tags products skus sku_barcodes product_tags reviews review_replies"
{
    echo "CREATE DATABASE \`$D\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;"
    for t in $TABLES; do echo "CREATE TABLE \`$D\`.$t LIKE \`$G\`.$t;"; done
} | mysql_file /dev/stdin || fail "creating $D"
mysql_file "$SEARCHSYNC_SRCDIR/tests/fixtures/random_ops.sql" "$D" || fail "loading random_ops.sql"
mysql_q "SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, COLUMN_KEY = 'PRI' FROM information_schema.COLUMNS
  WHERE TABLE_SCHEMA = '$D' ORDER BY TABLE_NAME, ORDINAL_POSITION" >"$TEST_TMP/cols.tsv"

# ---------------------------------------------------------------- the producer
# tail's lines (docs/binlog.md "Values") → canal-json and Debezium messages,
# "key<TAB>value" lines for kcat -K (tests/integration/kafka_produce.py)
SRC="mysql://$MYSQL_USER:$MYSQL_PASSWORD@$MYSQL_HOST:$MYSQL_PORT"
MID=1
# produce_since FILE POS [CANAL-TOPIC]: the binlog from there to its end as messages
produce_since() {
    "$SEARCHSYNC_BIN" tail --source "$SRC" --file "$1" --pos "$2" --stop-at-end --tables "$D.*" \
        >"$TEST_TMP/tail.jsonl" 2>"$TEST_TMP/tail.err" || { cat "$TEST_TMP/tail.err"; fail "tail failed"; }
    MID=$(python3 "$(dirname "$0")/kafka_produce.py" "$TEST_TMP/cols.tsv" "$D" "$TEST_TMP/tail.jsonl" "$TEST_TMP" "$MID") ||
        fail "the test producer failed"
    local fmt topic
    for fmt in canal debezium maxwell; do
        topic="cdc.$fmt"
        [ "$fmt" != canal ] || topic="${3:-cdc.canal}"
        kcat -b "$KAFKA_BOOTSTRAP" -P -Z -K $'\t' -t "$topic" <"$TEST_TMP/$fmt.kv" 2>"$TEST_TMP/kcat.err" ||
            { cat "$TEST_TMP/kcat.err"; fail "kcat could not produce to $topic"; }
    done
    log "produced $(wc -l <"$TEST_TMP/tail.jsonl") rows: $(wc -l <"$TEST_TMP/canal.kv") canal, $(wc -l <"$TEST_TMP/debezium.kv") Debezium and $(wc -l <"$TEST_TMP/maxwell.kv") Maxwell messages"
}

# ---------------------------------------------------------------- phase 1: load + ops
read -r f0 p0 <<<"$(mysql_binlog_pos)"
for t in $TABLES; do mysql_q "INSERT INTO \`$D\`.$t SELECT * FROM \`$G\`.$t" || fail "initial load of $t"; done
mysql_q "SET @rop_deck = '', @rop_txn_pct = 75, @rop_txn_max = 4; CALL random_ops(2601, $((OPS / 2)))" "$D" >"$TEST_TMP/ops1.out" ||
    fail "random_ops: $(cat "$TEST_TMP/ops1.out")"
read -r f1 p1 <<<"$(mysql_binlog_pos)"
produce_since "$f0" "$p0"
# a malformed message amid the canal topic, keyed to the products' partition
bad='{"data":[{"id":"9","name":"caf'$'\xc3\xa9''"'
printf '%s.products\t%s\n' "$D" "$bad" | kcat -b "$KAFKA_BOOTSTRAP" -P -K $'\t' -t cdc.canal

# ---------------------------------------------------------------- the daemons
sed "s/\"shop\./\"$D./g" "$SEARCHSYNC_SRCDIR/sql/demo/mapping.json" |
    jq '.indices[].tables |= map(select(.delay_effect != true))
        | walk(if type == "object" and (.table // "" | endswith(".categories")) then del(.refresh_parent) else . end)' \
    >"$TEST_TMP/mapping.json"
APORT="$(free_port)"
export SEARCHSYNC_ADMIN_TOKEN="$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')"
config() { # NAME META TOPIC
    cat <<INI
[source]
kind = kafka
name = $1
host = 127.0.0.1
port = $MYSQL_PORT
user = root
start = beginning
[kafka]
brokers = $KAFKA_BOOTSTRAP
topics = $3
group = ss-$1-$$
[metadata]
database = $2
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
idle_checkpoint_interval_ms = 500
[admin]
listen = $([ "$1" != canal ] || echo "127.0.0.1:$APORT")
[log]
level = info
INI
}
config canal "$M1" cdc.canal >"$TEST_TMP/canal.ini"
config dbz "$M2" cdc.debezium >"$TEST_TMP/dbz.ini"
config mxw "$M3" cdc.maxwell >"$TEST_TMP/mxw.ini"
for s in canal:$P1:$B1 dbz:$P2:$B2 mxw:$P3:$B3; do
    IFS=: read -r name pidx bidx <<<"$s"
    jq --arg p "$pidx" --arg b "$bidx" '.indices |= map(if .alias == "products" then .alias = $p
        elif .alias == "brands" then .alias = $b else . end)' "$TEST_TMP/mapping.json" >"$TEST_TMP/mapping-$name.json"
    "$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/$name.ini" "$TEST_TMP/mapping-$name.json" --yes \
        >"$TEST_TMP/import-$name.out" 2>&1 || fail "import ($name): $(cat "$TEST_TMP/import-$name.out")"
done
declare -A PID
start() { # NAME
    daemon_start "$TEST_TMP/$1.ini" "$TEST_TMP/run-$1.log"
    PID[$1]=$DAEMON
}
use() { DAEMON=${PID[$1]}; DAEMON_LOG="$TEST_TMP/run-$1.log"; _DAEMON_LOG_AT=0; }
t0=$(date +%s)
start canal
start dbz
start mxw
for n in canal dbz mxw; do use $n; daemon_wait_ready 60; done
on_exit '[ "$rc" = 0 ] || { echo "--- the canal daemon log (last 40 lines)"; tail -40 "$TEST_TMP/run-canal.log"; }'

# every partition's last offset, as the daemon's token writes it (next = last + 1)
ends() { kcat -b "$KAFKA_BOOTSTRAP" -C -t "$1" -o -1 -e -q -f '%t/%p=%o\n' | awk -F= '{print $1 "=" $2 + 1}' | sort; }
saved() { mysql_q "SELECT position FROM \`$1\`.offsets" 2>/dev/null | tr ' ' '\n' | grep "^$2/" | sort; }
caught_up() {
    local s fmt meta want
    for s in canal:$M1 debezium:$M2 maxwell:$M3; do
        IFS=: read -r fmt meta <<<"$s"
        want="$(ends "cdc.$fmt")"
        for ((i = 0; ; i++)); do
            [ "$(saved "$meta" "cdc.$fmt")" != "$want" ] || break
            [ "$i" -lt 300 ] || fail "the $fmt daemon's saved offsets did not reach the topic's end in 60 s: $(saved "$meta" "cdc.$fmt" | tr '\n' ' ')(want $(tr '\n' ' ' <<<"$want"))"
            sleep 0.2
        done
    done
}
caught_up
log "phase 1 read in $(( $(date +%s) - t0 ))s"

# ---------------------------------------------------------------- phase 2, a SIGKILL each
mysql_q "SET @rop_deck = '', @rop_txn_pct = 75, @rop_txn_max = 4; CALL random_ops(2602, $((OPS - OPS / 2)))" "$D" >"$TEST_TMP/ops2.out" ||
    fail "random_ops: $(cat "$TEST_TMP/ops2.out")"
mk=$(mysql_q "SELECT MIN(id) FROM products" "$D")
mysql_q "UPDATE products SET name = 'marker kafka' WHERE id = $mk" "$D"
produce_since "$f1" "$p1"
sleep 0.3
for n in canal dbz mxw; do
    use $n
    daemon_alive || fail "the $n daemon died: $(tail -20 "$DAEMON_LOG")"
    daemon_kill
    echo "=== SIGKILL" >>"$DAEMON_LOG"
done
log "killed at saved offsets: canal $(saved "$M1" cdc.canal | tr '\n' ' '), Debezium $(saved "$M2" cdc.debezium | tr '\n' ' '), Maxwell $(saved "$M3" cdc.maxwell | tr '\n' ' ')"
for n in canal dbz mxw; do start $n; done

# ---------------------------------------------------------------- caught up
caught_up
log "caught up $(( $(date +%s) - t0 ))s after the daemons started"
for n in canal dbz mxw; do
    use $n
    daemon_alive || fail "the $n daemon died: $(tail -20 "$DAEMON_LOG")"
    assert_contains "$(cat "$DAEMON_LOG")" "resuming source $n at Kafka offsets" "$n: the restart resumed from the saved offsets"
done

# ---------------------------------------------------------------- a restart with nothing new
# (every partition's offset stays in the checkpoint, read or not since the start)
use canal
daemon_stop
assert_eq 0 "$DAEMON_RC" "canal: SIGTERM, clean exit"
start canal
daemon_wait_ready 30
read -r f2 p2 <<<"$(mysql_binlog_pos)"
mysql_q "UPDATE products SET name = 'marker two' WHERE id = $mk" "$D"
produce_since "$f2" "$p2"
caught_up
assert_eq "marker two" "$(search_doc "$P1" "$mk" | jq -r .name)" "canal: a change after a restart"
assert_eq "marker two" "$(search_doc "$P2" "$mk" | jq -r .name)" "Debezium: a change after a restart"
assert_eq "marker two" "$(search_doc "$P3" "$mk" | jq -r .name)" "Maxwell: a change after a restart"

# ---------------------------------------------------------------- a topic added at run time
"$SEARCHSYNC_BIN" topics add --config "$TEST_TMP/canal.ini" --format canal-json cdc.extra >"$TEST_TMP/topics.out" 2>&1 ||
    fail "topics add: $(cat "$TEST_TMP/topics.out")"
assert_eq "cdc.canal	config
cdc.extra	metadata	canal-json" "$("$SEARCHSYNC_BIN" topics list --config "$TEST_TMP/canal.ini")" "topics list (a topic with its own format)"
use canal
daemon_wait_log "topic cdc.extra added to source canal" 10
read -r f3 p3 <<<"$(mysql_binlog_pos)"
mysql_q "UPDATE products SET name = 'marker three' WHERE id = $mk" "$D"
produce_since "$f3" "$p3" cdc.extra
t3=$(date +%s%N)
wait_until 30 "the change in the topic added at run time reaches the engine" \
    bash -c "curl -sf '$SEARCH_URL/$P1/_doc/$mk' | jq -e '._source.name == \"marker three\"'"
log "a topic added at run time: its message in the engine $(( ($(date +%s%N) - t3) / 1000000 )) ms after it was produced"
URL="http://127.0.0.1:$APORT"
api() { # METHOD PATH [curl args...] — sets CODE and BODY
    CODE="$(curl -sS -m 30 -X "$1" -o "$TEST_TMP/.b" -w '%{http_code}' \
        -H "Authorization: Bearer $SEARCHSYNC_ADMIN_TOKEN" "${@:3}" "$URL$2")" || fail "curl $1 $2 failed"
    BODY="$(cat "$TEST_TMP/.b")"
}
# the API's saved offsets of TOPIC reach its end in Kafka, lag 0
api_caught_up() {
    api GET /api/v1/topics
    [ "$(jq -r --arg t "$1" '.topics[] | select(.topic == $t) | .partitions[] | select(.lag == 0) | "\($t)/\(.partition)=\(.saved)"' <<<"$BODY" | sort)" = "$(ends "$1")" ]
}
wait_until 20 "GET /api/v1/topics: cdc.extra's saved offsets at its end, lag 0" api_caught_up cdc.extra
assert_eq '["config"] true false' "$(jq -r '.topics[] | select(.topic == "cdc.canal") | "\(.from | tojson) \(.subscribed) \(.missing)"' <<<"$BODY")" \
    "GET /api/v1/topics: cdc.canal from the configuration, subscribed"
assert_eq '["metadata"] true 3' "$(jq -r '.topics[] | select(.topic == "cdc.extra") | "\(.from | tojson) \(.subscribed) \(.partitions | length)"' <<<"$BODY")" \
    "GET /api/v1/topics: cdc.extra from the metadata, subscribed, its 3 partitions"

# ---------------------------------------------------------------- a topic deleted in Kafka
# (added before it existed, cdc.extra may have been missing once already)
MISSING="topic cdc.extra of source canal is not in Kafka"
warned() { grep -cF "$MISSING" "$DAEMON_LOG" || true; }
test_warned() { [ "$(warned)" -gt "$w0" ]; }
dl_extra() { mysql_q "SELECT COUNT(*) FROM \`$M1\`.dead_letters WHERE index_name = 'kafka:cdc.extra'"; }
w0=$(warned) d0=$(dl_extra)
SEARCHSYNC_KAFKA_DIR="$kdir" bash "$HARNESS/kafka.sh" delete-topic cdc.extra >"$TEST_TMP/delete.out" 2>&1 ||
    fail "deleting cdc.extra: $(cat "$TEST_TMP/delete.out")"
wait_until 30 "the daemon warns that cdc.extra is not in Kafka" test_warned
assert_contains "$(grep -F "$MISSING" "$DAEMON_LOG" | tail -1)" "searchsync topics remove" "the warning says what to do"
assert_eq $((d0 + 1)) "$(dl_extra)" "the missing topic's dead letter"
api GET /api/v1/topics
assert_eq true "$(jq '.topics[] | select(.topic == "cdc.extra") | .missing' <<<"$BODY")" "GET /api/v1/topics: cdc.extra is missing"
# the other topic is read on
read -r f4 p4 <<<"$(mysql_binlog_pos)"
mysql_q "UPDATE products SET name = 'marker four' WHERE id = $mk" "$D"
produce_since "$f4" "$p4"
wait_until 30 "a change in cdc.canal while cdc.extra is missing reaches the engine" \
    bash -c "curl -sf '$SEARCH_URL/$P1/_doc/$mk' | jq -e '._source.name == \"marker four\"'"
daemon_alive || fail "the canal daemon stopped when a topic was deleted: $(tail -20 "$DAEMON_LOG")"
# created again (produced to): read again
read -r f5 p5 <<<"$(mysql_binlog_pos)"
mysql_q "UPDATE products SET name = 'marker five' WHERE id = $mk" "$D"
produce_since "$f5" "$p5" cdc.extra
daemon_wait_log "topic cdc.extra of source canal is in Kafka again" 30
wait_until 30 "the change in the topic created again reaches the engine" \
    bash -c "curl -sf '$SEARCH_URL/$P1/_doc/$mk' | jq -e '._source.name == \"marker five\"'"
wait_until 20 "GET /api/v1/topics: cdc.extra caught up again" api_caught_up cdc.extra

# ---------------------------------------------------------------- the API's add and remove, the UI
api DELETE /api/v1/topics/cdc.extra
assert_eq 200 "$CODE" "DELETE /api/v1/topics/cdc.extra ($BODY)"
daemon_wait_log "topic cdc.extra removed from source canal" 10
api DELETE /api/v1/topics/cdc.extra
assert_eq 404 "$CODE" "DELETE of a topic not there: 404 ($BODY)"
api DELETE /api/v1/topics/cdc.canal
assert_contains "$CODE $BODY" "[kafka] topics" "DELETE of a configuration topic: 404 saying where it is"
api POST /api/v1/topics -H 'Content-Type: application/json' -d '{"topic":"bad/name"}'
assert_eq "400 topic" "$CODE $(jq -r .field <<<"$BODY")" "POST a bad topic name: 400 naming the field"
api POST /api/v1/topics -H 'Content-Type: application/json' -d '{"topic":"ok","format":"avro"}'
assert_eq "400 format" "$CODE $(jq -r .field <<<"$BODY")" "POST a bad format: 400 naming the field"
api POST /api/v1/topics -H 'Content-Type: application/json' -d "{\"topic\":\"$(printf 'x%.0s' $(seq 250))\"}"
assert_eq 400 "$CODE" "POST a 250-character topic name: 400"
. "$(dirname "$0")/ui_lib.sh"
ui_setup
UI_URL="$URL" TOKEN="$SEARCHSYNC_ADMIN_TOKEN" SHOTS="$SHOTS" PW_DIR="$PW_DIR" CHROMIUM="$CHROMIUM" \
    node "$SEARCHSYNC_SRCDIR/tests/integration/t_kafka_topics.mjs" >"$TEST_TMP/browser.out" 2>&1 || {
    cat "$TEST_TMP/browser.out"; fail "the Topics screen (t_kafka_topics.mjs)"; }
log "browser: $(grep -c '^ok:' "$TEST_TMP/browser.out") checks"
daemon_wait_log "topic cdc.extra removed from source canal" 10
assert_eq "cdc.canal	config" "$("$SEARCHSYNC_BIN" topics list --config "$TEST_TMP/canal.ini")" "topics list after the UI removed cdc.extra"
caught_up

# ---------------------------------------------------------------- the documents
oracle_check_products "$D" "$P1" "canal-json"
oracle_check_products "$D" "$P2" "Debezium"
oracle_check_products "$D" "$P3" "Maxwell"
for b in "$B1" "$B2" "$B3"; do
    engine_dump "$b" "$TEST_TMP/brands-$b.ndjson" 2>"$TEST_TMP/dump.err" || { cat "$TEST_TMP/dump.err"; fail "dump $b"; }
    compare_docs "$TEST_TMP/brands-$b.ndjson" "$TEST_TMP/oracle/brands.oracle" --numbers value \
        --ignore-field ss_version --ignore-field ss_hash --ignore-field ss_key_hash --label "$b" --show 5 \
        >"$TEST_TMP/cmp.out" || { cat "$TEST_TMP/cmp.out"; fail "$b differs from the SQL oracle"; }
    log "$(cat "$TEST_TMP/cmp.out")"
done
assert_eq "marker five" "$(search_doc "$P1" "$mk" | jq -r .name)" "the last marker through canal (the topic created again)"

# ---------------------------------------------------------------- the dead letter
assert_eq "1" "$(mysql_q "SELECT COUNT(*) FROM \`$M1\`.dead_letters WHERE index_name <> 'kafka:cdc.extra'")" "canal: one dead letter besides the missing topic's"
assert_eq "kafka:cdc.canal	message" "$(mysql_q "SELECT index_name, op FROM \`$M1\`.dead_letters ORDER BY id LIMIT 1")" \
    "the dead letter names the topic; it is a message, not a change"
assert_eq "$bad" "$(mysql_q "SELECT body FROM \`$M1\`.dead_letters ORDER BY id LIMIT 1")" "it holds the message's bytes"
assert_contains "$(mysql_q "SELECT error FROM \`$M1\`.dead_letters ORDER BY id LIMIT 1")" "not JSON" "and says what is wrong"
assert_eq "message	topic	0" "$(mysql_q "SELECT op, doc_id, LENGTH(body) FROM \`$M1\`.dead_letters WHERE index_name = 'kafka:cdc.extra' ORDER BY id DESC LIMIT 1")" \
    "the deleted topic's dead letter: no bytes"
assert_contains "$(mysql_q "SELECT error FROM \`$M1\`.dead_letters WHERE index_name = 'kafka:cdc.extra' ORDER BY id DESC LIMIT 1")" "topic cdc.extra is not in Kafka" \
    "it names the topic and the error"
assert_eq "0" "$(mysql_q "SELECT COUNT(*) FROM \`$M2\`.dead_letters")" "Debezium: no dead letter"
assert_eq "0" "$(mysql_q "SELECT COUNT(*) FROM \`$M3\`.dead_letters")" "Maxwell: no dead letter"
errs=$(grep -h ' ERROR \[' "$TEST_TMP"/run-*.log | head -5 || true)
assert_eq "" "$errs" "no ERROR in the daemons' logs"

# ---------------------------------------------------------------- offsets in Kafka
# the daemon's group goes on after what the daemon saved: a consumer of the
# group reads the message produced after the stop, and nothing before it
for n in canal dbz mxw; do use $n; daemon_stop; assert_eq 0 "$DAEMON_RC" "$n: SIGTERM, clean exit"; done
printf 'after\t%s\n' '{"database":"x","table":"t","type":"insert","ts":1,"data":{"id":1}}' |
    kcat -b "$KAFKA_BOOTSTRAP" -P -K $'\t' -t cdc.canal
printf '[source]\nkind = kafka\nstart = beginning\n[kafka]\nbrokers = %s\ntopics = cdc.canal\ngroup = ss-canal-%s\n' \
    "$KAFKA_BOOTSTRAP" "$$" >"$TEST_TMP/group.ini"
"$SEARCHSYNC_BIN" kafka-tail --config "$TEST_TMP/group.ini" --max 1 --timeout-ms 40000 >"$TEST_TMP/kt.jsonl" \
    2>"$TEST_TMP/kt.err" || { cat "$TEST_TMP/kt.err"; fail "kafka-tail (the daemon's group) exited $?"; }
assert_eq '"x"' "$(jq .db "$TEST_TMP/kt.jsonl")" "the daemon's offsets were committed to its consumer group: the next message is the new one"
pass
