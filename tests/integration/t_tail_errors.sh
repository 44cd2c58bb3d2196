#!/usr/bin/env bash
# tests/integration/t_tail_errors.sh — `tail`'s exit codes and clear errors:
# usage and a refused password (2: docs/operations.md, a credential the
# server refuses is the configuration's), unreachable server, purged binlog,
# missing privileges, binlog_format other than ROW (1); and without binlog_row_metadata=FULL:
# names and types from information_schema (oracle: SELECT), and a clear stop
# when the table changed shape after the events were written.
. "$(dirname "$0")/lib.sh"
require_bin

db="$(unique_name searchsync_te)"
u1="ss_nopriv_$$"
u2="ss_noslave_$$"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP USER IF EXISTS $u1@\"%\"; DROP USER IF EXISTS $u2@\"%\"' >/dev/null 2>&1"
SRC="mysql://$MYSQL_USER:$MYSQL_PASSWORD@$MYSQL_HOST:$MYSQL_PORT"
BIN="$SEARCHSYNC_BIN"
run() { # expected_rc stderr_needle args... → fails unless rc and stderr match
    local want="$1" needle="$2" rc=0
    shift 2
    "$BIN" tail "$@" >"$TEST_TMP/out" 2>"$TEST_TMP/err" </dev/null || rc=$?
    assert_eq "$want" "$rc" "exit code of tail $*"
    [ -z "$needle" ] || assert_contains "$(cat "$TEST_TMP/err")" "$needle" "stderr of tail $*"
    assert_eq "" "$(grep -v '^{' "$TEST_TMP/out" || true)" "nothing but JSON lines on stdout"
}

# usage errors: 2
run 2 "--source URI or --config FILE"
run 2 "go together" --source "$SRC" --file mysql-bin.000001
run 2 "choose one" --source "$SRC" --from-beginning --gtid 0-1-1
run 2 "mysql://USER:PASS@HOST:PORT" --source "postgres://x@y"
run 2 "unknown" --source "$SRC" --bogus
run 2 "malformed GTID set" --source "$SRC" --gtid "0-1"
run 2 "config" --config /nonexistent/searchsync.ini
"$BIN" tail --help >"$TEST_TMP/help" || fail "--help exits 0"
assert_contains "$(cat "$TEST_TMP/help")" "--stop-at-end" "--help documents the options"

# runtime errors: 1 (a refused password: 2)
run 1 "unreachable" --source "mysql://x:y@127.0.0.1:1" --stop-at-end
run 2 "access denied" --source "mysql://$MYSQL_USER:wrong@$MYSQL_HOST:$MYSQL_PORT" --stop-at-end
run 1 "not available on the server" --source "$SRC" --file mysql-bin.999999 --pos 4 --stop-at-end
mysql_q "CREATE USER $u1@'%' IDENTIFIED BY 'pw'; GRANT SELECT ON *.* TO $u1@'%';
         CREATE USER $u2@'%' IDENTIFIED BY 'pw'; GRANT SELECT, BINLOG MONITOR ON *.* TO $u2@'%';"
run 1 "REPLICATION SLAVE" --source "mysql://$u1:pw@$MYSQL_HOST:$MYSQL_PORT" --stop-at-end
run 1 "REPLICATION SLAVE" --source "mysql://$u2:pw@$MYSQL_HOST:$MYSQL_PORT" --stop-at-end

# nothing to read: --stop-at-end exits 0 at once
run 0 "" --source "$SRC" --stop-at-end
assert_eq 0 "$(wc -c <"$TEST_TMP/out")" "no output"

# binlog_format other than ROW
fmt="$(mysql_q 'SELECT @@global.binlog_format')"
on_exit "mysql_q 'SET GLOBAL binlog_format=$fmt'"
mysql_q "SET GLOBAL binlog_format=STATEMENT"
run 1 "binlog_format is STATEMENT" --source "$SRC" --stop-at-end
mysql_q "SET GLOBAL binlog_format=$fmt"

# without full row metadata: names and types from the schema ...
meta="$(mysql_q 'SELECT @@global.binlog_row_metadata')"
on_exit "mysql_q 'SET GLOBAL binlog_row_metadata=$meta'"
mysql_q "CREATE DATABASE \`$db\`"
mysql_q "SET GLOBAL binlog_row_metadata=MINIMAL"
read -r f0 p0 <<<"$(mysql_binlog_pos)"
mysql_q "CREATE TABLE t (id INT UNSIGNED PRIMARY KEY, name VARCHAR(20) CHARACTER SET latin1, e ENUM('p','q'), s SET('x','y'), j JSON, b VARBINARY(4));
         INSERT INTO t VALUES (4294967295, 'caf\\xe9', 'q', 'x,y', '{\"k\": [1]}', X'0102');" "$db"
run 0 "" --source "$SRC" --file "$f0" --pos "$p0" --stop-at-end --tables "$db.t"
assert_json_eq "$(mysql_q "SELECT JSON_OBJECT('id',id,'name',name,'e',CAST(e AS CHAR),'s',JSON_ARRAY('x','y'),'j',JSON_EXTRACT(j,'\$'),'b',TO_BASE64(b)) FROM t" "$db")" \
    "$(jq -c .after "$TEST_TMP/out")" "MINIMAL metadata: the row decoded with the schema's names, signedness, labels, charset"
# ... and a clear stop when the table no longer matches the events
mysql_q "ALTER TABLE t ADD COLUMN extra INT" "$db"
run 1 "altered" --source "$SRC" --file "$f0" --pos "$p0" --stop-at-end --tables "$db.t"
mysql_q "SET GLOBAL binlog_row_metadata=$meta"

# a purged binlog
read -r fp _ <<<"$(mysql_binlog_pos)"
purged() { mysql_q "FLUSH BINARY LOGS"; read -r fn _ <<<"$(mysql_binlog_pos)";
          mysql_q "PURGE BINARY LOGS TO '$fn'" >/dev/null 2>&1; ! mysql_q "SHOW BINARY LOGS" | grep -q "^$fp"; }
wait_until 20 "the server purges $fp (it keeps a log until its binlog checkpoint passes)" purged
run 1 "not available on the server" --source "$SRC" --file "$fp" --pos 4 --stop-at-end

pass
