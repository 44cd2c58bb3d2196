#!/usr/bin/env bash
# tests/integration/t_source_outage.sh — `searchsync run` outlives the servers
# it depends on, against real MariaDB + OpenSearch (+ ZooKeeper), the demo
# shop synced under a writer (random_ops, tests/fixtures/random_ops.sql) and
# every document compared with the SQL oracle (oracle_lib.sh) after each
# outage:
#
#   default layout  the checkpoints in the metadata schema on the source
#                   server itself: the source SIGKILLed for OUTAGE_S (12 s,
#                   three times the 4 s a lock may go unconfirmed under the
#                   test's session_timeout_ms of 6 s; 180 s with
#                   SEARCHSYNC_LONG=1) and restarted. The daemon
#                   never exits, says once that it waits for its reader lock
#                   and once that it goes on; meanwhile GET /api/v1/status
#                   answers 200 naming what is down, and `status --json`
#                   prints its object (docs/status.schema.json) and exits 3;
#                   a change made right after the return is in the engine
#                   within seconds
#   SIGTERM         ends the wait at once (no drain: exit 1, saying why);
#                   the next start loses nothing
#   separate metadata  the checkpoints on a second MariaDB (tests/harness/
#                   mariadb.sh): the source SIGKILLed for OUTAGE_S (the lock
#                   stays confirmed); then the metadata server SIGKILLed for
#                   10 s while the source and the writer go on: the daemon
#                   reads nothing past what it can save (a change made while
#                   the lock is unconfirmed stays out of the engine until the
#                   lock is back), holds what it queued after 2/3 of
#                   session_timeout_ms, and goes on
#   taken           a second daemon stands by; the reader's lock connection
#                   is killed until that one takes the lock: the first steps
#                   down at once (exit 1, naming the taker), the second syncs
#   ZooKeeper       a cluster reader cut off from ZooKeeper (the server
#                   SIGKILLed and restarted past 2/3 of the session timeout)
#                   waits and goes on with its session, instead of exiting
# OUTAGE_KEEP_DIR: where the daemons' logs are kept (else on a failure only).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
require_bin
PY=""
for p in /usr/bin/python3 python3; do
    if "$p" -c 'import jsonschema' 2>/dev/null; then PY="$p"; break; fi
done
[ -n "$PY" ] || fail "python3's jsonschema module is needed (apt-get install python3-jsonschema)"
[ -n "${ZK_HOSTS:-}" ] || fail "the harness did not start ZooKeeper (ZK_HOSTS unset)"

OUTAGE_S=12
[ -n "${SEARCHSYNC_LONG:-}" ] && OUTAGE_S=180
META_DOWN_S=10
CATCHUP_MAX_S=${OUTAGE_CATCHUP_MAX_S:-30}
SEED="${SEARCHSYNC_SEED:-$(( (RANDOM << 15 | RANDOM) % 1000000 ))}"
log "seed $SEED, source outages of $OUTAGE_S s, metadata outage of $META_DOWN_S s"

D="$(unique_name oshop)"
meta="$(unique_name ometa)"
meta2="$(unique_name ometa2)"
P="$(unique_name oprod)" B="$(unique_name obrand)" M="$(unique_name omark)"
P2="$(unique_name oprod2)" B2="$(unique_name obrand2)" M2="$(unique_name omark2)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$D\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -m 30 -XDELETE '$SEARCH_URL/${P}_v*,${B}_v*,${M}_v*,${P2}_v*,${B2}_v*,${M2}_v*?ignore_unavailable=true' >/dev/null"
# whatever happens, the suite's servers are up again at the end
on_exit "bash '$HARNESS/servers.sh' status mariadb >/dev/null 2>&1 || bash '$HARNESS/servers.sh' restart mariadb >/dev/null 2>&1; bash '$HARNESS/servers.sh' status zookeeper >/dev/null 2>&1 || bash '$HARNESS/servers.sh' restart zookeeper >/dev/null 2>&1"
# the daemons' logs are kept on a failure (in /tmp), and always when
# OUTAGE_KEEP_DIR names where
on_exit 'if [ "$rc" != 0 ] || [ -n "${OUTAGE_KEEP_DIR:-}" ]; then keep="${OUTAGE_KEEP_DIR:-/tmp}/t_source_outage-$SEED-$$"; mkdir -p "$keep" && cp "$TEST_TMP"/*.log "$keep"/ 2>/dev/null; echo "--- seed $SEED; the logs: $keep"; fi'
on_exit '[ "$rc" = 0 ] || { for f in "$TEST_TMP"/*.log; do echo "--- $f (last 25 lines)"; tail -25 "$f"; done; }'

bash "$SEARCHSYNC_SRCDIR/sql/demo/generate.sh" --products 200 --db "$D" \
    --host "$MYSQL_HOST" --port "$MYSQL_PORT" >"$TEST_TMP/gen.out" 2>&1 || {
    cat "$TEST_TMP/gen.out"; fail "generate.sh failed"; }
mysql_file "$SEARCHSYNC_SRCDIR/tests/fixtures/random_ops.sql" "$D" || fail "loading random_ops.sql"
# the markers: a table the writer never touches, an index of its own read
# from the same binlog
mysql_q "CREATE TABLE \`$D\`.marks (id INT PRIMARY KEY, v VARCHAR(100)); INSERT INTO \`$D\`.marks VALUES (1, 'none')"
mapping() { # PRODUCTS BRANDS MARKS — the demo mapping (oracle_lib.sh) and the markers' index
    oracle_demo_mapping "$D" "$1" "$2" '.indices += [{"alias": "'"$3"'", "shards": 1, "replicas": 0,
        "tables": [{"table": "'"$D"'.marks", "columns": [{"name": "id", "type": "long", "key": true},
                    {"name": "v", "type": "keyword"}]}]}]'
}
TOKEN="$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')"
APORT="$(free_port)"
config() { # FILE NODE_ID SERVER_ID [EXTRA INI LINES...]
    local f="$1" node="$2" sid="$3"
    shift 3
    cat >"$f" <<INI
[source]
name = outage
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $sid
start = now
heartbeat_ms = 500
[metadata]
database = $meta
reload_interval_ms = 500
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
[cluster]
node_id = $node
session_timeout_ms = 6000
[admin]
listen = 127.0.0.1:$APORT
token = $TOKEN
[log]
level = info
INI
    local l
    for l in "$@"; do printf '%s\n' "$l" >>"$f"; done
}
ini_set() { # FILE SECTION KEY VALUE — a key set in its section (added when missing)
    python3 - "$@" <<'PY'
import sys
f, sec, key, val = sys.argv[1:5]
out, cur, done = [], None, False
for line in open(f).read().splitlines():
    s = line.strip()
    if s.startswith("["):
        if cur == sec and not done:
            out.append(f"{key} = {val}"); done = True
        cur = s[1:-1]
    elif cur == sec and s.split("=")[0].strip() == key:
        line, done = f"{key} = {val}", True
    out.append(line)
if not done:
    if cur != sec: out.append(f"[{sec}]")
    out.append(f"{key} = {val}")
open(f, "w").write("\n".join(out) + "\n")
PY
}
validate() { # JSON_FILE — docs/status.schema.json, strictly (no key it does not describe)
    "$PY" - "$SEARCHSYNC_SRCDIR/docs/status.schema.json" "$1" <<'PY'
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

# ---- the writer: random_ops calls of 8 operations (about 6 transactions),
# 10 a second at most; a call the server does not take (it is down) is not
# retried, the next one goes when it is back
WSTOP="$TEST_TMP/writer.stop"
writer_start() {
    rm -f "$WSTOP"
    (
        i=0 ok=0
        while [ ! -e "$WSTOP" ]; do
            i=$((i + 1))
            if mariadb --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -u root --connect-timeout=2 \
                -D "$D" -e "SET @rop_txn_pct = 75; CALL random_ops($((SEED * 10000 + WRITER_BASE + i)), 8)" \
                >/dev/null 2>&1; then
                ok=$((ok + 1))
            fi
            sleep 0.1
            echo "$ok $i" >"$WSTOP.count"
        done
    ) &
    WRITER=$!
    on_exit "kill $WRITER 2>/dev/null"
}
writer_stop() {
    touch "$WSTOP"
    wait "$WRITER" 2>/dev/null || true
    local ok n
    read -r ok n <"$WSTOP.count"
    log "writer: $ok of $n random_ops calls taken"
    WRITER_BASE=$((WRITER_BASE + n))
}
WRITER_BASE=0

# a marker written (retried while the server is away), and whether the
# engine has it: the reader read that far
marker_n=0
mark() { # sets MARKED to the marker's text
    marker_n=$((marker_n + 1))
    MARKED="outage marker $marker_n"
    until mysql_q "UPDATE \`$D\`.marks SET v = '$MARKED' WHERE id = 1" 2>/dev/null; do sleep 0.1; done
}
in_engine() { # ALIAS TEXT — the marker's document says TEXT
    curl -s -m 5 "$SEARCH_URL/$1/_doc/1" | jq -e --arg n "$2" '._source.v == $n' >/dev/null
}

api_status() { # OUTFILE — GET /api/v1/status; prints the HTTP code
    curl -s -m 20 -o "$1" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
        "http://127.0.0.1:$APORT/api/v1/status"
}
alive_through() { # SECONDS WHAT — the daemon runs every second of SECONDS
    local i
    for ((i = 0; i < $1; i++)); do
        daemon_alive || fail "the daemon exited $i s into $2: $(_daemon_tail)"
        sleep 1
    done
    _LIB_ASSERTS=$((_LIB_ASSERTS + 1))
}
count_in() { grep -cF -- "$2" "$1" || true; }

# ================= default layout: the metadata on the source server
config "$TEST_TMP/a.ini" outage-a 7471
mapping "$P" "$B" "$M" >"$TEST_TMP/m1.json"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/a.ini" "$TEST_TMP/m1.json" --yes \
    >"$TEST_TMP/import.out" 2>&1 || fail "import: $(cat "$TEST_TMP/import.out")"
daemon_start "$TEST_TMP/a.ini" "$TEST_TMP/a.log"
daemon_wait_log "$P: live changes no longer written to ${P}_v1" 120
daemon_wait_log "$B: live changes no longer written to ${B}_v1" 60
daemon_wait_log "$M: live changes no longer written to ${M}_v1" 60
writer_start
sleep 5
log "SIGKILL of the source (and metadata) server for $OUTAGE_S s"
bash "$HARNESS/servers.sh" kill mariadb >/dev/null
t_kill=$(date +%s)
daemon_wait_log "the reader lock of source outage cannot be confirmed" 20
code="$(api_status "$TEST_TMP/st-a.json")"
assert_eq 200 "$code" "GET /api/v1/status while the source and metadata server are down: 200"
assert_eq "false false false" "$(jq -r '"\(.ok) \(.metadata.reachable) \(.source.reachable)"' "$TEST_TMP/st-a.json")" \
    "the status says the metadata and the source are down"
assert_eq 2 "$(jq '[.errors[] | select(startswith("metadata: ") or startswith("source: "))] | length' "$TEST_TMP/st-a.json")" \
    "its errors name the metadata server and the source"
validate "$TEST_TMP/st-a.json" || fail "the status of an outage does not match docs/status.schema.json"
st=0; "$SEARCHSYNC_BIN" status --config "$TEST_TMP/a.ini" --json >"$TEST_TMP/st-a2.json" 2>"$TEST_TMP/st-a2.err" || st=$?
assert_eq 3 "$st" "status --json while the source is down: exit 3"
validate "$TEST_TMP/st-a2.json" || fail "status --json of an outage does not match docs/status.schema.json"
assert_eq false "$(jq .metadata.reachable "$TEST_TMP/st-a2.json")" "status --json: the metadata is unreachable"
st=0; "$SEARCHSYNC_BIN" status --config "$TEST_TMP/a.ini" >"$TEST_TMP/st-a3.txt" 2>&1 || st=$?
assert_eq 1 "$st" "status (text) while the source is down: exit 1 (a server could not be asked)"
assert_contains "$(cat "$TEST_TMP/st-a3.txt")" "checkpoint  not known: the metadata server cannot be read" "status (text) says what it cannot know"
alive_through $((t_kill + OUTAGE_S - $(date +%s))) "the source outage (default layout)"
log "restarting the source server after $(( $(date +%s) - t_kill )) s"
bash "$HARNESS/servers.sh" restart mariadb >"$TEST_TMP/restart.out" 2>&1 || { cat "$TEST_TMP/restart.out"; fail "mariadb restart"; }
t_back=$(date +%s%N)
mark
wait_until "$CATCHUP_MAX_S" "the change made at the return is in the engine" in_engine "$M" "$MARKED"
took=$(( ($(date +%s%N) - t_back) / 1000000 ))
wait_checkpoint "$meta" outage "$CATCHUP_MAX_S"
took_ck=$(( ($(date +%s%N) - t_back) / 1000000 ))
log "default layout: a change made at the source's return reached the engine $took ms after the return, the checkpoint passed it after $took_ck ms"
daemon_wait_log "the reader lock of source outage is confirmed again" 30
sleep 5 # the writer goes on after the return
writer_stop
wait_checkpoint "$meta" outage 60
oracle_check_products "$D" "$P" "a $OUTAGE_S s source outage, default layout"
assert_eq 1 "$(count_in "$TEST_TMP/a.log" "cannot be confirmed")" "the wait is said once"
assert_eq 1 "$(count_in "$TEST_TMP/a.log" "is confirmed again")" "going on is said once"
assert_eq 0 "$(count_in "$TEST_TMP/a.log" "this node steps down")" "no step-down"
daemon_stop
assert_eq 0 "$DAEMON_RC" "the daemon stops cleanly after the outage"

# ================= SIGTERM ends the wait (default layout)
daemon_start "$TEST_TMP/a.ini" "$TEST_TMP/e.log"
daemon_wait_ready 60
writer_start
sleep 3
log "SIGKILL of the source server, then SIGTERM of the waiting daemon"
bash "$HARNESS/servers.sh" kill mariadb >/dev/null
daemon_wait_log "is still unconfirmed" 30 # its sends are held too now
t_term=$(date +%s%N)
kill -TERM "$DAEMON"
daemon_wait_exit 20
took=$(( ($(date +%s%N) - t_term) / 1000000 ))
log "SIGTERM during the wait: the daemon exited $DAEMON_RC after $took ms"
assert_eq 1 "$DAEMON_RC" "stopped without its last checkpoint: exit 1"
assert_contains "$(cat "$TEST_TMP/e.log")" "drain skipped (the reader lock is unconfirmed" "the stop says why it did not drain"
assert_contains "$(cat "$TEST_TMP/e.log")" "searchsync run: stopped while the reader lock of source outage could not be confirmed" "and its last word says what happens to the queue"
bash "$HARNESS/servers.sh" restart mariadb >"$TEST_TMP/restart.out" 2>&1 || { cat "$TEST_TMP/restart.out"; fail "mariadb restart"; }
writer_stop
daemon_start "$TEST_TMP/a.ini" "$TEST_TMP/e.log"
daemon_wait_ready 60
wait_checkpoint "$meta" outage 60
oracle_check_products "$D" "$P" "a stop during the wait, and a start after it"
daemon_stop
assert_eq 0 "$DAEMON_RC" "the daemon stops cleanly"
# ================= the metadata on a server of its own
MB="$TEST_TMP/mdb"
mb_ctl() { env -u MYSQL_HOST -u MYSQL_PORT SEARCHSYNC_HARNESS_DIR="$MB" bash "$HARNESS/mariadb.sh" "$1"; }
mb_ctl start >"$TEST_TMP/mdb-start.out" 2>&1 || fail "the metadata's MariaDB did not start: $(tail -5 "$TEST_TMP/mdb-start.out")"
on_exit "env -u MYSQL_HOST -u MYSQL_PORT SEARCHSYNC_HARNESS_DIR='$MB' bash '$HARNESS/mariadb.sh' stop >/dev/null 2>&1"
MB_PORT="$(. "$MB/mariadb.env"; echo "$MYSQL_PORT")"
mb_q() { mariadb --no-defaults -h 127.0.0.1 -P "$MB_PORT" -u root --batch --skip-column-names -e "$1"; }
# the reader's own account on it, so that its connections can be told apart
mb_q "CREATE USER 'outage_a'@'%' IDENTIFIED BY 'outage-a'; GRANT ALL ON *.* TO 'outage_a'@'%'"
config "$TEST_TMP/b.ini" outage-a 7472
ini_set "$TEST_TMP/b.ini" metadata database "$meta2"
ini_set "$TEST_TMP/b.ini" metadata host 127.0.0.1
ini_set "$TEST_TMP/b.ini" metadata port "$MB_PORT"
cp "$TEST_TMP/b.ini" "$TEST_TMP/s2.ini" # the second daemon: root on the metadata server
ini_set "$TEST_TMP/s2.ini" source server_id 7474
ini_set "$TEST_TMP/b.ini" metadata user outage_a
ini_set "$TEST_TMP/b.ini" metadata password outage-a
mapping "$P2" "$B2" "$M2" >"$TEST_TMP/m2.json"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/b.ini" "$TEST_TMP/m2.json" --yes \
    >"$TEST_TMP/import2.out" 2>&1 || fail "import: $(cat "$TEST_TMP/import2.out")"
daemon_start "$TEST_TMP/b.ini" "$TEST_TMP/b.log"
A2=$DAEMON
daemon_wait_log "$P2: live changes no longer written to ${P2}_v1" 120
daemon_wait_log "$B2: live changes no longer written to ${B2}_v1" 60
daemon_wait_log "$M2: live changes no longer written to ${M2}_v1" 60
ckpt2_past() { # FILE POS — the checkpoint on the metadata server is at or past FILE:POS
    local c
    c="$(mb_q "SELECT position FROM \`$meta2\`.offsets WHERE source = 'outage'")"
    [ -n "$c" ] || return 1
    [ "${c%:*}" \> "$1" ] || { [ "${c%:*}" = "$1" ] && [ "${c##*:}" -ge "$2" ]; }
}
caught_up2() { # [SECS] — ... past the source's binlog end as it is now
    local f p
    read -r f p <<<"$(mysql_binlog_pos)"
    wait_until "${1:-60}" "checkpoint at or past $f:$p" ckpt2_past "$f" "$p"
}

# ---- the source down, the metadata up
writer_start
sleep 5
log "SIGKILL of the source server for $OUTAGE_S s (the metadata elsewhere)"
bash "$HARNESS/servers.sh" kill mariadb >/dev/null
t_kill=$(date +%s)
alive_through "$OUTAGE_S" "the source outage (separate metadata)"
bash "$HARNESS/servers.sh" restart mariadb >"$TEST_TMP/restart.out" 2>&1 || { cat "$TEST_TMP/restart.out"; fail "mariadb restart"; }
t_back=$(date +%s%N)
mark
wait_until "$CATCHUP_MAX_S" "the change made at the return is in the engine" in_engine "$M2" "$MARKED"
took=$(( ($(date +%s%N) - t_back) / 1000000 ))
caught_up2 "$CATCHUP_MAX_S"
took_ck=$(( ($(date +%s%N) - t_back) / 1000000 ))
log "separate metadata: a change made at the source's return reached the engine $took ms after the return, the checkpoint passed it after $took_ck ms"
sleep 5 # the writer goes on after the return
writer_stop
caught_up2
oracle_check_products "$D" "$P2" "a $OUTAGE_S s source outage, separate metadata"
assert_eq 0 "$(count_in "$TEST_TMP/b.log" "cannot be confirmed")" "with the metadata up, the lock stays confirmed"

# ---- the metadata server down, the source up, the writer on
writer_start
sleep 3
log "SIGKILL of the metadata server for $META_DOWN_S s"
mb_ctl kill >/dev/null
t_kill=$(date +%s)
daemon_wait_log "the reader lock of source outage cannot be confirmed" 20
sleep 2
mark # read nothing past what it can save: this change waits for the lock
HELD_MARK="$MARKED"
code="$(api_status "$TEST_TMP/st-b.json")"
assert_eq 200 "$code" "GET /api/v1/status with the metadata server down: 200"
assert_eq "false false true" "$(jq -r '"\(.ok) \(.metadata.reachable) \(.source.reachable)"' "$TEST_TMP/st-b.json")" \
    "the status says the metadata server is down and the source is up"
assert_ne null "$(jq .source.binlog_end "$TEST_TMP/st-b.json")" "the binlog's end is still said"
validate "$TEST_TMP/st-b.json" || fail "the status without the metadata does not match docs/status.schema.json"
alive_through $((t_kill + META_DOWN_S - $(date +%s))) "the metadata outage"
assert_true "a change made while the lock was unconfirmed is not in the engine before the lock is back" \
    bash -c "! curl -s -m 5 '$SEARCH_URL/$M2/_doc/1' | jq -e --arg n '$HELD_MARK' '._source.v == \$n' >/dev/null"
assert_contains "$(cat "$TEST_TMP/b.log")" "is still unconfirmed" "after 2/3 of the session timeout, what is queued waits too"
mb_ctl restart >"$TEST_TMP/mdb-restart.out" 2>&1 || { cat "$TEST_TMP/mdb-restart.out"; fail "metadata restart"; }
t_back=$(date +%s%N)
wait_until "$CATCHUP_MAX_S" "the change held while the lock was unconfirmed is in the engine" in_engine "$M2" "$HELD_MARK"
took=$(( ($(date +%s%N) - t_back) / 1000000 ))
log "metadata outage: the held change reached the engine $took ms after the metadata server's return"
daemon_wait_log "the reader lock of source outage is confirmed again" 30
sleep 5 # the writer goes on after the return
writer_stop
caught_up2
oracle_check_products "$D" "$P2" "a $META_DOWN_S s metadata outage"
assert_eq 1 "$(count_in "$TEST_TMP/b.log" "cannot be confirmed")" "the wait is said once"
assert_eq 1 "$(count_in "$TEST_TMP/b.log" "is confirmed again")" "going on is said once"

# ---- a second daemon takes the lock: the reader steps down at once
ini_set "$TEST_TMP/s2.ini" cluster node_id outage-s2
ini_set "$TEST_TMP/s2.ini" admin listen ""
b_at="$(stat -c %s "$TEST_TMP/b.log")"
daemon_start "$TEST_TMP/s2.ini" "$TEST_TMP/s2.log"
S2=$DAEMON
daemon_wait_log "this one stands by" 60
lock_conn() { # the reader's connection holding the lock, if it is the reader's
    mb_q "SELECT ID FROM information_schema.PROCESSLIST WHERE USER = 'outage_a'
          AND ID = IS_USED_LOCK(CONCAT('searchsync:reader:', MD5('outage')))"
}
kills=0
for ((i = 0; i < 100; i++)); do
    grep -q "this daemon (outage-s2) reads the binlog" "$TEST_TMP/s2.log" && break
    c="$(lock_conn)"
    [ -z "$c" ] || { mb_q "KILL $c" 2>/dev/null || true; kills=$((kills + 1)); }
    sleep 0.3
done
grep -q "this daemon (outage-s2) reads the binlog" "$TEST_TMP/s2.log" || fail "the standby never took the lock ($kills kills)"
t_taken=$(date +%s%N)
log "the standby took the lock after $kills kill(s) of the reader's lock connection"
DAEMON=$A2 DAEMON_LOG="$TEST_TMP/b.log"
daemon_wait_exit 15
took=$(( ($(date +%s%N) - t_taken) / 1000000 ))
log "the reader stepped down $took ms after the standby took its lock"
assert_eq 1 "$DAEMON_RC" "the reader whose lock was taken exits 1"
# what it saw: the lock held by the other (its check), or the other's token
# in the checkpoint (a save of its own found it first)
if grep -q "this node steps down" "$TEST_TMP/b.log"; then
    assert_contains "$(grep "this node steps down" "$TEST_TMP/b.log")" "by another daemon (outage-s2" "it says it saw the other daemon holding its lock, and names it"
    assert_contains "$(cat "$TEST_TMP/b.log")" "searchsync run: this node no longer reads source outage: the reader lock" "its last word says why"
else
    assert_contains "$(cat "$TEST_TMP/b.log")" "source outage is read by another node now" "it says it saw the other's token"
fi
assert_eq 0 "$(tail -c +$((b_at + 1)) "$TEST_TMP/b.log" | grep -cF "cannot be confirmed" || true)" "taken is not mistaken for unreachable"
DAEMON=$S2 DAEMON_LOG="$TEST_TMP/s2.log"
mark
wait_until 60 "the daemon that took the lock syncs" in_engine "$M2" "$MARKED"
caught_up2
oracle_check_products "$D" "$P2" "after the reader lock changed hands"
daemon_stop
assert_eq 0 "$DAEMON_RC" "the new reader stops cleanly"

# ================= a cluster reader cut off from ZooKeeper
config "$TEST_TMP/z.ini" outage-z 7473
ini_set "$TEST_TMP/z.ini" cluster zookeeper "$ZK_HOSTS"
ini_set "$TEST_TMP/z.ini" cluster name "$(unique_name oc)"
ini_set "$TEST_TMP/z.ini" cluster session_timeout_ms 6000
daemon_start "$TEST_TMP/z.ini" "$TEST_TMP/z.log"
daemon_wait_log "node outage-z reads the binlog of source outage" 60
daemon_wait_ready 60
mark
wait_until 120 "the cluster reader syncs (after the backlog of the phases above)" in_engine "$M" "$MARKED"
log "SIGKILL of ZooKeeper past 2/3 of the session timeout"
bash "$HARNESS/servers.sh" kill zookeeper >/dev/null
daemon_wait_log "it is cut off from ZooKeeper" 20
sleep 1
mark # nothing is read while it is cut off
HELD_MARK="$MARKED"
alive_through 6 "the ZooKeeper outage"
assert_true "a change made while cut off from ZooKeeper is not in the engine before it is back" \
    bash -c "! curl -s -m 5 '$SEARCH_URL/$M/_doc/1' | jq -e --arg n '$HELD_MARK' '._source.v == \$n' >/dev/null"
bash "$HARNESS/servers.sh" restart zookeeper >"$TEST_TMP/zk-restart.out" 2>&1 || { cat "$TEST_TMP/zk-restart.out"; fail "zookeeper restart"; }
daemon_wait_log "reaches ZooKeeper again" 60
wait_until "$CATCHUP_MAX_S" "the change held while cut off is in the engine" in_engine "$M" "$HELD_MARK"
assert_eq 1 "$(count_in "$TEST_TMP/z.log" "it is cut off from ZooKeeper")" "the wait is said once"
assert_eq 0 "$(count_in "$TEST_TMP/z.log" "this node steps down")" "no step-down: its session lived"
wait_checkpoint "$meta" outage 60
oracle_check_products "$D" "$P" "a cluster reader cut off from ZooKeeper"
daemon_stop
assert_eq 0 "$DAEMON_RC" "the cluster reader stops cleanly"

pass
