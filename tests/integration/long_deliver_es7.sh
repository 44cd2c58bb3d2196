#!/usr/bin/env bash
# tests/integration/long_deliver_es7.sh (make check-long) — Elasticsearch
# 7.10.2 (tests/harness/engine.sh ENGINE=elasticsearch-7: codelibs' cluster
# runner from Maven Central, Java 17): dialect detection, the golden
# elasticsearch-7 bulk body accepted item by item, and 50k mixed changes with replays delivered and checked document by
# document, exactly as against OpenSearch.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/deliver_lib.sh"

# the engine: tests/harness/engine.sh (ENGINE=elasticsearch-7), stopped on exit
es7_start
url="$ES7_URL"
des() { "$DRIVER" --url "$url" "$@"; }

# golden body, item by item
golden="$SEARCHSYNC_SRCDIR/tests/fixtures/search/bulk/elasticsearch-7.ndjson"
curl -s -XPUT "$url/products_v1" -H 'Content-Type: application/json' -d '{"settings":{"number_of_replicas":0}}' >/dev/null
curl -s -XPUT "$url/plain" -H 'Content-Type: application/json' -d '{"settings":{"number_of_replicas":0}}' >/dev/null
curl -s -XPUT "$url/products_v1/_doc/44?version=1&version_type=external" -H 'Content-Type: application/json' -d '{"price":"1","ss_version":1}' >/dev/null
curl -s -XPUT "$url/plain/_doc/45" -H 'Content-Type: application/json' -d '{"price":0}' >/dev/null
curl -s -XPUT "$url/products_v1/_doc/46?version=1&version_type=external" -H 'Content-Type: application/json' -d '{"tags":["old"],"ss_version":1}' >/dev/null
curl -s -XPUT "$url/products_v1/_doc/47?version=1&version_type=external" -H 'Content-Type: application/json' -d '{"n":1,"ss_version":1}' >/dev/null
r="$(curl -s -XPOST "$url/_bulk" -H 'Content-Type: application/x-ndjson' --data-binary "@$golden")"
assert_eq '[201,201,201,404,200,200,200,200]' "$(printf '%s' "$r" | jq -c '[.items[] | to_entries[0].value.status]')" "golden elasticsearch-7 body accepted"

args=(--index es7 --changes 50000 --docs 10000 --dup-pct 5 --checkpoint "$TEST_TMP/ckpt")
des "${args[@]}" create >/dev/null || fail "create index"
out="$(des "${args[@]}" run)" || fail "driver: $out"
log "run: $out"
v="$(des "${args[@]}" verify)" || fail "verify: $v"
log "verify: $v"
assert_eq 0 "$(json_field "$v" mismatches)" "every document equals the oracle on Elasticsearch 7.10.2"
assert_eq "$(json_field "$v" expected_docs)" "$(json_field "$v" count)" "_count equals the oracle"
pass
