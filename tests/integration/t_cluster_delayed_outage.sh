#!/usr/bin/env bash
# t_cluster_delayed_outage — the source's server killed while the nodes of a
# ZooKeeper cluster run a delayed run's jobs (docs/operations.md, "Delayed
# run"; docs/cluster.md, "Delayed-run jobs"). One source, east, on a MariaDB
# server of its own (lib.sh's extra_mariadb; the metadata stays on the
# suite's server), read by node A with node B standing by. Its orders carry
# their status's row of shop.statuses, a delay-effect table (as in
# t_multi_delayed); every label renamed affects every order.
#   handed out  every label renamed; `delayed-run --buckets 4 --page 10
#               --max-attempts 1`: the run's 4 jobs (100 orders each) split
#               over A and B, pages held by the test-only pause
#   outage      east's server SIGKILLed once both nodes saved a cursor: each
#               node's job under way goes back to waiting at its last
#               acknowledged page; the run stays running, no job in error,
#               no snapshot counts an attempt (with --max-attempts 1 one
#               would leave its changes in error for good)
#   1. back     east's server restarted: each node goes on with its own job
#               from its cursor; the run ends done once, every snapshot done
#               with 0 attempts, every order counted once, every document
#               equal to east's SQL oracle; a live change read after it, and
#               `status` exits 0
#   2. node dies  the same again, then node B SIGKILLed while its job
#               waits: the reader's rebalance gives B's jobs to A while east
#               is still down; once east is back A runs all four from their
#               cursors, with the same checks
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
. "$(dirname "$0")/multi_lib.sh"
require_bin
[ -n "${ZK_HOSTS:-}" ] || fail "the harness did not start ZooKeeper (ZK_HOSTS unset)"

SRC=(east)
meta="$(unique_name sscdo)"
alias="$(unique_name orders)"
cluster="$(unique_name c)"
mapping_name="shopcdo_$$"
orders=400
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
on_exit '[ "$rc" = 0 ] || for f in "$TEST_TMP"/*.log; do echo "--- $f (last 40 lines)"; tail -40 "$f"; done'

t0=$(date +%s)
extra_mariadb east
shop_schema east 1 "$orders"
extra_q east "CREATE TABLE statuses (code VARCHAR(16) PRIMARY KEY, label VARCHAR(64) NOT NULL);
  INSERT INTO statuses VALUES ('new', 'New'), ('paid', 'Paid'), ('sent', 'Sent');
  UPDATE orders SET status = ELT(1 + id % 3, 'new', 'paid', 'sent')" shop || fail "statuses on east"
MULTI_ORACLE_FIELDS="'state', JSON_EXTRACT((SELECT JSON_OBJECT('code', s.code, 'label', s.label)
      FROM statuses s WHERE s.code = o.status), '\$')"

# east's documents against its SQL oracle (multi_lib.sh's oracle_of): an
# index of one source has ids without the source's name
check_east() {
    oracle_of east | jq -c '.id |= sub("^east:"; "")' >"$TEST_TMP/east.oracle" ||
        fail "$1: the oracle query on east"
    search_refresh "$alias"
    engine_dump "$alias" "$TEST_TMP/engine.ndjson" 2>"$TEST_TMP/dump.err" || {
        cat "$TEST_TMP/dump.err"; fail "$1: engine dump"; }
    _LIB_ASSERTS=$((_LIB_ASSERTS + 1))
    compare_docs "$TEST_TMP/engine.ndjson" "$TEST_TMP/east.oracle" --numbers value --ignore-field ss_version \
        --ignore-field ss_hash --ignore-field ss_key_hash --ignore-field ss_source --label "$alias ($1)" \
        --show 5 >"$TEST_TMP/cmp.out" || { cat "$TEST_TMP/cmp.out"; fail "$1: $alias differs from east's SQL oracle"; }
    log "$(cat "$TEST_TMP/cmp.out")"
}

config() { # NODE SERVER_ID
    { MULTI_BUCKETS=1 MULTI_POLL_MS=300 source_ini east "$2"
      cat <<INI
[cluster]
zookeeper = $ZK_HOSTS
name = $cluster
node_id = $1
session_timeout_ms = 4000
[log]
level = info
INI
    } >"$TEST_TMP/$1.ini"
}
config node-a 4601
config node-b 4602
shop_mapping "$TEST_TMP/m0.json"
jq '.indices[0].tables[0].relations += [{"column": "status", "table": "shop.statuses",
      "join_column": "code", "extend_name": "state", "refresh_parent": false,
      "columns": [{"name": "code", "type": "keyword"}, {"name": "label", "type": "keyword"}]}]
    | .indices[0].tables += [{"table": "shop.statuses", "delay_effect": true}]' \
    "$TEST_TMP/m0.json" >"$TEST_TMP/m.json"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/node-a.ini" --yes "$TEST_TMP/m.json" \
    >"$TEST_TMP/import.out" 2>&1 || fail "mapping import: $(cat "$TEST_TMP/import.out")"

# each page of a delayed job held 300 ms (tests only), on both nodes, so
# that the server dies with the jobs under way
export SEARCHSYNC_TEST_DELAYED_PAUSE_MS=300
dstart node-a
dwait_log node-a "node-a reads the binlog of source east" 60
wait_until 90 "version 1 of $alias is live" version_is 1
dstart node-b
dwait_log node-b "this node stands by" 30
unset SEARCHSYNC_TEST_DELAYED_PAUSE_MS
check_east "first sync"
log "first sync after $(($(date +%s) - t0)) s"

m_q() { mysql_q "$1" | tr '\t' ' '; }
# the snapshots of the labels renamed last (those after id $snap0)
snaps() { m_q "SELECT status, attempts, COUNT(*) FROM \`$meta\`.change_snapshots WHERE id > $snap0 GROUP BY status, attempts ORDER BY status, attempts"; }
jobs() { m_q "SELECT bucket, owner_node, rows_read, status, COALESCE(error_text, '-') FROM \`$meta\`.jobs WHERE params = '{\"delayed_run\":$run}' ORDER BY bucket"; }
run_is() { [ "$(m_q "SELECT status FROM \`$meta\`.delayed_runs WHERE id = $run")" = "$1" ]; }
both_saved() { # each node saved a cursor of a job it is running
    [ "$(m_q "SELECT COUNT(DISTINCT owner_node) FROM \`$meta\`.jobs WHERE params = '{\"delayed_run\":$run}'
              AND rows_read > 0 AND status = 'running'")" = 2 ]
}
none_running() { # each node's attempt at its job under way ended, one way or the other
    [ "$(m_q "SELECT COUNT(*) FROM \`$meta\`.jobs WHERE params = '{\"delayed_run\":$run}' AND status = 'running'")" = 0 ]
}

# every label renamed (SUFFIX), every order affected; the run handed out,
# both nodes mid-job; then east's server killed
handed_out_then_killed() {
    snap0="$(m_q "SELECT COALESCE(MAX(id), 0) FROM \`$meta\`.change_snapshots")"
    extra_q east "UPDATE statuses SET label = CONCAT(label, ', $1')" shop
    caught_up 30 east
    assert_eq "init 0 3" "$(snaps)" "one snapshot per status, waiting"
    st=0; "$SEARCHSYNC_BIN" delayed-run --config "$TEST_TMP/node-a.ini" --buckets 4 --page 10 --max-attempts 1 \
        >"$TEST_TMP/run.out" 2>&1 || st=$?
    assert_eq 0 "$st" "delayed-run exits 0 ($(cat "$TEST_TMP/run.out"))"
    assert_contains "$(cat "$TEST_TMP/run.out")" "4 job(s) handed to the nodes of cluster $cluster" "the run is handed to the cluster"
    run="$(m_q "SELECT id FROM \`$meta\`.delayed_runs ORDER BY id DESC LIMIT 1")"
    wait_until 40 "both nodes saved a cursor of a job of run $run" both_saved
    extra_ctl east kill >/dev/null 2>&1 || fail "killing east's server"
    log "east's server killed; the jobs of run $run then (bucket owner rows status error):
$(jobs)"
    wait_until 20 "the nodes' jobs under way stop" none_running
    sleep 2 # (the nodes wait on: nothing of the run may move to failed meanwhile)
    log "the jobs of run $run while east is down (bucket owner rows status error):
$(jobs)"
    assert_true "run $run stays running while east is down" run_is running
    assert_eq 0 "$(m_q "SELECT COUNT(*) FROM \`$meta\`.jobs WHERE params = '{\"delayed_run\":$run}' AND (status IN ('error', 'done') AND rows_read < 100 OR errors > 0)")" \
        "no job of run $run failed or ended short"
    assert_eq "running 0 3" "$(snaps)" "the snapshots stay with the run, no attempt counted"
    assert_eq 2 "$(m_q "SELECT COUNT(DISTINCT owner_node) FROM \`$meta\`.jobs WHERE params = '{\"delayed_run\":$run}' AND status = 'init' AND rows_read > 0 AND error_text IS NOT NULL")" \
        "a job of each node waits at its cursor (init, saying why)"
}
# east's server back: run $run ends, once, every order counted once
east_back_run_done() {
    extra_ctl east restart >"$TEST_TMP/east.restart.log" 2>&1 || fail "east's server did not restart: $(tail "$TEST_TMP/east.restart.log")"
    wait_until 60 "run $run ends once east is back" run_is done
    log "the jobs of run $run at its end (bucket owner rows status error):
$(jobs)"
    assert_eq "done 0 3" "$(snaps)" "every snapshot done, none counted an attempt"
    assert_eq "$orders" "$(m_q "SELECT SUM(rows_read) FROM \`$meta\`.jobs WHERE params = '{\"delayed_run\":$run}'")" \
        "every order counted once: the pages acknowledged before the outage were not read again"
    assert_eq "$orders 0" "$(m_q "SELECT docs_written, errors FROM \`$meta\`.delayed_runs WHERE id = $run")" \
        "run $run rebuilt every order, without an error"
    assert_eq 1 "$(m_q "SELECT COUNT(*) FROM \`$meta\`.sync_log WHERE event = 'delayed_run' AND JSON_VALUE(detail, '\$.run') = $run")" \
        "run $run ended once (one sync_log line)"
}
# the documents and status once east is back (a live change read after it
# first: a server restarted without writes since leaves the checkpoint
# behind its new binlog's start, which caught_up would wait for)
documents_and_status() {
    extra_q east "UPDATE orders SET customer = '$1' WHERE id = 7" shop
    caught_up 30 east
    check_east "$1: every order refreshed"
    st=0; "$SEARCHSYNC_BIN" status --config "$TEST_TMP/node-a.ini" --json >"$TEST_TMP/status.json" 2>"$TEST_TMP/status.err" || st=$?
    assert_eq 0 "$st" "status exits 0: nothing waits, nothing failed ($(cat "$TEST_TMP/status.err"; jq -c 'del(.indices)' "$TEST_TMP/status.json"))"
    assert_eq "done 0 0" "$(jq -r '"\(.delayed_last_run[0].status) \(.delayed_last_run[0].errors) \(.change_snapshots | length)"' "$TEST_TMP/status.json")" \
        "status: the last delayed run done without errors, no snapshot waiting"
}

# ---- 1. each node goes on with its own job once east is back
handed_out_then_killed renamed
dwait_log node-a "went away" 5
dwait_log node-b "went away" 5
east_back_run_done
dwait_log node-a "answers again" 5
dwait_log node-b "answers again" 5
documents_and_status "after the first outage"

# ---- 2. node B dies while its job waits: the reader's rebalance gives it
# to A while east is still down, and A runs it once east is back
handed_out_then_killed "renamed again"
dkill node-b
b_gone() { [ "$(m_q "SELECT COUNT(*) FROM \`$meta\`.jobs WHERE params = '{\"delayed_run\":$run}' AND owner_node = 'node-a'")" = 4 ]; }
wait_until 30 "the rebalance gives node B's jobs to node A while east is down" b_gone
sleep 1
assert_true "run $run still running" run_is running
assert_eq "running 0 3" "$(snaps)" "its snapshots still with it, no attempt counted"
east_back_run_done
documents_and_status "after the second outage"
dstop node-a
log "$(($(date +%s) - t0)) s"
pass
