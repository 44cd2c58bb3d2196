#!/usr/bin/env bash
# tests/integration/t_mysql_gtid.sh — t_mysql_only's MySQL shop with
# `[source] versions = gtid`: Oracle's MySQL 8.0 (tests/harness/mysql8.sh,
# gtid_mode = ON) is both the source and the metadata server (so the
# metadata's own writes take GTIDs too), searchsync connects as the README's
# user (its SQL: caching_sha2_password, its grants, MySQL's XA_RECOVER_ADMIN
# line included) and the suite's OpenSearch is the engine:
#   `config check`, `mapping import` (items with a store object and nested
#   parts, notes as child documents), `run`: the first build, inserts,
#   updates and deletes; a `reindex` while a writer changes items, parts
#   and notes; `check` (exit 0); SIGTERM, changes while down, a restart that
#   resumes after the checkpoint's GTID set (a document's version then is
#   2 x its transaction's GTID ordinal + 1). After each: every document
#   equals the SQL oracle, computed by MySQL. The writer's commits are held
#   between their binlog write and their InnoDB commit (MySQL's
#   binlog_group_commit_sync_delay): a page read then must not outrank them.
# Exit 77 (skip; a failure under CI=true) when this machine cannot run the
# MySQL jar. SEARCHSYNC_SEED: the writer's seed (printed);
# MYSQL_GTID_SYNC_DELAY_US (50000): the commits held.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
require_bin

use_mysql8 # lib.sh's mysql_q & co. now talk to MySQL 8
assert_eq ON "$(mysql_q 'SELECT @@gtid_mode')" "MySQL runs with gtid_mode = ON"
t_start=$(date +%s)
ss() { "$SEARCHSYNC_BIN" "$@"; }

db=shop
meta=searchsync
user=ssgtid
pw="Pw-$RANDOM-$$"
readme_sql sql "$user" "$pw"       # the user and the grants of both servers
readme_sql sql-mysql "$user" "$pw" # and MySQL's own
assert_eq caching_sha2_password "$(mysql_q "SELECT plugin FROM mysql.user WHERE user = '$user'")" \
    "the README's user has MySQL 8's default authentication"

mysql_q "CREATE DATABASE $db"
mysql_q "
CREATE TABLE stores (id INT PRIMARY KEY, name VARCHAR(50) NOT NULL, city VARCHAR(50) NULL);
CREATE TABLE items (id BIGINT PRIMARY KEY, store_id INT NULL, name VARCHAR(100) NOT NULL,
  qty INT NULL, price DECIMAL(10,2) NULL, created_at DATETIME(3) NOT NULL);
CREATE TABLE item_parts (id BIGINT PRIMARY KEY, item_id BIGINT NOT NULL, label VARCHAR(50) NOT NULL, n INT NOT NULL,
  KEY (item_id));
CREATE TABLE notes (id BIGINT PRIMARY KEY, item_id BIGINT NOT NULL, body VARCHAR(200) NOT NULL, KEY (item_id));
INSERT INTO stores VALUES (1, 'north', 'Oslo'), (2, 'south', NULL), (3, 'east', 'Riga'), (4, 'west', 'Lima');
INSERT INTO items WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 300)
  SELECT n, IF(n % 9 = 0, NULL, 1 + n % 4), CONCAT('item ', n, ' é'), IF(n % 5 = 0, NULL, n * 3),
  IF(n % 7 = 0, NULL, n * 1.25), TIMESTAMP('2024-01-31 12:00:00.125') + INTERVAL n MINUTE FROM s;
INSERT INTO item_parts WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 600)
  SELECT n, 1 + n % 300, CONCAT('part-', n), n FROM s;
INSERT INTO notes WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 150)
  SELECT n, 1 + (n * 7) % 300, CONCAT('note ', n) FROM s;" "$db"
oracle_items_mapping "$db" "items" >"$TEST_TMP/mapping.json"
on_exit "curl -s -X DELETE '$SEARCH_URL/items_v*?ignore_unavailable=true' >/dev/null 2>&1"
# the README's configuration, with this server, the user's password and versions = gtid
readme_block ini | sed "s/^host = .*/host = 127.0.0.1/; s/^port = 3306\$/port = $MYSQL_PORT/;
    s/^user = searchsync\$/user = $user/; s/^password = change-me\$/password = $pw/;
    s#^urls = .*#urls = $SEARCH_URL#" >"$TEST_TMP/c.ini"
grep -q "^database = $meta\$" "$TEST_TMP/c.ini" || fail "README config: no 'database = searchsync'"
sed -i "/^\[source\]\$/a versions = gtid\nserver_id = $((7900 + $$ % 90))\nstart = now\nheartbeat_ms = 300
/^\[metadata\]\$/a reload_interval_ms = 300" "$TEST_TMP/c.ini"
cat >>"$TEST_TMP/c.ini" <<INI
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
[reindex]
buckets = 2
page_size = 50
INI
out="$(ss config check --config "$TEST_TMP/c.ini" 2>&1)" || fail "config check with the README's grants: $out"
assert_eq "$TEST_TMP/c.ini: ok" "$out" "config check: versions = gtid with the README's grants"
ss mapping import --config "$TEST_TMP/c.ini" --yes "$TEST_TMP/mapping.json" >"$TEST_TMP/import.out" 2>&1 ||
    fail "mapping import as the README's user: $(cat "$TEST_TMP/import.out")"

check_docs() { oracle_check_items "$db" items "$1"; } # WHAT
caught_up() { wait_checkpoint "$meta" mydb "${1:-60}"; }
ckpt() { mysql_q "SELECT position FROM $meta.offsets WHERE source = 'mydb'"; }

daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 40 lines)"; tail -40 "$TEST_TMP/run.log"; }'
daemon_wait_log "items: live changes no longer written to items_v1" 90
daemon_wait_ready 30
caught_up
check_docs "first build"
assert_contains "$(ckpt)" ";gtid=$(mysql_q 'SELECT @@server_uuid'):" "the checkpoint holds the server's GTID set"

mysql_q "
INSERT INTO items VALUES (301, 4, 'new item', 7, 9.99, '2024-02-29 23:59:59.999'),
  (302, NULL, 'no store', NULL, NULL, '2024-03-01 00:00:00');
UPDATE items SET qty = qty + 100, price = price * 2, name = CONCAT(name, ' (changed)') WHERE id IN (1, 2, 3);
UPDATE items SET store_id = 3 WHERE id = 4;
DELETE FROM items WHERE id IN (5, 6);
UPDATE stores SET city = 'Bergen' WHERE id = 1;
INSERT INTO item_parts VALUES (601, 301, 'part-new', 1), (602, 1, 'part-1b', 2);
UPDATE item_parts SET n = n * 10, label = 'relabelled' WHERE item_id = 2;
DELETE FROM item_parts WHERE item_id = 3;
INSERT INTO notes VALUES (151, 301, 'note on a new item'), (152, 1, 'second note');
UPDATE notes SET body = 'edited' WHERE id = 2;
DELETE FROM notes WHERE id IN (3, 4);" "$db"
caught_up
check_docs "after inserts, updates, deletes"

# ---- reindex under a writer (a few ms between its transactions)
writer() { # SEED — transactions on items, parts and notes until $TEST_TMP/stop is there
    awk -v seed="$1" -v stop="$TEST_TMP/stop" 'BEGIN { srand(seed)
        for (i = 0; i < 3000; i++) {
            if ((getline line < stop) >= 0) exit
            close(stop)
            id = 1 + int(rand() * 302); k = int(rand() * 6)
            if (k == 0) printf "UPDATE items SET qty = COALESCE(qty, 0) + 1, name = CONCAT(\"w%d \", id) WHERE id = %d;\n", i, id
            else if (k == 1) printf "DELETE FROM items WHERE id = %d;\n", id
            else if (k == 2) printf "REPLACE INTO items VALUES (%d, %d, \"back %d\", %d, 1.5, NOW(3));\n", id, 1 + i % 4, i, i
            else if (k == 3) printf "INSERT INTO item_parts VALUES (%d, %d, \"w-%d\", %d);\n", 100000 + i, id, i, i
            else if (k == 4) printf "DELETE FROM item_parts WHERE item_id = %d;\n", id
            else printf "BEGIN; UPDATE notes SET body = \"w%d\" WHERE item_id = %d; INSERT INTO notes VALUES (%d, %d, \"wn\"); COMMIT;\n", i, id, 100000 + i, id
            fflush(); system("sleep 0.02")
        } }' | mariadb --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -u root --default-character-set=utf8mb4 "$db"
}
seed="${SEARCHSYNC_SEED:-$RANDOM}"
log "reindex under a writer: seed $seed"
# each commit held between its binlog write and its commit in InnoDB (in
# between, its GTID is owned, not yet in gtid_executed)
mysql_q "SET GLOBAL binlog_group_commit_sync_delay = ${MYSQL_GTID_SYNC_DELAY_US:-50000}"
on_exit "mysql_q 'SET GLOBAL binlog_group_commit_sync_delay = 0' >/dev/null 2>&1"
writer "$seed" &
wpid=$!
on_exit "touch '$TEST_TMP/stop'"
sleep 0.5
out="$(ss reindex --config "$TEST_TMP/c.ini" items 2>&1)" || fail "reindex: $out"
touch "$TEST_TMP/stop" # (the writes after the switch would mend what a page missed)
wait "$wpid" || fail "the writer failed"
mysql_q "SET GLOBAL binlog_group_commit_sync_delay = 0"
log "reindex done: $(tail -1 <<<"$out")"
assert_eq items_v2 "$(curl -s "$SEARCH_URL/_alias/items" | jq -r 'keys[0]')" "the alias moved to items_v2"
caught_up
check_docs "after a reindex under a writer"
out="$(ss check --config "$TEST_TMP/c.ini" items 2>&1)" || fail "check: exit $?: $out"

# ---- SIGTERM, changes while down, a restart after the saved GTID set
daemon_stop
assert_eq 0 "$DAEMON_RC" "the daemon stopped cleanly on SIGTERM"
saved="$(ckpt)"
assert_contains "$saved" ";gtid=" "the checkpoint saved at the stop holds a GTID set"
# MySQL's GTID ordinal: the transactions in gtid_executed (one server, so
# one uuid; the metadata's own saves count too, being on it)
ordinal() { mysql_q 'SELECT @@GLOBAL.gtid_executed' | tr -d ' \n' | tr ',' '\n' | awk -F: '
    { for (i = 2; i <= NF; i++) { k = split($i, r, "-"); n += (k == 2 ? r[2] - r[1] + 1 : 1) } }
    END { print n + 0 }'; }
o0="$(ordinal)"
# an item the writer left (it deletes some at random: 20 may be gone)
wid="$(mysql_q "SELECT MIN(id) FROM items WHERE id >= 20 AND id <> 22" "$db")"
# (a part added after its own update goes in by a script, which raises the
# engine's _version by one past the full write's: the version of record is
# the document's version field)
mysql_q "UPDATE items SET name = 'while down' WHERE id = $wid; INSERT INTO item_parts VALUES (900002, $wid, 'while down', 1);
DELETE FROM item_parts WHERE item_id = 21;
DELETE FROM items WHERE id = 22; INSERT INTO notes VALUES (900001, 23, 'while down');
UPDATE stores SET city = 'Lagos' WHERE id = 3" "$db"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
daemon_wait_log "resuming source mydb after GTID set ${saved#*;gtid=}" 30
daemon_wait_ready 30
caught_up
check_docs "after changes while down and a restart"
assert_eq "while down" "$(curl -s "$SEARCH_URL/items/_doc/$wid" | jq -r ._source.name)" "a change made while down"
v="$(curl -s "$SEARCH_URL/items/_doc/$wid" | jq -r ._source.ss_version)" top="$(ordinal)"
ev="$(curl -s "$SEARCH_URL/items/_doc/$wid" | jq -r ._version)"
log "item $wid: version field $v, the engine's _version $ev"
# (at or below it: the next transaction's full write, 2 above, must outrank it)
assert_true "item $wid's engine _version $ev is at or below its version field $v" test "$ev" -le "$v"
assert_true "item $wid's version $v is 2 x a GTID ordinal in [$((o0 + 1)), $top] + 1 (its transaction's or later)" \
    test "$v" -ge $((2 * o0 + 3)) -a "$v" -le $((2 * top + 1)) -a $((v % 2)) = 1
daemon_stop
assert_eq 0 "$DAEMON_RC" "the daemon stopped cleanly again"
log "done in $(($(date +%s) - t_start)) s"
pass
