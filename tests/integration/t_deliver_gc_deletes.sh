#!/usr/bin/env bash
# tests/integration/t_deliver_gc_deletes.sh — index.gc_deletes=1s: the engine
# forgets a delete's version after 1 s (and on restart). A replay of older
# changes must still not bring deleted documents back:
#   - one doc: index, delete; checkpoint after the delete; 2 s later (and
#     again after an engine restart) the process resumes from the checkpoint:
#     nothing older than the checkpoint is replayed, the doc stays deleted;
#     a replay from the very beginning re-applies the delete after the insert
#   - 6000 mixed changes (10% deletes), 2 s wait, engine restart, full replay
#     from the beginning: every document equals the oracle.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/deliver_lib.sh"

one="$(unique_name dlgc1)"
many="$(unique_name dlgcm)"
on_exit "curl -s -XDELETE '$SEARCH_URL/$one' >/dev/null; curl -s -XDELETE '$SEARCH_URL/$many' >/dev/null"
a1=(--index "$one" --docs 1 --changes 2 --mix insdel --checkpoint "$TEST_TMP/ck1")
driver "${a1[@]}" --gc-deletes 1s create >/dev/null || fail "create"
assert_eq 1s "$(search_get "/$one/_settings" | jq -r ".\"$one\".settings.index.gc_deletes")" "gc_deletes=1s"
driver "${a1[@]}" run >/dev/null || fail "run"
absent() { [ -z "$(search_doc "$1" 0)" ]; }
assert_true "deleted" absent "$one"
sleep 2
driver "${a1[@]}" --resume run >/dev/null || fail "resume"
assert_true "resume from the checkpoint after gc_deletes: still deleted" absent "$one"
driver "${a1[@]}" run >/dev/null || fail "full replay"
assert_true "replay from the beginning: insert then delete again: still deleted" absent "$one"

a2=(--index "$many" --docs 1500 --changes 6000 --checkpoint "$TEST_TMP/ck2")
driver "${a2[@]}" --gc-deletes 1s create >/dev/null || fail "create"
driver "${a2[@]}" run >/dev/null || fail "run"
sleep 2
log "restarting the engine (tombstones are forgotten)"
engine_action restart
SEARCH_URL_NOW="$SEARCH_URL"
driver "${a1[@]}" --resume run >/dev/null || fail "resume after restart"
assert_true "after an engine restart, resuming from the checkpoint: still deleted" absent "$one"
driver "${a1[@]}" run >/dev/null || fail "full replay after restart"
assert_true "after an engine restart, full replay: still deleted" absent "$one"
out="$(driver "${a2[@]}" run)" || fail "full replay: $out"
log "full replay after restart: $out"
v="$(driver "${a2[@]}" verify)" || fail "verify: $v"
log "verify: $v"
assert_eq 0 "$(json_field "$v" mismatches)" "every document equals the oracle (no resurrection)"
assert_eq "$(json_field "$v" expected_docs)" "$(json_field "$v" count)" "_count equals the oracle"
: "$SEARCH_URL_NOW"
pass
