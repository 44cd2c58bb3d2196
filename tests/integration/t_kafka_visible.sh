#!/usr/bin/env bash
# t_kafka_visible.sh — a Kafka message read while its transaction is in the
# binlog but not yet visible: the documents it names are read once it is.
#
# The real Maxwell (tests/harness/maxwell.sh) reads a MariaDB of the test's
# own that runs lossless semi-sync replication (rpl_semi_sync_master_wait_point
# = AFTER_SYNC): a commit is written to the binlog and sent to every replica,
# Maxwell included, then waits for a semi-sync replica's acknowledgement
# before the engine commits it. No replica acknowledges, so each probe's
# commit is held HOLD_MS (rpl_semi_sync_master_timeout; re-armed before each
# probe), and Maxwell's message of it reaches Kafka, and the daemon, while
# other sessions still read the rows from before it. The same happens, for
# a shorter moment, to every commit on a busy machine.
#
# A daemon (`[source] kind = kafka` reading Maxwell's topics, the server's
# items with a store object, nested parts and notes as child documents:
# oracle_lib.sh's items mapping) is caught up; then each probe (a nested
# row changed, moved and deleted, a root row changed, a store every item of
# it embeds changed, a child document inserted) is committed under the hold.
# Asserted for each: the commit was held, and Maxwell's message of it was in
# Kafka before the commit returned (the window is real). At the end, caught
# up again: every document equals the SQL oracle, although no later change
# touched the rows the probes changed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
. "$(dirname "$0")/producer_lib.sh"
require_bin
for t in kcat java mvn jq; do
    command -v "$t" >/dev/null || fail "$t missing: run tests/harness/deps.sh"
done
HOLD_MS=3500

# ---------------------------------------------------------------- servers
extra_mariadb src
MYSQL_PORT=$(extra_port src) # every helper below (and the oracle) reads this server
kdir="$TEST_TMP/kafka"
KAFKA_PARTITIONS=3 SEARCHSYNC_KAFKA_DIR="$kdir" bash "$HARNESS/kafka.sh" start >"$TEST_TMP/kafka-start.log" 2>&1 ||
    { cat "$TEST_TMP/kafka-start.log"; fail "the harness's Kafka did not start"; }
on_exit "SEARCHSYNC_KAFKA_DIR='$kdir' bash '$HARNESS/kafka.sh' stop >/dev/null 2>&1"
. "$kdir/kafka.env"
meta_q() { mysql_q "$1"; }
frc=0
bash "$HARNESS/maxwell.sh" fetch >"$TEST_TMP/maxwell-fetch.log" 2>&1 || frc=$?
if [ "$frc" != 0 ]; then
    cat "$TEST_TMP/maxwell-fetch.log"
    [ "$frc" = 3 ] && skip "Maven Central is not reachable: Maxwell cannot be had"
    fail "resolving Maxwell from Maven Central"
fi

D=vis
mysql_q "CREATE DATABASE $D; CREATE DATABASE mxs;
CREATE USER 'mx'@'%' IDENTIFIED BY 'mx-pw'; GRANT ALL ON mxs.* TO 'mx'@'%';
GRANT SELECT, REPLICATION CLIENT, REPLICATION SLAVE ON *.* TO 'mx'@'%'" || fail "Maxwell's user"
mysql_q "CREATE TABLE stores (id INT PRIMARY KEY, name VARCHAR(50) NOT NULL, city VARCHAR(50) NULL);
CREATE TABLE items (id BIGINT PRIMARY KEY, store_id INT NULL, name VARCHAR(100) NOT NULL,
  qty INT NULL, price DECIMAL(10,2) NULL, created_at DATETIME(3) NOT NULL);
CREATE TABLE item_parts (id BIGINT PRIMARY KEY, item_id BIGINT NOT NULL, label VARCHAR(50) NOT NULL, n INT NOT NULL);
CREATE TABLE notes (id BIGINT PRIMARY KEY, item_id BIGINT NOT NULL, body VARCHAR(200) NOT NULL);
CREATE TABLE fence (id INT PRIMARY KEY, what VARCHAR(40));
CREATE TABLE nums (seq INT PRIMARY KEY);
INSERT INTO nums VALUES ($(seq -s '),(' 1 40));
INSERT INTO stores VALUES (1, 'north', 'Oslo'), (2, 'south', NULL), (3, 'east', 'Riga');
INSERT INTO items SELECT seq, 1 + seq % 3, CONCAT('item ', seq), seq * 3, seq + 0.25,
  '2024-05-06 07:08:09.123' FROM nums WHERE seq <= 20;
INSERT INTO item_parts SELECT seq, 1 + seq % 20, CONCAT('part ', seq), seq FROM nums;
INSERT INTO notes SELECT seq, 1 + seq % 20, CONCAT('note ', seq) FROM nums WHERE seq <= 10" "$D" ||
    fail "the tables"

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
cat >"$TEST_TMP/c.ini" <<INI
[source]
kind = kafka
name = maxwell
host = $MYSQL_HOST
port = $MYSQL_PORT
user = root
start = beginning
[kafka]
brokers = $KAFKA_BOOTSTRAP
topic_regex = $PRE\\..*
group = ss-vis-$$
[metadata]
host = $MYSQL_HOST
port = $MYSQL_PORT
database = meta
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
idle_checkpoint_interval_ms = 500
INI
oracle_items_mapping "$D" "$ALIAS" >"$TEST_TMP/mapping.json"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/mapping.json" --yes \
    >"$TEST_TMP/import.out" 2>&1 || fail "import: $(cat "$TEST_TMP/import.out")"
RUNLOG="$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- the daemon log (last 25 lines)"; tail -25 "$RUNLOG"; }'
daemon_start "$TEST_TMP/c.ini" "$RUNLOG"
daemon_wait_ready 60
daemon_wait_log "$ALIAS: version 1 live" 120
maxwell start || fail "Maxwell did not start: $(tail -5 "$MXDIR.log")"

# every message Maxwell sent is read and its offsets saved
FENCE=0
caught_up() { # WHAT
    local t0=$(date +%s) sent e="$TEST_TMP/ends" t topics
    FENCE=$((FENCE + 1)) sent=$t0
    mysql_q "INSERT INTO fence VALUES ($FENCE, '$1')" "$D" || fail "the sentinel row"
    # Maxwell 1.17 drops a message refused while Kafka elects a new
    # topic's leader (t_kafka_maxwell.sh): a sentinel not seen is sent again
    until topic_has "$PRE.$D.fence" --argjson n "$FENCE" 'select(.type == "insert" and .data.id == $n)'; do
        [ $(($(date +%s) - t0)) -lt 120 ] || fail "$1: Maxwell did not send the sentinel row in 120 s"
        if [ $(($(date +%s) - sent)) -ge 20 ]; then
            FENCE=$((FENCE + 1)) sent=$(date +%s)
            mysql_q "INSERT INTO fence VALUES ($FENCE, '$1')" "$D" || fail "the sentinel row"
        fi
        sleep 0.2
    done
    topics=$(kcat -b "$KAFKA_BOOTSTRAP" -L 2>/dev/null | sed -n "s/^ *topic \"\\($PRE\\.[^\"]*\\)\".*/\\1/p")
    : >"$e.prev"
    while :; do
        for t in $topics; do ends "$t"; done | sort >"$e"
        cmp -s "$e" "$e.prev" && break
        cp "$e" "$e.prev"
        sleep 1
    done
    wait_until 120 "$1: the daemon's saved offsets reach the topics' ends" reached meta "$e"
}

# a change in every table first: each topic exists (and has its leader)
# before a probe's message is the first one Maxwell sends there
mysql_q "UPDATE stores SET name = 'north' WHERE id = 1; UPDATE items SET qty = qty + 1 WHERE id = 1;
         UPDATE item_parts SET n = n + 1 WHERE id = 1; UPDATE notes SET body = 'warm' WHERE id = 1" "$D" ||
    fail "the first changes"
caught_up "the first changes"
oracle_check_items "$D" "$ALIAS" "the first changes"

# ---------------------------------------------------------------- the probes
semi_sync() { # ON|OFF — re-armed: a timeout switches its status off
    mysql_q "SET GLOBAL rpl_semi_sync_master_enabled = OFF;
             SET GLOBAL rpl_semi_sync_master_wait_point = 'AFTER_SYNC',
                 GLOBAL rpl_semi_sync_master_timeout = $HOLD_MS,
                 GLOBAL rpl_semi_sync_master_wait_no_slave = ON,
                 GLOBAL rpl_semi_sync_master_enabled = $1"
}
on_exit "mysql_q 'SET GLOBAL rpl_semi_sync_master_enabled = OFF' >/dev/null 2>&1"
probe() { # WHAT TOPIC-TABLE JQ-SELECT SQL
    local t0 t1 pid seen=""
    semi_sync ON || fail "$1: lossless semi-sync could not be set"
    t0=$(date +%s%N)
    mysql_q "$4" "$D" &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        if topic_has "$PRE.$D.$2" "$3"; then
            kill -0 "$pid" 2>/dev/null && seen=1
            break
        fi
        sleep 0.05
    done
    wait "$pid" || fail "$1: the statement failed"
    t1=$(date +%s%N)
    assert_true "$1: its commit was held (took $(((t1 - t0) / 1000000)) ms of $HOLD_MS)" \
        test $(((t1 - t0) / 1000000)) -ge $((HOLD_MS * 8 / 10))
    assert_eq 1 "$seen" "$1: Maxwell's message of it was in Kafka while its commit was held"
    log "$1: held $(((t1 - t0) / 1000000)) ms; its message was in Kafka before the commit"
}
probe "a nested row changed" item_parts 'select(.data.label == "held 1")' \
    "UPDATE item_parts SET label = 'held 1' WHERE id = 3"
probe "a nested row moved" item_parts 'select(.data.id == 5 and .data.item_id == 17)' \
    "UPDATE item_parts SET item_id = 17 WHERE id = 5"
probe "a nested row deleted" item_parts 'select(.type == "delete" and .data.id == 7)' \
    "DELETE FROM item_parts WHERE id = 7"
probe "a root row changed" items 'select(.data.name == "held 4")' \
    "UPDATE items SET name = 'held 4', price = 12345678.91 WHERE id = 9"
probe "a store its items embed changed" stores 'select(.data.city == "held 5")' \
    "UPDATE stores SET city = 'held 5' WHERE id = 2"
probe "a child document inserted" notes 'select(.data.id == 11)' \
    "INSERT INTO notes VALUES (11, 12, 'held 6')"
semi_sync OFF

caught_up "the probes"
oracle_check_items "$D" "$ALIAS" "the probes"
assert_eq "" "$(grep -h ' ERROR \[' "$RUNLOG" | head -5 || true)" "no ERROR in the daemon's log"
pass
