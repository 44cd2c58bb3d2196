#!/usr/bin/env bash
# tests/integration/t_deliver_faults.sh — the engine is SIGSTOPped mid-stream
# (10 s; 30 s under make check-long), then SIGKILLed and restarted, while the
# driver keeps producing. Requests time out, the fuse blows, the producer
# blocks at the high-water mark; after the restart delivery resumes and every
# document equals the oracle (no loss, no stale value, nothing resurrected).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/deliver_lib.sh"

stop_s=10
[ -n "${SEARCHSYNC_LONG:-}" ] && stop_s=30
idx="$(unique_name dlfault)"
on_exit "bash '$HARNESS/servers.sh' resume opensearch >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/$idx' >/dev/null"
args=(--index "$idx" --changes 60000 --docs 10000 --txn-max 20 --checkpoint "$TEST_TMP/ckpt")
driver "${args[@]}" create >/dev/null || fail "create index"
# ~4000 changes/s for 15 s; timeouts short so the stall is seen quickly
"$DRIVER" --url "$SEARCH_URL" "${args[@]}" --rate 4000 --timeout-ms 1000 --hwm 2000 --fuse-failures 3 \
    --fuse-interval-ms 5000 --fuse-reset-ms 2000 --retry-max-ms 1000 \
    --stats-out "$TEST_TMP/metrics.txt" run >"$TEST_TMP/run.out" 2>"$TEST_TMP/run.err" &
dpid=$!
on_exit "kill $dpid 2>/dev/null"
sleep 4
log "SIGSTOP engine for ${stop_s}s"
bash "$HARNESS/servers.sh" pause opensearch >/dev/null
sleep "$stop_s"
ck_during="$(sed -n 3p "$TEST_TMP/ckpt" 2>/dev/null || echo 0)"
log "SIGKILL + restart engine (checkpoint during the stall: $ck_during)"
bash "$HARNESS/servers.sh" kill opensearch >/dev/null
bash "$HARNESS/servers.sh" restart opensearch >"$TEST_TMP/restart.log" 2>&1 ||
    { tail -20 "$TEST_TMP/restart.log"; fail "engine restart"; }
. "$SEARCHSYNC_HARNESS_DIR/env.sh"
wait "$dpid" || { cat "$TEST_TMP/run.err" | tail -20; fail "driver failed"; }
out="$(cat "$TEST_TMP/run.out")"
log "run: $out"
assert_true "the fuse blew while the engine was stopped" test "$(json_field "$out" fuse_blows)" -ge 1
assert_true "the producer was blocked at the high-water mark" test "$(json_field "$out" blocked)" -ge 1
assert_true "requests failed and were retried" test "$(json_field "$out" requests_failed)" -ge 1
assert_eq 0 "$(json_field "$out" dead_letters)" "nothing dead-lettered"
v="$(driver "${args[@]}" verify)" || fail "verify: $v"
log "verify: $v"
assert_eq 0 "$(json_field "$v" mismatches)" "every document equals the oracle"
assert_eq "$(json_field "$v" expected_docs)" "$(json_field "$v" count)" "_count equals the oracle"
assert_eq 60000 "$(sed -n 3p "$TEST_TMP/ckpt")" "checkpoint at the end"
pass
