#!/usr/bin/env bash
# tests/integration/t_cluster_rebalance.sh — a reindex's jobs spread over the
# nodes of a real ZooKeeper cluster (the make-check smoke of the rebalance;
# longer, under a writer: tests/integration/long_cluster.sh):
#
#   split      node A reads, node B stands by; a reindex in 4 buckets is
#              split 2 + 2 (from the run's job rows: owner_node), each
#              node's rows read about half, every row read once
#   node dies  node C joins; a reindex in 6 buckets (2 per node) slowed by
#              proxies (each bulk request to the new version 2.5 s late,
#              from C 1 s); B
#              SIGKILLed once it saved a cursor: after its session expires,
#              A rebalances and only B's jobs move, one to each survivor,
#              resumed from their cursors (broken_by_rebalance); A's and
#              C's own jobs stay where they ran, not broken (the sticky
#              split: rebalance/split.c); the version goes live once, every
#              row counted once (no saved page read twice), every document
#              equals SQL
#   commands   searchsync rebalance and POST /api/v1/rebalance answer with
#              the assignment; GET /api/v1/nodes shows the node statuses; the
#              Nodes screen in Chromium shows them and its button rebalances
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
require_bin
[ -n "${ZK_HOSTS:-}" ] || fail "the harness did not start ZooKeeper (ZK_HOSTS unset)"
db="$(unique_name rb)"
meta="$(unique_name meta)"
alias="$(unique_name rbi)"
cluster="$(unique_name c)"
source=rb
rows=8000
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
cluster_items
# every node writes through the proxy: bulk requests to a version being
# built are made slow while $flag exists
flag="$TEST_TMP/slow"
# (A and B 2.5 s a page, C 1 s: when B dies, A has read less of its jobs
# than C, so A's weigh more — the split that went heaviest first over all
# jobs gave one of them to C)
CLUSTER_DELAY_MS=2500 cluster_proxy "$flag"
cluster_config "$TEST_TMP/a.ini" node-a 7351 4 100 4000
cluster_config "$TEST_TMP/b.ini" node-b 7352 4 100 4000
CLUSTER_DELAY_MS=1000 cluster_proxy "$flag" proxy-c
cluster_config "$TEST_TMP/c.ini" node-c 7353 4 100 4000
token="$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
port="$(free_port)"
printf '[admin]\nlisten = 127.0.0.1:%s\ntoken = %s\n' "$port" "$token" >>"$TEST_TMP/a.ini"
cluster_import "$TEST_TMP/a.ini"
q() { mysql_q "$1"; }

daemon_start "$TEST_TMP/a.ini" "$TEST_TMP/a.log"; A=$DAEMON
daemon_wait_log "node-a reads the binlog of source rb" 60
daemon_wait_ready 120
wait_until 60 "the first build is live" is_current 1
daemon_start "$TEST_TMP/b.ini" "$TEST_TMP/b.log"; B=$DAEMON
daemon_wait_log "this node stands by" 30

# ---- split: 4 buckets over 2 nodes
"$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/a.ini" "$alias" --no-wait >"$TEST_TMP/rx2.out" 2>&1 ||
    fail "reindex v2: $(cat "$TEST_TMP/rx2.out")"
wait_until 90 "version 2 is live" is_current 2
run_jobs 2 >"$TEST_TMP/v2.jobs"
log "v2 jobs (bucket owner rows broken status):
$(cat "$TEST_TMP/v2.jobs")"
assert_eq 2 "$(awk '$2 == "node-a"' "$TEST_TMP/v2.jobs" | wc -l)" "node A ran 2 of the 4 jobs"
assert_eq 2 "$(awk '$2 == "node-b"' "$TEST_TMP/v2.jobs" | wc -l)" "node B ran the other 2"
ra="$(awk '$2 == "node-a" {s += $3} END {print s + 0}' "$TEST_TMP/v2.jobs")"
rbr="$(awk '$2 == "node-b" {s += $3} END {print s + 0}' "$TEST_TMP/v2.jobs")"
log "rows read: node A $ra, node B $rbr"
assert_eq "$rows" "$((ra + rbr))" "every row read once"
assert_true "node A read about half ($ra of $rows)" test "$ra" -ge $((rows * 35 / 100)) -a "$ra" -le $((rows * 65 / 100))
oracle_equal "version 2 built by two nodes"

# ---- node dies mid-job: C joins, 6 jobs, 2 per node
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/c.log"; C=$DAEMON
daemon_wait_log "this node stands by" 30
sleep 2 # C counted by the reader (two looks) before the jobs exist
touch "$flag"
"$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/a.ini" "$alias" --buckets 6 --no-wait >"$TEST_TMP/rx3.out" 2>&1 ||
    fail "reindex v3: $(cat "$TEST_TMP/rx3.out")"
b_saved() {
    [ "$(q "SELECT COUNT(*) FROM \`$meta\`.jobs WHERE owner_node = 'node-b' AND version = 3
            AND rows_read > 0 AND status = 'running'")" -ge 1 ]
}
wait_until 60 "node B saved a cursor of a v3 job" b_saved
q "SELECT bucket, owner_node, rows_read, status, data_cursor FROM \`$meta\`.jobs WHERE version = 3 ORDER BY bucket" >"$TEST_TMP/v3.before"
assert_eq "2 2 2" "$(for n in a b c; do awk -v n="node-$n" '$2 == n' "$TEST_TMP/v3.before" | wc -l; done | xargs)" \
    "the 6 v3 jobs run 2 per node"
"$SEARCHSYNC_BIN" status --config "$TEST_TMP/a.ini" --json >"$TEST_TMP/status.json" 2>/dev/null || true
assert_eq 2 "$(jq '[.job_list[] | select(.version == 3 and .node == "node-b")] | length' "$TEST_TMP/status.json")" \
    "status --json lists B's two v3 jobs with their node"
"$SEARCHSYNC_BIN" status --config "$TEST_TMP/a.ini" >"$TEST_TMP/status.txt" 2>/dev/null || true
assert_contains "$(cat "$TEST_TMP/status.txt")" "node-b  standby of source rb, NORMAL INIT" \
    "status: node B runs its jobs (INIT)"
DAEMON=$B; DAEMON_LOG="$TEST_TMP/b.log"; daemon_kill
t0=$(date +%s%N)
b_rows_before="$(awk '$2 == "node-b" {s += $3} END {print s + 0}' "$TEST_TMP/v3.before")"
log "node B killed with $b_rows_before rows saved; v3 jobs then:
$(cat "$TEST_TMP/v3.before")"
DAEMON=$A; DAEMON_LOG="$TEST_TMP/a.log"
b_has_none() {
    [ "$(q "SELECT COUNT(*) FROM \`$meta\`.jobs WHERE version = 3 AND (owner_node = 'node-b' OR owner_node IS NULL)")" = 0 ] ||
        [ "$(current)" = 3 ]
}
wait_until 30 "node A rebalances B's jobs to the survivors" b_has_none
took=$(( ($(date +%s%N) - t0) / 1000000 ))
log "rebalance after the kill: $took ms (session timeout 4000 ms); v3 jobs then:
$(q "SELECT bucket, owner_node, rows_read, status, broken_by_rebalance FROM \`$meta\`.jobs WHERE version = 3 ORDER BY bucket")"
rm -f "$flag"
wait_until 90 "version 3 is live" is_current 3
run_jobs 3 >"$TEST_TMP/v3.jobs"
log "v3 jobs (bucket owner rows broken status):
$(cat "$TEST_TMP/v3.jobs")"
assert_eq 6 "$(awk '($2 == "node-a" || $2 == "node-c") && $5 == "done"' "$TEST_TMP/v3.jobs" | wc -l)" \
    "the survivors ended every job"
# the survivors' own jobs stayed where they ran, not broken; B's went one
# to each survivor and the ones with a cursor are broken by the rebalance
kept="$(awk 'NR == FNR { if ($2 != "node-b") own[$1] = $2; next }
             ($1 in own) { print $1, own[$1], "->", $2, "broken", $4 }' "$TEST_TMP/v3.before" "$TEST_TMP/v3.jobs")"
assert_eq 4 "$(wc -l <<<"$kept")" "A and C each had 2 jobs when B died"
assert_eq 0 "$(awk '$2 != $4 || $6 != 0' <<<"$kept" | wc -l)" \
    "the rebalance after B's death moved none of A's and C's own jobs, none broken: $(xargs <<<"$kept")"
assert_eq 3 "$(awk '$2 == "node-a"' "$TEST_TMP/v3.jobs" | wc -l)" "node A took one of B's jobs"
assert_eq 3 "$(awk '$2 == "node-c"' "$TEST_TMP/v3.jobs" | wc -l)" "node C took the other"
assert_true "B's interrupted jobs are marked broken by the rebalance" \
    test "$(awk '$4 == 1' "$TEST_TMP/v3.jobs" | wc -l)" -ge 1
assert_eq "$rows" "$(awk '{s += $3} END {print s + 0}' "$TEST_TMP/v3.jobs")" \
    "every row counted once: B's saved pages were not read again"
# the node whose job ends last switches (A or C, whichever finished last)
# and logs it after its transaction commits, so the line may come a moment
# after is_current saw version 3
switch_lines() { cat "$TEST_TMP/a.log" "$TEST_TMP/c.log" | grep -c "version 3 live" || true; }
switch_logged() { [ "$(switch_lines)" -ge 1 ]; }
wait_until 30 "node A or C logs the switch" switch_logged
assert_eq 1 "$(switch_lines)" "the switch happened once"
oracle_equal "version 3 after node B died mid-job"

# ---- the commands
st=0; "$SEARCHSYNC_BIN" rebalance --config "$TEST_TMP/a.ini" >"$TEST_TMP/rebalance.out" 2>"$TEST_TMP/rebalance.err" || st=$?
assert_eq 0 "$st" "searchsync rebalance exits 0 ($(cat "$TEST_TMP/rebalance.err"))"
assert_eq '[]' "$(jq -c '."node-a"' "$TEST_TMP/rebalance.out")" "nothing left to run: node A gets no job"
resp="$(curl -s -XPOST -H "Authorization: Bearer $token" "http://127.0.0.1:$port/api/v1/rebalance")"
assert_eq '[]' "$(jq -c '.assign."node-a"' <<<"$resp")" "POST /api/v1/rebalance answers the assignment ($resp)"
node_status() {
    curl -s -H "Authorization: Bearer $token" "http://127.0.0.1:$port/api/v1/nodes" |
        jq -r '.nodes[] | select(.node == "node-a") | .entity | "\(.node_status) \(.cloud_status)"'
}
a_finished() { [ "$(node_status)" = "FINISH NORMAL" ]; }
wait_until 10 "GET /api/v1/nodes: node A has no job left after the rebalance (FINISH, NORMAL)" a_finished
# the Nodes screen in a browser: the status, the rebalance button
. "$(dirname "$0")/ui_lib.sh"
ui_setup
export UI_URL="http://127.0.0.1:$port" TOKEN="$token" SHOTS PW_DIR CHROMIUM NODE_ID=node-a
node "$SEARCHSYNC_SRCDIR/tests/integration/t_cluster_rebalance.mjs" >"$TEST_TMP/browser.out" 2>&1 || {
    cat "$TEST_TMP/browser.out"
    fail "the browser run failed"
}
cat "$TEST_TMP/browser.out"
_LIB_ASSERTS=$((_LIB_ASSERTS + $(grep -c '^ok: ' "$TEST_TMP/browser.out")))
st=0; "$SEARCHSYNC_BIN" rebalance --config "$TEST_TMP/b.ini" --bogus >/dev/null 2>&1 || st=$?
assert_eq 2 "$st" "an unknown option is a usage error"
grep -v '^\[cluster\]\|^zookeeper\|^name = c_\|^node_id\|^session_timeout' "$TEST_TMP/b.ini" >"$TEST_TMP/solo.ini"
st=0; "$SEARCHSYNC_BIN" rebalance --config "$TEST_TMP/solo.ini" >/dev/null 2>"$TEST_TMP/solo.err" || st=$?
assert_eq 2 "$st" "rebalance without [cluster] zookeeper is a configuration error"
assert_contains "$(cat "$TEST_TMP/solo.err")" "no [cluster] zookeeper" "and says so"
daemon_stop
assert_eq 0 "$DAEMON_RC" "node A stops cleanly"
DAEMON=$C; DAEMON_LOG="$TEST_TMP/c.log"; daemon_stop
assert_eq 0 "$DAEMON_RC" "node C stops cleanly"
pass
