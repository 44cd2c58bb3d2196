#!/usr/bin/env bash
# tests/integration/t_cluster_leader.sh — one reader per source, two nodes on
# a real ZooKeeper, and two daemons without it:
#
#   failover   node A reads, node B stands by; A SIGKILLed under a steady
#              writer: B takes over within 10 s (from the kill to B's first
#              checkpoint move) and every document equals SQL
#   fencing    B (now the reader) SIGSTOPped past its session, with a bulk
#              request held in flight by a proxy and changes queued behind
#              it: A2 takes over; B SIGCONTed moves no checkpoint (the fence
#              in offsets stays A2's, the position never goes back), sends
#              not one more bulk request once it logs that it is fenced (its
#              queue is A2's to send), and stops, saying so
#   standalone two daemons on one source without ZooKeeper: the second
#              says who reads and stands by (--no-wait: exits 1); the first
#              SIGKILLed, the second takes over once its heartbeat is stale
# With the argument mysql (long_cluster_leader_mysql.sh, make check-long)
# the same with MySQL 8 as the source and the metadata server (the fencing
# token in its offsets, the standalone reader lock its GET_LOCK).
. "$(dirname "$0")/lib.sh"
require_bin
if [ "${1:-}" = mysql ]; then
    TEST_NAME=long_cluster_leader_mysql
    use_mysql8
fi
[ -n "${ZK_HOSTS:-}" ] || fail "the harness did not start ZooKeeper (ZK_HOSTS unset)"
db="$(unique_name cl)"
meta="$(unique_name meta)"
alias="$(unique_name items)"
cluster="$(unique_name c)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}*_v*?ignore_unavailable=true' >/dev/null"
mysql_q "CREATE DATABASE \`$db\`; CREATE TABLE \`$db\`.items (id INT PRIMARY KEY, name VARCHAR(40), n INT)"
config() { # FILE SOURCE NODE_ID ZK SERVER_ID
    cat >"$1" <<INI
[source]
name = $2
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $5
start = now
heartbeat_ms = 300
[metadata]
database = $meta
reload_interval_ms = 500
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 20
checkpoint_interval_ms = 100
[cluster]
zookeeper = $4
name = $cluster
node_id = $3
session_timeout_ms = 4000
[log]
level = info
INI
}
config "$TEST_TMP/a.ini" cl node-a "$ZK_HOSTS" 7331
config "$TEST_TMP/b.ini" cl node-b "$ZK_HOSTS" 7332
# node B writes through a proxy that holds its bulk requests while $flag
# exists (and lists each in $flag.seen), one request at a time (helpers = 1)
# and never gives up on a held one (timeout_ms); its admin API shows its queue
flag="$TEST_TMP/hold"
python3 "$SEARCHSYNC_SRCDIR/tests/tools/fault_proxy.py" "$TEST_TMP/proxy.port" "$SEARCH_URL" \
    POST '/_bulk' "$flag" hold "$alias" 2>"$TEST_TMP/proxy.err" &
on_exit "kill $! 2>/dev/null"
wait_until 10 "the fault proxy listens" test -s "$TEST_TMP/proxy.port"
sed -i -e "s|^urls = .*|urls = http://127.0.0.1:$(cat "$TEST_TMP/proxy.port")\ntimeout_ms = 300000|" \
    -e 's|^\[delivery\]$|[delivery]\nhelpers = 1|' "$TEST_TMP/b.ini"
config "$TEST_TMP/a2.ini" cl node-a2 "$ZK_HOSTS" 7333
token="$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
port="$(free_port)"
printf '[admin]\nlisten = 127.0.0.1:%s\ntoken = %s\n' "$port" "$token" >>"$TEST_TMP/a2.ini"
port_b="$(free_port)"
printf '[admin]\nlisten = 127.0.0.1:%s\ntoken = %s\n' "$port_b" "$token" >>"$TEST_TMP/b.ini"
cat >"$TEST_TMP/m.json" <<JSON
{"version": 1, "indices": [{"alias": "$alias", "shards": 1, "replicas": 0, "tables": [{
  "table": "$db.items", "columns": [{"name": "id", "type": "long", "key": true},
  {"name": "name", "type": "keyword"}, {"name": "n", "type": "long"}]}]}]}
JSON
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/a.ini" "$TEST_TMP/m.json" --yes >"$TEST_TMP/import.out" 2>&1 ||
    fail "import: $(cat "$TEST_TMP/import.out")"
oracle_equal() { # WHAT
    search_refresh "$alias"
    local want have
    want="$(mysql_q "SELECT id, name, n FROM \`$db\`.items ORDER BY id" | md5sum)"
    have="$(search_req POST "/$alias/_search" '{"size":10000,"sort":[{"id":"asc"}]}' |
        jq -r '.hits.hits[]._source | [.id, .name, .n] | @tsv' | md5sum)"
    assert_eq "$want" "$have" "$1: every document equals SQL"
}
fence_of() { mysql_q "SELECT fence FROM \`$meta\`.offsets WHERE source = '$1'"; }

daemon_start "$TEST_TMP/a.ini" "$TEST_TMP/a.log"; A=$DAEMON
daemon_wait_log "node-a reads the binlog of source cl" 60
daemon_wait_ready 120
daemon_start "$TEST_TMP/b.ini" "$TEST_TMP/b.log"; B=$DAEMON
daemon_wait_log "this node stands by" 30
# ---- failover under a steady writer
( for i in $(seq 1 300); do
      mysql_q "INSERT INTO \`$db\`.items VALUES ($i, 'row $i', $i)" || exit 1
      sleep 0.02
  done ) &
writer=$!
sleep 2
DAEMON=$A; DAEMON_LOG="$TEST_TMP/a.log"; daemon_kill
t0=$(date +%s%N)
pos_a="$(mysql_q "SELECT position FROM \`$meta\`.offsets WHERE source = 'cl'")"
DAEMON=$B; DAEMON_LOG="$TEST_TMP/b.log"
daemon_wait_log "node-b reads the binlog of source cl" 15
ckpt_moved() { [ "$(mysql_q "SELECT position FROM \`$meta\`.offsets WHERE source = 'cl'")" != "$pos_a" ]; }
wait_until 15 "node B moves the checkpoint" ckpt_moved
took=$(( ($(date +%s%N) - t0) / 1000000 ))
log "failover: $took ms from the SIGKILL to the new reader's first checkpoint save"
assert_true "failover within 10 s ($took ms)" test "$took" -le 10000
wait "$writer" || fail "the writer failed"
mysql_q "UPDATE \`$db\`.items SET n = n + 1000 WHERE id % 3 = 0"
wait_checkpoint "$meta" cl 30
oracle_equal "after the failover"

# ---- fencing: the reader paused past its session, changes queued
daemon_start "$TEST_TMP/a2.ini" "$TEST_TMP/a2.log"; A2=$DAEMON
daemon_wait_log "this node stands by" 30
touch "$flag" # B's next bulk request is held in flight, the changes after it queue
for i in $(seq 1101 1110); do mysql_q "INSERT INTO \`$db\`.items VALUES ($i, 'queued on B', $i)"; done
b_queued() {
    [ -s "$flag.held" ] && curl -s -H "Authorization: Bearer $token" "http://127.0.0.1:$port_b/api/v1/live" |
        jq -e '.inflight >= 1 and .queued >= 1' >/dev/null
}
wait_until 30 "node B has a request in flight and changes queued behind it" b_queued
kill -STOP "$B"
DAEMON=$A2; DAEMON_LOG="$TEST_TMP/a2.log"
daemon_wait_log "node-a2 reads the binlog of source cl" 30
mysql_q "INSERT INTO \`$db\`.items VALUES (1001, 'while B sleeps', 1)"
wait_checkpoint "$meta" cl 30
fence_a2="$(fence_of cl)"
pos_a2="$(mysql_q "SELECT position FROM \`$meta\`.offsets WHERE source = 'cl'")"
kill -CONT "$B"
DAEMON=$B; DAEMON_LOG="$TEST_TMP/b.log"
b_knows() { grep -q -e "this node steps down" -e "is read by another node now" "$TEST_TMP/b.log"; }
wait_until 30 "the woken reader logs that it is fenced" b_knows
sent="$(wc -l <"$flag.seen")"
rm -f "$flag" # its request in flight goes on to the engine; nothing else may follow it
daemon_wait_exit 30
after=$(( $(wc -l <"$flag.seen") - sent ))
log "bulk requests of the fenced reader after it logged that it is fenced: $after"
assert_eq 0 "$after" "the fenced reader sends nothing more of its queue once it knows"
assert_eq 1 "$DAEMON_RC" "the paused reader exits 1 when it wakes up"
assert_contains "$(cat "$TEST_TMP/b.log")" "this node no longer reads source cl" "and says why"
assert_eq "$fence_a2" "$(fence_of cl)" "the woken reader moved no fence"
# before anything new is written: the woken reader did not move the checkpoint back
pos_now="$(mysql_q "SELECT position FROM \`$meta\`.offsets WHERE source = 'cl'")"
assert_true "the checkpoint only moved forward ($pos_a2 -> $pos_now)" checkpoint_reached "$meta" cl "${pos_a2%:*}" "${pos_a2##*:}"
mysql_q "INSERT INTO \`$db\`.items VALUES (1002, 'after B woke', 2)"
wait_checkpoint "$meta" cl 30
oracle_equal "after the paused reader woke"
nodes="$(curl -s -H "Authorization: Bearer $token" "http://127.0.0.1:$port/api/v1/nodes")"
assert_eq leader "$(jq -r '.nodes[] | select(.node == "node-a2") | .entity.reader' <<<"$nodes")" \
    "GET /api/v1/nodes: node-a2 is the reader"
assert_eq "" "$(jq -r '.nodes[] | select(.node == "node-b") | .node' <<<"$nodes")" \
    "GET /api/v1/nodes: the stopped node-b is gone from the registry"
DAEMON=$A2; DAEMON_LOG="$TEST_TMP/a2.log"; daemon_stop
assert_eq 0 "$DAEMON_RC" "the reader stops cleanly"

# ---- standalone: one reader per source without ZooKeeper
config "$TEST_TMP/s1.ini" solo solo-1 "" 7341
config "$TEST_TMP/s2.ini" solo solo-2 "" 7342
sed "s/\"alias\": \"$alias\"/\"alias\": \"${alias}s\"/" "$TEST_TMP/m.json" >"$TEST_TMP/ms.json"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/s1.ini" "$TEST_TMP/ms.json" --yes >"$TEST_TMP/import2.out" 2>&1 ||
    fail "import solo: $(cat "$TEST_TMP/import2.out")"
daemon_start "$TEST_TMP/s1.ini" "$TEST_TMP/s1.log"; S1=$DAEMON
daemon_wait_log "this daemon (solo-1) reads the binlog of source solo" 60
st=0; "$SEARCHSYNC_BIN" run --config "$TEST_TMP/s2.ini" --no-wait >"$TEST_TMP/s2nowait.log" 2>&1 || st=$?
assert_eq 1 "$st" "--no-wait: a second daemon on the source exits 1"
assert_contains "$(cat "$TEST_TMP/s2nowait.log")" "source solo is read by another daemon (solo-1" "and names the reader"
daemon_start "$TEST_TMP/s2.ini" "$TEST_TMP/s2.log"; S2=$DAEMON
daemon_wait_log "this one stands by" 30
DAEMON=$S1; DAEMON_LOG="$TEST_TMP/s1.log"; daemon_kill
DAEMON=$S2; DAEMON_LOG="$TEST_TMP/s2.log"
daemon_wait_log "this daemon (solo-2) reads the binlog of source solo" 20
mysql_q "INSERT INTO \`$db\`.items VALUES (2001, 'solo', 3)"
wait_until 20 "the standby that took over syncs" bash -c \
    "curl -s '$SEARCH_URL/${alias}s/_doc/2001' | jq -e '._source.name == \"solo\"' >/dev/null"
daemon_stop
pass
