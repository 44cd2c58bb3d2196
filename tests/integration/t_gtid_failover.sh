#!/usr/bin/env bash
# tests/integration/t_gtid_failover.sh — [source] versions = gtid across a
# real MariaDB replication topology, with no epoch bump. Two private servers:
# P (server 11) and R (server 12, a replica of P: MASTER_USE_GTID=slave_pos,
# log_slave_updates, gtid_strict_mode). The daemon
#   1. reads R, the replica, while the writes go to P (the first build too);
#   2. is pointed at P and restarted: it resumes after the checkpoint's GTID
#      set, not at R's file:pos;
#   3. is SIGKILLed, more writes go to P, R catches up, P is SIGKILLed, R is
#      promoted (STOP SLAVE; RESET SLAVE ALL), the daemon is pointed at R and
#      restarted: the transactions it had not read come from R's binlog, the
#      writes on R (updates of rows from before the failover) land.
# After each step the engine equals the SQL oracle, and the versions keep
# epoch 0. A start with versions = position on this checkpoint is refused
# (exit 2) naming epoch bump.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
require_bin
map="$SEARCHSYNC_SRCDIR/sql/demo/mapping.json"

srv() { # srv NAME ACTION [SERVER_ID]: a private MariaDB in $TEST_TMP/NAME
    env -u MYSQL_HOST -u MYSQL_PORT SEARCHSYNC_HARNESS_DIR="$TEST_TMP/$1" \
        MARIADB_EXTRA_ARGS="--server-id=${3:-1} --gtid-strict-mode=1 --log-slave-updates=1" \
        bash "$HARNESS/mariadb.sh" "$2" >>"$TEST_TMP/$1.log" 2>&1
}
srv p start 11 || fail "primary did not start: $(tail -5 "$TEST_TMP/p.log")"
on_exit 'srv p stop || true'
srv r start 12 || fail "replica did not start: $(tail -5 "$TEST_TMP/r.log")"
on_exit 'srv r stop || true'
P="$(. "$TEST_TMP/p/mariadb.env"; echo "$MYSQL_PORT")"
R="$(. "$TEST_TMP/r/mariadb.env"; echo "$MYSQL_PORT")"
q() { # q PORT SQL
    mariadb --no-defaults -h 127.0.0.1 -P "$1" -u root --batch --skip-column-names -e "$2"
}
gtid_pos() { q "$1" 'SELECT @@gtid_binlog_pos'; }
caught_up() { # R holds everything P binlogged
    [ "$(q "$R" "SELECT MASTER_GTID_WAIT('$(gtid_pos "$P")', 30)")" = 0 ]
}
# R: its own start-up statements forgotten, then a replica of P from P's start
q "$R" "RESET MASTER; SET GLOBAL gtid_slave_pos = ''; CHANGE MASTER TO MASTER_HOST = '127.0.0.1',
  MASTER_PORT = $P, MASTER_USER = 'searchsync', MASTER_PASSWORD = 'searchsync',
  MASTER_USE_GTID = slave_pos; START SLAVE"
bash "$SEARCHSYNC_SRCDIR/sql/demo/generate.sh" --products 60 --binlog --host 127.0.0.1 \
    --port "$P" --user root >/dev/null
caught_up || fail "the replica did not catch up: $(q "$R" 'SHOW SLAVE STATUS\G' | grep -i error)"

meta="$(unique_name meta)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/products_v1,brands_v1' >/dev/null"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 40 lines)"; tail -40 "$TEST_TMP/run.log"; }'
config() { # config PORT [VERSIONS]: the source moves, the metadata stays on the suite's server
    cat >"$TEST_TMP/c.ini" <<INI
[source]
name = shop
host = 127.0.0.1
port = $1
user = root
server_id = 7411
start = now
versions = ${2:-gtid}
[metadata]
host = 127.0.0.1
port = $MYSQL_PORT
user = root
database = $meta
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
INI
}
ckpt_gtid() { mysql_q "SELECT SUBSTRING_INDEX(position, ';gtid=', -1) FROM \`$meta\`.offsets WHERE source = 'shop'"; }
ckpt_at() { [ "$(ckpt_gtid)" = "$(gtid_pos "$1")" ]; }
oracle_equal() { # oracle_equal PORT LABEL: the engine equals the oracle of that server's rows
    search_refresh products
    MYSQL_HOST=127.0.0.1 MYSQL_PORT="$1" oracle_check_products shop products "$2"
}
version_of() { curl -s "$SEARCH_URL/products/_doc/$1" | jq ._version; }
writes() { # writes PORT TAG: products, nested skus, child reviews; rows from before too
    q "$1" "UPDATE shop.products SET name = CONCAT('$2 ', id), price = price + 1 WHERE id IN (1, 2, 3, 17);
      UPDATE shop.skus SET stock = stock + 7 WHERE product_id IN (1, 5);
      DELETE FROM shop.reviews WHERE product_id = 4 ORDER BY id LIMIT 1;
      UPDATE shop.reviews SET rating = 1 + (rating % 5) WHERE product_id = 6;
      INSERT INTO shop.products (id, name, price, created_at) VALUES (900000 + $3, '$2 new', 2.50, NOW(3));"
}

# 1. from the replica, the writes on the primary
config "$R"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$map" --yes >/dev/null
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
daemon_wait_ready 60
wait_until 60 "first build live" bash -c "curl -sf '$SEARCH_URL/_alias/products' >/dev/null"
writes "$P" "one" 1
caught_up || fail "the replica did not catch up"
wait_until 60 "the checkpoint holds P's GTID position (read from R)" ckpt_at "$P"
oracle_equal "$R" "read from the replica"
daemon_stop
assert_eq 0 "$DAEMON_RC" "SIGTERM: clean exit"
assert_contains "$(mysql_q "SELECT position FROM \`$meta\`.offsets")" ";gtid=0-11-" "the checkpoint holds the GTID set"

# 2. the same topology's other server: resumed by GTID, no bump
config "$P"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
daemon_wait_log "after GTID set"
daemon_wait_ready
writes "$P" "two" 2
wait_until 60 "the checkpoint holds P's GTID position" ckpt_at "$P"
oracle_equal "$P" "moved from the replica to the primary"
v_before="$(version_of 1)"

# 3. the primary dies with transactions the daemon has not read
daemon_kill
writes "$P" "three" 3
q "$P" "UPDATE shop.products SET description = 'only in the binlog' WHERE id = 9"
caught_up || fail "the replica did not catch up"
srv p kill
q "$R" "STOP SLAVE; RESET SLAVE ALL"
config "$R"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
daemon_wait_ready
writes "$R" "four" 4
q "$R" "UPDATE shop.products SET status = 'discontinued' WHERE id IN (2, 9)"
wait_until 60 "the checkpoint holds the promoted replica's GTID position" ckpt_at "$R"
oracle_equal "$R" "after the failover to the promoted replica"
v_after="$(version_of 2)"
assert_true "versions go on growing across the failover ($v_before, then $v_after)" test "$v_after" -gt "$v_before"
assert_eq 0 "$(( v_after >> 53 ))" "no epoch bump: epoch 0"
daemon_stop
assert_eq 0 "$DAEMON_RC" "SIGTERM: clean exit"

# versions = position on a gtid checkpoint: refused, naming the bump
config "$R" position
set +e
out="$(timeout 60 "$SEARCHSYNC_BIN" run --config "$TEST_TMP/c.ini" 2>&1)"; rc2=$?
set -e
assert_eq 2 "$rc2" "a checkpoint of the other kind of versions: exit 2"
assert_contains "$out" "epoch bump --config FILE --reset-checkpoint" "the message names the bump"
pass
