#!/usr/bin/env bash
# tests/integration/t_run_signals.sh — every signal of `searchsync run` is
# handled by one thread (src/signals.c): main() blocks them all before any
# thread starts, so each thread it starts later (reader, supervisor,
# delivery's helpers and checkpoint thread, the admin server, the schedules)
# inherits the mask, and one thread takes them with sigwait().
#
# Read from /proc/PID/task/*/status while the daemon runs: every thread but
# one has SIGTERM, SIGINT, SIGHUP and SIGUSR1 in its SigBlk mask (a thread
# that had one unblocked could take a SIGTERM meant for the signal thread, or
# run a handler in the middle of a libcurl or MariaDB call). The one is the
# signal thread: while it waits in sigwait() (rt_sigtimedwait) the kernel
# unblocks the set it waits for, so exactly those four are missing from its
# mask, and it is the one thread in that call. Then a SIGTERM still stops
# the process cleanly: exit 0, the drain complete.
. "$(dirname "$0")/lib.sh"
require_bin
[ -r /proc/self/status ] || skip "no /proc: thread signal masks cannot be read"
case "$(uname -m)" in # rt_sigtimedwait's number, as /proc/PID/task/TID/syscall shows it
    x86_64) SIGWAIT_NR=128 ;;
    aarch64) SIGWAIT_NR=137 ;;
    *) SIGWAIT_NR="" ;;
esac
db="$(unique_name sg)"
meta="$(unique_name meta)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/sg_items_v*?expand_wildcards=all' >/dev/null"
mysql_q "CREATE DATABASE \`$db\`;
  CREATE TABLE \`$db\`.items (id INT PRIMARY KEY, name VARCHAR(50));
  INSERT INTO \`$db\`.items VALUES (1, 'one'), (2, 'two')"
PORT="$(free_port)"
LOGF="$TEST_TMP/run.log"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = sg
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = 7341
start = now
heartbeat_ms = 500
[metadata]
database = $meta
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
[admin]
listen = 127.0.0.1:$PORT
token = 0123456789abcdef0123456789abcdef
[log]
level = info
INI
jq -n --arg db "$db" '{version: 1, indices: [{alias: "sg_items", shards: 1, replicas: 0,
    tables: [{table: ($db + ".items"), columns: [{name: "id", key: true}, {name: "name"}]}]}]}' >"$TEST_TMP/map.json"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/map.json" --yes >"$TEST_TMP/import.out" 2>&1 ||
    fail "import: $(cat "$TEST_TMP/import.out")"
daemon_start "$TEST_TMP/c.ini" "$LOGF"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 40 lines)"; tail -40 "$TEST_TMP/run.log"; }'
daemon_wait_ready 60
wait_until 60 "the first build of sg_items ended" grep -q "sg_items: live changes no longer written to sg_items_v1" "$LOGF"
# a change through the whole path: the reader, delivery's helpers and its
# checkpoint thread have all run
mysql_q "INSERT INTO \`$db\`.items VALUES (3, 'three')"
wait_until 30 "item 3 indexed" has_output search_doc sg_items 3
curl -sf -o /dev/null -H "Authorization: Bearer 0123456789abcdef0123456789abcdef" \
    "http://127.0.0.1:$PORT/metrics" || fail "the admin server does not answer"

# SIGHUP = 1, SIGINT = 2, SIGUSR1 = 10, SIGTERM = 15: bits n-1 of SigBlk
want=$(( (1 << 0) | (1 << 1) | (1 << 9) | (1 << 14) ))
threads=0
unblocked=()  # threads with any of the four missing from SigBlk
open_tid=""   # ... and the one with all four missing
waiting=()    # threads in sigwait()
for st in /proc/"$DAEMON"/task/*/status; do
    tid="$(basename "$(dirname "$st")")"
    blk="$(awk '/^SigBlk:/ {print $2}' "$st" 2>/dev/null)" || continue
    [ -n "$blk" ] || continue # the thread ended meanwhile
    threads=$((threads + 1))
    name="$(cat "/proc/$DAEMON/task/$tid/comm" 2>/dev/null)"
    if (( (0x$blk & want) != want )); then
        unblocked+=("$tid ($name) SigBlk=$blk")
        (( (0x$blk & want) == 0 )) && open_tid="$tid"
    fi
    nr="$(cut -d' ' -f1 "/proc/$DAEMON/task/$tid/syscall" 2>/dev/null || true)"
    wchan="$(cat "/proc/$DAEMON/task/$tid/wchan" 2>/dev/null || true)"
    if { [ -n "$SIGWAIT_NR" ] && [ "$nr" = "$SIGWAIT_NR" ]; } || [[ "$wchan" == *sigtimedwait* ]]; then
        waiting+=("$tid")
    fi
done
log "$threads threads; not blocking SIGTERM, SIGINT, SIGHUP and SIGUSR1: ${unblocked[*]:-none}; in sigwait: ${waiting[*]:-none}"
assert_true "the daemon runs several threads ($threads)" test "$threads" -ge 5
assert_eq 1 "${#unblocked[@]}" "every thread but one blocks SIGTERM, SIGINT, SIGHUP and SIGUSR1 (${unblocked[*]:-})"
assert_ne "" "$open_tid" "the one thread lets all four in (${unblocked[*]:-})"
if [ -z "$SIGWAIT_NR" ] && [ "${#waiting[@]}" = 0 ]; then
    log "no syscall number known for $(uname -m) and no wchan: the sigwait thread is not looked for"
else
    assert_eq "$open_tid" "${waiting[*]:-}" "that thread is the one waiting in sigwait()"
fi

# a SIGTERM still reaches that thread: the process stops cleanly
daemon_stop
assert_eq 0 "$DAEMON_RC" "SIGTERM: exit 0"
assert_contains "$(cat "$LOGF")" "drain complete" "SIGTERM: the daemon drained and stopped"
pass
