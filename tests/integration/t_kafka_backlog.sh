#!/usr/bin/env bash
# t_kafka_backlog.sh — a backlog of Kafka change messages read at once by a
# row-image index: the messages of 3 partitions are read
# at different paces, so one change set holds partition 0 far ahead of
# partition 1, and a later change set reads partition 1's later changes
# with binlog coordinates smaller than the earlier set's largest. The
# oldest image of a row must never win over a later image or a delete.
#
# A table of 400 rows (tests' own producer, kafka_produce.py, from `searchsync
# tail`; Debezium keyed by primary key, deletes with their null-value
# tombstones and key changes as delete + create; Maxwell keyed by primary
# key, a key change one update keyed by the new key) is read by two daemons
# (one topic each, 3 partitions); both are stopped, then, as a backlog: every
# row updated four times, rows updated and then deleted (one at a time and
# in one statement), deleted and inserted again, keys changed (the new key
# updated, deleted, the old key inserted again), a transaction of several
# rows. The daemons start again, read the backlog and every document of
# both indices equals the SQL oracle (the table's final state). A 3,000-byte
# column the mapping leaves out makes the messages large enough that the
# backlog is read in about the 200 ms a change set may last: one set or a
# few (Maxwell's key changes are wrong in one set with the old code; the
# Debezium index only when the sets split). Knobs: KAFKA_BACKLOG_LOG_LEVEL
# (debug: every change set and write in the daemons' logs), KAFKA_BACKLOG_KEEP
# (a directory the daemons' logs are copied to).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
require_bin
command -v kcat >/dev/null || fail "kcat missing: run tests/harness/deps.sh"
command -v python3 >/dev/null || fail "python3 missing: run tests/harness/deps.sh"

# ---------------------------------------------------------------- Kafka
kdir="$TEST_TMP/kafka"
KAFKA_PARTITIONS=3 SEARCHSYNC_KAFKA_DIR="$kdir" bash "$HARNESS/kafka.sh" start >"$TEST_TMP/kafka-start.log" 2>&1 ||
    { cat "$TEST_TMP/kafka-start.log"; fail "the harness's Kafka did not start"; }
on_exit "SEARCHSYNC_KAFKA_DIR='$kdir' bash '$HARNESS/kafka.sh' stop >/dev/null 2>&1"
. "$kdir/kafka.env"
log "kafka on $KAFKA_BOOTSTRAP"

# ---------------------------------------------------------------- the table
D=$(unique_name kbl)
M1=$(unique_name kbl_meta_dbz) M2=$(unique_name kbl_meta_mxw)
A1=$(unique_name kbl_dbz) A2=$(unique_name kbl_mxw)
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$D\`; DROP DATABASE IF EXISTS \`$M1\`; DROP DATABASE IF EXISTS \`$M2\`' >/dev/null 2>&1"
on_exit "curl -s -m 30 -XDELETE '$SEARCH_URL/${A1}_v1,${A2}_v1' >/dev/null 2>&1"
mysql_q "CREATE DATABASE \`$D\`" || fail "creating $D"
mysql_q "CREATE TABLE items (id INT UNSIGNED NOT NULL PRIMARY KEY, name VARCHAR(64) NOT NULL,
  n INT NOT NULL, note VARCHAR(32) NULL, pad VARCHAR(4000) NOT NULL DEFAULT '') ENGINE=InnoDB" "$D" || fail "creating items"
mysql_q "SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, COLUMN_KEY = 'PRI' FROM information_schema.COLUMNS
  WHERE TABLE_SCHEMA = '$D' ORDER BY TABLE_NAME, ORDINAL_POSITION" >"$TEST_TMP/cols.tsv"

SRC="mysql://$MYSQL_USER:$MYSQL_PASSWORD@$MYSQL_HOST:$MYSQL_PORT"
# produce_since FILE POS: the binlog from there to its end as Debezium and Maxwell messages
produce_since() {
    "$SEARCHSYNC_BIN" tail --source "$SRC" --file "$1" --pos "$2" --stop-at-end --tables "$D.*" \
        >"$TEST_TMP/tail.jsonl" 2>"$TEST_TMP/tail.err" || { cat "$TEST_TMP/tail.err"; fail "tail failed"; }
    python3 "$(dirname "$0")/kafka_produce.py" "$TEST_TMP/cols.tsv" "$D" "$TEST_TMP/tail.jsonl" "$TEST_TMP" 1 \
        >/dev/null || fail "the test producer failed"
    local fmt
    for fmt in debezium maxwell; do # -Z: Debezium's tombstones (empty values) as null values
        kcat -b "$KAFKA_BOOTSTRAP" -P -Z -K $'\t' -t "bl.$fmt" <"$TEST_TMP/$fmt.kv" 2>"$TEST_TMP/kcat.err" ||
            { cat "$TEST_TMP/kcat.err"; fail "kcat could not produce to bl.$fmt"; }
    done
    log "produced $(wc -l <"$TEST_TMP/tail.jsonl") rows: $(wc -l <"$TEST_TMP/debezium.kv") Debezium messages (with tombstones), $(wc -l <"$TEST_TMP/maxwell.kv") Maxwell"
}

read -r f0 p0 <<<"$(mysql_binlog_pos)"
mysql_q "INSERT INTO items WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 400)
  SELECT i, CONCAT('item ', i), 0, NULL, REPEAT('p', ${KBL_PAD:-3000}) FROM s" "$D" || fail "initial rows"
produce_since "$f0" "$p0"

# ---------------------------------------------------------------- the daemons
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
[log]
level = ${KAFKA_BACKLOG_LOG_LEVEL:-info}
INI
}
config dbz "$M1" bl.debezium >"$TEST_TMP/dbz.ini"
config mxw "$M2" bl.maxwell >"$TEST_TMP/mxw.ini"
for s in dbz:$A1 mxw:$A2; do
    IFS=: read -r name alias <<<"$s"
    jq -n --arg a "$alias" --arg t "$D.items" '{version: 1, indices: [{alias: $a, shards: 1, replicas: 0,
        tables: [{table: $t, mode: "row-image", columns: [
          {name: "id", mysql_type: "int(10) unsigned", type: "long", key: true},
          {name: "name", mysql_type: "varchar(64)", type: "keyword"},
          {name: "n", mysql_type: "int(11)", type: "integer"},
          {name: "note", mysql_type: "varchar(32)", type: "keyword"}]}]}]}' >"$TEST_TMP/mapping-$name.json"
    "$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/$name.ini" "$TEST_TMP/mapping-$name.json" --yes \
        >"$TEST_TMP/import-$name.out" 2>&1 || fail "import ($name): $(cat "$TEST_TMP/import-$name.out")"
done
declare -A PID
start() { daemon_start "$TEST_TMP/$1.ini" "$TEST_TMP/run-$1.log"; PID[$1]=$DAEMON; }
use() { DAEMON=${PID[$1]}; DAEMON_LOG="$TEST_TMP/run-$1.log"; _DAEMON_LOG_AT=0; }
on_exit '[ "$rc" = 0 ] || for n in dbz mxw; do echo "--- the $n daemon log (last 30 lines)"; tail -30 "$TEST_TMP/run-$n.log"; done'
[ -z "${KAFKA_BACKLOG_KEEP:-}" ] || on_exit "cp \"\$TEST_TMP\"/run-*.log \"\$KAFKA_BACKLOG_KEEP\"/"

# every partition's next offset, as the daemon's token writes it
ends() { kcat -b "$KAFKA_BOOTSTRAP" -C -t "$1" -o -1 -e -q -f '%t/%p=%o\n' | awk -F= '{print $1 "=" $2 + 1}' | sort; }
saved() { mysql_q "SELECT position FROM \`$1\`.offsets" 2>/dev/null | tr ' ' '\n' | grep "^$2/" | sort; }
caught_up() { # the saved offsets (acknowledged by the engine) at every topic's end
    local s fmt meta want i
    for s in debezium:$M1 maxwell:$M2; do
        IFS=: read -r fmt meta <<<"$s"
        want="$(ends "bl.$fmt")"
        for ((i = 0; ; i++)); do
            [ "$(saved "$meta" "bl.$fmt")" != "$want" ] || break
            [ "$i" -lt 300 ] || fail "the $fmt daemon's saved offsets did not reach the topic's end in 60 s: $(saved "$meta" "bl.$fmt" | tr '\n' ' ')(want $(tr '\n' ' ' <<<"$want"))"
            sleep 0.2
        done
    done
}
# every document of both indices equals the table (the SQL oracle)
check_docs() { # WHAT
    local a bad=""
    oracle_query "$D" "SELECT JSON_OBJECT('id', CAST(id AS CHAR), 'routing', NULL,
        'doc', JSON_OBJECT('id', id, 'name', name, 'n', n, 'note', note)) FROM items ORDER BY id" \
        >"$TEST_TMP/items.oracle" || fail "the oracle query"
    for a in "$A1" "$A2"; do
        engine_dump "$a" "$TEST_TMP/$a.ndjson" 2>"$TEST_TMP/dump.err" || { cat "$TEST_TMP/dump.err"; fail "dump $a"; }
        _LIB_ASSERTS=$((_LIB_ASSERTS + 1))
        compare_docs "$TEST_TMP/$a.ndjson" "$TEST_TMP/items.oracle" --numbers value --ignore-field ss_version \
            --ignore-field ss_hash --ignore-field ss_key_hash --label "$a" --show 5 >"$TEST_TMP/cmp.out" ||
            { cat "$TEST_TMP/cmp.out"; bad+=" $a"; continue; }
        log "$1: $(cat "$TEST_TMP/cmp.out")"
    done
    [ -z "$bad" ] || fail "$1:$bad differ(s) from the SQL oracle"
}

start dbz
start mxw
for n in dbz mxw; do use $n; daemon_wait_ready 60; done
caught_up
check_docs "the first rows"
for n in dbz mxw; do use $n; daemon_stop; assert_eq 0 "$DAEMON_RC" "$n: SIGTERM, clean exit"; done

# ---------------------------------------------------------------- the backlog
read -r f1 p1 <<<"$(mysql_binlog_pos)"
mysql_file /dev/stdin "$D" <<'SQL' || fail "the backlog's changes"
DELIMITER //
CREATE PROCEDURE backlog()
BEGIN
  DECLARE r INT DEFAULT 1;
  DECLARE i INT;
  -- every row updated four times, a statement (a transaction) each
  WHILE r <= 4 DO
    SET i = 1;
    WHILE i <= 400 DO
      UPDATE items SET n = n + 1, name = CONCAT('round ', r, ' of ', i) WHERE id = i;
      SET i = i + 1;
    END WHILE;
    SET r = r + 1;
  END WHILE;
  -- updated and then deleted: one at a time, and many in one statement
  SET i = 1;
  WHILE i <= 100 DO
    UPDATE items SET n = n + 10, note = 'doomed' WHERE id = i;
    DELETE FROM items WHERE id = i AND i % 2 = 1;
    SET i = i + 1;
  END WHILE;
  DELETE FROM items WHERE id <= 100;
  -- deleted and inserted again
  DELETE FROM items WHERE id BETWEEN 101 AND 140;
  INSERT INTO items (id, name, n, note) WITH RECURSIVE s(k) AS (SELECT 101 UNION ALL SELECT k + 1 FROM s WHERE k < 140)
    SELECT k, CONCAT('again ', k), 0, 'back' FROM s;
  SET i = 141;
  WHILE i <= 170 DO
    DELETE FROM items WHERE id = i;
    INSERT INTO items (id, name, n, note) VALUES (i, CONCAT('again ', i), 1, 'back');
    UPDATE items SET n = n + 1 WHERE id = i;
    SET i = i + 1;
  END WHILE;
  -- keys changed: the new key updated, some deleted, the old key inserted again
  SET i = 301;
  WHILE i <= 340 DO
    UPDATE items SET id = id + 1000, note = 'moved' WHERE id = i;
    SET i = i + 1;
  END WHILE;
  UPDATE items SET n = n + 5 WHERE id BETWEEN 1301 AND 1320;
  DELETE FROM items WHERE id BETWEEN 1321 AND 1330;
  SET i = 301;
  WHILE i <= 320 DO
    INSERT INTO items (id, name, n, note) VALUES (i, CONCAT('reused ', i), 7, 'reused');
    SET i = i + 1;
  END WHILE;
  UPDATE items SET id = id - 1000, note = 'moved back' WHERE id BETWEEN 1331 AND 1340;
  -- several rows in one transaction
  START TRANSACTION;
  UPDATE items SET note = 'txn' WHERE id BETWEEN 201 AND 240;
  DELETE FROM items WHERE id BETWEEN 241 AND 250;
  INSERT INTO items (id, name, n, note) VALUES (2001, 'txn new', 1, 'txn');
  COMMIT;
  -- a last change of some rows
  UPDATE items SET n = n + 100, note = 'last' WHERE id BETWEEN 351 AND 400;
END //
DELIMITER ;
CALL backlog();
DROP PROCEDURE backlog;
SQL
produce_since "$f1" "$p1"

t0=$(date +%s%N)
start dbz
start mxw
caught_up
log "the backlog read in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
check_docs "after the backlog"
assert_eq "0 0" "$(mysql_q "SELECT COUNT(*) FROM \`$M1\`.dead_letters") $(mysql_q "SELECT COUNT(*) FROM \`$M2\`.dead_letters")" \
    "no dead letter (Debezium's tombstones are markers)"
errs=$(grep -h ' ERROR \[' "$TEST_TMP"/run-*.log | head -5 || true)
assert_eq "" "$errs" "no ERROR in the daemons' logs"
pass
