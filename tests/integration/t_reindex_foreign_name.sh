#!/usr/bin/env bash
# tests/integration/t_reindex_foreign_name.sh — an index named like one of
# the alias's versions ("<alias>_v1", a common hand-made name) that searchsync
# did not make is never deleted (sync/reindex/reindex.c, create_version): a
# name searchsync made and left behind (a request that died before its
# metadata commit) is, and is told apart by the version field every index
# searchsync makes maps.
#
# The engine holds a hand-made <alias>_v1 (one document, no version field)
# and a leftover <alias>_v3 that maps the version field, as searchsync's own
# do. The first sync builds v2, said in a warning naming v1, and leaves v1
# with its document; a reindex then builds v3 over the leftover (deleted and
# made again). Every document equals the SQL oracle.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/takeover_lib.sh"
require_bin
db="$(unique_name fn)"
meta="$(unique_name fnmeta)"
alias="$(unique_name fnitems)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
TAKEOVER_ROWS=300 takeover_db
search_req PUT "/${alias}_v1" '{"settings":{"number_of_shards":1,"number_of_replicas":0}}' >/dev/null
search_req PUT "/${alias}_v1/_doc/hand?refresh=true" '{"mine": "keep me"}' >/dev/null
search_req PUT "/${alias}_v3" '{"settings":{"number_of_shards":1,"number_of_replicas":0},
    "mappings":{"properties":{"ss_version":{"type":"long","index":false}}}}' >/dev/null
search_req PUT "/${alias}_v3/_doc/stale?refresh=true" '{"id": -1}' >/dev/null
TAKEOVER_SERVER_ID=$((7950 + $$ % 40)) takeover_config
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 40 lines)"; tail -40 "$TEST_TMP/run.log"; }'
daemon_wait_log "$alias: live changes no longer written to ${alias}_v2" 60
assert_contains "$(cat "$TEST_TMP/run.log")" "$alias: an index named ${alias}_v1 exists that searchsync did not make" \
    "the hand-made index of a version's name is said"
assert_eq '{"mine":"keep me"}' "$(search_req GET "/${alias}_v1/_doc/hand" | jq -c ._source)" "the hand-made index keeps its document"
assert_eq "${alias}_v2" "$(search_req GET "/_alias/$alias" | jq -r 'keys | join(",")')" "the alias is on v2"
assert_true "every document equals SQL" takeover_same_as_sql
"$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/c.ini" "$alias" >"$TEST_TMP/reindex.out" 2>&1 ||
    fail "reindex: $(cat "$TEST_TMP/reindex.out")"
assert_eq "${alias}_v3" "$(search_req GET "/_alias/$alias" | jq -r 'keys | join(",")')" "the reindex made v3 over searchsync's own leftover of that name"
assert_eq "" "$(SEARCH_ALLOW_ERROR=1 search_req GET "/${alias}_v3/_doc/stale" | jq -c 'select(.found) | ._source')" "the leftover's document is gone"
assert_true "every document equals SQL after the reindex" takeover_same_as_sql
assert_eq 1 "$(search_count "${alias}_v1")" "the hand-made index is still there, untouched"
daemon_stop
[ "$DAEMON_RC" = 0 ] || fail "the daemon exited $DAEMON_RC"
pass
