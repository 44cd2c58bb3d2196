#!/usr/bin/env bash
# tests/integration/t_deliver_100k.sh — 100k changes (index, partial update,
# delete; 5% of them followed by a replay of an older change: duplicates and
# reordering) through the real delivery pipeline into OpenSearch; every one of
# the 20k documents is then compared with the oracle (the same stream replayed
# in plain code: exists?, n, u, stored version) and _count must match.
# Also: the checkpoint file ends at the last transaction, and a second run of
# the same stream (a full replay) changes nothing.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/deliver_lib.sh"

idx="$(unique_name dl100k)"
ck="$TEST_TMP/ckpt"
on_exit "curl -s -XDELETE '$SEARCH_URL/$idx' >/dev/null"
args=(--index "$idx" --changes 100000 --docs 20000 --txn-max 30 --dup-pct 5 --checkpoint "$ck")
driver --index "$idx" create >/dev/null || fail "create index"
out="$(driver "${args[@]}" --stats-out "$TEST_TMP/metrics.txt" run)" || fail "driver run: $out"
log "run: $out"
assert_eq 0 "$(json_field "$out" dead_letters)" "no dead letters"
assert_true "stale replays were refused by version (409 or coalesced)" test "$(json_field "$out" stale)" -gt 0
v="$(driver "${args[@]}" verify)" || fail "verify: $v"
log "verify: $v"
assert_eq 0 "$(json_field "$v" mismatches)" "every document equals the oracle"
assert_eq 20000 "$(json_field "$v" checked)" "all 20000 ids checked"
assert_eq "$(json_field "$v" expected_docs)" "$(json_field "$v" count)" "_count equals the oracle's live documents"
assert_eq 100000 "$(sed -n 3p "$ck")" "checkpoint is the end of the last transaction"
m="$(cat "$TEST_TMP/metrics.txt")"
assert_contains "$m" 'searchsync_delivery_index_latency_seconds{quantile="0.99"}' "metrics: latency p99"
assert_contains "$m" 'searchsync_delivery_batch_size_max' "metrics: batch size"
# the whole stream again (a replay from the very beginning): every write is
# refused by version (index/delete: 409; update scripts: noop), so the
# engine's indexing counters do not move
writes() { search_get "/$idx/_stats/indexing" | jq -c '[._all.primaries.indexing.index_total, ._all.primaries.indexing.delete_total]'; }
before="$(writes)"
out2="$(driver "${args[@]}" run)" || fail "replay run: $out2"
log "replay: $out2"
assert_eq "$before" "$(writes)" "a full replay writes nothing (index_total, delete_total)"
v2="$(driver "${args[@]}" verify)" || fail "verify after replay: $v2"
assert_eq 0 "$(json_field "$v2" mismatches)" "still equal to the oracle after the replay"
pass
