#!/usr/bin/env bash
# tests/integration/t_run_notify.sh — `searchsync run` under systemd's notify
# protocol (Type=notify with READY and WATCHDOG), with a
# real AF_UNIX datagram socket standing in for systemd's (the protocol is
# all systemd sees) and real MariaDB + OpenSearch: READY=1 once started,
# STATUS lines for the waits, WATCHDOG=1 pings at half WATCHDOG_USEC while
# it runs, STOPPING=1 at SIGTERM, and a clean exit.
. "$(dirname "$0")/lib.sh"
require_bin
db="$(unique_name nt)"
meta="$(unique_name meta)"
alias="$(unique_name nt)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
mysql_q "CREATE DATABASE \`$db\`; CREATE TABLE \`$db\`.t (id INT PRIMARY KEY, v VARCHAR(20)); INSERT INTO \`$db\`.t VALUES (1, 'a')"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = nt
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $((7450 + $$ % 40))
start = now
[metadata]
database = $meta
[search]
urls = $SEARCH_URL
INI
import_one_table "$alias" "$db.t"

# systemd's side of sd_notify (lib.sh)
notify_listen

NOTIFY_SOCKET="$sock" WATCHDOG_USEC=1000000 daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
wait_until 30 "READY=1 arrives" grep -q '^READY=1' "$TEST_TMP/notes" || fail "no READY: $(cat "$TEST_TMP/notes")"
wait_until 30 "the status says it reads the binlog" grep -qx 'STATUS=reading the binlog of source nt' "$TEST_TMP/notes" ||
    fail "statuses: $(cat "$TEST_TMP/notes")"
assert_eq "READY=1|STATUS=waiting for the search engine" "$(grep -m1 '^READY' "$TEST_TMP/notes")" "READY with the first status"
# pings every 500 ms: count them over the next 10 pings' time
n0=$(pings)
wait_until 10 "4 more watchdog pings" pinged $((n0 + 4))
assert_eq "" "$(grep -v -E '^(READY=1\|STATUS=.*|STATUS=.*|WATCHDOG=1|STOPPING=1\|STATUS=.*)$' "$TEST_TMP/notes")" "only READY, STATUS, WATCHDOG and STOPPING messages"
grep -q 'pinging systemd.s watchdog every 500 ms' "$TEST_TMP/run.log" || fail "the watchdog's period is not in the log"
daemon_stop
assert_eq 0 "$DAEMON_RC" "a clean exit"
wait_until 5 "STOPPING reaches the listener" grep -q '^STOPPING' "$TEST_TMP/notes"
assert_eq "STOPPING=1|STATUS=stopping: draining the delivery queues" "$(grep '^STOPPING' "$TEST_TMP/notes")" "STOPPING at SIGTERM"
pass
