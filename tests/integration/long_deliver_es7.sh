#!/usr/bin/env bash
# tests/integration/long_deliver_es7.sh (make check-long) — Elasticsearch
# 7.10.2 (tests/integration/es7: codelibs' cluster runner from Maven Central, Java
# 17): dialect detection, the golden elasticsearch-7 bulk body accepted item by
# item, and 50k mixed changes with replays delivered and checked document by
# document, exactly as against OpenSearch.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/deliver_lib.sh"

command -v mvn >/dev/null || skip "mvn missing (tests/harness/deps.sh)"
cache="${SEARCHSYNC_CACHE:-${HOME:-/root}/.cache/searchsync}/es-7.10.2"
mkdir -p "$cache"
tools="$SEARCHSYNC_SRCDIR/tests/integration/es7"
if ! cmp -s "$tools/pom.xml" "$cache/pom.xml" || [ ! -s "$cache/cp.txt" ]; then
    log "resolving Elasticsearch 7.10.2 jars (first run only)"
    mvn -q -B -f "$tools/pom.xml" dependency:build-classpath -Dmdep.outputFile="$cache/cp.txt" \
        >"$TEST_TMP/mvn.log" 2>&1 || { tail -20 "$TEST_TMP/mvn.log"; skip "cannot resolve ES 7.10.2 from Maven Central"; }
    cp "$tools/pom.xml" "$cache/pom.xml"
fi
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port="$(free_port)"; tport="$(free_port)"
mkdir -p "$TEST_TMP/es/conf"
printf 'discovery.type: single-node\nnetwork.host: 127.0.0.1\ntransport.port: %s\ncluster.routing.allocation.disk.threshold_enabled: false\n' \
    "$tport" >"$TEST_TMP/es/conf/elasticsearch.yml"
setsid java -Xms512m -Xmx1g -cp "$(cat "$cache/cp.txt")" "$tools/Es7Engine.java" \
    "$TEST_TMP/es/base" "$TEST_TMP/es/conf" "$port" >"$TEST_TMP/es.log" 2>&1 &
espid=$!
on_exit "kill -- -$espid 2>/dev/null; kill $espid 2>/dev/null"
url="http://127.0.0.1:$port"
wait_until 120 "Elasticsearch 7.10.2 up" curl -sf "$url/_cluster/health?wait_for_status=yellow&timeout=1s"
assert_eq 7.10.2 "$(curl -s "$url/" | jq -r .version.number)" "engine version"
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
