#!/usr/bin/env bash
# tests/integration/t_deliver_crash.sh — the process is SIGKILLed in the
# middle of delivering multi-row transactions (1..50 changes each). Then:
#   I4  the saved checkpoint is never ahead of what the engine acknowledged:
#       every document holds at least the oracle's version at the checkpoint
#   the checkpoint file is intact (atomic rename, checksum)
#   (first, on a fresh index) SIGTERM drains and saves the checkpoint: the
#   engine then equals the oracle of exactly the prefix up to it
#   a restart resumes from the checkpoint, and every document then equals the
#   oracle of the whole stream (no loss, no stale value, no resurrection).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/deliver_lib.sh"

idx="$(unique_name dlcrash)"
ck="$TEST_TMP/ckpt"
on_exit "curl -s -XDELETE '$SEARCH_URL/$idx' >/dev/null"
N=80000
args=(--index "$idx" --changes "$N" --docs 10000 --txn-max 50 --checkpoint "$ck")
driver "${args[@]}" create >/dev/null || fail "create index"
# SIGTERM: the driver stops at a transaction boundary, drains, saves the
# checkpoint; the engine then equals the oracle of exactly that prefix
"$DRIVER" --url "$SEARCH_URL" "${args[@]}" --rate 4000 run >"$TEST_TMP/term.out" 2>&1 &
dpid=$!
sleep 1.5
kill -TERM "$dpid"
wait "$dpid" || { cat "$TEST_TMP/term.out"; fail "driver did not drain cleanly on SIGTERM"; }
pos="$(sed -n 3p "$ck")"
log "SIGTERM: drained, checkpoint at change $pos: $(tail -1 "$TEST_TMP/term.out")"
assert_true "stopped before the end ($pos < $N)" test "$pos" -lt "$N"
assert_eq 1 "$(tail -1 "$TEST_TMP/term.out" | jq .drains)" "one drain on SIGTERM"
v="$(driver --index "$idx" --docs 10000 --changes "$pos" verify)" || fail "after SIGTERM: $v"
assert_eq 0 "$(json_field "$v" mismatches)" "after SIGTERM + drain the engine equals the oracle at the checkpoint"
resume=--resume
for round in 1 2; do
    "$DRIVER" --url "$SEARCH_URL" "${args[@]}" ${resume:-} --rate 10000 run >"$TEST_TMP/run$round.out" 2>&1 &
    dpid=$!
    sleep 3
    kill -9 "$dpid" 2>/dev/null || fail "driver ended before the kill"
    wait "$dpid" 2>/dev/null || true
    [ -f "$ck" ] || fail "no checkpoint after 3 s"
    pos="$(sed -n 3p "$ck")"
    log "round $round: killed; checkpoint at change $pos"
    assert_true "checkpoint moved ($pos)" test "$pos" -gt 0
    v="$(driver --index "$idx" --docs 10000 --changes "$pos" --at-least-total "$N" verify)" ||
        fail "I4 violated: the checkpoint ($pos) is ahead of the engine: $v"
    assert_eq 0 "$(json_field "$v" mismatches)" "I4: engine holds everything below the checkpoint"
done
out="$(driver "${args[@]}" --resume run 2>&1)" || fail "resume: $out"
log "resume: $(printf '%s' "$out" | tail -1)"
v="$(driver "${args[@]}" verify)" || fail "verify: $v"
log "verify: $v"
assert_eq 0 "$(json_field "$v" mismatches)" "every document equals the oracle after two crashes"
assert_eq "$(json_field "$v" expected_docs)" "$(json_field "$v" count)" "_count equals the oracle"
assert_eq "$N" "$(sed -n 3p "$ck")" "checkpoint at the end"
# a corrupt checkpoint stops the restart with a clear error
sed -i '3s/^./9/' "$ck"
err="$(driver "${args[@]}" --resume run 2>&1)" && fail "a corrupt checkpoint was accepted"
assert_contains "$err" "checksum mismatch" "corrupt checkpoint refused"
pass
