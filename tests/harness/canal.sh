#!/usr/bin/env bash
# tests/harness/canal.sh — the real canal for tests: Alibaba's canal server
# 1.1.4 from Maven Central (canal/pom.xml: com.alibaba.otter:canal.deployer
# and the dependencies its POM names), in Kafka mode with flat messages
# (canal.mq.flatMessage=true), reading the harness's MariaDB (mariadb.sh) or
# MySQL 8.0.15 (mysql8.sh) as a replica and writing canal's JSON to the
# harness's Kafka (kafka.sh).
#
# Why the files in canal/: Maven Central has canal's jars but not the
# deployer's tarball, whose conf/ holds what canal reads at run time (the
# server's canal.properties, an instance's instance.properties, the Spring
# wiring of an instance, logback.xml). canal/ has them written for the
# harness: canal.properties and instance.properties with @NAME@ markers this
# script fills in, spring/harness-instance.xml (what it wires, and what it
# leaves out: its header), logback.xml. The server's conf directory
# (DIR/conf) is put first on the classpath, where CanalLauncher and the
# wiring look for them.
#
# Why 1.1.4: it is the newest canal.deployer (the jar with CanalLauncher)
# Maven Central serves; 1.1.5 and later publish canal.server and the Kafka
# connector plugin (connector.kafka) but no deployer jar. 1.1.4 runs on the
# Java 17 this machine has.
#
# Owns: the jar cache ($SEARCHSYNC_CACHE/canal-1.1.4: cp.txt) and one server
# in $SEARCHSYNC_CANAL_DIR: conf/ (written at the first start in DIR, kept
# for later starts), data/ (the instance's cursor, meta.dat: canal goes on
# from it), canal.log, canal.pid, canal.env.
#
# usage: canal.sh fetch                       resolve the jars (mvn); cached
#        SEARCHSYNC_CANAL_DIR=DIR canal.sh start|stop|kill|restart|status
#   start   fetch if needed, write conf/ (first start), start CanalLauncher,
#           wait until the instance has found its start position (its log
#           says so); writes DIR/canal.env
#   stop    SIGTERM (canal's shutdown hook flushes its cursor), SIGKILL
#           after 30 s
#   kill    SIGKILL (what came after the last flush of the cursor, at most
#           200 ms of it, is sent again at the next start)
# Settings of the first start (environment):
#   KAFKA_BOOTSTRAP                        the broker (kafka.sh's kafka.env)
#   CANAL_HOST CANAL_PORT CANAL_USER CANAL_PASSWORD   the server read
#   CANAL_DESTINATION  the instance's name (default harness)
#   CANAL_SERVER_ID    canal.instance.mysql.slaveId (default: random)
#   CANAL_TOPIC        canal.mq.topic (default canal)
#   CANAL_INCLUDE      the one database replicated (filter DB\..*; default:
#                      every table, .*\..*)
#   CANAL_INSTANCE_PROPS  more instance settings, "k=v" lines, after (and so
#                      over) those of canal/instance.properties
#   CANAL_SERVER_PROPS    more server settings, likewise after canal.properties
# With no position stored, canal starts at the server's current end of the
# binlog (SHOW MASTER STATUS): start canal before the rows it is to send.
# The user needs SELECT, REPLICATION CLIENT, REPLICATION SLAVE on *.*, and
# on MySQL 8 mysql_native_password: canal 1.1.4's client does only the fast
# path of caching_sha2_password ("caching_sha2_password Auth failed" when
# the server asks for the full one, as it does over TCP without TLS).
# What canal 1.1.4's binlog parser cannot read, so the server it reads must
# not write: MariaDB 10.11's DDL events (canal logs "Query_log_event has
# unknown status vars (first has code: 33)", then "Read Q_FLAGS2_CODE error:
# limit excceed", and retries the same event for ever),
# and MySQL 8's binlog_row_metadata=FULL with an ENUM or SET column (table
# map metadata type 10: "unknow type : 10"): read MySQL 8 with
# binlog_row_metadata=MINIMAL, its default.
# DIR/canal.env exports CANAL_PID, CANAL_LOG, CANAL_DESTINATION, CANAL_TOPIC.
# Knobs: CANAL_HEAP (default 256m), CANAL_TZ (the JVM's time zone, in which
# canal writes TIMESTAMP values as text; default UTC), SEARCHSYNC_CACHE.
# Exit 3: Maven Central unreachable (the jars cannot be had); other failures 1.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

NAME=canal
CANAL_VERSION=1.1.4
POM="$HARNESS_ROOT/canal/pom.xml"
CACHE="$SEARCHSYNC_CACHE/canal-$CANAL_VERSION"

do_fetch() { h_mvn_classpath "$POM" "$CACHE" "canal $CANAL_VERSION and its dependencies"; }

state_dir() {
    [ -n "${SEARCHSYNC_CANAL_DIR:-}" ] || h_die "SEARCHSYNC_CANAL_DIR is not set: the directory of the canal server"
    mkdir -p "$SEARCHSYNC_CANAL_DIR"
    SEARCHSYNC_CANAL_DIR="$(cd "$SEARCHSYNC_CANAL_DIR" && pwd)"
    export SEARCHSYNC_HARNESS_DIR="$SEARCHSYNC_CANAL_DIR" # common.sh's state dir: ours
    DIR="$SEARCHSYNC_CANAL_DIR"
    LOGF="$DIR/canal.log"
}

need() { [ -n "${!1:-}" ] || h_die "$1 is not set (the first start in $DIR writes canal's settings from it)"; }

# fill FILE's @NAME@ markers from the variables named; a value is taken as
# it is (sed's replacement specials escaped)
fill() { # SRC DST NAME=VALUE...
    local src="$1" dst="$2" kv k v script=""
    shift 2
    for kv in "$@"; do
        k="${kv%%=*}" v="${kv#*=}"
        v="$(printf '%s' "$v" | sed -e 's/[\\&|]/\\&/g')"
        script+="s|@$k@|$v|g;"
    done
    sed -e "$script" "$src" >"$dst"
    ! grep -n '@[A-Z_]*@' "$dst" >&2 || h_die "$dst: a setting was left unfilled"
}

write_conf() {
    local v dest filter
    for v in KAFKA_BOOTSTRAP CANAL_HOST CANAL_PORT CANAL_USER; do need "$v"; done
    dest="${CANAL_DESTINATION:-harness}"
    filter='.*\\..*'
    [ -z "${CANAL_INCLUDE:-}" ] || filter="$CANAL_INCLUDE\\\\..*"
    mkdir -p "$DIR/conf/spring" "$DIR/conf/$dest" "$DIR/data"
    fill "$HARNESS_ROOT/canal/canal.properties" "$DIR/conf/canal.properties" \
        CANAL_PORT="$(h_free_port)" CANAL_METRICS_PORT="$(h_free_port)" \
        CANAL_DESTINATION="$dest" CANAL_CONF="$DIR/conf" CANAL_DATA="$DIR/data" \
        KAFKA_BOOTSTRAP="$KAFKA_BOOTSTRAP"
    [ -z "${CANAL_SERVER_PROPS:-}" ] || printf '%s\n' "$CANAL_SERVER_PROPS" >>"$DIR/conf/canal.properties"
    fill "$HARNESS_ROOT/canal/instance.properties" "$DIR/conf/$dest/instance.properties" \
        CANAL_SOURCE="$CANAL_HOST:$CANAL_PORT" CANAL_USER="$CANAL_USER" \
        CANAL_PASSWORD="${CANAL_PASSWORD:-}" CANAL_SERVER_ID="${CANAL_SERVER_ID:-$((6000 + RANDOM % 50000))}" \
        CANAL_FILTER="$filter" CANAL_TOPIC="${CANAL_TOPIC:-canal}"
    [ -z "${CANAL_INSTANCE_PROPS:-}" ] || printf '%s\n' "$CANAL_INSTANCE_PROPS" >>"$DIR/conf/$dest/instance.properties"
    cp "$HARNESS_ROOT/canal/spring/harness-instance.xml" "$DIR/conf/spring/"
    cp "$HARNESS_ROOT/canal/logback.xml" "$DIR/conf/"
    printf 'CANAL_DESTINATION=%q\nCANAL_TOPIC=%q\n' "$dest" "${CANAL_TOPIC:-canal}" >"$DIR/settings.sh"
}

srv_start() {
    local t0 i r at
    command -v java >/dev/null || h_die "java missing; run tests/harness/deps.sh"
    if h_alive "$NAME"; then
        h_log "canal already running in $DIR (pgid $(h_pid "$NAME"))"
        return 0
    fi
    do_fetch
    [ -s "$DIR/conf/canal.properties" ] || write_conf
    touch "$LOGF"
    at=$(wc -l <"$LOGF")
    t0="$(h_now)"
    h_spawn "$NAME" "$LOGF" java -Xms64m "-Xmx${CANAL_HEAP:-256m}" $(h_jvm_quick) -XX:+UseSerialGC \
        -Djava.awt.headless=true -Dfile.encoding=UTF-8 -Djava.io.tmpdir="$DIR" \
        -Duser.timezone="${CANAL_TZ:-UTC}" \
        -cp "$DIR/conf:$(cat "$CACHE/cp.txt")" com.alibaba.otter.canal.deployer.CanalLauncher
    r=1
    for ((i = 0; i < 300; i++)); do
        if tail -n +"$((at + 1))" "$LOGF" | grep -q 'find start position successfully'; then r=0; break; fi
        if tail -n +"$((at + 1))" "$LOGF" | grep -qE 'generator instance failed|## Something goes wrong|ServerRunningMonitor - start failed|has an error, retrying'; then break; fi
        h_alive "$NAME" || { h_log "canal exited while starting"; break; }
        sleep 0.2
    done
    if [ "$r" != 0 ]; then
        h_tail_log "$LOGF" 60
        h_stop "$NAME" 10
        h_die "canal did not start replicating (log: $LOGF)"
    fi
    . "$DIR/settings.sh"
    h_write_env "$NAME" CANAL_PID="$(h_pid "$NAME")" CANAL_LOG="$LOGF" \
        CANAL_DESTINATION="$CANAL_DESTINATION" CANAL_TOPIC="$CANAL_TOPIC"
    h_log "canal $CANAL_VERSION replicating in $(h_elapsed "$t0")s; env: $DIR/canal.env"
}

case "${1:-}" in
    fetch) do_fetch ;;
    start) state_dir; srv_start ;;
    stop|kill|restart|status) state_dir; h_dispatch "$NAME" "$1" ;;
    *) echo "usage: $0 fetch | SEARCHSYNC_CANAL_DIR=DIR $0 start|stop|kill|restart|status" >&2; exit 2 ;;
esac
