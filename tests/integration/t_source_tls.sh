#!/usr/bin/env bash
# tests/integration/t_source_tls.sh — a secured source: a second MariaDB
# (tests/harness/mariadb.sh with its own state dir in $TEST_TMP, a small
# InnoDB, stopped at exit) serving TLS with a certificate from a CA made here
# by openssl, and an account created REQUIRE SSL (it logs in over TLS only).
#   - [source] ssl_mode = verify_identity + ssl_ca: `searchsync tail
#     --stop-at-end` reads the binlog (the replica connection) and `searchsync
#     migrate` creates the metadata schema (a query connection), the password
#     from password_file, then from SEARCHSYNC_SOURCE_PASSWORD;
#   - ssl_ca of another CA: both fail, exit 1, with a message about the
#     certificate naming [source] ssl_ca;
#   - ssl_mode = required against the harness's MariaDB (no TLS): both fail
#     with a message saying the server does not offer TLS.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tls_lib.sh"
require_bin
t="$TEST_TMP/tls"
mkdir -p "$t"
tls_ca "$t" ca && tls_ca "$t" otherca && tls_cert "$t" server ca || fail "making the certificates"

# the TLS server: the harness's own script, another state dir
h="$TEST_TMP/h"
on_exit "SEARCHSYNC_HARNESS_DIR='$h' bash '$SEARCHSYNC_SRCDIR/tests/harness/mariadb.sh' stop >/dev/null 2>&1"
SEARCHSYNC_HARNESS_DIR="$h" MARIADB_EXTRA_ARGS="--ssl-ca=$t/ca.crt --ssl-cert=$t/server.crt --ssl-key=$t/server.key --innodb-buffer-pool-size=32M --innodb-log-file-size=8M" \
    bash "$SEARCHSYNC_SRCDIR/tests/harness/mariadb.sh" start 2>"$TEST_TMP/mariadb.out" ||
    fail "the TLS MariaDB did not start: $(tail -5 "$TEST_TMP/mariadb.out")"
tport="$(. "$h/mariadb.env"; echo "$MYSQL_PORT")"
tq() { mariadb --no-defaults -h127.0.0.1 -P"$tport" -uroot -N -B -e "$1"; }
assert_eq YES "$(tq 'SELECT @@have_ssl')" "the second server offers TLS"
tq "CREATE USER tlsonly@'%' IDENTIFIED BY 'Tls-pw-1' REQUIRE SSL;
    GRANT REPLICATION SLAVE, REPLICATION CLIENT, BINLOG MONITOR, SELECT ON *.* TO tlsonly@'%';
    GRANT ALL ON \`meta_tls\`.* TO tlsonly@'%';
    CREATE DATABASE shop_tls; CREATE TABLE shop_tls.t (id INT PRIMARY KEY, v VARCHAR(40));
    INSERT INTO shop_tls.t VALUES (1, 'row-over-tls-1'), (2, 'row-over-tls-2')"
printf 'Tls-pw-1\n' >"$t/pw"

# conf FILE PORT SSL_LINES... — a configuration for the server at PORT
conf() {
    local f="$1" port="$2"
    shift 2
    { printf '[source]\nname = tls\nhost = 127.0.0.1\nport = %s\nuser = tlsonly\nserver_id = %s\n' \
          "$port" "$((7460 + $$ % 30))"
      printf '%s\n' "$@"
      printf '[metadata]\ndatabase = meta_tls\n[admin]\nlisten =\n'; } >"$f"
}
# tail_and_migrate NAME — run both commands with $TEST_TMP/NAME.ini: RC_TAIL,
# RC_MIGRATE, OUT_TAIL (stdout), ERR_TAIL, OUT_MIGRATE
tail_and_migrate() {
    RC_TAIL=0 RC_MIGRATE=0
    timeout 30 "$SEARCHSYNC_BIN" tail --config "$TEST_TMP/$1.ini" --from-beginning --stop-at-end \
        >"$TEST_TMP/$1.tail" 2>"$TEST_TMP/$1.tail.err" || RC_TAIL=$?
    OUT_TAIL="$(cat "$TEST_TMP/$1.tail")"
    ERR_TAIL="$(cat "$TEST_TMP/$1.tail.err")"
    OUT_MIGRATE="$(timeout 30 "$SEARCHSYNC_BIN" migrate --config "$TEST_TMP/$1.ini" 2>&1)" || RC_MIGRATE=$?
    log "$1: tail $RC_TAIL: $(tail -1 <<<"$ERR_TAIL" | cut -c1-250)"
    log "$1: migrate $RC_MIGRATE: $(tail -1 <<<"$OUT_MIGRATE" | cut -c1-250)"
}

# 1. verify_identity with the right CA: the replica and a query connection
conf "$TEST_TMP/ok.ini" "$tport" "password_file = $t/pw" "ssl_mode = verify_identity" "ssl_ca = $t/ca.crt"
tail_and_migrate ok
assert_eq 0 "$RC_TAIL" "tail over TLS exits 0 ($ERR_TAIL)"
assert_eq 2 "$(grep -c 'row-over-tls-' <<<"$OUT_TAIL")" "tail over TLS read both rows from the binlog"
assert_eq 0 "$RC_MIGRATE" "migrate over TLS ($OUT_MIGRATE)"
assert_eq 1 "$(tq "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'meta_tls' AND TABLE_NAME = 'schema_migrations'")" \
    "the metadata schema was created over the TLS query connection"
# the password from the environment instead of the file
conf "$TEST_TMP/env.ini" "$tport" "ssl_mode = verify_identity" "ssl_ca = $t/ca.crt"
SEARCHSYNC_SOURCE_PASSWORD=Tls-pw-1 tail_and_migrate env
assert_eq 0 "$RC_TAIL" "tail with the password from SEARCHSYNC_SOURCE_PASSWORD ($ERR_TAIL)"
assert_eq 0 "$RC_MIGRATE" "migrate with the password from SEARCHSYNC_SOURCE_PASSWORD ($OUT_MIGRATE)"
# (without TLS the account is refused: the connections above were TLS; a
# login refused is a configuration error, exit 2)
conf "$TEST_TMP/plain.ini" "$tport" "password_file = $t/pw" "ssl_mode = disabled"
tail_and_migrate plain
assert_eq 2 "$RC_TAIL" "ssl_mode = disabled: the REQUIRE SSL account is refused"
assert_eq 2 "$RC_MIGRATE" "ssl_mode = disabled: migrate is refused the same way"

# 2. a CA that did not sign the server's certificate
conf "$TEST_TMP/otherca.ini" "$tport" "password_file = $t/pw" "ssl_mode = verify_identity" "ssl_ca = $t/otherca.crt"
tail_and_migrate otherca
assert_eq 1 "$RC_TAIL" "tail with the wrong CA exits 1"
assert_contains "$ERR_TAIL" "certificate" "tail: the message is about the certificate"
assert_contains "$ERR_TAIL" "[source] ssl_ca" "tail: the message names [source] ssl_ca"
assert_ne 0 "$RC_MIGRATE" "migrate with the wrong CA fails"
assert_contains "$OUT_MIGRATE" "certificate" "migrate: the message is about the certificate"
assert_contains "$OUT_MIGRATE" "[source] ssl_ca" "migrate: the message names [source] ssl_ca"

# 3. required, against the harness's MariaDB, which has no TLS
conf "$TEST_TMP/required.ini" "$MYSQL_PORT" "password = $MYSQL_PASSWORD" "ssl_mode = required"
sed -i "s/^user = tlsonly/user = $MYSQL_USER/; s/^database = meta_tls/database = $(unique_name meta)/" "$TEST_TMP/required.ini"
tail_and_migrate required
assert_eq 1 "$RC_TAIL" "tail with ssl_mode = required against a server without TLS exits 1"
assert_contains "$ERR_TAIL" "does not offer TLS" "tail: the message says the server has no TLS"
assert_contains "$ERR_TAIL" "[source] ssl_mode = required" "tail: ... and names the key"
assert_ne 0 "$RC_MIGRATE" "migrate with ssl_mode = required against a server without TLS fails"
assert_contains "$OUT_MIGRATE" "does not offer TLS" "migrate: the message says the server has no TLS"
pass
