#!/usr/bin/env bash
# tests/integration/t_row_filter_server.sh — the row filter's answers are the
# servers' own. Row-image mode decides a document table's `where` from the
# row image (sync/mapping/row_filter.h); tests/unit/test_row_filter.c holds
# the evaluator to every case of tests/fixtures/row_filter/cases.tsv, and
# this test holds the cases to the servers: each one the evaluator decides
# (TRUE, FALSE or NULL) is run as SELECT over a table of the fixture's
# columns holding the case's row (tests/integration/row_filter_server.py)
# on the suite's MariaDB and on Oracle's MySQL 8 (tests/harness/mysql8.sh),
# and must give the same; those it leaves to the server are counted with
# what each server said (they differ between the two: the reason they are
# left). A column whose collation a server lacks is left out there.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 needed to run the cases"
fixture="$SEARCHSYNC_SRCDIR/tests/fixtures/row_filter/cases.tsv"
db=$(unique_name rfcases)
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`' >/dev/null 2>&1"

run_cases() { # LABEL
    python3 "$(dirname "$0")/row_filter_server.py" "$fixture" "$db" -- \
        -h "$MYSQL_HOST" -P "$MYSQL_PORT" -u root >"$TEST_TMP/cases.out" 2>&1
    local rc=$?
    cat "$TEST_TMP/cases.out" >&2
    _LIB_ASSERTS=$((_LIB_ASSERTS + 1))
    [ "$rc" = 0 ] || fail "$1 evaluates cases otherwise than the row filter (above)"
    local agree
    agree=$(tail -1 "$TEST_TMP/cases.out" | sed -n 's/.* cases, \([0-9]*\) agree, 0 differ.*/\1/p')
    assert_true "$1 ran the cases ($(tail -1 "$TEST_TMP/cases.out"))" test "${agree:-0}" -ge 200
}

run_cases MariaDB
use_mysql8 # mysql_q and MYSQL_* now name Oracle's MySQL 8
run_cases "MySQL 8"
pass
