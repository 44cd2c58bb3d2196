# tests/integration/semi_sync_lib.sh — commits held between their binlog
# write and their rows becoming visible, for the tests of reads that must
# wait for them (t_kafka_visible.sh, t_run_semi_sync.sh).
#
# Lossless semi-sync replication (rpl_semi_sync_master_wait_point =
# AFTER_SYNC) writes a commit to the binlog, sends it to every reader of the
# binlog, then waits for a semi-sync replica's acknowledgement before the
# engine commits it. With no replica to acknowledge, each commit is held
# HOLD_MS (rpl_semi_sync_master_timeout, re-armed before each probe: a
# timeout switches semi-sync off), or HOLD_LONG_MS, beyond the 5 s a read
# waits before it asks the server how long it holds commits. It is a
# setting of the whole server, so the tests run it on a MariaDB of their
# own (lib.sh's extra_mariadb) and point MYSQL_PORT (every helper, the
# oracle) there.
#
# Sourced after lib.sh and oracle_lib.sh.
#   semi_sync_tables DB     oracle_lib.sh's items tables in DB (items with a
#                           store object, nested parts, notes as child
#                           documents), rows in each, and `fence`
#   semi_sync ON|OFF [HOLD] lossless semi-sync armed (HOLD, default
#                           HOLD_MS) or off
#   semi_sync_probes DB [SEEN [LONG]]  six probes in DB, each committed
#                           alone under its hold (HOLD_LONG_MS from the
#                           LONG-th, counted from 0): a nested row changed,
#                           moved, deleted, a root row changed, a store its
#                           items embed changed, a child document inserted.
#                           Asserted for each: its commit was held; with
#                           SEEN (a command given the table and a jq filter
#                           of the row, as Maxwell writes it, "" for none),
#                           that SEEN passed while it was still held.
# shellcheck shell=bash

semi_sync_tables() {
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
INSERT INTO notes SELECT seq, 1 + seq % 20, CONCAT('note ', seq) FROM nums WHERE seq <= 10" "$1" ||
        fail "the tables"
}

semi_sync() { # ON|OFF [HOLD]
    mysql_q "SET GLOBAL rpl_semi_sync_master_enabled = OFF;
             SET GLOBAL rpl_semi_sync_master_wait_point = 'AFTER_SYNC',
                 GLOBAL rpl_semi_sync_master_timeout = ${2:-$HOLD_MS},
                 GLOBAL rpl_semi_sync_master_wait_no_slave = ON,
                 GLOBAL rpl_semi_sync_master_enabled = $1" || fail "lossless semi-sync could not be set"
}

# the probes: what, the table, a jq filter of the row (as Maxwell writes it), the SQL
_SEMI_SYNC_PROBES=(
    "a nested row changed" item_parts 'select(.data.label == "held 1")'
    "UPDATE item_parts SET label = 'held 1' WHERE id = 3"
    "a nested row moved" item_parts 'select(.data.id == 5 and .data.item_id == 17)'
    "UPDATE item_parts SET item_id = 17 WHERE id = 5"
    "a nested row deleted" item_parts 'select(.type == "delete" and .data.id == 7)'
    "DELETE FROM item_parts WHERE id = 7"
    "a root row changed" items 'select(.data.name == "held 4")'
    "UPDATE items SET name = 'held 4', price = 12345678.91 WHERE id = 9"
    "a store its items embed changed" stores 'select(.data.city == "held 5")'
    "UPDATE stores SET city = 'held 5' WHERE id = 2"
    "a child document inserted" notes 'select(.data.id == 11)'
    "INSERT INTO notes VALUES (11, 12, 'held 6')"
)

# each probe committed alone under its hold: HOLD_MS, from the LONG-th
# (counted from 0) on HOLD_LONG_MS
semi_sync_probes() {
    local i n=$((${#_SEMI_SYNC_PROBES[@]} / 4)) t0 t1 pid seen seen_ms ms hold
    for ((i = 0; i < n; i++)); do
        local what="${_SEMI_SYNC_PROBES[i * 4]}"
        hold=$HOLD_MS
        [ "$i" -lt "${3:-$n}" ] || hold=$HOLD_LONG_MS
        semi_sync ON "$hold"
        t0=$(date +%s%N) seen=""
        mysql_q "${_SEMI_SYNC_PROBES[i * 4 + 3]}" "$1" &
        pid=$!
        while [ -n "${2:-}" ] && kill -0 "$pid" 2>/dev/null; do
            if "$2" "${_SEMI_SYNC_PROBES[i * 4 + 1]}" "${_SEMI_SYNC_PROBES[i * 4 + 2]}"; then
                kill -0 "$pid" 2>/dev/null && seen=1 seen_ms=$((($(date +%s%N) - t0) / 1000000))
                break
            fi
            sleep 0.05
        done
        wait "$pid" || fail "$what: the statement failed"
        t1=$(date +%s%N)
        ms=$(((t1 - t0) / 1000000))
        assert_true "$what: its commit was held (took $ms ms of $hold)" test "$ms" -ge $((hold * 8 / 10))
        [ -z "${2:-}" ] || assert_eq 1 "$seen" "$what: its change was read from the binlog while its commit was held"
        log "$what: held $ms ms${2:+; read from the binlog after $seen_ms ms}"
    done
    semi_sync OFF
}
