#!/usr/bin/env bash
# tests/integration/t_tail_reconnect.sh — `tail` survives the server being
# killed (SIGKILL) and restarted mid-stream, and its dump connection being
# KILLed: it reconnects with backoff, resumes from the last complete
# transaction, and neither loses nor repeats a row. Oracle: the rows the
# server has after the run (SELECT), each expected exactly once.
. "$(dirname "$0")/lib.sh"
require_bin

db="$(unique_name searchsync_tr)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`' >/dev/null 2>&1"
SRC="mysql://$MYSQL_USER:$MYSQL_PASSWORD@$MYSQL_HOST:$MYSQL_PORT"
q() { mariadb --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -u root --batch --skip-column-names \
        --connect-timeout=2 --database="$db" -e "$1"; }

mysql_q "CREATE DATABASE \`$db\`"
q "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(200), u INT NOT NULL DEFAULT 0)"
read -r f0 p0 <<<"$(mysql_binlog_pos)"

out="$TEST_TMP/tail.jsonl"
"$SEARCHSYNC_BIN" tail --source "$SRC" --file "$f0" --pos "$p0" --tables "$db.t" --heartbeat-ms 300 \
    >"$out" 2>"$TEST_TMP/tail.err" &
tail_pid=$!
on_exit "kill $tail_pid 2>/dev/null"
on_exit '[ "$rc" = 0 ] || { echo "--- tail: $(wc -l <"$out") lines; its stderr:"; tail -30 "$TEST_TMP/tail.err"; }'

# idempotent transactions, retried until the server takes them
write() {
    local i
    for ((i = $1; i <= $2; i++)); do
        until q "BEGIN; INSERT IGNORE INTO t VALUES ($i, REPEAT('x', 150), 0), ($((i + 100000)), 'pair', 0);
                 UPDATE t SET u = 1 WHERE id = $i; COMMIT;" 2>/dev/null; do
            sleep 0.2
        done
    done
}
write 1 150 &
w1=$!
wait_until 30 "tail streams the first rows" test -s "$out"
bash "$HARNESS/servers.sh" kill mariadb >/dev/null
sleep 1
bash "$HARNESS/servers.sh" restart mariadb >/dev/null
wait $w1
# now kill just the dump connection
wait_until 30 "tail reconnected" grep -q "resumed at" "$TEST_TMP/tail.err"
dump="$(mysql_q "SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%' AND USER='$MYSQL_USER' LIMIT 1")"
write 151 220 &
w2=$!
[ -n "$dump" ] && mysql_q "KILL $dump" || true
wait $w2
write 221 300

n_ins="$(mysql_q "SELECT COUNT(*) FROM \`$db\`.t")"
n_upd="$(mysql_q "SELECT COUNT(*) FROM \`$db\`.t WHERE u = 1")"
assert_eq 600 "$n_ins" "the server has every row"
lines_done() { [ "$(wc -l <"$out")" -ge $((n_ins + n_upd)) ]; }
wait_until 60 "tail caught up ($((n_ins + n_upd)) lines)" lines_done
sleep 1
kill -TERM "$tail_pid"
rc=0
wait "$tail_pid" || rc=$?
assert_eq 0 "$rc" "tail stops cleanly on SIGTERM"
assert_true "tail reported the reconnects on stderr" grep -q "reconnecting" "$TEST_TMP/tail.err"
assert_eq "$((n_ins + n_upd))" "$(wc -l <"$out")" "no extra lines"
assert_eq "" "$(jq -r '"\(.type) \(.after.id)"' "$out" | sort | uniq -d)" "no row repeated"
assert_eq "$(mysql_q "SELECT id FROM \`$db\`.t ORDER BY id")" \
    "$(jq -r 'select(.type=="insert") | .after.id' "$out" | sort -n)" "every inserted row, once"
assert_eq "$(mysql_q "SELECT id FROM \`$db\`.t WHERE u = 1 ORDER BY id")" \
    "$(jq -r 'select(.type=="update") | .after.id' "$out" | sort -n)" "every update, once"
pass
