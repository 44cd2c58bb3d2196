#!/usr/bin/env bash
# tests/integration/t_run_index_takeover.sh — the mapping names an alias that
# is an index in the engine (another tool's, as when moving from a tool that
# writes one index by name): the first sync builds <alias>_v1 from the
# source, and its switch deletes that index and makes the name the alias in
# one _aliases call (sync/reindex/reindex_version.c, switch_alias).
#
# The index holds what such a tool may leave: stale names, a document whose
# row is gone, rows it never got (written here with _bulk; long_gme_takeover
# has go-mysql-elasticsearch itself write it). What is checked:
# takeover_lib.sh, takeover_follow.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/takeover_lib.sh"
require_bin
db="$(unique_name to)"
meta="$(unique_name tometa)"
alias="$(unique_name toitems)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*,$alias?ignore_unavailable=true' >/dev/null"
takeover_db
# the other tool's index: rows 1..1500 with old names, and row 9999 deleted since
search_req PUT "/$alias" '{"settings":{"number_of_shards":1,"number_of_replicas":0}}' >/dev/null
python3 - "$alias" >"$TEST_TMP/old.ndjson" <<'PY'
import json, sys
for i in list(range(1, 1501)) + [9999]:
    print(json.dumps({"index": {"_index": sys.argv[1], "_id": str(i)}}))
    print(json.dumps({"id": i, "name": "old %d" % i, "price": "0.00"}))
PY
curl -s -H 'Content-Type: application/x-ndjson' -XPOST "$SEARCH_URL/_bulk?refresh=true" \
    --data-binary "@$TEST_TMP/old.ndjson" | jq -e '.errors == false' >/dev/null || fail "seeding the other tool's index"
assert_eq 1501 "$(search_req GET "/$alias/_count" | jq .count)" "the other tool's index holds its 1,501 documents"
TAKEOVER_SERVER_ID=$((7900 + $$ % 90)) takeover_follow
pass
