#!/usr/bin/env bash
# tests/integration/t_deliver_dialect.sh — the golden bulk body of the engine
# the suite runs (tests/fixtures/search/bulk/opensearch-2.ndjson, pinned by
# tests/unit/test_search_bulk) is accepted by the real engine item by item:
# external versions > 2^53 stored exactly, the version field spliced into the
# source, partial updates and scripts guarded by the stored version (a second
# post of the same body changes nothing: index/delete 409, updates noop).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/deliver_lib.sh"

golden="$SEARCHSYNC_SRCDIR/tests/fixtures/search/bulk/opensearch-2.ndjson"
on_exit "curl -s -XDELETE '$SEARCH_URL/products_v1,plain' >/dev/null"
SEARCH_ALLOW_ERROR=1 search_delete "/products_v1,plain" >/dev/null || true
search_put /products_v1 '{"settings":{"number_of_shards":1,"number_of_replicas":0}}' >/dev/null
search_put /plain '{"settings":{"number_of_shards":1,"number_of_replicas":0}}' >/dev/null
# the documents the updates apply to
search_put "/products_v1/_doc/44?version=1&version_type=external" '{"price":"1","ss_version":1}' >/dev/null
search_put "/plain/_doc/45" '{"price":0}' >/dev/null
search_put "/products_v1/_doc/46?version=1&version_type=external" '{"tags":["old"],"ss_version":1}' >/dev/null
search_put "/products_v1/_doc/47?version=1&version_type=external" '{"n":1,"ss_version":1}' >/dev/null
r="$(search_post /_bulk "$(cat "$golden")"$'\n')" || fail "bulk post"
statuses="$(printf '%s' "$r" | jq -c '[.items[] | to_entries[0].value.status]')"
assert_eq '[201,201,201,404,200,200,200,200]' "$statuses" "every golden item accepted (delete of a missing doc: 404 not_found, a tombstone)"
search_refresh products_v1
# raw text, not jq: jq reads numbers as doubles and would round them
raw42="$(search_get /products_v1/_doc/42)"
assert_contains "$raw42" '"_version":9007212139647591,' "external version above 2^53 stored exactly"
assert_contains "$raw42" '"_source":{"ss_version":9007212139647591,"ss_hash":1068451030,"ss_key_hash":77491474,"title":"café",   "n":1}' "version field and the check's hashes spliced into the source; newline in the body flattened"
assert_eq '["old","new"]' "$(search_doc products_v1 46 | jq -c .tags)" "script applied"
assert_contains "$(search_get /products_v1/_doc/44)" '"ss_version":9007212139647594' "update stored its version"
assert_eq '{"price":1}' "$(search_doc plain 45)" "unguarded partial update (no version field)"
r2="$(search_post /_bulk "$(cat "$golden")"$'\n')" || fail "bulk post 2"
res2="$(printf '%s' "$r2" | jq -c '[.items[] | to_entries[0].value | (.result // .error.type)]')"
assert_eq '["version_conflict_engine_exception","version_conflict_engine_exception","version_conflict_engine_exception","version_conflict_engine_exception","noop","noop","noop","noop"]' "$res2" "a replay of the same body: versioned items refused, updates noop (guard, or same values)"
assert_eq '["old","new"]' "$(search_doc products_v1 46 | jq -c .tags)" "script not applied twice"
pass
