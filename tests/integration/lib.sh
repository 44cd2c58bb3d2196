# tests/integration/lib.sh — helpers sourced by every integration test
# (tests/integration/t_*.sh). Owns: finding the servers (harness env.sh), SQL and
# search-engine shorthands, assertions, cleanup hooks and the exit protocol.
#
# A test is a bash script:
#   #!/usr/bin/env bash
#   . "$(dirname "$0")/lib.sh"
#   assert_eq 1 "$(mysql_q 'SELECT 1')" "select one"
#   pass
# Exit status: 0 pass, 1 fail, 77 skip (only via `skip "reason"`; a 77 without
# a printed reason counts as a failure in suite.sh, and under CI=true any skip
# does).
#
# Servers: when run by suite.sh the servers are already up and
# $SEARCHSYNC_HARNESS_DIR/env.sh is sourced here. Run alone, a test starts its
# own servers (all three, or $TEST_SERVERS) and stops them on exit.
#
# Environment after sourcing: MYSQL_HOST MYSQL_PORT MYSQL_SOCKET MYSQL_USER
# MYSQL_PASSWORD (replication user) ZK_HOSTS SEARCH_URL SEARCHSYNC_SRCDIR
# SEARCHSYNC_BIN (may not exist yet: use require_bin) TEST_NAME TEST_TMP; and
# DAEMON / DAEMON_LOG / DAEMON_RC once a test starts `searchsync run` (daemon_*).
# shellcheck shell=bash
set -euo pipefail

SEARCHSYNC_SRCDIR="${SEARCHSYNC_SRCDIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
export SEARCHSYNC_SRCDIR
TEST_NAME="$(basename "${0%.sh}")"
HARNESS="$SEARCHSYNC_SRCDIR/tests/harness"

# ---------------------------------------------------------------- cleanup hooks
_LIB_EXIT_HOOKS=()
# on_exit CMD — run CMD (a string, eval'd) when the test exits, last added first.
on_exit() { _LIB_EXIT_HOOKS+=("$1"); }
_lib_run_exit_hooks() {
    local rc=$? i
    set +e
    for ((i = ${#_LIB_EXIT_HOOKS[@]} - 1; i >= 0; i--)); do
        eval "${_LIB_EXIT_HOOKS[$i]}"
    done
    exit "$rc"
}
trap _lib_run_exit_hooks EXIT
trap 'exit 130' INT TERM

TEST_TMP="$(mktemp -d "${TMPDIR:-/tmp}/searchsync-$TEST_NAME.XXXXXX")"
# SEARCHSYNC_KEEP_FAILED=1 keeps a failed test's directory (daemon logs, configs)
on_exit 'if [ "$rc" != 0 ] && [ -n "${SEARCHSYNC_KEEP_FAILED:-}" ]; then echo "kept $TEST_TMP" >&2; else rm -rf "$TEST_TMP"; fi'

# ---------------------------------------------------------------- servers
if [ -n "${SEARCHSYNC_HARNESS_DIR:-}" ] && [ -f "$SEARCHSYNC_HARNESS_DIR/env.sh" ]; then
    . "$SEARCHSYNC_HARNESS_DIR/env.sh"
else
    SEARCHSYNC_HARNESS_DIR="$(mktemp -d "${TMPDIR:-/tmp}/searchsync-test.XXXXXX")"
    export SEARCHSYNC_HARNESS_DIR
    touch "$SEARCHSYNC_HARNESS_DIR/.temporary"
    on_exit 'bash "$HARNESS/servers.sh" stop'
    # shellcheck disable=SC2086
    bash "$HARNESS/servers.sh" start ${TEST_SERVERS:-} >/dev/null
    . "$SEARCHSYNC_HARNESS_DIR/env.sh"
fi

if [ -z "${SEARCHSYNC_BIN:-}" ]; then
    for _b in "$PWD/searchsync" "$PWD/src/searchsync" "$SEARCHSYNC_SRCDIR/searchsync" "$SEARCHSYNC_SRCDIR/src/searchsync"; do
        [ -x "$_b" ] && { SEARCHSYNC_BIN="$_b"; break; }
    done
    SEARCHSYNC_BIN="${SEARCHSYNC_BIN:-$SEARCHSYNC_SRCDIR/searchsync}"
fi
export SEARCHSYNC_BIN

# ---------------------------------------------------------------- output / verdicts
log() { printf '[%s %s] %s\n' "$TEST_NAME" "$(date +%H:%M:%S)" "$*" >&2; }
_LIB_ASSERTS=0

# fail MSG — the test failed.
fail() {
    printf 'FAIL: %s: %s\n' "$TEST_NAME" "$*"
    exit 1
}
# pass — the test passed (call at the end).
pass() {
    printf 'PASS: %s (%d assertions)\n' "$TEST_NAME" "$_LIB_ASSERTS"
    exit 0
}
# kafka_live PRODUCER[:VARIANT] VERSION SEED SETTING... — the connector
# settings this run exercised, for docs/kafka.md's settings tables: when the
# test exits (pass or fail; nothing on a skip), one row per SETTING (the
# row's key in the PRODUCER's table: scripts/kafka-doc.sh) in
# ${KAFKA_RESULTS:-${SUITE_LOG_DIR:-tests/integration/logs}/kafka}/PRODUCER[-VARIANT].tsv:
# producer, version, setting, result, test, seed, date. Copied into
# docs/kafka-live/, scripts/kafka-doc.sh writes the tables' live column.
kafka_live() {
    local prod="${1%%:*}" name="${1/:/-}" ver="$2" seed="$3" dir
    shift 3
    dir="${KAFKA_RESULTS:-${SUITE_LOG_DIR:-$SEARCHSYNC_SRCDIR/tests/integration/logs}/kafka}"
    _KAFKA_LIVE_FILE="$dir/$name.tsv"
    _KAFKA_LIVE_ROWS=""
    local k
    for k in "$@"; do _KAFKA_LIVE_ROWS+="$prod	$ver	$k	@R@	$TEST_NAME	$seed	$(date -u +%F)"$'\n'; done
    mkdir -p "$dir"
    on_exit '[ "$rc" = 77 ] || { r=pass; [ "$rc" = 0 ] || r=fail
        { printf "producer\tversion\tsetting\tresult\ttest\tseed\tdate\n"; printf "%s" "$_KAFKA_LIVE_ROWS" | sed "s/@R@/$r/"; } >"$_KAFKA_LIVE_FILE"; }'
}
# skip REASON — the test cannot run here; the reason is required.
skip() {
    [ -n "${1:-}" ] || fail "skip called without a reason"
    printf 'SKIP: %s: %s\n' "$TEST_NAME" "$*"
    exit 77
}
# require_bin — skip unless the searchsync binary has been built.
require_bin() {
    [ -x "$SEARCHSYNC_BIN" ] || skip "searchsync binary not built ($SEARCHSYNC_BIN)"
}

# ---------------------------------------------------------------- assertions
# assert_eq EXPECTED ACTUAL MSG
assert_eq() {
    _LIB_ASSERTS=$((_LIB_ASSERTS + 1))
    [ "$1" == "$2" ] && return 0
    printf 'assertion failed: %s\n  expected: %s\n  actual:   %s\n' "${3:-assert_eq}" "$1" "$2"
    if [ "$(printf '%s' "$1" | wc -l)" -gt 0 ] || [ "$(printf '%s' "$2" | wc -l)" -gt 0 ]; then
        diff -u <(printf '%s\n' "$1") <(printf '%s\n' "$2") | sed 's/^/  /' | tail -n +3 || true
    fi
    fail "${3:-assert_eq}"
}
# assert_ne UNEXPECTED ACTUAL MSG
assert_ne() {
    _LIB_ASSERTS=$((_LIB_ASSERTS + 1))
    [ "$1" != "$2" ] && return 0
    printf 'assertion failed: %s\n  both are: %s\n' "${3:-assert_ne}" "$1"
    fail "${3:-assert_ne}"
}
# assert_contains HAYSTACK NEEDLE MSG
assert_contains() {
    _LIB_ASSERTS=$((_LIB_ASSERTS + 1))
    case "$1" in *"$2"*) return 0 ;; esac
    printf 'assertion failed: %s\n  looked for: %s\n  in: %s\n' "${3:-assert_contains}" "$2" "$1"
    fail "${3:-assert_contains}"
}
# assert_true MSG CMD... — CMD must succeed
assert_true() {
    local msg="$1"
    shift
    _LIB_ASSERTS=$((_LIB_ASSERTS + 1))
    "$@" >/dev/null && return 0
    printf 'assertion failed: %s\n  command failed: %s\n' "$msg" "$*"
    fail "$msg"
}
# assert_json_eq EXPECTED_JSON ACTUAL_JSON MSG — equal after key sorting
assert_json_eq() {
    local e a
    e="$(printf '%s' "$1" | jq -S .)" || fail "${3:-assert_json_eq}: expected is not JSON: $1"
    a="$(printf '%s' "$2" | jq -S .)" || fail "${3:-assert_json_eq}: actual is not JSON: $2"
    assert_eq "$e" "$a" "${3:-assert_json_eq}"
}
# wait_until SECONDS MSG CMD... — poll CMD (every 0.2s) until it succeeds, else fail
wait_until() {
    local secs="$1" msg="$2" i
    shift 2
    for ((i = 0; i < secs * 5; i++)); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.2
    done
    # WAIT_UNTIL_DIAG: a command whose output says why (wait_checkpoint's)
    local diag=""
    [ -z "${WAIT_UNTIL_DIAG:-}" ] || diag="$(eval "$WAIT_UNTIL_DIAG" 2>&1)
"
    # (what a daemon of the test said last: the usual reason, and the
    # `wait_until ... || fail "..."` branches after it never run)
    if [ -n "${DAEMON_LOG:-}" ]; then
        fail "timed out after ${secs}s: $msg; $diag$DAEMON_LOG ends with:
$(_daemon_tail)"
    fi
    fail "timed out after ${secs}s: $msg${diag:+; $diag}"
}

# ---------------------------------------------------------------- MariaDB
# mysql_q SQL [DB] — run SQL as root, batch mode: tab-separated, no headers.
mysql_q() {
    mariadb --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -u root \
        --batch --skip-column-names --default-character-set=utf8mb4 \
        ${2:+--database="$2"} -e "$1"
}
# mysql_file FILE [DB] — run a SQL file as root.
mysql_file() {
    mariadb --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -u root \
        --default-character-set=utf8mb4 ${2:+--database="$2"} <"$1"
}
# mysql_repl_q SQL — run SQL as the replication user (MYSQL_USER).
mysql_repl_q() {
    mariadb --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -u "$MYSQL_USER" \
        -p"$MYSQL_PASSWORD" --batch --skip-column-names -e "$1"
}
# lock_table DB.TABLE — hold LOCK TABLES ... WRITE from a session of its own
# (until unlock_table, at most 120 s), so that reads of the table wait on it;
# returns once the lock is held.
_LIB_LOCK_TAG="held_lock_$$"
_lock_holder_id() {
    mysql_q "SELECT id FROM information_schema.PROCESSLIST WHERE info LIKE 'SELECT SLEEP(120) AS $_LIB_LOCK_TAG%'"
}
lock_table() {
    mysql_q "LOCK TABLES $1 WRITE; SELECT SLEEP(120) AS $_LIB_LOCK_TAG" >/dev/null 2>&1 &
    _LIB_LOCK_PID=$!
    on_exit "kill $_LIB_LOCK_PID 2>/dev/null"
    wait_until 20 "the lock on $1 is held" has_output _lock_holder_id
}
# unlock_table — end the session lock_table holds (its lock goes with it).
unlock_table() {
    mysql_q "KILL $(_lock_holder_id)"
    wait "$_LIB_LOCK_PID" 2>/dev/null || true
}
# lock_waiter TABLE — the id of a session waiting on the lock of TABLE, if any.
lock_waiter() {
    mysql_q "SELECT id FROM information_schema.PROCESSLIST WHERE state LIKE 'Waiting for table metadata lock%'
             AND info LIKE '%$1%' AND info NOT LIKE '%PROCESSLIST%'" | head -1
}
# has_output CMD... — CMD prints something (for wait_until)
has_output() { [ -n "$("$@")" ]; }
# mysql_binlog_pos — "file<TAB>position" of the current binlog end.
mysql_binlog_pos() { mysql_q 'SHOW MASTER STATUS' | cut -f1,2; }
# wait_checkpoint META_DB SOURCE [SECS] — wait until `searchsync run`'s saved
# checkpoint of SOURCE is at or past the binlog's end as it is now. The
# checkpoint is delivery's low-water mark, so then every change committed
# before has been acknowledged by the engine, whatever queue it went through
# (a change to one document being visible says nothing about the others).
# On a timeout it says where the checkpoint stands, what the binlog holds
# after it and, when the test set DAEMON_ADMIN="URL TOKEN" for the daemon,
# its delivery's and reader's metrics: the why of a stuck low-water mark.
wait_checkpoint() {
    local f p
    read -r f p <<<"$(mysql_binlog_pos)"
    WAIT_UNTIL_DIAG="_checkpoint_diag '$1' '$2' '$f' '$p'" \
        wait_until "${3:-60}" "checkpoint of $2 at or past $f:$p" _checkpoint_past "$1" "$2" "$f" "$p"
}
_checkpoint_diag() { # META SOURCE FILE POS
    local c cf cp url tok
    c="$(mysql_q "SELECT position FROM \`$1\`.offsets WHERE source = '$2'" 2>&1)"
    echo "saved checkpoint of $2: ${c:-(none)}; binlog end then $3:$4, now $(mysql_binlog_pos | tr '\t' :)"
    cf="${c%%;gtid=*}" cp="${cf##*:}" cf="${cf%:*}"
    if [ -n "$c" ] && [ -n "$cp" ]; then
        echo "the binlog after it (first 40 events: file pos type server end info):"
        mysql_q "SHOW BINLOG EVENTS IN '$cf' FROM $cp LIMIT 40" 2>&1 | cut -c1-200
    fi
    echo "the server's open transactions (thread state started waiting-since query):"
    mysql_q "SELECT trx_mysql_thread_id, trx_state, trx_started, trx_wait_started,
                    LEFT(REPLACE(IFNULL(trx_query, '-'), '\n', ' '), 150)
             FROM information_schema.innodb_trx" 2>&1
    if [ -n "${DAEMON_ADMIN:-}" ]; then
        read -r url tok <<<"$DAEMON_ADMIN"
        echo "the daemon's live figures (GET /api/v1/live: low-water mark, streams, reader):"
        curl -s -m 5 -H "Authorization: Bearer $tok" "$url/api/v1/live" 2>&1 | head -c 6000
        echo
        echo "its checkpoint and stream metrics:"
        curl -s -m 5 -H "Authorization: Bearer $tok" "$url/metrics" 2>&1 |
            grep -E '^searchsync_(delivery_stream|delivery_checkpoint|checkpoint|binlog_lag|reader)' | head -60
    fi
}
_checkpoint_past() { # META SOURCE FILE POS
    local c
    c="$(mysql_q "SELECT position FROM \`$1\`.offsets WHERE source = '$2'")"
    c="${c%%;gtid=*}" # [source] versions = gtid: file:pos;gtid=SET
    [ -n "$c" ] || return 1
    [ "${c%:*}" \> "$3" ] || { [ "${c%:*}" = "$3" ] && [ "${c##*:}" -ge "$4" ]; } && return 0
    # with the metadata on the source, a position that moved only past
    # checkpoint saves read back is saved every [delivery]
    # idle_checkpoint_interval_ms: past POS too when the bytes up to it hold
    # nothing but such saves (as `searchsync status` judges "caught up")
    [ "${c%:*}" = "$3" ] && only_checkpoint_saves "$1" "$3" "${c##*:}" "$4"
}
# checkpoint_reached META SOURCE FILE POS — the saved checkpoint of SOURCE is
# at or past FILE:POS, compared as positions only: for a source whose binlog
# holds none of the metadata's writes (the metadata on another server), where
# _checkpoint_past's rule for checkpoint saves would read the wrong binlog
checkpoint_reached() {
    local c
    c="$(mysql_q "SELECT position FROM \`$1\`.offsets WHERE source = '$2'")"
    c="${c%%;gtid=*}"
    [ -n "$c" ] || return 1
    [ "${c%:*}" \> "$3" ] || { [ "${c%:*}" = "$3" ] && [ "${c##*:}" -ge "$4" ]; }
}
# only_checkpoint_saves META FILE FROM TO — the binlog from FROM to TO in FILE
# holds only writes of META.offsets and META.node_states (bookkeeping the
# daemon saves past only once idle: sync/status/status.c has the full rules)
only_checkpoint_saves() {
    mysql_q "SHOW BINLOG EVENTS IN '$2' FROM $3 LIMIT 256" | awk -F'\t' -v meta="$1" -v to="$4" '
        $5 + 0 > to + 0 { exit }
        $3 == "Gtid" || $3 == "Anonymous_Gtid" || $3 == "Annotate_rows" || $3 == "Rows_query" { next }
        $3 == "Query" && $6 == "BEGIN" { next }
        $3 == "Table_map" { if (index($6, "(" meta ".offsets)") == 0 &&
                                 index($6, "(" meta ".node_states)") == 0) bad = 1; next }
        $3 ~ /^(Write|Update)_rows/ { rows = 1; next }
        $3 == "Xid" || ($3 == "Query" && $6 == "COMMIT") { if ($5 + 0 == to + 0) ok = 1; next }
        { bad = 1 }
        END { exit !(ok && rows && !bad) }'
}

# use_mysql8 — from here on the test's server is Oracle's MySQL 8 (tests/
# harness/mysql8.sh, started in $TEST_TMP/server, stopped on exit): mysql_q &
# co. and MYSQL_* name it; the suite's MariaDB is left alone. Skips (a
# failure under CI=true) when this machine cannot run it (the script's exit 3).
use_mysql8() {
    local sdir="$TEST_TMP/server" src=0
    SEARCHSYNC_HARNESS_DIR="$sdir" bash "$HARNESS/mysql8.sh" start >"$TEST_TMP/server-start.log" 2>&1 || src=$?
    on_exit "SEARCHSYNC_HARNESS_DIR='$sdir' bash '$HARNESS/mysql8.sh' stop >/dev/null 2>&1"
    if [ "$src" != 0 ]; then
        cat "$TEST_TMP/server-start.log" >&2
        [ "$src" = 3 ] && skip "this machine cannot run MySQL 8 (tests/harness/mysql8.sh: $(tail -1 "$TEST_TMP/server-start.log"))"
        fail "MySQL 8 did not start"
    fi
    . "$sdir/mysql8.env"
    on_exit '[ "$rc" = 0 ] || { echo "--- MySQL log (last 15 lines)"; tail -15 "$MYSQL_LOG"; }'
}

# ---------------------------------------------------------------- more source servers
# Tests with several sources (servers) of their own, beside the suite's
# MariaDB (which keeps the metadata): each one tests/harness/mariadb.sh (or
# mysql8.sh) in $TEST_TMP/servers/NAME, on a free port, with a small buffer
# pool, stopped on the test's exit.
#   extra_mariadb NAME... [-- MYSQL8_NAME...]  start them (in parallel; the
#                                names after -- are Oracle's MySQL 8), wait
#                                until each is ready
#   extra_port NAME              its TCP port
#   extra_q NAME SQL [DB]        SQL as root there (batch mode, as mysql_q)
#   extra_ctl NAME ACTION        the harness script's kill|restart|stop|pause|resume|status on it
#   extra_binlog_pos NAME        "file<TAB>position" of its binlog's end
#   extra_kind NAME              mariadb or mysql8
extra_mariadb() {
    local n pids=() names=() i=0 bad="" kind=mariadb
    for n in "$@"; do
        if [ "$n" = -- ]; then kind=mysql8; continue; fi
        mkdir -p "$TEST_TMP/servers/$n"
        echo "$kind" >"$TEST_TMP/servers/$n/kind"
        on_exit "SEARCHSYNC_HARNESS_DIR='$TEST_TMP/servers/$n' bash '$HARNESS/$kind.sh' stop >/dev/null 2>&1"
        SEARCHSYNC_HARNESS_DIR="$TEST_TMP/servers/$n" MARIADB_EXTRA_ARGS="--innodb-buffer-pool-size=64M" \
            MYSQL8_EXTRA_ARGS="--innodb-buffer-pool-size=64M" MYSQL8_SERVER_ID=$((2 + ${#names[@]})) \
            bash "$HARNESS/$kind.sh" start >"$TEST_TMP/servers/$n.start.log" 2>&1 &
        pids+=($!)
        names+=("$n")
    done
    for n in "${names[@]}"; do
        wait "${pids[$i]}" || { bad="$bad $n"; cat "$TEST_TMP/servers/$n.start.log" >&2; }
        i=$((i + 1))
    done
    [ -z "$bad" ] || fail "source server(s)$bad did not start"
}
extra_kind() { cat "$TEST_TMP/servers/$1/kind"; }
_extra_env() { (. "$TEST_TMP/servers/$1/$(extra_kind "$1").env" && eval "echo \"\$$2\""); }
extra_port() { _extra_env "$1" MYSQL_PORT; }
extra_q() {
    mariadb --no-defaults -h 127.0.0.1 -P "$(extra_port "$1")" -u root \
        --batch --skip-column-names --default-character-set=utf8mb4 \
        ${3:+--database="$3"} -e "$2"
}
extra_ctl() { SEARCHSYNC_HARNESS_DIR="$TEST_TMP/servers/$1" H_RESTART=1 bash "$HARNESS/$(extra_kind "$1").sh" "$2"; }
extra_binlog_pos() { extra_q "$1" 'SHOW MASTER STATUS' | cut -f1,2; }

# import_one_table ALIAS DB.TABLE [CONFIG] — the mapping of one index of one
# table, every column as the generator proposes (1 shard, no replica),
# imported with CONFIG (default $TEST_TMP/c.ini)
import_one_table() {
    echo '{"version":1,"indices":[{"alias":"'"$1"'","shards":1,"replicas":0,"tables":[{"table":"'"$2"'"}]}]}' >"$TEST_TMP/m.json"
    "$SEARCHSYNC_BIN" mapping import --config "${3:-$TEST_TMP/c.ini}" "$TEST_TMP/m.json" --yes >"$TEST_TMP/import.out" 2>&1 ||
        fail "import: $(cat "$TEST_TMP/import.out")"
}

# readme_block NAME — the code block after <!-- own-db:NAME --> in README.md
readme_block() {
    awk -v m="<!-- own-db:$1 -->" '$0 == m {f = 1; next} f == 1 && /^```/ {f = 2; next}
        f == 2 && /^```/ {exit} f == 2 {print}' "$SEARCHSYNC_SRCDIR/README.md"
}
# readme_sql NAME USER PW — that block run on the test's server as root, the
# README's 'searchsync'@ user and its change-me password made USER and PW
# (the SQL run is kept as $TEST_TMP/NAME.sql)
readme_sql() {
    readme_block "$1" | sed "s/'searchsync'@/'$2'@/g; s/change-me/$3/" >"$TEST_TMP/$1.sql"
    [ -s "$TEST_TMP/$1.sql" ] || fail "README.md has no code block after <!-- own-db:$1 -->"
    mysql_file "$TEST_TMP/$1.sql" || fail "the README's SQL failed: $(cat "$TEST_TMP/$1.sql")"
}

# ---------------------------------------------------------------- the daemon
# `searchsync run` in the background, one at a time per test:
#   daemon_start CONFIG LOG [ARGS] start it (run ARGS), its output appended to LOG; sets
#                                DAEMON (its pid) and DAEMON_LOG; SIGKILLed on
#                                the test's exit if it still runs then
#   daemon_wait_ready [SECS]     until this start's reader is connected (its
#                                "syncing N index config(s)" line): with start
#                                = now, each change committed after it is read
#   daemon_wait_log TEXT [SECS]  until this start has logged a line holding TEXT
#   daemon_alive                 it runs (one that exited does not, reaped or not)
#   daemon_stop                  SIGTERM (drain, checkpoint), wait for its exit;
#                                DAEMON_RC = its exit status
#   daemon_kill                  SIGKILL (no drain, no checkpoint), wait for it
#   daemon_wait_exit [SECS]      wait for it to exit by itself; DAEMON_RC = status
# The waits fail at once, with the log's tail, should the daemon exit
# meanwhile; daemon_stop and daemon_kill fail if it already had.
DAEMON=""
DAEMON_LOG=""
DAEMON_RC=""
_DAEMON_PIDS=()
_DAEMON_LOG_AT=0
daemon_start() {
    [ $# -ge 2 ] || fail "daemon_start CONFIG LOG [RUN-ARGS...]: got $*"
    if [ -z "${_DAEMON_HOOKED:-}" ]; then # (hooked here, not at load: it runs
        _DAEMON_HOOKED=1                  # before the test's earlier cleanups)
        on_exit _daemon_kill_all
    fi
    DAEMON_LOG="$2"
    _DAEMON_LOG_AT="$(stat -c %s "$2" 2>/dev/null || echo 0)"
    "$SEARCHSYNC_BIN" run --config "$1" "${@:3}" >>"$2" 2>&1 &
    DAEMON=$!
    _DAEMON_PIDS+=("$DAEMON")
}
_daemon_kill_all() {
    local p
    for p in ${_DAEMON_PIDS[@]+"${_DAEMON_PIDS[@]}"}; do kill -9 "$p" 2>/dev/null; done
    return 0
}
_daemon_reaped() { # the pid was waited for: it may be reused, never kill it again
    local p keep=()
    for p in ${_DAEMON_PIDS[@]+"${_DAEMON_PIDS[@]}"}; do [ "$p" = "$1" ] || keep+=("$p"); done
    _DAEMON_PIDS=(${keep[@]+"${keep[@]}"})
}
# _daemon_log_since — what the daemon logged since its last daemon_start
_daemon_log_since() { tail -c +$((_DAEMON_LOG_AT + 1)) "$DAEMON_LOG" 2>/dev/null; }
_daemon_tail() { tail -20 "$DAEMON_LOG" 2>/dev/null; }
daemon_alive() {
    local s
    [ -n "$DAEMON" ] && kill -0 "$DAEMON" 2>/dev/null || return 1
    [ -r "/proc/$DAEMON/stat" ] || return 0 # (no /proc: kill -0 has to do)
    s="$(sed 's/^.*) //' "/proc/$DAEMON/stat" 2>/dev/null | cut -d' ' -f1)"
    [ -n "$s" ] && [ "$s" != Z ]
}
daemon_wait_log() {
    local text="$1" secs="${2:-30}" i
    [ -n "$DAEMON" ] || fail "daemon_wait_log: no daemon started"
    for ((i = 0; i < secs * 5; i++)); do
        _daemon_log_since | grep -qF -- "$text" && return 0
        if ! daemon_alive; then
            _daemon_log_since | grep -qF -- "$text" && return 0
            fail "the daemon exited before it logged \"$text\"; $DAEMON_LOG ends with:
$(_daemon_tail)"
        fi
        sleep 0.2
    done
    fail "timed out after ${secs}s waiting for the daemon to log \"$text\"; $DAEMON_LOG ends with:
$(_daemon_tail)"
}
daemon_wait_ready() { daemon_wait_log "index config(s) of source" "${1:-30}"; }
daemon_stop() {
    kill -TERM "$DAEMON" 2>/dev/null ||
        fail "the daemon (pid ${DAEMON:-none}) had exited before its SIGTERM; $DAEMON_LOG ends with:
$(_daemon_tail)"
    DAEMON_RC=0
    wait "$DAEMON" || DAEMON_RC=$?
    _daemon_reaped "$DAEMON"
}
daemon_kill() {
    kill -9 "$DAEMON" 2>/dev/null ||
        fail "the daemon (pid ${DAEMON:-none}) had exited before its SIGKILL; $DAEMON_LOG ends with:
$(_daemon_tail)"
    wait "$DAEMON" 2>/dev/null || true
    _daemon_reaped "$DAEMON"
}
daemon_wait_exit() {
    local secs="${1:-30}" i
    for ((i = 0; i < secs * 5; i++)); do
        daemon_alive || break
        sleep 0.2
    done
    daemon_alive && fail "the daemon did not stop within ${secs}s; $DAEMON_LOG ends with:
$(_daemon_tail)"
    DAEMON_RC=0
    wait "$DAEMON" || DAEMON_RC=$?
    _daemon_reaped "$DAEMON"
}

# ---------------------------------------------------------------- matrices
# matrix_run OUTDIR ROW_FN FLAVOUR... — a matrix test (t_engines, t_source_versions):
# each flavour runs as `bash $0 one FLAVOUR RESFILE N` (its log indented into
# this one); exit 0 passes, 3 means this machine cannot run it (its server
# could not be had), anything else fails. ROW_FN FLAVOUR RESULT SECONDS
# RESFILE prints that flavour's TSV (header and row: OUTDIR/FLAVOUR.tsv, for
# scripts/compat-doc.sh) and logs its line. Ends the test: fail if one
# failed, else skip if one was unavailable (a failure under CI=true), else pass.
matrix_run() {
    local out="$1" row="$2" fl res t0 frc secs result n=0
    shift 2
    local failed=() unavailable=()
    mkdir -p "$out"
    for fl in "$@"; do
        n=$((n + 1))
        res="$TEST_TMP/$fl.env"
        t0=$(date +%s)
        log "---- $fl"
        set +e
        bash "$0" one "$fl" "$res" "$n" >"$TEST_TMP/$fl.log" 2>&1
        frc=$?
        set -e
        secs=$(($(date +%s) - t0))
        sed "s/^/  [$fl] /" "$TEST_TMP/$fl.log" >&2
        case "$frc" in
            0) result=pass ;;
            3) result=unavailable; unavailable+=("$fl") ;;
            *) result=fail; failed+=("$fl") ;;
        esac
        "$row" "$fl" "$result" "$secs" "$res" >"$out/$fl.tsv"
        _LIB_ASSERTS=$((_LIB_ASSERTS + 1))
    done
    [ ${#failed[@]} = 0 ] || fail "failed on: ${failed[*]} (results in $out)"
    [ ${#unavailable[@]} = 0 ] || skip "this machine cannot run: ${unavailable[*]} (see the log; results in $out)"
    pass
}
# the searchsync build a matrix row was measured with
matrix_build() { git -C "$SEARCHSYNC_SRCDIR" describe --always --dirty 2>/dev/null || echo unknown; }

# ---------------------------------------------------------------- search engine
# es7_start — Elasticsearch 7.10.2 of this test's own (tests/harness/engine.sh
# ENGINE=elasticsearch-7, in $TEST_TMP/es, 1 GB heap), stopped on exit; its
# URL into ES7_URL. Skips when this machine cannot run it (exit 3).
es7_start() {
    local edir="$TEST_TMP/es" erc=0
    ENGINE_HEAP=1g ENGINE=elasticsearch-7 SEARCHSYNC_ENGINE_DIR="$edir" bash "$HARNESS/engine.sh" start >"$TEST_TMP/engine.log" 2>&1 || erc=$?
    on_exit "ENGINE=elasticsearch-7 SEARCHSYNC_ENGINE_DIR='$edir' bash '$HARNESS/engine.sh' stop >/dev/null 2>&1"
    [ "$erc" = 0 ] || { cat "$TEST_TMP/engine.log"; [ "$erc" = 3 ] && skip "this machine cannot run Elasticsearch 7.10.2 (see above)"; fail "Elasticsearch 7.10.2 did not start"; }
    ES7_URL="$(. "$edir/engine.env"; printf '%s' "$ENGINE_URL")"
    assert_eq 7.10.2 "$(curl -s "$ES7_URL/" | jq -r .version.number)" "engine version"
}
# search_req METHOD PATH [BODY] — print the response body; fails on HTTP >= 400
# (body printed to stderr) unless SEARCH_ALLOW_ERROR=1.
search_req() {
    local method="$1" path="$2" body="${3-}" out code
    local args=(-sS -m 60 -X "$method" -o "$TEST_TMP/.search_body" -w '%{http_code}')
    if [ $# -ge 3 ]; then
        case "$path" in */_bulk*|*/_msearch*) args+=(-H 'Content-Type: application/x-ndjson') ;;
                        *) args+=(-H 'Content-Type: application/json') ;; esac
        args+=(--data-binary "$body")
    fi
    code="$(curl "${args[@]}" "$SEARCH_URL$path")" || fail "search $method $path: curl failed"
    out="$(cat "$TEST_TMP/.search_body")"
    if [ "$code" -ge 400 ] && [ -z "${SEARCH_ALLOW_ERROR:-}" ]; then
        printf 'search %s %s -> HTTP %s\n%s\n' "$method" "$path" "$code" "$out" >&2
        return 1
    fi
    printf '%s\n' "$out"
}
search_get()    { search_req GET "$1"; }
search_post()   { search_req POST "$1" "${2-}"; }
search_put()    { search_req PUT "$1" "${2-}"; }
search_delete() { search_req DELETE "$1"; }
# search_refresh INDEX
search_refresh() { search_req POST "/$1/_refresh" >/dev/null; }
# search_count INDEX [QUERY_JSON] — number of documents (refreshes first)
search_count() {
    local q='{"query":{"match_all":{}}}'
    [ -z "${2:-}" ] || q="$2"
    search_refresh "$1"
    search_req POST "/$1/_count" "$q" | jq -r .count
}
# search_doc INDEX ID [ROUTING] — the _source of one document, or empty if absent
search_doc() {
    SEARCH_ALLOW_ERROR=1 search_req GET "/$1/_doc/$2${3:+?routing=$3}" | jq -c 'select(.found == true) | ._source'
}

# unique_name PREFIX — a name no other test run uses (for databases, indices):
# the test's pid and the microsecond of the call. A random number alone can
# give two cases of one test the same alias (1 in 32768 a pair), and the
# second case's daemon then finds the first's index behind it.
unique_name() { printf '%s_%s_%s\n' "$1" "$$" "${EPOCHREALTIME/[.,]/}"; }
# notify_listen — systemd's side of sd_notify: a datagram socket at $sock
# (start the daemon with NOTIFY_SOCKET="$sock"), every datagram appended to
# $TEST_TMP/notes, one per line (newlines inside shown as |), stopped on exit;
# pings counts the watchdog pings so far, pinged N: at least N
notify_listen() {
    sock="$TEST_TMP/notify.sock"
    python3 - "$sock" "$TEST_TMP/notes" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "w", buffering=1) as out:
    while True:
        msg = s.recv(4096).decode()
        out.write(msg.replace("\n", "|") + "\n")
PY
    on_exit "kill $! 2>/dev/null"
    wait_until 10 "the notify socket is bound" test -S "$sock"
}
pings() { grep -c '^WATCHDOG=1$' "$TEST_TMP/notes" || true; }
pinged() { [ "$(pings)" -ge "$1" ]; }

# status_schema_check JSON_FILE — the file against docs/status.schema.json,
# strictly: every object of it may carry only the keys the schema describes
# (the schema leaves clients free to meet new keys; the output may not have
# keys the schema does not document). Debian's python3-jsonschema
# (tests/harness/deps.sh) serves /usr/bin/python3; another python3 first in
# PATH may lack it.
status_schema_check() {
    local p
    if [ -z "${_LIB_SCHEMA_PY:-}" ]; then
        for p in /usr/bin/python3 python3; do
            if "$p" -c 'import jsonschema' 2>/dev/null; then _LIB_SCHEMA_PY="$p"; break; fi
        done
        [ -n "${_LIB_SCHEMA_PY:-}" ] || fail "python3's jsonschema module is needed (apt-get install python3-jsonschema)"
    fi
    "$_LIB_SCHEMA_PY" - "$SEARCHSYNC_SRCDIR/docs/status.schema.json" "$1" <<'PY'
import json, sys, jsonschema
def strict(node):
    if isinstance(node, dict):
        if "properties" in node and "additionalProperties" not in node:
            node["additionalProperties"] = False
        for v in node.values():
            strict(v)
    elif isinstance(node, list):
        for v in node:
            strict(v)
schema = json.load(open(sys.argv[1]))
strict(schema)
jsonschema.validate(json.load(open(sys.argv[2])), schema)
PY
}

# free_port — a port for a daemon's listener: the harness's (below the
# kernel's ephemeral range, and never handed out twice across the suite's
# lanes). A port the kernel hands out for a bind to 0 lies in that range,
# where any outgoing connection may take it before the daemon binds it.
free_port() { ( . "$HARNESS/common.sh"; h_free_port ); }
