#!/usr/bin/env bash
# tests/integration/t_migrate.sh — `searchsync migrate` creates the metadata
# schema on a real MariaDB, is idempotent, is safe when several nodes start
# at once (named lock), refuses a schema newer than the binary, and names
# the server when it cannot connect.
. "$(dirname "$0")/lib.sh"
require_bin

db=$(unique_name meta)
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`' >/dev/null 2>&1"
cat >"$TEST_TMP/c.ini" <<INI
[source]
host = 127.0.0.1
port = $MYSQL_PORT
user = root
[metadata]
database = $db
INI
newest=$(ls "$SEARCHSYNC_SRCDIR"/sql/migrations/*.sql | sed 's|.*/||; s|_.*||' | sort -n | tail -1 | sed 's/^0*//')

# three nodes at once: each must succeed, every migration applied once
for i in 1 2 3; do "$SEARCHSYNC_BIN" migrate --config "$TEST_TMP/c.ini" >"$TEST_TMP/m$i.out" 2>&1 & done
for i in 1 2 3; do wait -n || fail "a concurrent migrate failed: $(cat "$TEST_TMP"/m*.out)"; done
assert_eq "$newest" "$(mysql_q "SELECT MAX(version) FROM \`$db\`.schema_migrations")" "schema at the newest version"
assert_eq "$newest" "$(mysql_q "SELECT COUNT(*) FROM \`$db\`.schema_migrations")" "each migration recorded once"
assert_eq 1 "$(mysql_q "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema='$db' AND table_name='sources'")" "0001 created sources"

# again: nothing to do, and nothing written to the binlog (with the metadata
# on the source every command migrates first, and a binlog event per command
# would be read back by the daemon and keep the checkpoint behind)
p0="$(mysql_binlog_pos)"
out=$("$SEARCHSYNC_BIN" migrate --config "$TEST_TMP/c.ini" 2>&1)
assert_contains "$out" "version $newest -> $newest" "second run is a no-op"
assert_eq "$p0" "$(mysql_binlog_pos)" "a migrate with nothing to do writes nothing to the binlog"

# a schema newer than this binary is refused, not downgraded
mysql_q "INSERT INTO \`$db\`.schema_migrations (version, name) VALUES (9999, 'future')"
set +e
out=$("$SEARCHSYNC_BIN" migrate --config "$TEST_TMP/c.ini" 2>&1); rc=$?
set -e
assert_eq 1 "$rc" "newer schema: runtime failure exit code"
assert_contains "$out" "newer than this binary knows" "newer schema is explained"
# the daemon too refuses to start on it, before it reads or writes anything
set +e
out=$(timeout 60 "$SEARCHSYNC_BIN" run --config "$TEST_TMP/c.ini" 2>&1); rc=$?
set -e
assert_eq 1 "$rc" "run on a newer schema: runtime failure exit code"
assert_contains "$out" "searchsync run: metadata schema $db is at version 9999, newer than this binary knows ($newest)" \
    "run names the schema and both versions"
assert_contains "$out" "restore the backup" "run says how to go back"
assert_eq 1 "$(mysql_q "SELECT COUNT(*) FROM \`$db\`.schema_migrations WHERE version > $newest")" \
    "the newer schema is left as it is"

# unreachable server: exit 1, message names the server and the section
port=$(( MYSQL_PORT + 1 ))
while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
sed "s/^port = .*/port = $port/" "$TEST_TMP/c.ini" >"$TEST_TMP/bad.ini"
set +e
out=$("$SEARCHSYNC_BIN" migrate --config "$TEST_TMP/bad.ini" 2>&1); rc=$?
set -e
assert_eq 1 "$rc" "unreachable server: exit 1"
assert_contains "$out" "127.0.0.1:$port" "message names the server"
assert_contains "$out" "metadata server" "message names the server's role"
# the metadata schema borrows [source]'s address here: that is the section to fix
assert_contains "$out" "check [source] host/port/socket" "message names the config section the address came from"
pass
