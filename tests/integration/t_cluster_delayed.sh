#!/usr/bin/env bash
# tests/integration/t_cluster_delayed.sh — a delayed run's bucket jobs
# spread over two nodes of a real ZooKeeper cluster (job type
# `job`), on the demo shop:
#
#   handed out  `searchsync delayed-run --page 40` with [cluster] zookeeper
#               claims and resolves the run, and hands its 4 bucket jobs to
#               the nodes, which page them by 40 ids as the run says:
#               the reader's rebalance gives 2 to node A, 2 to node B (the
#               standby); status --json lists them with their node and
#               rows read, node B's entity has job type `job`
#   node dies   B SIGKILLed once it saved a cursor of one of its jobs
#               (pages held by a test-only pause): after its session
#               expires A takes B's jobs over from their cursors
#               (broken_by_rebalance), every id counted once
#   once        the run ends once (one row done, one sync_log line), every
#               snapshot done, every product equals the SQL oracle (every
#               category renamed: every product refreshed)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
require_bin
[ -n "${ZK_HOSTS:-}" ] || fail "the harness did not start ZooKeeper (ZK_HOSTS unset)"
products=2000
bash "$SEARCHSYNC_SRCDIR/sql/demo/generate.sh" --products "$products" >/dev/null
meta="$(unique_name meta)"
cluster="$(unique_name c)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/products_v*,brands_v*?ignore_unavailable=true' >/dev/null"
source=shop engine_url="$SEARCH_URL"
config() { cluster_config "$1" "$2" "$3" 4 1000 4000; } # FILE NODE SERVER_ID
config "$TEST_TMP/a.ini" node-a 7381
config "$TEST_TMP/b.ini" node-b 7382
token="$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
port="$(free_port)"
printf '[admin]\nlisten = 127.0.0.1:%s\ntoken = %s\n' "$port" "$token" >>"$TEST_TMP/a.ini"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/a.ini" "$SEARCHSYNC_SRCDIR/sql/demo/mapping.json" --yes >"$TEST_TMP/import.out" 2>&1 ||
    fail "import: $(cat "$TEST_TMP/import.out")"
q() { mysql_q "$1"; }
live() { [ "$(q "SELECT COUNT(*) FROM \`$meta\`.index_configs WHERE current_version = 1")" = 2 ]; }

# each page of a delayed job held 250 ms (tests only), on both nodes; its
# size, 40 ids, comes from the run (delayed-run --page below)
export SEARCHSYNC_TEST_DELAYED_PAUSE_MS=250
daemon_start "$TEST_TMP/a.ini" "$TEST_TMP/a.log"; A=$DAEMON
daemon_wait_log "node-a reads the binlog of source shop" 60
wait_until 90 "both indices are live" live
daemon_start "$TEST_TMP/b.ini" "$TEST_TMP/b.log"; B=$DAEMON
daemon_wait_log "this node stands by" 30
unset SEARCHSYNC_TEST_DELAYED_PAUSE_MS
DAEMON=$A; DAEMON_LOG="$TEST_TMP/a.log"
DAEMON_ADMIN="http://127.0.0.1:$port $token" # wait_checkpoint's diagnosis reads A's metrics
on_exit '[ "$rc" = 0 ] || { echo "--- node A (last 40 lines)"; tail -40 "$TEST_TMP/a.log"; echo "--- node B"; tail -40 "$TEST_TMP/b.log"; }'

# every category renamed: one snapshot per category, every product affected
q "UPDATE shop.categories SET name = CONCAT('Renamed ', name)"
wait_checkpoint "$meta" shop 30
nsnap="$(q "SELECT COUNT(*) FROM \`$meta\`.change_snapshots WHERE status = 'init'")"
assert_eq "$(q 'SELECT COUNT(*) FROM shop.categories')" "$nsnap" "one snapshot per category"
naff="$(q 'SELECT COUNT(*) FROM shop.products WHERE category_id IS NOT NULL')"

# ---- handed out: claimed and resolved here, run by the nodes
st=0; "$SEARCHSYNC_BIN" delayed-run --config "$TEST_TMP/a.ini" --buckets 4 --page 40 --max-attempts 5 \
    >"$TEST_TMP/run.out" 2>&1 || st=$?
assert_eq 0 "$st" "delayed-run exits 0 ($(cat "$TEST_TMP/run.out"))"
assert_eq "40 5" "$(q "SELECT page, max_attempts FROM \`$meta\`.delayed_runs ORDER BY id DESC LIMIT 1" | tr '\t' ' ')" \
    "the run keeps --page and --max-attempts for the nodes"
assert_contains "$(cat "$TEST_TMP/run.out")" "4 job(s) handed to the nodes of cluster $cluster" "the command hands the jobs to the cluster"
run="$(q "SELECT id FROM \`$meta\`.delayed_runs ORDER BY id DESC LIMIT 1")"
jobs_of() { q "SELECT COUNT(*) FROM \`$meta\`.jobs WHERE type = 'job' AND owner_node = '$1' AND params = '{\"delayed_run\":$run}'"; }
split() { [ "$(jobs_of node-a)" = 2 ] && [ "$(jobs_of node-b)" = 2 ]; }
wait_until 20 "the rebalance gives 2 jobs to each node" split
b_saved() {
    [ "$(q "SELECT COUNT(*) FROM \`$meta\`.jobs WHERE type = 'job' AND owner_node = 'node-b'
            AND rows_read > 0 AND status = 'running'")" -ge 1 ]
}
wait_until 30 "node B saved a cursor of one of its jobs" b_saved
# (the jobs go on meanwhile: status's figure lies between the table's just
# before and just after it; one read after status failed under load)
b_rows() { q "SELECT SUM(rows_read) FROM \`$meta\`.jobs WHERE type = 'job' AND owner_node = 'node-b'"; }
rows_before="$(b_rows)"
"$SEARCHSYNC_BIN" status --config "$TEST_TMP/a.ini" --json >"$TEST_TMP/status.json" 2>/dev/null || true
rows_after="$(b_rows)"
assert_eq 2 "$(jq "[.job_list[] | select(.type == \"job\" and .delayed_run == $run and .node == \"node-b\")] | length" "$TEST_TMP/status.json")" \
    "status --json lists B's two delayed jobs with their node and run"
rows_status="$(jq "[.job_list[] | select(.type == \"job\" and .node == \"node-b\") | .rows_read] | add" "$TEST_TMP/status.json")"
assert_true "and their progress ($rows_before <= $rows_status <= $rows_after)" \
    test "$rows_before" -le "$rows_status" -a "$rows_status" -le "$rows_after"
assert_eq 0 "$(q "SELECT COUNT(*) FROM \`$meta\`.delayed_runs WHERE id = $run AND status <> 'running'")" "the run is under way"
entity_b="$(curl -s -H "Authorization: Bearer $token" "http://127.0.0.1:$port/api/v1/nodes" | jq -c '.nodes[] | select(.node == "node-b") | .entity')"
assert_eq 'job INIT 2' "$(jq -r '"\(.job_type) \(.node_status) \([.jobs[] | select(.type == "job" and .delayed_run == '"$run"')] | length)"' <<<"$entity_b")" \
    "node B's entity: job type job, INIT, its two jobs of the run ($entity_b)"

# ---- node B dies mid-job
DAEMON=$B; DAEMON_LOG="$TEST_TMP/b.log"; daemon_kill
DAEMON=$A; DAEMON_LOG="$TEST_TMP/a.log"
log "node B killed; the run's jobs then (bucket owner rows status):
$(q "SELECT bucket, owner_node, rows_read, status FROM \`$meta\`.jobs WHERE params = '{\"delayed_run\":$run}' ORDER BY bucket")"
run_done() { [ "$(q "SELECT status FROM \`$meta\`.delayed_runs WHERE id = $run")" = done ]; }
wait_until 60 "the run ends on node A" run_done
q "SELECT bucket, owner_node, rows_read, broken_by_rebalance, status FROM \`$meta\`.jobs WHERE params = '{\"delayed_run\":$run}' ORDER BY bucket" >"$TEST_TMP/jobs"
log "the run's jobs (bucket owner rows broken status):
$(cat "$TEST_TMP/jobs")"
assert_eq 4 "$(awk '$2 == "node-a" && $5 == "done"' "$TEST_TMP/jobs" | wc -l)" "node A ended every job"
assert_true "B's interrupted job is marked broken by the rebalance" \
    test "$(awk '$4 == 1' "$TEST_TMP/jobs" | wc -l)" -ge 1
assert_eq "$naff" "$(awk '{s += $3} END {print s + 0}' "$TEST_TMP/jobs")" \
    "every product counted once: B's saved pages were not read again"
assert_eq 1 "$(q "SELECT COUNT(*) FROM \`$meta\`.sync_log WHERE event = 'delayed_run' AND JSON_VALUE(detail, '\$.run') = $run")" \
    "the run ended once (one sync_log line)"
assert_eq 0 "$(q "SELECT COUNT(*) FROM \`$meta\`.change_snapshots WHERE status <> 'done'")" "every snapshot done"
assert_eq 0 "$(q "SELECT COUNT(*) FROM \`$meta\`.delayed_run_ids WHERE run_id = $run")" "the run's ids cleared"
# the nodes paged as the run said: every page of at most 40 ids (each page
# says its test pause in its node's log), so at least naff / 40 of them
pages="$(cat "$TEST_TMP/a.log" "$TEST_TMP/b.log" | grep -c 'delayed-run: test pause of 250 ms after position')"
assert_true "the nodes built pages of at most 40 ids (--page 40): $pages page(s) for $naff products" \
    test "$pages" -ge $(( (naff + 39) / 40 ))
wait_checkpoint "$meta" shop 30
oracle_check_products shop products "after the delayed run over two nodes, one killed"
daemon_stop
assert_eq 0 "$DAEMON_RC" "node A stops cleanly"
pass
