#!/usr/bin/env bash
# tests/harness/connect.sh — the real Debezium connector for tests: Kafka
# Connect 4.3.0 in standalone mode running Debezium's MySQL connector
# 3.6.1.Final (or, CONNECT_FLAVOUR=mariadb, its MariaDB connector 3.5.0.Final:
# the newest Maven Central has), from their jars on Maven Central
# (connect/pom-FLAVOUR.xml: one classpath, no plugin path), against the
# harness's Kafka (kafka.sh) and a MySQL/MariaDB of the harness (mysql8.sh,
# mariadb.sh). Connect 4.3's clients talk to the harness's Kafka 3.9.1 broker
# as they are.
#
# Owns: the jar cache ($SEARCHSYNC_CACHE/connect-4.3.0-debezium-FLAVOUR-V:
# cp.txt) and one worker in $SEARCHSYNC_CONNECT_DIR: worker.properties,
# connector.properties (written at the first start in DIR, kept for later
# starts: a start after a stop or a kill goes on from the offsets),
# offsets.dat (Connect standalone's source offsets), schema-history.dat
# (Debezium's schema history, a file), connect.log, connect.pid, connect.env.
#
# usage: connect.sh fetch                       resolve the jars (mvn); cached
#        SEARCHSYNC_CONNECT_DIR=DIR connect.sh start|stop|kill|restart|status|wait-snapshot
#   start   fetch if needed, write the properties (first start), start
#           org.apache.kafka.connect.cli.ConnectStandalone with its REST
#           listener on a free loopback port, wait until the connector's task
#           is RUNNING (a task that FAILED fails the start with its trace);
#           writes DIR/connect.env
#   stop    SIGTERM (Connect flushes its offsets), SIGKILL after 30 s;
#   kill    SIGKILL (offsets since the last flush are lost: Debezium sends
#           those changes again); restart: stop + start; status: the REST
#           status of the connector (exit 1 when not running)
#   wait-snapshot [SECS]  until the connector's snapshot is over (its log says
#           the snapshot completed, or that streaming started)
# Settings of the first start (environment):
#   KAFKA_BOOTSTRAP                 the broker (kafka.sh's kafka.env)
#   DBZ_HOST DBZ_PORT DBZ_USER DBZ_PASSWORD   the server Debezium reads
#   DBZ_DATABASES                   database.include.list
#   DBZ_PREFIX                      topic.prefix (default dbz): data topics
#                                   PREFIX.DB.TABLE, schema changes PREFIX,
#                                   transaction markers PREFIX.transaction,
#                                   heartbeats __debezium-heartbeat.PREFIX
#   DBZ_SCHEMAS                     on (default) | off: the JSON converter's
#                                   schemas.enable, for keys and values
#   DBZ_SERVER_ID                   database.server.id (default: random)
#   DBZ_PROPS                       more connector properties, "k=v" lines,
#                                   after (and so over) the defaults below
# Defaults written: Debezium's own modes spelled out (decimal.handling.mode=
# precise, time.precision.mode=adaptive_time_microseconds,
# binary.handling.mode=bytes, bigint.unsigned.handling.mode=long),
# provide.transaction.metadata=true, heartbeat.interval.ms=1000,
# include.schema.changes=true, the schema history in DIR/schema-history.dat.
# The user needs SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE,
# REPLICATION CLIENT (LOCK TABLES only with snapshot.locking.mode=extended or
# where FLUSH TABLES WITH READ LOCK is refused).
# DIR/connect.env exports CONNECT_URL (REST), CONNECT_NAME (the connector),
# CONNECT_PID, CONNECT_LOG, DBZ_PREFIX, DBZ_SCHEMAS. Knobs: CONNECT_HEAP
# (default 512m), CONNECT_FLAVOUR (mysql | mariadb), SEARCHSYNC_CACHE.
# Exit 3: Maven Central unreachable (the jars cannot be had); other failures 1.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

NAME=connect
CONNECT_VERSION=4.3.0
FLAVOUR="${CONNECT_FLAVOUR:-mysql}"
case "$FLAVOUR" in
    mysql) DBZ_VERSION=3.6.1.Final; CONNECTOR_CLASS=io.debezium.connector.mysql.MySqlConnector ;;
    mariadb) DBZ_VERSION=3.5.0.Final; CONNECTOR_CLASS=io.debezium.connector.mariadb.MariaDbConnector ;;
    *) h_die "CONNECT_FLAVOUR=$FLAVOUR: expected mysql or mariadb" ;;
esac
POM="$HARNESS_ROOT/connect/pom-$FLAVOUR.xml"
CACHE="$SEARCHSYNC_CACHE/connect-$CONNECT_VERSION-debezium-$FLAVOUR-$DBZ_VERSION"

do_fetch() { h_mvn_classpath "$POM" "$CACHE" "Kafka Connect $CONNECT_VERSION and Debezium $FLAVOUR $DBZ_VERSION jars"; }

state_dir() {
    [ -n "${SEARCHSYNC_CONNECT_DIR:-}" ] || h_die "SEARCHSYNC_CONNECT_DIR is not set: the directory of the Connect worker"
    mkdir -p "$SEARCHSYNC_CONNECT_DIR"
    SEARCHSYNC_CONNECT_DIR="$(cd "$SEARCHSYNC_CONNECT_DIR" && pwd)"
    export SEARCHSYNC_HARNESS_DIR="$SEARCHSYNC_CONNECT_DIR" # common.sh's state dir: ours
    DIR="$SEARCHSYNC_CONNECT_DIR"
    LOGF="$DIR/connect.log"
}

need() { [ -n "${!1:-}" ] || h_die "$1 is not set (the first start in $DIR writes the connector's settings from it)"; }

write_props() {
    local schemas="${DBZ_SCHEMAS:-on}" s
    case "$schemas" in on) s=true ;; off) s=false ;; *) h_die "DBZ_SCHEMAS=$schemas: expected on or off" ;; esac
    for v in KAFKA_BOOTSTRAP DBZ_HOST DBZ_PORT DBZ_USER DBZ_DATABASES; do need "$v"; done
    local prefix="${DBZ_PREFIX:-dbz}"
    cat >"$DIR/worker.properties" <<EOF
bootstrap.servers=$KAFKA_BOOTSTRAP
key.converter=org.apache.kafka.connect.json.JsonConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
key.converter.schemas.enable=$s
value.converter.schemas.enable=$s
offset.storage.file.filename=$DIR/offsets.dat
offset.flush.interval.ms=1000
listeners=http://127.0.0.1:@PORT@
rest.advertised.host.name=127.0.0.1
plugin.discovery=only_scan
EOF
    cat >"$DIR/connector.properties" <<EOF
name=debezium-$prefix
connector.class=$CONNECTOR_CLASS
tasks.max=1
database.hostname=$DBZ_HOST
database.port=$DBZ_PORT
database.user=$DBZ_USER
database.password=${DBZ_PASSWORD:-}
database.server.id=${DBZ_SERVER_ID:-$((5000 + RANDOM % 50000))}
topic.prefix=$prefix
database.include.list=$DBZ_DATABASES
schema.history.internal=io.debezium.storage.file.history.FileSchemaHistory
schema.history.internal.file.filename=$DIR/schema-history.dat
include.schema.changes=true
provide.transaction.metadata=true
heartbeat.interval.ms=1000
decimal.handling.mode=precise
time.precision.mode=adaptive_time_microseconds
binary.handling.mode=bytes
bigint.unsigned.handling.mode=long
${DBZ_PROPS:-}
EOF
    printf 'DBZ_PREFIX=%q\nDBZ_SCHEMAS=%q\n' "$prefix" "$schemas" >"$DIR/settings.sh"
}

rest() { curl -sf -m 5 "http://127.0.0.1:$REST_PORT$1"; }

# 0 running, 1 not yet, 2 failed (the trace on stdout)
task_state() {
    local st
    st="$(rest "/connectors/$CNAME/status" 2>/dev/null)" || return 1
    if jq -e '.connector.state == "FAILED" or any(.tasks[]; .state == "FAILED")' <<<"$st" >/dev/null; then
        jq -r '.connector.trace // empty, (.tasks[] | .trace // empty)' <<<"$st" | head -40
        return 2
    fi
    jq -e '.connector.state == "RUNNING" and (.tasks | length) > 0 and all(.tasks[]; .state == "RUNNING")' \
        <<<"$st" >/dev/null
}

srv_start() {
    local t0 i r s
    command -v java >/dev/null || h_die "java missing; run tests/harness/deps.sh"
    command -v jq >/dev/null || h_die "jq missing; run tests/harness/deps.sh"
    if h_alive "$NAME"; then
        h_log "connect already running in $DIR (pgid $(h_pid "$NAME"))"
        return 0
    fi
    do_fetch
    [ -s "$DIR/connector.properties" ] || write_props
    CNAME="$(sed -n 's/^name=//p' "$DIR/connector.properties")"
    REST_PORT="$(h_env_get "$NAME" CONNECT_PORT)"
    if [ -z "$REST_PORT" ] || h_port_in_use "$REST_PORT"; then REST_PORT="$(h_free_port)"; fi
    sed "s/@PORT@/$REST_PORT/" "$DIR/worker.properties" >"$DIR/worker.run.properties"
    touch "$LOGF"
    t0="$(h_now)"
    h_spawn "$NAME" "$LOGF" java -Xms128m "-Xmx${CONNECT_HEAP:-512m}" $(h_jvm_quick) -XX:+UseG1GC \
        -Djava.awt.headless=true -Dfile.encoding=UTF-8 -Djava.io.tmpdir="$DIR" \
        -Dorg.slf4j.simpleLogger.defaultLogLevel=info -Dorg.slf4j.simpleLogger.showDateTime=true \
        -Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS \
        -Dorg.slf4j.simpleLogger.log.org.apache.kafka.clients=warn \
        -Dorg.slf4j.simpleLogger.log.org.apache.kafka.common.utils.AppInfoParser=warn \
        -Dorg.slf4j.simpleLogger.log.org.apache.kafka.connect.runtime.isolation=warn \
        -Dorg.slf4j.simpleLogger.log.org.reflections=warn \
        -cp "$(cat "$CACHE/cp.txt")" org.apache.kafka.connect.cli.ConnectStandalone \
        "$DIR/worker.run.properties" "$DIR/connector.properties"
    r=1
    for ((i = 0; i < 600; i++)); do
        s=0
        task_state >"$DIR/trace.txt" || s=$?
        [ "$s" != 0 ] || { r=0; break; }
        if [ "$s" = 2 ]; then
            h_log "the connector FAILED:"; cat "$DIR/trace.txt" >&2; r=2; break
        fi
        h_alive "$NAME" || { h_log "Connect exited while starting"; break; }
        sleep 0.2
    done
    if [ "$r" != 0 ]; then
        h_tail_log "$LOGF" 60
        h_stop "$NAME" 10
        h_die "Kafka Connect did not start the connector $CNAME (log: $LOGF)"
    fi
    . "$DIR/settings.sh"
    h_write_env "$NAME" CONNECT_URL="http://127.0.0.1:$REST_PORT" CONNECT_PORT="$REST_PORT" \
        CONNECT_NAME="$CNAME" CONNECT_PID="$(h_pid "$NAME")" CONNECT_LOG="$LOGF" \
        DBZ_PREFIX="$DBZ_PREFIX" DBZ_SCHEMAS="$DBZ_SCHEMAS"
    h_log "Kafka Connect $CONNECT_VERSION (standalone) running $CNAME (Debezium $FLAVOUR $DBZ_VERSION) in $(h_elapsed "$t0")s; REST on 127.0.0.1:$REST_PORT; env: $DIR/connect.env"
}

srv_status() {
    h_alive "$NAME" || { echo "connect not running"; return 1; }
    REST_PORT="$(h_env_get "$NAME" CONNECT_PORT)"
    CNAME="$(h_env_get "$NAME" CONNECT_NAME)"
    rest "/connectors/$CNAME/status" || { echo "connect running (pgid $(h_pid "$NAME")), REST not answering"; return 0; }
    echo
}

snapshot_done() {
    grep -qE 'Snapshot completed|Snapshot ended with SnapshotResult \[status=COMPLETED|Starting streaming|Streaming started|Connected to binlog at|Connected to MySQL binlog' "$LOGF"
}

case "${1:-}" in
    fetch) do_fetch ;;
    start) state_dir; srv_start ;;
    status) state_dir; srv_status ;;
    wait-snapshot)
        state_dir
        H_WAIT_NAME=$NAME h_wait_for "${2:-300}" "the snapshot of $(h_env_get "$NAME" CONNECT_NAME)" snapshot_done ||
            { h_tail_log "$LOGF" 40; h_die "the connector's snapshot did not complete"; } ;;
    stop|kill|restart) state_dir; h_dispatch "$NAME" "$1" ;;
    *) echo "usage: $0 fetch | SEARCHSYNC_CONNECT_DIR=DIR $0 start|stop|kill|restart|status|wait-snapshot [SECS]" >&2; exit 2 ;;
esac
