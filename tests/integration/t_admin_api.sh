#!/usr/bin/env bash
# tests/integration/t_admin_api.sh — the admin HTTP API inside `searchsync run`
# (web/, docs/http-api.md) against real MariaDB + OpenSearch:
#
#   guards     401 without or with a wrong token (never logged); 421 for a Host
#              not in allowed_hosts; 403 for a cross-site Origin on POST; 415
#              for a form body; 413 for a body over 64 KB (with a length and
#              chunked); 404 / 405 (+ Allow) as JSON
#   read       GET status (the facts of `searchsync status`), GET indices
#   reindex    POST .../reindex -> 202, a second POST while it builds -> 409,
#              progress polled until the alias moves; the document count
#              equals SQL's products + reviews + replies; bad bodies -> 400
#              naming the field; an unknown alias -> 404
#   reset      a build cancelled -> 200 and its index deleted; nothing to
#              cancel -> 409
#   metrics    GET /metrics carries the live delivery counters
#   topics     GET/POST/DELETE /api/v1/topics: 401 without a token, 409 on a
#              binlog source (the Kafka side: t_kafka_sync)
#   async      a slow call on the node (POST /api/v1/rebalance, held 1.5 s
#              each by the test hook SEARCHSYNC_TEST_NODE_SLOW_*) does not
#              hold an HTTP thread: with eight of them queued on the node a
#              GET on another connection answers at once, and each POST
#              still gets its whole answer; at SIGTERM the calls still
#              queued are answered 503, none hangs
#   startup    a listen address already in use: exit 2 naming it
# Sizes: ADMIN_API_PRODUCTS (default 1000), small pages so a build takes a
# few seconds.
. "$(dirname "$0")/lib.sh"
require_bin
N="${ADMIN_API_PRODUCTS:-1000}"
bash "$SEARCHSYNC_SRCDIR/sql/demo/generate.sh" --products "$N" >/dev/null
meta="$(unique_name meta)"
curl -s -XDELETE "$SEARCH_URL/products*,brands*?expand_wildcards=all" >/dev/null # left by others
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/products_v*,brands_v*?expand_wildcards=all' >/dev/null"
PORT="$(free_port)"
TOKEN="$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = shop
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = 7331
start = now
heartbeat_ms = 500
[metadata]
database = $meta
reload_interval_ms = 300
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
[reindex]
buckets = 4
page_size = 20
[admin]
listen = 127.0.0.1:$PORT
[log]
level = info
INI
export SEARCHSYNC_ADMIN_TOKEN="$TOKEN" # the token from the environment, not the file
# the test hook: every POST /api/v1/rebalance waits 1.5 s on the node's
# request thread before it runs (as a slow build start or metadata write would)
export SEARCHSYNC_TEST_NODE_SLOW_MS=1500 SEARCHSYNC_TEST_NODE_SLOW_WHAT=/api/v1/rebalance
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$SEARCHSYNC_SRCDIR/sql/demo/mapping.json" --yes \
    >"$TEST_TMP/import.out" 2>&1 || fail "import: $(cat "$TEST_TMP/import.out")"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 40 lines)"; tail -40 "$TEST_TMP/run.log"; }'
meta_q() { mysql_q "$1" "$meta"; }
alias_target() { curl -s "$SEARCH_URL/_alias/$1" | jq -r 'keys | join(",")'; }
URL="http://127.0.0.1:$PORT"

# api METHOD PATH [curl args...] — sets CODE, BODY (and HEADERS)
api() {
    local method="$1" path="$2"
    shift 2
    CODE="$(curl -sS -m 60 -X "$method" -D "$TEST_TMP/.h" -o "$TEST_TMP/.b" -w '%{http_code}' \
        -H "Authorization: Bearer $TOKEN" "$@" "$URL$path")" || fail "curl $method $path failed"
    BODY="$(cat "$TEST_TMP/.b")"
    HEADERS="$(cat "$TEST_TMP/.h")"
}
# an error response: CODE and a JSON {"error":...}
expect_error() { # CODE WHAT
    assert_eq "$1" "$CODE" "$2: HTTP $1 ($BODY)"
    assert_true "$2: a JSON error" jq -e '.error | length > 0' <<<"$BODY"
}

wait_until 30 "admin API listening on $PORT" curl -s -o /dev/null "$URL/"
assert_contains "$(cat "$TEST_TMP/run.log")" "admin HTTP server listening on 127.0.0.1:$PORT" "startup line"
wait_until $((120 + N / 1000)) "first sync: alias products -> products_v1" bash -c "curl -s '$SEARCH_URL/_alias/products' | jq -e 'has(\"products_v1\")' >/dev/null" ||
    fail "no first sync: $(tail -20 "$TEST_TMP/run.log")"

# ---- guards
CODE="$(curl -s -o "$TEST_TMP/.b" -w '%{http_code}' "$URL/api/v1/status")"
BODY="$(cat "$TEST_TMP/.b")"
expect_error 401 "no token"
CODE="$(curl -s -o "$TEST_TMP/.b" -w '%{http_code}' -H "Authorization: Bearer ${TOKEN%?}0x" "$URL/api/v1/status")"
BODY="$(cat "$TEST_TMP/.b")"
expect_error 401 "a wrong token"
CODE="$(curl -s -o "$TEST_TMP/.b" -w '%{http_code}' "$URL/metrics")"
BODY="$(cat "$TEST_TMP/.b")"
expect_error 401 "/metrics needs the token too"
api GET /api/v1/status -H "Host: evil.example:$PORT"
expect_error 421 "Host not in allowed_hosts (DNS rebinding)"
api GET /api/v1/status -H "Host: localhost:$PORT"
assert_eq 200 "$CODE" "Host localhost is allowed by default"
api POST /api/v1/indices/products/reindex -H 'Content-Type: application/json' -H 'Origin: http://evil.example' -d '{}'
expect_error 403 "cross-site Origin on POST"
api POST /api/v1/indices/products/reindex -H 'Content-Type: application/x-www-form-urlencoded' -d 'buckets=2'
expect_error 415 "a form body"
CODE="$(curl -s -XPOST -o "$TEST_TMP/.b" -w '%{http_code}' "$URL/api/v1/rebalance")"
BODY="$(cat "$TEST_TMP/.b")"
expect_error 401 "POST /api/v1/rebalance without a token"
api POST /api/v1/rebalance
expect_error 409 "POST /api/v1/rebalance on a standalone daemon"
assert_contains "$BODY" "no [cluster] zookeeper" "and it says why"
api GET /api/v1/rebalance
expect_error 405 "GET /api/v1/rebalance"

# ---- async: calls held on the node do not hold the HTTP threads
# slow_posts N TAG — N POST /api/v1/rebalance in the background, on their own
# connections; their codes and bodies in $TEST_TMP/TAG.I{,.code}; SLOW_PIDS
slow_posts() {
    SLOW_PIDS=()
    local i
    for i in $(seq 1 "$1"); do
        curl -sS -m 60 -XPOST -o "$TEST_TMP/$2.$i" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
            "$URL/api/v1/rebalance" >"$TEST_TMP/$2.$i.code" 2>"$TEST_TMP/$2.$i.err" &
        SLOW_PIDS+=($!)
    done
}
held() { grep -c 'test hook: request .* held' "$TEST_TMP/run.log" || true; }
held0="$(held)"
slow_posts 8 slow
wait_until 10 "the first slow call held on the node" bash -c "[ \$(grep -c 'test hook: request .* held' '$TEST_TMP/run.log') -gt $held0 ]"
sleep 0.3 # the others sent (queued on the node, or on HTTP threads before the fix)
t0="$(date +%s%N)"
api GET /api/v1/live
live_ms=$((($(date +%s%N) - t0) / 1000000))
assert_eq 200 "$CODE" "GET /api/v1/live while eight slow calls wait on the node ($BODY)"
[ "$live_ms" -lt 3000 ] || fail "GET /api/v1/live took $live_ms ms while slow calls ran on the node: HTTP threads wait for the node"
echo "  GET /api/v1/live answered in $live_ms ms with 8 calls of 1.5 s on the node"
for p in "${SLOW_PIDS[@]}"; do wait "$p" || true; done
for i in $(seq 1 8); do
    assert_eq 409 "$(cat "$TEST_TMP/slow.$i.code")" "slow call $i: its whole answer ($(cat "$TEST_TMP/slow.$i" "$TEST_TMP/slow.$i.err"))"
    assert_contains "$(cat "$TEST_TMP/slow.$i")" "no [cluster] zookeeper" "slow call $i: its body"
done
# topics: a Kafka source's (t_kafka_sync tests them there); a binlog source: 409
CODE="$(curl -s -XPOST -o "$TEST_TMP/.b" -w '%{http_code}' -H 'Content-Type: application/json' -d '{"topic":"t"}' "$URL/api/v1/topics")"
BODY="$(cat "$TEST_TMP/.b")"
expect_error 401 "POST /api/v1/topics without a token"
api GET /api/v1/topics
expect_error 409 "GET /api/v1/topics on a binlog source"
assert_contains "$BODY" "kind = binlog" "and it says why"
api POST /api/v1/topics -H 'Content-Type: application/json' -d '{"topic":"cdc.orders"}'
expect_error 409 "POST /api/v1/topics on a binlog source"
api DELETE /api/v1/topics/cdc.orders
expect_error 409 "DELETE /api/v1/topics/{topic} on a binlog source"
api PUT /api/v1/topics -H 'Content-Type: application/json' -d '{}'
expect_error 405 "PUT /api/v1/topics"
api POST /api/v1/indices/products/reindex -H 'Content-Type: application/json' -d '{"buckets":'
expect_error 400 "malformed JSON"
api POST /api/v1/indices/products/reindex -H 'Content-Type: application/json' -d '{"buckets":0}'
expect_error 400 "buckets out of range"
assert_contains "$BODY" "buckets" "the bad field is named"
api POST /api/v1/indices/products/reindex -H 'Content-Type: application/json' -d '{"by_mod":"yes"}'
expect_error 400 "by_mod not a boolean"
assert_contains "$BODY" "by_mod" "the bad field is named"
head -c 70000 /dev/zero | tr '\0' ' ' >"$TEST_TMP/big.json"
api POST /api/v1/indices/products/reindex -H 'Content-Type: application/json' --data-binary "@$TEST_TMP/big.json"
expect_error 413 "a body over 64 KB"
api POST /api/v1/indices/products/reindex -H 'Content-Type: application/json' -H 'Transfer-Encoding: chunked' --data-binary "@$TEST_TMP/big.json"
expect_error 413 "a chunked body over 64 KB"
api POST /api/v1/indices/nosuch/reindex -H 'Content-Type: application/json' -d '{}'
expect_error 404 "POST reindex of an unknown alias"
assert_contains "$BODY" "nosuch" "it names the alias"
api GET /api/v1/indices/nosuch/reindex
expect_error 404 "progress of an unknown alias"
api GET /api/v1/nothing
expect_error 404 "unknown path"
api DELETE /api/v1/status
expect_error 405 "wrong method"
assert_contains "$HEADERS" "Allow: GET, HEAD" "405 says what is allowed"
assert_eq 0 "$(grep -c "$TOKEN" "$TEST_TMP/run.log" || true)" "the token never appears in the log"
assert_eq 0 "$(meta_q "SELECT COUNT(*) FROM reindex_runs WHERE version > 1")" "no refused call queued anything"

# ---- read
api GET /api/v1/status
assert_eq 200 "$CODE" "status"
assert_eq "products available 1 products_v1" "$(jq -r '.indices[] | select(.alias == "products") | "\(.alias) \(.state) \(.current_version) \(.engine.alias_targets | join(","))"' <<<"$BODY")" "status: the index, its version and alias target"
assert_true "status: the checkpoint and binlog end" jq -e '.source.checkpoint != null and .source.binlog_end != null and .source.name == "shop"' <<<"$BODY"
assert_eq "$(search_count products)" "$(jq -r '.indices[] | select(.alias == "products") | .engine.documents' <<<"$BODY")" "status: the engine's document count"
wait_until 20 "status: caught_up while idle (the bytes after the checkpoint are its own saves)" bash -c \
    "curl -s -H 'Authorization: Bearer $TOKEN' '$URL/api/v1/status' | jq -e '.source.caught_up == true and .source.bytes_behind >= 0' >/dev/null" ||
    fail "not caught up while idle: $(curl -s -H "Authorization: Bearer $TOKEN" "$URL/api/v1/status" | jq -c .source)"
assert_true "status: jobs, dead letters, snapshots are lists" jq -e '(.jobs | type) == "array" and (.dead_letters | type) == "array" and (.change_snapshots | type) == "array"' <<<"$BODY"
api GET /api/v1/indices
assert_eq 200 "$CODE" "indices"
assert_eq "products available 1 null products_v1" "$(jq -r '.indices[] | select(.alias == "products") | "\(.alias) \(.state) \(.current_version) \(.building_version) \(.versions | map(.index) | join(","))"' <<<"$BODY")" "indices: products"
assert_eq 2 "$(jq '.indices | length' <<<"$BODY")" "indices: products and brands"
assert_eq "number" "$(jq -r '.mapping_generation | type' <<<"$BODY")" "indices: the generation the daemon runs with"
# the demo mapping's products index: as many tables as the mapping file lists
want_tables="$(jq '.indices[] | select(.alias == "products") | .tables | length' "$SEARCHSYNC_SRCDIR/sql/demo/mapping.json")"
assert_eq "$want_tables true null" "$(jq -r '.indices[] | select(.alias == "products") | .in_force | "\(.tables) \(.routed) \(.stopped)"' <<<"$BODY")" "indices: products as the generation in force has it"
api GET /api/v1/live
assert_eq 200 "$CODE" "live"
assert_eq "true true []" "$(jq -c -r '"\(.reader.reading) \(.engine_up) \(.fuses_blown)"' <<<"$BODY")" "live: the reader reads, the engine answers, no fuse blown"
assert_eq "number number" "$(jq -r '"\(.queued | type) \(.inflight | type)"' <<<"$BODY")" "live: queue counts"
# without ZooKeeper the nodes are the standalone reader lock's holder, as
# reader_locks names it; the daemon reads, so it holds the lock
api GET /api/v1/nodes
assert_eq 200 "$CODE" "nodes ($BODY)"
want_node="$(meta_q "SELECT CONCAT(owner, ' ', fence) FROM reader_locks WHERE source = 'shop'")"
assert_eq "1 null $want_node shop leader" "$(jq -r '"\(.nodes | length) \(.cluster) \(.nodes[0].node) \(.nodes[0].entity.fence) \(.nodes[0].entity.source) \(.nodes[0].entity.reader)"' <<<"$BODY")" "nodes: the standalone reader lock's holder"
"$SEARCHSYNC_BIN" status --config "$TEST_TMP/c.ini" >"$TEST_TMP/status.txt" 2>&1 || true
assert_contains "$(cat "$TEST_TMP/status.txt")" "queued, " "status asks the daemon for its live figures"
assert_contains "$(cat "$TEST_TMP/status.txt")" "reader: reading, read to " "status shows what the reader read"
# an admin address whose server does not answer to the host status names
# (what the daemon answers, HTTP 421, when [admin] allowed_hosts lacks it;
# the daemon accepts every IP literal, so a stand-in answers here)
P421="$(free_port)"
python3 -c '
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(421); self.send_header("Content-Length", "2"); self.end_headers(); self.wfile.write(b"{}")
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()' "$P421" &
p421=$!
on_exit "kill $p421 2>/dev/null"
wait_until 10 "the 421 stand-in" curl -s -o /dev/null "http://127.0.0.1:$P421/"
sed "s/^listen = 127.0.0.1:.*/listen = 127.0.0.1:$P421/" "$TEST_TMP/c.ini" >"$TEST_TMP/c421.ini"
"$SEARCHSYNC_BIN" status --config "$TEST_TMP/c421.ini" >"$TEST_TMP/status421.txt" 2>&1 || true
assert_contains "$(cat "$TEST_TMP/status421.txt")" "does not answer to this address's host (HTTP 421): add it to [admin] allowed_hosts" \
    "status explains a 421"

# ---- POST reindex: queued, a second refused, the build followed to the switch
api POST /api/v1/indices/products/reindex -H 'Content-Type: application/json' -d '{"buckets":2}'
assert_eq 202 "$CODE" "POST reindex queued ($BODY)"
assert_eq "products 2 changing products_v2 2" "$(jq -r '"\(.alias) \(.version) \(.state) \(.index) \(.buckets)"' <<<"$BODY")" "202 body"
api POST /api/v1/indices/products/reindex
expect_error 409 "a second POST while it builds"
assert_contains "$BODY" "already being rebuilt" "409 says why"
assert_contains "$(meta_q "SELECT detail FROM sync_log WHERE event = 'reindex requested' ORDER BY id DESC LIMIT 1")" "admin API" "sync_log names the API as the reason"
seen_jobs=0
for ((i = 0; i < 600; i++)); do
    api GET /api/v1/indices/products/reindex
    assert_eq 200 "$CODE" "progress ($BODY)"
    [ "$(jq '.jobs | length' <<<"$BODY")" = 2 ] && [ "$(jq -r .building_version <<<"$BODY")" = 2 ] && seen_jobs=1
    [ "$(jq -r '.building_version' <<<"$BODY")" = null ] && break
    sleep 0.2
done
assert_eq 1 "$seen_jobs" "progress listed the build's 2 jobs while it ran"
assert_eq "available 2 done 2" "$(jq -r '"\(.state) \(.current_version) \(.last_run.status) \(.last_run.version)"' <<<"$BODY")" "the build is done and live"
assert_eq 2 "$(jq '.jobs | length' <<<"$BODY")" "the finished run's 2 jobs"
assert_eq "$(jq '[.jobs[].rows_read] | add' <<<"$BODY")" "$(jq '.last_run.rows_read' <<<"$BODY")" "the run's rows read are its jobs' sum"
assert_eq "products_v2" "$(alias_target products)" "the alias moved to v2"
wait_checkpoint "$meta" shop
want="$(mysql_q 'SELECT (SELECT COUNT(*) FROM shop.products) + (SELECT COUNT(*) FROM shop.reviews) + (SELECT COUNT(*) FROM shop.review_replies)')"
assert_eq "$want" "$(search_count products)" "documents = products + reviews + replies in SQL"

# ---- reset: a build cancelled, its index deleted; then nothing to cancel
api POST /api/v1/indices/products/reindex -H 'Content-Type: application/json' -d '{"buckets":3,"by_mod":true}'
assert_eq 202 "$CODE" "POST reindex v3 ($BODY)"
assert_eq 3 "$(jq -r .version <<<"$BODY")" "v3"
assert_eq "mod 3" "$(meta_q "SELECT bucketing, buckets FROM index_versions v JOIN index_configs c ON c.id = v.index_id WHERE c.alias = 'products' AND v.version = 3" | tr '\t' ' ')" "by_mod and buckets reached the build"
api POST /api/v1/indices/products/reindex/reset
assert_eq 200 "$CODE" "reset ($BODY)"
assert_eq "products 3 available" "$(jq -r '"\(.alias) \(.cancelled_version) \(.state)"' <<<"$BODY")" "reset body"
wait_until 30 "products_v3 deleted" bash -c "! curl -sf '$SEARCH_URL/products_v3' -o /dev/null"
assert_eq "cancelled" "$(meta_q "SELECT status FROM reindex_runs WHERE alias = 'products' AND version = 3")" "the run says cancelled"
assert_eq "products_v2" "$(alias_target products)" "reset: the alias did not move"
wait_checkpoint "$meta" shop
assert_eq 0 "$(meta_q "SELECT COUNT(*) FROM dead_letters WHERE index_name = 'products_v3'")" \
    "reset: no dead letters from dual writes that were in flight to the deleted build"
api POST /api/v1/indices/products/reindex/reset
expect_error 409 "reset with nothing being built"
api POST /api/v1/indices/nosuch/reindex/reset
expect_error 404 "reset of an unknown alias"

# ---- dead letters: list, one, replay (one accepted, one refused again), discard
dlx="$(unique_name dlapi)"
on_exit "curl -s -XDELETE '$SEARCH_URL/$dlx' >/dev/null"
curl -s -XPUT "$SEARCH_URL/$dlx" -H 'Content-Type: application/json' -d '{"settings":{"number_of_replicas":0},
  "mappings":{"dynamic":"strict","properties":{"a":{"type":"long"},"ss_version":{"type":"long"},
  "ss_hash":{"type":"keyword"},"ss_key_hash":{"type":"keyword"}}}}' >/dev/null
meta_q "INSERT INTO dead_letters (source, index_name, doc_id, version, op, status, error, body, attempts) VALUES
  ('shop', '$dlx', 'ok1', 5, 'index', 400, 'refused before the index existed', '{\"a\":12345678901234567}', 1),
  ('shop', '$dlx', 'bad1', 5, 'index', 400, 'strict_dynamic_mapping_exception', '{\"b\":1}', 1),
  ('other', '$dlx', 'x', 5, 'index', 400, 'of another source', '{\"a\":1}', 1)"
api GET "/api/v1/dead-letters?index=$dlx"
assert_eq 200 "$CODE" "dead letters listed ($BODY)"
assert_eq "2 bad1,ok1 strict_dynamic_mapping_exception" "$(jq -r '"\(.total) \([.dead_letters[].doc_id] | join(",")) \(.dead_letters[0].error)"' <<<"$BODY")" \
    "this source's dead letters, newest first, with the engine's error"
bad_id="$(jq -r '.dead_letters[0].id' <<<"$BODY")"
api GET "/api/v1/dead-letters/$bad_id"
assert_eq '200 {"b":1}' "$CODE $(jq -c -r .body <<<"$BODY")" "one dead letter with its body"
api GET "/api/v1/dead-letters?limit=0"
expect_error 400 "limit 0"
assert_eq limit "$(jq -r .field <<<"$BODY")" "the field named"
api POST /api/v1/dead-letters/replay -H 'Content-Type: application/json' -d '{"index":"a b"}'
expect_error 400 "a replay of a bad index name"
api POST /api/v1/dead-letters/replay -H 'Content-Type: application/json' -d "{\"index\":\"$dlx\"}"
assert_eq "200 2 1" "$CODE $(jq -r '"\(.replayed) \(.left)"' <<<"$BODY")" "replay: both sent, one refused again ($BODY)"
assert_eq '"a":12345678901234567' "$(curl -s "$SEARCH_URL/$dlx/_doc/ok1" | grep -o '"a":[0-9]*')" \
    "the replayed document is in the engine, its number exact"
assert_eq "1 bad1" "$(meta_q "SELECT COUNT(*), MIN(doc_id) FROM dead_letters WHERE source = 'shop' AND index_name = '$dlx'" | tr '\t' ' ')" \
    "the refused one is a dead letter again, the accepted one gone"
assert_eq 1 "$(meta_q "SELECT COUNT(*) FROM dead_letters WHERE source = 'other'")" "another source's dead letter untouched"
bad_id="$(meta_q "SELECT id FROM dead_letters WHERE source = 'shop' AND index_name = '$dlx'")"
api DELETE "/api/v1/dead-letters/$bad_id"
assert_eq 200 "$CODE" "discarded ($BODY)"
api DELETE "/api/v1/dead-letters/$bad_id"
expect_error 404 "discarded twice"
other_id="$(meta_q "SELECT id FROM dead_letters WHERE source = 'other'")"
api GET "/api/v1/dead-letters/$other_id"
expect_error 404 "another source's dead letter is not this daemon's"
api PUT "/api/v1/dead-letters/$other_id"
expect_error 405 "PUT on a dead letter"

# ---- metrics: the live delivery counters
mysql_q "UPDATE shop.products SET name = 'seen by metrics' WHERE id = 1"
wait_checkpoint "$meta" shop
api GET /metrics
assert_eq 200 "$CODE" "metrics"
assert_contains "$HEADERS" "text/plain" "metrics: Prometheus text"
docs="$(awk 'index($1, "searchsync_delivery_index_docs_total{") == 1 {print $2}' <<<"$BODY")"
assert_true "metrics: delivered documents counted ($docs)" test "${docs:-0}" -ge 1
assert_contains "$BODY" "searchsync_delivery_batches_total" "metrics: batches"

# ---- the mapping and the source's tables
api GET /api/v1/mapping
assert_eq 200 "$CODE" "mapping exported"
"$SEARCHSYNC_BIN" mapping export --config "$TEST_TMP/c.ini" "$TEST_TMP/exp.json"
assert_eq "$(cat "$TEST_TMP/exp.json")" "$BODY" "the API's mapping is the command's export"
cp "$TEST_TMP/.b" "$TEST_TMP/cur.json"
api POST /api/v1/mapping/plan -H 'Content-Type: application/json' --data-binary @"$TEST_TMP/cur.json"
assert_eq '200 true 0 []' "$CODE $(jq -c -r '"\(.valid) \(.changes) \(.plan)"' <<<"$BODY")" "the same mapping: no changes"
jq '.indices[0].tables[0].columns += [{"name": "no_such_col"}]' "$TEST_TMP/cur.json" >"$TEST_TMP/bad.json"
api POST /api/v1/mapping/plan -H 'Content-Type: application/json' --data-binary @"$TEST_TMP/bad.json"
assert_eq 422 "$CODE" "a mapping naming a missing column is refused ($BODY)"
assert_contains "$(jq -r '.problems | join("\n")' <<<"$BODY")" "no_such_col" "the problem names the column"
api POST /api/v1/mapping/plan -H 'Content-Type: application/json' -d '{"indices": [}'
assert_eq "422 false" "$CODE $(jq -r .valid <<<"$BODY")" "a syntax error"
assert_contains "$(jq -r .error <<<"$BODY")" "line 1" "the syntax error's place"
jq '(.indices[] | select(.alias == "brands") | .history_retention) = 3' "$TEST_TMP/cur.json" >"$TEST_TMP/ret.json"
api POST /api/v1/mapping/apply -H 'Content-Type: application/json' --data-binary @"$TEST_TMP/ret.json"
assert_eq '200 1 true' "$CODE $(jq -r '"\(.changes) \(.applied)"' <<<"$BODY")" "applied ($BODY)"
assert_contains "$(jq -r '.plan | join("\n")' <<<"$BODY")" "history_retention 2 -> 3" "the plan says what changed"
assert_eq 3 "$(meta_q "SELECT history_retention FROM index_configs WHERE source = 'shop' AND alias = 'brands'")" \
    "stored in the metadata"
api GET /api/v1/source/tables
assert_eq 200 "$CODE" "the source's tables"
assert_eq '["id"]' "$(jq -c '.tables[] | select(.database == "shop" and .table == "products") | .primary_key' <<<"$BODY")" \
    "shop.products with its primary key"
assert_eq 0 "$(jq --arg m "$meta" '[.tables[] | select(.database == $m)] | length' <<<"$BODY")" "not the metadata schema's"
api GET "/api/v1/source/tables/shop/products/mapping?depth=1"
assert_eq 200 "$CODE" "a mapping generated for shop.products"
assert_eq shop.products "$(jq -r .mapping.indices[0].tables[0].table <<<"$BODY")" "the root table"
assert_eq "$(mysql_q 'SELECT MIN(id) FROM shop.products')" "$(jq -r .sample.id <<<"$BODY")" "the sample is the first product"
assert_contains "$(jq -r '.guesses | join("\n")' <<<"$BODY")" "guessed (no foreign key): shop.products.brand_id -> shop.brands.id" \
    "the guesses said"
api GET "/api/v1/source/tables/shop/nope/mapping"
expect_error 404 "an unknown table"
api GET "/api/v1/source/tables/shop/products/mapping?depth=9"
expect_error 400 "depth out of range"
api GET "/api/v1/source/tables/sh%20op/products/mapping"
expect_error 404 "a name the API does not route"
# a link table (composite primary key, nothing unique on its own): no root,
# but its relations for the Mapping screen's flattening
api GET "/api/v1/source/tables/shop/product_tags/mapping?depth=1"
expect_error 404 "a composite primary key as a root"
assert_contains "$(jq -r .error <<<"$BODY")" "has a primary key of 2 columns" "the composite key named"
api GET "/api/v1/source/tables/shop/product_tags/mapping?depth=1&for=relations"
assert_eq 200 "$CODE" "for=relations: its relations ($BODY)"
assert_eq "product tag" "$(jq -r '[.mapping.indices[0].tables[0].relations[].extend_name] | join(" ")' <<<"$BODY")" \
    "the link table's two references"
api GET "/api/v1/source/tables/shop/product_tags/mapping?for=roots"
expect_error 400 "an unknown for="

# ---- the builds of an index config, newest first
api GET /api/v1/indices/products/runs
assert_eq "200 3 cancelled 2 done" "$CODE $(jq -r '"\(.runs[0].version) \(.runs[0].status) \(.runs[1].version) \(.runs[1].status)"' <<<"$BODY")" \
    "runs: the cancelled build, then the one that went live ($BODY)"
assert_eq "$(meta_q "SELECT docs_written FROM reindex_runs WHERE alias = 'products' AND version = 2")" \
    "$(jq -r '.runs[1].docs_written' <<<"$BODY")" "a run's documents written, as stored"
assert_true "a run's rate" jq -e '.runs[1].docs_per_second > 0' <<<"$BODY"

# ---- resync of ids: a document changed behind the daemon's back comes back from SQL
ver="$(curl -s "$SEARCH_URL/products/_doc/1" | jq -r ._version)"
curl -s -XPUT "$SEARCH_URL/products_v2/_doc/1?version=$ver&version_type=external_gte" -H 'Content-Type: application/json' \
    -d '{"id":1,"name":"tampered"}' >/dev/null
search_refresh products
assert_eq tampered "$(curl -s "$SEARCH_URL/products/_doc/1" | jq -r ._source.name)" "the engine's copy tampered with"
api POST /api/v1/indices/products/resync -H 'Content-Type: application/json' -d '{"ids":["1", 2]}'
assert_eq "200 2 0" "$CODE $(jq -r '"\(.rebuilt) \(.dead_letters)"' <<<"$BODY")" "resync of two ids ($BODY)"
search_refresh products
assert_eq "$(mysql_q 'SELECT name FROM shop.products WHERE id = 1')" "$(curl -s "$SEARCH_URL/products/_doc/1" | jq -r ._source.name)" \
    "the resynced document has SQL's value again"
api POST /api/v1/indices/products/resync -H 'Content-Type: application/json' -d '{"ids":[]}'
expect_error 400 "resync without ids"
api POST /api/v1/indices/nosuch/resync -H 'Content-Type: application/json' -d '{"ids":["1"]}'
expect_error 404 "resync of an unknown index config"

# ---- delete-all: the alias typed again; the sync log says it
api POST /api/v1/indices/brands/delete-all -H 'Content-Type: application/json' -d '{"confirm":"brand"}'
expect_error 400 "delete-all without the alias typed again"
assert_contains "$(curl -s "$SEARCH_URL/_alias/brands")" "brands_v" "nothing deleted"
api POST /api/v1/indices/brands/delete-all -H 'Content-Type: application/json' -d '{"confirm":"brands"}'
assert_eq "200 unavailable" "$CODE $(jq -r .state <<<"$BODY")" "delete-all ($BODY)"
assert_eq 404 "$(curl -s -o /dev/null -w '%{http_code}' "$SEARCH_URL/_alias/brands")" "the alias and its indices are gone"
api GET "/api/v1/sync-log?limit=5"
assert_eq "200 brands indices deleted" "$CODE $(jq -r '.entries[0] | "\(.index) \(.event)"' <<<"$BODY")" "the sync log's newest entry"
api GET "/api/v1/sync-log?event=mapping_import&limit=1"
assert_eq mapping_import "$(jq -r '.entries[0].event' <<<"$BODY")" "the sync log by event"
api GET "/api/v1/sync-log?limit=x"
expect_error 400 "a bad limit"

# ---- a listen address in use is a configuration error (exit 2) naming it
st=0
timeout 60 "$SEARCHSYNC_BIN" run --config "$TEST_TMP/c.ini" >"$TEST_TMP/run2.log" 2>&1 || st=$?
assert_eq 2 "$st" "a second daemon on the same admin address: exit 2"
assert_contains "$(cat "$TEST_TMP/run2.log")" "127.0.0.1:$PORT" "the error names the address"
assert_contains "$(cat "$TEST_TMP/run2.log")" "in use" "and the cause"

# ---- SIGTERM with calls queued on the node: those not yet run get 503, none hangs
held0="$(held)"
slow_posts 6 stop
wait_until 10 "the first call held on the node" bash -c "[ \$(grep -c 'test hook: request .* held' '$TEST_TMP/run.log') -gt $held0 ]"
sleep 0.3
t0="$(date +%s)"
daemon_stop
for p in "${SLOW_PIDS[@]}"; do wait "$p" || true; done
assert_true "the calls answered within 20 s of SIGTERM" [ $(($(date +%s) - t0)) -lt 20 ]
n503=0
for i in $(seq 1 6); do
    c="$(cat "$TEST_TMP/stop.$i.code")"
    case "$c" in
    409) assert_contains "$(cat "$TEST_TMP/stop.$i")" "no [cluster] zookeeper" "call $i at SIGTERM: run, its answer" ;;
    503) assert_contains "$(cat "$TEST_TMP/stop.$i")" "the daemon is stopping" "call $i at SIGTERM: not run, 503 says why"
         n503=$((n503 + 1)) ;;
    *) fail "call $i at SIGTERM: HTTP $c ($(cat "$TEST_TMP/stop.$i" "$TEST_TMP/stop.$i.err"))" ;;
    esac
done
assert_true "the calls still queued at SIGTERM: 503 ($n503 of 6)" [ "$n503" -ge 1 ]
assert_eq 0 "$DAEMON_RC" "SIGTERM: clean exit"
assert_contains "$(cat "$TEST_TMP/run.log")" "admin HTTP server stopped" "the server stopped with the daemon"
assert_eq "" "$(grep -E 'ERROR' "$TEST_TMP/run.log" || true)" "no errors in the daemon log"
pass
