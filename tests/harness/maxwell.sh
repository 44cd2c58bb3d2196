#!/usr/bin/env bash
# tests/harness/maxwell.sh — the real Maxwell for tests: Zendesk's Maxwell
# daemon 1.17.0 from Maven Central (maxwell/pom.xml: its jar and the
# dependencies its POM names; its Kafka producer's kafka-clients 1.0.0 talks
# to the harness's Kafka 3.9.1 broker as it is), reading the harness's
# MariaDB (mariadb.sh) as a replica and writing Maxwell's JSON to the
# harness's Kafka (kafka.sh).
#
# Why 1.17.0: Maven Central serves 1.17.0 and 1.22.6 of com.zendesk:maxwell
# and nothing newer. 1.22.6 does not run on the Java this machine has (17;
# the JDKs here are 17 and 25): its Kafka producer dies at the first row with
# NoClassDefFoundError jdk/nashorn/api/scripting/ScriptObjectMirror (every
# value goes through an instanceof of Nashorn's class, and Nashorn left the
# JDK in Java 15). 1.17.0 runs on Java 17 but not against MySQL 8.0.15
# (mysql8.sh): its Connector/J 5.1.39 fails while connecting (a
# NullPointerException reading the server's variables), and with Connector/J
# 5.1.48 put in its place its schema capture fails (IndexOutOfBoundsException
# in SchemaCapturer.captureTablesPK). Against MariaDB 10.11 it runs.
#
# Owns: the jar cache ($SEARCHSYNC_CACHE/maxwell-1.17.0: cp.txt) and one
# daemon in $SEARCHSYNC_MAXWELL_DIR: config.properties (written at the first
# start in DIR, kept for later starts: Maxwell goes on from the position it
# stored in its schema database), maxwell.log, maxwell.pid, maxwell.env.
#
# usage: maxwell.sh fetch                       resolve the jars (mvn); cached
#        SEARCHSYNC_MAXWELL_DIR=DIR maxwell.sh start|stop|kill|restart|status
#   start   fetch if needed, write config.properties (first start), start
#           com.zendesk.maxwell.Maxwell, wait until it replicates (its log
#           says the binlog is connected); writes DIR/maxwell.env
#   stop    SIGTERM (Maxwell stores its position), SIGKILL after 30 s;
#   kill    SIGKILL (what was not stored is sent again at the next start)
# Settings of the first start (environment):
#   KAFKA_BOOTSTRAP                   the broker (kafka.sh's kafka.env)
#   MAXWELL_HOST MAXWELL_PORT MAXWELL_USER MAXWELL_PASSWORD   the server
#   MAXWELL_SCHEMA     Maxwell's own database (schema_database; default
#                      maxwell): its positions, schemas, bootstrap requests
#   MAXWELL_CLIENT_ID  client_id (default maxwell)
#   MAXWELL_SERVER_ID  replica_server_id (default: random)
#   MAXWELL_TOPIC      kafka_topic (default maxwell; %{database} and
#                      %{table} are replaced per row)
#   MAXWELL_DDL_TOPIC  ddl_kafka_topic (default: MAXWELL_TOPIC)
#   MAXWELL_INCLUDE    the one database replicated (filter: exclude *.*,
#                      include DB.*; default: every database)
#   MAXWELL_PROPS      more settings, "k=v" lines, after (and so over) the
#                      defaults below
# Defaults written: producer=kafka, producer_partition_by=primary_key,
# output_binlog_position=true, output_xoffset=true, output_ddl=true,
# bootstrapper=async, kafka.acks=all, jdbc_options=characterEncoding=UTF-8
# (emoji in a bootstrap's rows). With MAXWELL_INCLUDE the filter also lets
# maxwell.bootstrap through: Maxwell sees a bootstrap request (a row
# inserted there) only through its filter, and sends that row to
# MAXWELL_TOPIC as well.
# The user needs SELECT, REPLICATION CLIENT, REPLICATION SLAVE on *.* and
# ALL on the schema database.
# DIR/maxwell.env exports MAXWELL_PID, MAXWELL_LOG, MAXWELL_SCHEMA,
# MAXWELL_CLIENT_ID. Knobs: MAXWELL_HEAP (default 256m), SEARCHSYNC_CACHE.
# Exit 3: Maven Central unreachable (the jars cannot be had); other failures 1.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

NAME=maxwell
MAXWELL_VERSION=1.17.0
POM="$HARNESS_ROOT/maxwell/pom.xml"
CACHE="$SEARCHSYNC_CACHE/maxwell-$MAXWELL_VERSION"

do_fetch() { h_mvn_classpath "$POM" "$CACHE" "Maxwell $MAXWELL_VERSION and its dependencies"; }

state_dir() {
    [ -n "${SEARCHSYNC_MAXWELL_DIR:-}" ] || h_die "SEARCHSYNC_MAXWELL_DIR is not set: the directory of the Maxwell daemon"
    mkdir -p "$SEARCHSYNC_MAXWELL_DIR"
    SEARCHSYNC_MAXWELL_DIR="$(cd "$SEARCHSYNC_MAXWELL_DIR" && pwd)"
    export SEARCHSYNC_HARNESS_DIR="$SEARCHSYNC_MAXWELL_DIR" # common.sh's state dir: ours
    DIR="$SEARCHSYNC_MAXWELL_DIR"
    LOGF="$DIR/maxwell.log"
}

need() { [ -n "${!1:-}" ] || h_die "$1 is not set (the first start in $DIR writes Maxwell's settings from it)"; }

write_props() {
    local v topic filter=""
    for v in KAFKA_BOOTSTRAP MAXWELL_HOST MAXWELL_PORT MAXWELL_USER; do need "$v"; done
    topic="${MAXWELL_TOPIC:-maxwell}"
    [ -z "${MAXWELL_INCLUDE:-}" ] || filter="filter=exclude: *.*, include: $MAXWELL_INCLUDE.*, include: ${MAXWELL_SCHEMA:-maxwell}.bootstrap"
    cat >"$DIR/config.properties" <<EOF
log_level=info
host=$MAXWELL_HOST
port=$MAXWELL_PORT
user=$MAXWELL_USER
password=${MAXWELL_PASSWORD:-}
schema_database=${MAXWELL_SCHEMA:-maxwell}
client_id=${MAXWELL_CLIENT_ID:-maxwell}
replica_server_id=${MAXWELL_SERVER_ID:-$((6000 + RANDOM % 50000))}
producer=kafka
kafka.bootstrap.servers=$KAFKA_BOOTSTRAP
kafka.acks=all
kafka_topic=$topic
ddl_kafka_topic=${MAXWELL_DDL_TOPIC:-$topic}
producer_partition_by=primary_key
output_binlog_position=true
output_xoffset=true
output_ddl=true
jdbc_options=characterEncoding=UTF-8
bootstrapper=async
$filter
${MAXWELL_PROPS:-}
EOF
    printf 'MAXWELL_SCHEMA=%q\nMAXWELL_CLIENT_ID=%q\n' "${MAXWELL_SCHEMA:-maxwell}" \
        "${MAXWELL_CLIENT_ID:-maxwell}" >"$DIR/settings.sh"
}

srv_start() {
    local t0 i r at
    command -v java >/dev/null || h_die "java missing; run tests/harness/deps.sh"
    if h_alive "$NAME"; then
        h_log "maxwell already running in $DIR (pgid $(h_pid "$NAME"))"
        return 0
    fi
    do_fetch
    [ -s "$DIR/config.properties" ] || write_props
    touch "$LOGF"
    at=$(wc -l <"$LOGF")
    t0="$(h_now)"
    h_spawn "$NAME" "$LOGF" java -Xms64m "-Xmx${MAXWELL_HEAP:-256m}" $(h_jvm_quick) -XX:+UseSerialGC \
        -Djava.awt.headless=true -Dfile.encoding=UTF-8 -Djava.io.tmpdir="$DIR" \
        -cp "$(cat "$CACHE/cp.txt")" com.zendesk.maxwell.Maxwell --config "$DIR/config.properties"
    r=1
    for ((i = 0; i < 900; i++)); do
        if tail -n +"$((at + 1))" "$LOGF" | grep -q 'Binlog connected'; then r=0; break; fi
        h_alive "$NAME" || { h_log "Maxwell exited while starting"; break; }
        sleep 0.2
    done
    if [ "$r" != 0 ]; then
        h_tail_log "$LOGF" 60
        h_stop "$NAME" 10
        h_die "Maxwell did not start replicating (log: $LOGF)"
    fi
    . "$DIR/settings.sh"
    h_write_env "$NAME" MAXWELL_PID="$(h_pid "$NAME")" MAXWELL_LOG="$LOGF" \
        MAXWELL_SCHEMA="$MAXWELL_SCHEMA" MAXWELL_CLIENT_ID="$MAXWELL_CLIENT_ID"
    h_log "Maxwell $MAXWELL_VERSION replicating in $(h_elapsed "$t0")s; env: $DIR/maxwell.env"
}

case "${1:-}" in
    fetch) do_fetch ;;
    start) state_dir; srv_start ;;
    stop|kill|restart|status) state_dir; h_dispatch "$NAME" "$1" ;;
    *) echo "usage: $0 fetch | SEARCHSYNC_MAXWELL_DIR=DIR $0 start|stop|kill|restart|status" >&2; exit 2 ;;
esac
