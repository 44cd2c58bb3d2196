#!/usr/bin/env bash
# tests/integration/t_readme_own_db.sh — README.md's "Sync your own database"
# steps, taken from the README itself (the code blocks after its
# <!-- own-db:... --> markers), run against a fresh database on the harness
# MariaDB with only the host, port, names and password substituted: the
# replication user's SQL, the configuration, config check, mapping generate,
# mapping import, run, status. The documents must equal an SQL oracle after
# the first build and after changes, and SIGTERM must stop the daemon cleanly.
# With the argument mysql (t_readme_own_db_mysql.sh) the same on Oracle's
# MySQL 8 (tests/harness/mysql8.sh), the source and the metadata on it, the
# README's MySQL grant line too (skip, a failure under CI=true, when this
# machine cannot run it).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
require_bin
flavour="${1:-mariadb}"
if [ "$flavour" = mysql ]; then
    TEST_NAME=t_readme_own_db_mysql
    use_mysql8
fi
readme="$SEARCHSYNC_SRCDIR/README.md"
block() { # the code block after <!-- own-db:$1 --> in README.md
    awk -v m="<!-- own-db:$1 -->" '$0 == m {f = 1; next} f == 1 && /^```/ {f = 2; next}
        f == 2 && /^```/ {exit} f == 2 {print}' "$readme"
}
for b in sql sql-mysql ini setup run watch; do
    [ -n "$(block "$b")" ] || fail "README.md has no code block after <!-- own-db:$b -->"
done

db=$(unique_name mydb)
meta=$(unique_name meta)
user="ss_readme_$$"
pw="pw-$RANDOM-$$"
on_exit "mysql_q \"DROP DATABASE IF EXISTS \\\`$db\\\`; DROP DATABASE IF EXISTS \\\`$meta\\\`; DROP USER IF EXISTS '$user'@'%'\" >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/orders_v1' >/dev/null"

# ---- a fresh database of "your own"
mysql_q "CREATE DATABASE \`$db\`"
mysql_q "
CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(50) NOT NULL);
CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT NULL, status VARCHAR(20) NOT NULL,
  total_cents INT NOT NULL, FOREIGN KEY (customer_id) REFERENCES customers (id));
CREATE TABLE order_lines (id INT PRIMARY KEY, order_id INT NOT NULL, sku VARCHAR(20) NOT NULL,
  qty INT NOT NULL, FOREIGN KEY (order_id) REFERENCES orders (id));
INSERT INTO customers VALUES (1, 'Ada'), (2, 'Brian');
INSERT INTO orders VALUES (10, 1, 'paid', 1250), (11, 2, 'new', 300), (12, NULL, 'new', 0);
INSERT INTO order_lines VALUES (1, 10, 'A-1', 2), (2, 10, 'B-7', 1), (3, 11, 'A-1', 5);" "$db"

# ---- step 1: the user (the server options are the harness's already)
{ block sql; [ "$flavour" = mariadb ] || block sql-mysql; } |
    sed "s/'searchsync'@/'$user'@/g; s/change-me/$pw/; s/ON searchsync\\.\\*/ON \`$meta\`.*/" >"$TEST_TMP/user.sql"
mysql_file "$TEST_TMP/user.sql" || fail "the README's SQL failed: $(cat "$TEST_TMP/user.sql")"
[ "$flavour" = mariadb ] || assert_eq caching_sha2_password "$(mysql_q "SELECT plugin FROM mysql.user WHERE user = '$user'")" \
    "the README's user has MySQL 8's default authentication"

# ---- step 2: the configuration
block ini | sed "s/^host = .*/host = 127.0.0.1/; s/^port = 3306\$/port = $MYSQL_PORT/;
    s/^user = searchsync\$/user = $user/; s/^password = change-me\$/password = $pw/;
    s/^database = searchsync\$/database = $meta/; s#^urls = .*#urls = $SEARCH_URL#" >"$TEST_TMP/mydb.ini"
grep -q "^user = $user\$" "$TEST_TMP/mydb.ini" || fail "README config: no 'user = searchsync' line to substitute"

# ---- step 3: check, generate, import — the README's commands
sub() {
    sed "s#^searchsync #\"\$SEARCHSYNC_BIN\" #; s#mydb\\.ini#$TEST_TMP/mydb.ini#g; s#mydb\\.orders#$db.orders#g;
        s# mapping\\.json# $TEST_TMP/mapping.json#g; s#http://127.0.0.1:9200#$SEARCH_URL#g"
}
block setup | sub >"$TEST_TMP/setup.sh"
(cd "$TEST_TMP" && SEARCHSYNC_BIN="$SEARCHSYNC_BIN" bash -eo pipefail setup.sh) >"$TEST_TMP/setup.out" 2>&1 ||
    fail "the README's setup commands failed: $(cat "$TEST_TMP/setup.out")"
assert_contains "$(cat "$TEST_TMP/setup.out")" "applied" "mapping imported"

# ---- step 4: run (the README's one command, started in the background)
assert_eq "searchsync run --config mydb.ini" "$(block run)" "the README's run command"
daemon_start "$TEST_TMP/mydb.ini" "$TEST_TMP/run.log"
daemon_wait_log "orders: live changes no longer written to orders_v1" 60
wait_until 30 "the first build of orders holds the 3 orders" bash -c \
    "[ \"\$(curl -s '$SEARCH_URL/orders/_count' | jq .count)\" = 3 ]"
daemon_wait_ready

oracle_orders() {
    oracle_query "$db" "SELECT JSON_OBJECT('id', CAST(o.id AS CHAR), 'routing', NULL, 'doc', JSON_OBJECT(
  'id', o.id, 'customer_id', o.customer_id, 'status', o.status, 'total_cents', o.total_cents,
  'customer', JSON_EXTRACT((SELECT JSON_OBJECT('id', c.id, 'name', c.name) FROM customers c WHERE c.id = o.customer_id), '\$'),
  'order_lines', COALESCE(JSON_EXTRACT((SELECT JSON_ARRAYAGG(JSON_OBJECT('id', l.id, 'order_id', l.order_id,
      'sku', l.sku, 'qty', l.qty)) FROM order_lines l WHERE l.order_id = o.id), '\$'), JSON_ARRAY())))
FROM orders o ORDER BY o.id"
}
check_orders() {
    oracle_orders >"$TEST_TMP/orders.oracle" || fail "$1: oracle query"
    search_refresh orders
    engine_dump orders "$TEST_TMP/orders.engine"
    _LIB_ASSERTS=$((_LIB_ASSERTS + 1))
    compare_docs "$TEST_TMP/orders.engine" "$TEST_TMP/orders.oracle" --numbers value \
        --ignore-field ss_version --ignore-field ss_hash --ignore-field ss_key_hash --label "orders ($1)" --show 5 >"$TEST_TMP/cmp.out" ||
        { cat "$TEST_TMP/cmp.out"; fail "$1: the index differs from the SQL oracle"; }
}
check_orders "first build"
mysql_q "UPDATE customers SET name = 'Ada L.' WHERE id = 1; INSERT INTO order_lines VALUES (4, 12, 'C-3', 1);
DELETE FROM order_lines WHERE id = 2; INSERT INTO orders VALUES (13, 2, 'paid', 999);
UPDATE orders SET status = 'shipped' WHERE id = 10" "$db"
wait_checkpoint "$meta" mydb 30
check_orders "after changes"

# ---- step 5: watch
block watch | sub >"$TEST_TMP/watch.sh"
set +e
(cd "$TEST_TMP" && SEARCHSYNC_BIN="$SEARCHSYNC_BIN" bash -e watch.sh) >"$TEST_TMP/watch.out" 2>&1
rc=$?
set -e
assert_eq 0 "$rc" "the README's watch commands ($(cat "$TEST_TMP/watch.out"))"
# the search's answer (the last line) holds every order, as SQL counts them
assert_eq "$(mysql_q "SELECT COUNT(*) FROM \`$db\`.orders")" "$(tail -1 "$TEST_TMP/watch.out" | jq -r .hits.total.value)" \
    "the README's search finds every order"
assert_contains "$(cat "$TEST_TMP/watch.out")" "orders" "status names the index"

# ---- step 6: stop
daemon_stop
assert_eq 0 "$DAEMON_RC" "SIGTERM stops the daemon cleanly"
pass
