#!/usr/bin/env bash
# tests/integration/t_messages.sh — connection messages against the real
# MariaDB: a wrong [source] password names [source] (the metadata connection,
# which borrows [source]'s user, says so instead of blaming [metadata]); a
# wrong [metadata] password names [metadata]; every command that connects
# exits 2 on either (a refused credential is a configuration error); `dead-letters list` with none
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
# refused INI SECTION COMMAND... — each command (words split) with INI is
# refused the same way: exit 2 (a credential in the configuration, refused:
# the user fixes the file, as a misspelt key), the message naming SECTION's
# user and password, never the password
refused() {
    local ini="$1" section="$2" cmd out rc
    shift 2
    for cmd in "$@"; do
        rc=0
        # shellcheck disable=SC2086 # the words of the command
        out="$(timeout 30 "$SEARCHSYNC_BIN" $cmd --config "$TEST_TMP/$ini" 2>&1)" || rc=$?
        assert_eq 2 "$rc" "$ini: $cmd: exit 2 (output: $(tail -2 <<<"$out" | cut -c1-300))"
        assert_contains "$out" "check the user and password in the [$section] section" "$ini: $cmd names [$section]"
        case "$out" in *wrong-password*) fail "$ini: $cmd: the password is in the output" ;; esac
    done
    LAST_OUT="$out"
}
common=("run" "status" "status --json" "check books" "reindex books" "delayed-run"
    "resync books --ids 1" "replay" "mapping import $TEST_TMP/empty.json --yes")
echo '{"version": 1, "indices": []}' >"$TEST_TMP/empty.json"
printf '[search]\nurls = %s\n' "$SEARCH_URL" >>"$TEST_TMP/src.ini"
refused src.ini source "${common[@]}" "mapping export" "mapping body books" "epoch bump" \
    "dead-letters list" "migrate" "mapping generate db.t" "tail --stop-at-end"
cp "$TEST_TMP/src.ini" "$TEST_TMP/meta.ini"
sed -i 's/^password = .*/password = '"$MYSQL_PASSWORD"'  # right/' "$TEST_TMP/meta.ini"
printf '[metadata]\nuser = %s\npassword = wrong-password\n' "$MYSQL_USER" >>"$TEST_TMP/meta.ini"
refused meta.ini metadata "${common[@]}" "mapping export" "mapping body books" "epoch bump" \
    "dead-letters list" "migrate"
case "$LAST_OUT" in *"[source] section"*) fail "a [metadata] error blamed [source]: $LAST_OUT" ;; esac
# the metadata on its own account, the source's password wrong: what reads
# the source says so (status too, in text and JSON)
meta2=$(unique_name meta2)
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$meta2\`' >/dev/null 2>&1"
cp "$TEST_TMP/src.ini" "$TEST_TMP/src2.ini"
printf '[metadata]\nuser = root\ndatabase = %s\n' "$meta2" >>"$TEST_TMP/src2.ini"
refused src2.ini source "${common[@]}" "mapping generate db.t" "tail --stop-at-end"
refused src2.ini source "status --json"
assert_eq false "$(grep '^{' <<<"$LAST_OUT" | jq -r .ok)" "status --json with the source refused: ok false"
assert_eq false "$(grep '^{' <<<"$LAST_OUT" | jq -r .source.reachable)" "status --json: source not reached"

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
assert_eq 2 "$rc" "a right password shadowed by ''@'localhost': exit 2 (refused credentials)"
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
