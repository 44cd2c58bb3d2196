#!/usr/bin/env bash
# tests/integration/t_deliver_429.sh — an engine whose write thread pool is
# shrunk to one thread and a queue of one rejects most bulk requests with 429.
# Every rejected item is retried (exponential backoff with jitter) and none is
# lost: all documents equal the oracle, no dead letters, and the fuse does not
# blow on 429s (they mean "slow down", not "broken"). The rejections are said
# in the log once when a storm starts and once when it ends (src/deliver/
# engine.c), never once per rejected request or retry.
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
out="$(DRIVER_LOG=info d429 "${args[@]}" run 2>"$TEST_TMP/run.err")" ||
    fail "driver: $out; stderr ends with: $(tail -20 "$TEST_TMP/run.err")"
log "run: $out"
retries="$(json_field "$out" retries)"
assert_true "the engine rejected writes (retries > 0)" test "$retries" -gt 0
# the storm in the log: S when it starts, E when it ends (quiet for 5 s, or
# delivery stopping while it lasts), in that order, once each per storm
start_re='the search engine rejects writes with 429'
end_re='the search engine stopped rejecting writes|delivery stops with the search engine rejecting writes'
storms="$(grep -oE "$start_re|$end_re" "$TEST_TMP/run.err" |
          sed -E "s/^the search engine rejects.*/S/; s/^(the search engine stopped|delivery stops).*/E/" | tr -d '\n')"
nstart="$(grep -cE "$start_re" "$TEST_TMP/run.err" || true)"
log "storms in the log: $storms ($nstart), $retries retries"
assert_true "a storm was said to start" test "$nstart" -ge 1
assert_eq "$(printf 'SE%.0s' $(seq 1 "$nstart"))" "$storms" \
    "each storm said once when it starts and once when it ends"
# nothing per retry: every line about rejections, retries or failed bulks
# is one of those
# (the timestamp left out: its milliseconds may read 429)
other="$(sed 's/^[^ ]* //' "$TEST_TMP/run.err" | grep -iE '429|reject|retr|bulk of' | grep -vE "$start_re|$end_re" || true)"
assert_eq "" "$other" "no line per rejected request or retry"
lines="$(wc -l <"$TEST_TMP/run.err")"
assert_true "the log stays short ($lines lines for $retries retries)" test "$lines" -le $((2 * nstart + 4))
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
