#!/usr/bin/env bash
# tests/integration/t_messages.sh — connection messages against the real
# MariaDB: a wrong [source] password names [source] (the metadata connection,
# which borrows [source]'s user, says so instead of blaming [metadata]); a
# wrong [metadata] password names [metadata]; `dead-letters list` with none
# says so (on stderr: stdout stays JSON lines); a right password refused
# because an anonymous ''@'localhost' account is taken before 'USER'@'%'
# (a fresh install's) names the anonymous accounts and how to list them.
. "$(dirname "$0")/lib.sh"
require_bin
cat >"$TEST_TMP/src.ini" <<INI
[source]
host = 127.0.0.1
port = $MYSQL_PORT
user = $MYSQL_USER
password = wrong-password   # a comment, stripped
INI
set +e
"$SEARCHSYNC_BIN" mapping export --config "$TEST_TMP/src.ini" >"$TEST_TMP/out" 2>&1
rc=$?
set -e
assert_eq 1 "$rc" "wrong [source] password: exit 1"
assert_contains "$(cat "$TEST_TMP/out")" "check the user and password in the [source] section" "wrong [source] password names [source]"
cp "$TEST_TMP/src.ini" "$TEST_TMP/meta.ini"
sed -i 's/^password = .*/password = '"$MYSQL_PASSWORD"'  # right/' "$TEST_TMP/meta.ini"
printf '[metadata]\nuser = %s\npassword = wrong\n' "$MYSQL_USER" >>"$TEST_TMP/meta.ini"
set +e
"$SEARCHSYNC_BIN" mapping export --config "$TEST_TMP/meta.ini" >"$TEST_TMP/out" 2>&1
rc=$?
set -e
assert_eq 1 "$rc" "wrong [metadata] password: exit 1"
assert_contains "$(cat "$TEST_TMP/out")" "check the user and password in the [metadata] section" "wrong [metadata] password names [metadata]"
case "$(cat "$TEST_TMP/out")" in *"[source] section"*) fail "a [metadata] error blamed [source]: $(cat "$TEST_TMP/out")" ;; esac

# a fresh install's anonymous ''@'localhost' shadows 'USER'@'%' for local
# connections (the socket here: the harness skips name resolution, so TCP
# 127.0.0.1 is not 'localhost'), and the right password is refused
anon_user=$(unique_name anon | cut -c1-32)
anon_meta=$(unique_name anonmeta)
on_exit "mysql_q \"DROP USER IF EXISTS ''@'localhost', '$anon_user'@'%'\" >/dev/null 2>&1"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$anon_meta\`' >/dev/null 2>&1"
mysql_q "CREATE USER '$anon_user'@'%' IDENTIFIED BY 'right-pw'; GRANT ALL ON *.* TO '$anon_user'@'%'"
printf '[source]\nsocket = %s\nuser = %s\npassword = right-pw\n[metadata]\ndatabase = %s\n' \
    "$MYSQL_SOCKET" "$anon_user" "$anon_meta" >"$TEST_TMP/anon.ini"
"$SEARCHSYNC_BIN" mapping export --config "$TEST_TMP/anon.ini" >/dev/null 2>"$TEST_TMP/out" ||
    fail "without an anonymous account, $anon_user connects: $(cat "$TEST_TMP/out")"
mysql_q "CREATE USER ''@'localhost'"
set +e
"$SEARCHSYNC_BIN" mapping export --config "$TEST_TMP/anon.ini" >"$TEST_TMP/out" 2>&1
rc=$?
set -e
mysql_q "DROP USER ''@'localhost'"
assert_eq 1 "$rc" "a right password shadowed by ''@'localhost': exit 1"
assert_contains "$(cat "$TEST_TMP/out")" "Access denied" "the server's refusal is quoted"
assert_contains "$(cat "$TEST_TMP/out")" "anonymous account" "the message names the anonymous accounts"
assert_contains "$(cat "$TEST_TMP/out")" "SELECT user, host FROM mysql.user WHERE user = ''" "and how to list them"

meta=$(unique_name meta)
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1"
printf '[source]\nname = msg\nhost = 127.0.0.1\nport = %s\nuser = root\n[metadata]\ndatabase = %s\n' \
    "$MYSQL_PORT" "$meta" >"$TEST_TMP/dl.ini"
out=$("$SEARCHSYNC_BIN" dead-letters list --config "$TEST_TMP/dl.ini" 2>"$TEST_TMP/err") || fail "dead-letters list: $(cat "$TEST_TMP/err")"
assert_eq "" "$out" "no dead letters: stdout empty"
assert_contains "$(cat "$TEST_TMP/err")" "no dead letters for source msg" "no dead letters: said"

# a source not in ROW format: refused before anything is queued or saved
# (the global format is put back at once, and at exit whatever happens)
on_exit "mysql_q 'SET GLOBAL binlog_format = ROW' >/dev/null 2>&1"
echo '{"version":1,"indices":[{"alias":"msgfmt","tables":[{"table":"mysql.user"}]}]}' >"$TEST_TMP/fmt.json"
mysql_q "SET GLOBAL binlog_format = STATEMENT"
set +e
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/dl.ini" "$TEST_TMP/fmt.json" --yes >"$TEST_TMP/fmt.out" 2>&1; rc1=$?
"$SEARCHSYNC_BIN" run --config "$TEST_TMP/dl.ini" >"$TEST_TMP/fmt2.out" 2>&1; rc2=$?
set -e
mysql_q "SET GLOBAL binlog_format = ROW"
assert_eq 2 "$rc1" "mapping import on a STATEMENT-format source: exit 2"
assert_contains "$(cat "$TEST_TMP/fmt.out")" "binlog_format is STATEMENT" "and it says which setting"
assert_eq 2 "$rc2" "run on a STATEMENT-format source: exit 2"
assert_contains "$(cat "$TEST_TMP/fmt2.out")" "SET GLOBAL binlog_format = ROW" "and what to do"
pass
