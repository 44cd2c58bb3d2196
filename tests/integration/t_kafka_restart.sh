#!/usr/bin/env bash
# t_kafka_restart.sh — a Kafka source (`searchsync run`, [source] kind = kafka,
# Maxwell messages of a real Kafka, 21 partitions a topic) stopped and
# started the ways an operator does:
#   dead letter  a message without its primary key column is a dead letter
#                whose error tells the producer to include the key column
#                (not the binlog's `set binlog_row_image=FULL`)
#   restarts     rounds of: SIGKILL a daemon just started (its group join
#                under way), restart at once, SIGTERM soon after: each stop
#                ends within 15 s with exit 0 (a rebalance callback run by
#                rd_kafka_consumer_close asked librdkafka for the assignment
#                and could wait for ever; the old code hung in some rounds)
#   late topic   a topic added with `searchsync topics add` while the daemon
#                is down, before Kafka has it, then created: after a quick
#                restart (the static member's session still alive, so Kafka
#                hands back the old assignment without the new topic) the
#                daemon warns, joins the group again and reads the topic
#   the oracle   every document equals its row in SQL (the test's own
#                producer writes each message from the row it inserted)
. "$(dirname "$0")/lib.sh"
require_bin
command -v kcat >/dev/null || fail "kcat missing: run tests/harness/deps.sh"

kdir="$TEST_TMP/kafka"
KAFKA_PARTITIONS=21 SEARCHSYNC_KAFKA_DIR="$kdir" bash "$HARNESS/kafka.sh" start >"$TEST_TMP/kafka-start.log" 2>&1 ||
    { cat "$TEST_TMP/kafka-start.log"; fail "the harness's Kafka did not start"; }
on_exit "SEARCHSYNC_KAFKA_DIR='$kdir' bash '$HARNESS/kafka.sh' stop >/dev/null 2>&1"
. "$kdir/kafka.env"

D=$(unique_name kr) M=$(unique_name kr_meta) A=$(unique_name kr_items)
MAIN=kr.main LATE=kr.late
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$D\`; DROP DATABASE IF EXISTS \`$M\`' >/dev/null 2>&1"
on_exit "curl -s -m 30 -XDELETE '$SEARCH_URL/${A}_v1' >/dev/null 2>&1"
mysql_q "CREATE DATABASE \`$D\`; CREATE TABLE \`$D\`.items (id INT PRIMARY KEY, name VARCHAR(64) NOT NULL)" ||
    fail "creating $D"
APORT="$(free_port)"
TOKEN="$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')"
cat >"$TEST_TMP/kr.ini" <<INI
[source]
kind = kafka
name = kr
host = 127.0.0.1
port = $MYSQL_PORT
user = root
start = beginning
[kafka]
brokers = $KAFKA_BOOTSTRAP
topics = $MAIN
group = ss-kr-$$
format = maxwell
[metadata]
database = $M
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
idle_checkpoint_interval_ms = 500
[admin]
listen = 127.0.0.1:$APORT
token = $TOKEN
[log]
level = info
INI
jq -n --arg a "$A" --arg t "$D.items" '{version: 1, indices: [{alias: $a, shards: 1, replicas: 0,
    tables: [{table: $t, mode: "row-image", columns: [
      {name: "id", mysql_type: "int(11)", type: "long", key: true},
      {name: "name", mysql_type: "varchar(64)", type: "keyword"}]}]}]}' >"$TEST_TMP/mapping.json"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/kr.ini" "$TEST_TMP/mapping.json" --yes >"$TEST_TMP/import.out" 2>&1 ||
    fail "import: $(cat "$TEST_TMP/import.out")"

NEXT=1
# rows TOPIC N: N new rows in SQL, each as a Maxwell insert keyed by its id
rows() {
    local i id vals="" kv=""
    for ((i = 0; i < $2; i++)); do
        id=$((NEXT++))
        vals+="${vals:+,}($id, 'row $id')"
        kv+="$id	{\"database\":\"$D\",\"table\":\"items\",\"type\":\"insert\",\"ts\":1,\"data\":{\"id\":$id,\"name\":\"row $id\"}}"$'\n'
    done
    mysql_q "INSERT INTO \`$D\`.items VALUES $vals" || fail "inserting rows"
    printf '%s' "$kv" | kcat -b "$KAFKA_BOOTSTRAP" -P -K $'\t' -t "$1" 2>"$TEST_TMP/kcat.err" ||
        fail "kcat could not produce to $1: $(cat "$TEST_TMP/kcat.err")"
}
docs() { search_refresh "$A"; search_count "$A"; }
all_in() { [ "$(docs)" = "$(mysql_q "SELECT COUNT(*) FROM \`$D\`.items")" ]; }
start() { daemon_start "$TEST_TMP/kr.ini" "$TEST_TMP/run.log"; }

rows "$MAIN" 50
start
daemon_wait_ready 60
wait_until 60 "the first 50 rows in the engine" all_in

# ---------------------------------------------------------------- the dead letter
printf '0\t{"database":"%s","table":"items","type":"insert","ts":1,"data":{"name":"no key"}}\n' "$D" |
    kcat -b "$KAFKA_BOOTSTRAP" -P -K $'\t' -t "$MAIN"
dl() { mysql_q "SELECT error FROM \`$M\`.dead_letters WHERE index_name = 'kafka:$MAIN'" 2>/dev/null; }
has_dl() { [ -n "$(dl)" ]; }
wait_until 30 "the message without its key is a dead letter" has_dl
log "dead letter: $(dl)"
assert_contains "$(dl)" "primary key column id" "the dead letter names the missing key column"
assert_contains "$(dl)" "the producer must include the primary key column id in every message" \
    "and says what the producer must do"
assert_eq "" "$(dl | grep -F binlog_row_image || true)" "no binlog advice for a Kafka message"

# ---------------------------------------------------------------- restarts
ROUNDS="${KAFKA_RESTART_ROUNDS:-6}"
for ((r = 1; r <= ROUNDS; r++)); do
    daemon_kill
    start
    sleep 1 # its join under way
    daemon_kill
    rows "$MAIN" 20
    start
    sleep 3
    t0=$(date +%s%N)
    kill -TERM "$DAEMON"
    daemon_wait_exit 15
    assert_eq 0 "$DAEMON_RC" "round $r: SIGTERM soon after a restart that followed a SIGKILL: exit 0 in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
    start
done
wait_until 60 "every row of the restarts in the engine" all_in

# ---------------------------------------------------------------- a topic added while down
daemon_stop
assert_eq 0 "$DAEMON_RC" "SIGTERM: exit 0"
"$SEARCHSYNC_BIN" topics add --config "$TEST_TMP/kr.ini" "$LATE" >"$TEST_TMP/topics.out" 2>&1 ||
    fail "topics add: $(cat "$TEST_TMP/topics.out")"
rows "$LATE" 5 # Kafka creates the topic
start
daemon_wait_ready 30
t0=$(date +%s)
wait_until 30 "the rows of the topic added while the daemon was down in the engine" all_in
log "topic added while down: read $(( $(date +%s) - t0 )) s after the restart"
assert_contains "$(cat "$TEST_TMP/run.log")" "topic $LATE of source kr: Kafka has it (21 partition(s)) but the consumer group" \
    "the daemon warned that the group assigned none of its partitions"
late_parts() {
    curl -s -m 10 -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$APORT/api/v1/topics" |
        jq -r --arg t "$LATE" '.topics[] | select(.topic == $t) | "\(.partitions | length) \(.unassigned)"'
}
assert_eq "21 false" "$(late_parts)" "GET /api/v1/topics: its 21 partitions, assigned"
rows "$LATE" 5
rows "$MAIN" 5
wait_until 30 "new rows of both topics in the engine" all_in

# ---------------------------------------------------------------- the oracle
search_refresh "$A"
want="$(mysql_q "SELECT id, name FROM \`$D\`.items ORDER BY id")"
have="$(search_post "/$A/_search" '{"size": 10000, "sort": [{"id": "asc"}]}' |
    jq -r '.hits.hits[]._source | "\(.id)\t\(.name)"')"
assert_eq "$want" "$have" "every document equals its row ($(wc -l <<<"$want") rows)"
daemon_stop
assert_eq 0 "$DAEMON_RC" "SIGTERM: exit 0"
pass
