#!/usr/bin/env bash
# tests/integration/long_deliver_500k.sh (make check-long) — 500k changes over
# 100k documents, 2% replays of older changes, 1 KB documents, a small
# high-water mark (memory bound): every document equals the oracle.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/deliver_lib.sh"

idx="$(unique_name dl500k)"
on_exit "curl -s -XDELETE '$SEARCH_URL/$idx' >/dev/null"
args=(--index "$idx" --changes 500000 --docs 100000 --body-bytes 1000 --dup-pct 2 --hwm 5000
      --checkpoint "$TEST_TMP/ckpt")
driver "${args[@]}" create >/dev/null || fail "create index"
out="$(/usr/bin/time -f '%M' -o "$TEST_TMP/rss" "$DRIVER" --url "$SEARCH_URL" "${args[@]}" run)" ||
    fail "driver: $out"
log "run: $out (max RSS $(cat "$TEST_TMP/rss") KB)"
assert_true "memory bounded by the high-water mark (max RSS < 200 MB)" test "$(cat "$TEST_TMP/rss")" -lt 200000
v="$(driver "${args[@]}" verify)" || fail "verify: $v"
log "verify: $v"
assert_eq 0 "$(json_field "$v" mismatches)" "every document equals the oracle"
assert_eq "$(json_field "$v" expected_docs)" "$(json_field "$v" count)" "_count equals the oracle"
pass
