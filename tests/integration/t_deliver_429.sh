#!/usr/bin/env bash
# tests/integration/t_deliver_429.sh — an engine whose write thread pool is
# shrunk to one thread and a queue of one rejects most bulk requests with 429.
# Every rejected item is retried (exponential backoff with jitter) and none is
# lost: all documents equal the oracle, no dead letters, and the fuse does not
# blow on 429s (they mean "slow down", not "broken").
# Starts its own engine (harness knob OPENSEARCH_EXTRA_YML) next to the suite's.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/deliver_lib.sh"

grep -q OPENSEARCH_EXTRA_YML "$HARNESS/opensearch.sh" ||
    skip "tests/harness/opensearch.sh has no OPENSEARCH_EXTRA_YML knob"
own="$TEST_TMP/engine429"
mkdir -p "$own"
on_exit "SEARCHSYNC_HARNESS_DIR='$own' bash '$HARNESS/opensearch.sh' stop >/dev/null 2>&1"
SEARCHSYNC_HARNESS_DIR="$own" OPENSEARCH_HEAP=512m \
OPENSEARCH_EXTRA_YML=$'thread_pool.write.size: 1\nthread_pool.write.queue_size: 1' \
    bash "$HARNESS/opensearch.sh" start >"$TEST_TMP/engine.log" 2>&1 ||
    { tail -30 "$TEST_TMP/engine.log"; fail "could not start the 429 engine"; }
url="$(. "$own/opensearch.env" 2>/dev/null; echo "${SEARCH_URL:-}")"
[ -n "$url" ] || url="$(grep -ho 'SEARCH_URL=[^ ]*' "$own"/*.env | head -1 | cut -d= -f2- | tr -d "'\"")"
[ -n "$url" ] || fail "no SEARCH_URL for the 429 engine"
log "429 engine at $url"
d429() { "$DRIVER" --url "$url" "$@"; }
args=(--index r429 --changes 20000 --docs 5000 --body-bytes 1000 --batch-max 100 --helpers 6)
d429 "${args[@]}" create >/dev/null || fail "create index"
out="$(d429 "${args[@]}" run)" || fail "driver: $out"
log "run: $out"
assert_true "the engine rejected writes (retries > 0)" test "$(json_field "$out" retries)" -gt 0
assert_eq 0 "$(json_field "$out" dead_letters)" "no dead letters"
assert_eq 0 "$(json_field "$out" fuse_blows)" "429s do not blow the fuse"
rej="$(curl -s "$url/_nodes/stats/thread_pool" | jq '[.nodes[].thread_pool.write.rejected] | add')"
log "engine write rejections: $rej"
assert_true "the engine counted rejections ($rej)" test "$rej" -gt 0
v="$(d429 "${args[@]}" verify)" || fail "verify: $v"
log "verify: $v"
assert_eq 0 "$(json_field "$v" mismatches)" "every document equals the oracle"
assert_eq "$(json_field "$v" expected_docs)" "$(json_field "$v" count)" "_count equals the oracle"
pass
