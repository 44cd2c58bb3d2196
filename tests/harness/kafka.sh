#!/usr/bin/env bash
# tests/harness/kafka.sh — a real Kafka for tests: Apache Kafka 3.9.1, one
# node in KRaft mode (broker and controller in one process, no ZooKeeper),
# run from its jars on Maven Central (kafka/pom.xml: kafka_2.13 plus reload4j
# and slf4j-reload4j for its log4j 1 logging).
#
# Owns: the jar cache ($SEARCHSYNC_CACHE/kafka-3.9.1: cp.txt) and one node in
# $SEARCHSYNC_KAFKA_DIR (kafka.pid, kafka.env, kafka.log, server.properties,
# data/). Not one of the suite's always-on servers: a test that needs Kafka
# starts it in a directory of its own and stops it (t_kafka_tail).
#
# usage: kafka.sh fetch                            resolve the jars (mvn); cached
#        SEARCHSYNC_KAFKA_DIR=DIR kafka.sh start|stop|kill|status
#        SEARCHSYNC_KAFKA_DIR=DIR kafka.sh delete-topic TOPIC
#   start   fetch if needed, format the storage (kafka.tools.StorageTool format
#           with a new cluster id), start kafka.Kafka on two free loopback
#           ports (PLAINTEXT and CONTROLLER), wait until a metadata request
#           (kcat -L) is answered, write DIR/kafka.env. Without
#           SEARCHSYNC_KAFKA_DIR a temporary directory is made and printed as
#           `export SEARCHSYNC_KAFKA_DIR=...` on stdout.
#   stop    SIGTERM (SIGKILL after 30 s); kill: SIGKILL; status: running or not
#   delete-topic  delete TOPIC with Kafka's Admin client (a one-file Java
#           program run from the jars: the cached classpath has no
#           kafka-topics tool); waits until the topic is gone
# DIR/kafka.env exports KAFKA_BOOTSTRAP (127.0.0.1:PORT), KAFKA_PORT,
# KAFKA_CONTROLLER_PORT, KAFKA_PID, KAFKA_LOG.
# Topics are created on first use (auto.create.topics.enable, 1 partition;
# KAFKA_PARTITIONS changes the default). Knobs: KAFKA_HEAP (default 512m),
# SEARCHSYNC_CACHE (default ~/.cache/searchsync).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

NAME=kafka
KAFKA_VERSION=3.9.1
POM="$HARNESS_ROOT/kafka/pom.xml"
CACHE="$SEARCHSYNC_CACHE/kafka-$KAFKA_VERSION"

do_fetch() { h_mvn_classpath "$POM" "$CACHE" "Kafka $KAFKA_VERSION jars"; }

# the state directory: SEARCHSYNC_KAFKA_DIR, or a new temporary one on start
state_dir() {
    if [ -z "${SEARCHSYNC_KAFKA_DIR:-}" ]; then
        [ "${1:-}" = start ] || h_die "SEARCHSYNC_KAFKA_DIR is not set: the directory of the Kafka node"
        SEARCHSYNC_KAFKA_DIR="$(mktemp -d "${TMPDIR:-/tmp}/searchsync-kafka.XXXXXX")"
        printf 'export SEARCHSYNC_KAFKA_DIR=%q\n' "$SEARCHSYNC_KAFKA_DIR"
    fi
    mkdir -p "$SEARCHSYNC_KAFKA_DIR"
    SEARCHSYNC_KAFKA_DIR="$(cd "$SEARCHSYNC_KAFKA_DIR" && pwd)"
    export SEARCHSYNC_HARNESS_DIR="$SEARCHSYNC_KAFKA_DIR" # common.sh's state dir: ours
    DIR="$SEARCHSYNC_KAFKA_DIR"
    LOGF="$DIR/kafka.log"
}

java_run() { # java_run CLASS ARGS... — a Kafka tool in the foreground
    java -Xms64m -Xmx256m $(h_jvm_quick) -Dlog4j.configuration="file:$DIR/log4j.properties" \
        -cp "$(cat "$CACHE/cp.txt")" "$@"
}

metadata_ok() { kcat -b "$BOOTSTRAP" -L -m 2 >/dev/null 2>&1; }

# launch PORT CPORT — format the storage and spawn the node; 0 when a
# metadata request is answered, 1 when it died or never answered
launch() {
    local port="$1" cport="$2" cluster_id
    rm -rf "$DIR/data"
    mkdir -p "$DIR/data"
    cat >"$DIR/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$DIR/data
num.partitions=${KAFKA_PARTITIONS:-1}
auto.create.topics.enable=true
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
log.flush.interval.messages=1000000
EOF
    cat >"$DIR/log4j.properties" <<'EOF'
log4j.rootLogger=WARN, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.server.KafkaRaftServer=INFO
log4j.logger.kafka.server.BrokerServer=INFO
EOF
    # a cluster id: 16 random bytes, base64url without padding (Kafka's Uuid text)
    # (given as --cluster-id=ID: an ID starting with "-" would read as an option)
    cluster_id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | cut -c1-22)"
    java_run kafka.tools.StorageTool format --cluster-id="$cluster_id" -c "$DIR/server.properties" \
        >>"$LOGF" 2>&1 || { h_tail_log "$LOGF" 20; h_die "kafka.tools.StorageTool format failed"; }
    h_spawn "$NAME" "$LOGF" java -Xms256m "-Xmx${KAFKA_HEAP:-512m}" $(h_jvm_quick) -XX:+UseG1GC \
        -Djava.awt.headless=true -Dfile.encoding=UTF-8 -Djava.io.tmpdir="$DIR/data" \
        -Dlog4j.configuration="file:$DIR/log4j.properties" \
        -cp "$(cat "$CACHE/cp.txt")" kafka.Kafka "$DIR/server.properties"
    BOOTSTRAP="127.0.0.1:$port"
    H_WAIT_NAME=$NAME h_wait_for 90 "kafka metadata on $BOOTSTRAP" metadata_ok && return 0
    h_tail_log "$LOGF" 40
    h_stop "$NAME" 10
    return 1
}

srv_start() {
    local port cport t0 attempt
    command -v java >/dev/null || h_die "java missing; run tests/harness/deps.sh"
    command -v kcat >/dev/null || h_die "kcat missing (its metadata request tells when the broker is up); run tests/harness/deps.sh"
    if h_alive "$NAME"; then
        h_log "kafka already running in $DIR (pgid $(h_pid "$NAME"))"
        return 0
    fi
    do_fetch
    touch "$LOGF"
    t0="$(h_now)"
    for attempt in 1 2 3; do
        port="$(h_free_port)"
        cport="$(h_free_port)"
        launch "$port" "$cport" && break
        [ "$attempt" = 3 ] && h_die "kafka did not start (log: $LOGF)"
        h_log "kafka start failed; retrying on new ports"
    done
    h_write_env "$NAME" KAFKA_BOOTSTRAP="$BOOTSTRAP" KAFKA_PORT="$port" \
        KAFKA_CONTROLLER_PORT="$cport" KAFKA_PID="$(h_pid "$NAME")" KAFKA_LOG="$LOGF"
    h_log "kafka $KAFKA_VERSION (KRaft) ready on $BOOTSTRAP in $(h_elapsed "$t0")s; env: $DIR/kafka.env"
}

# delete_topic TOPIC — Admin.deleteTopics, run as a single-file Java source
delete_topic() {
    [ -n "${1:-}" ] || h_die "usage: kafka.sh delete-topic TOPIC"
    [ -s "$DIR/kafka.env" ] || h_die "no Kafka in $DIR (kafka.env missing): start it first"
    . "$DIR/kafka.env"
    cat >"$DIR/DeleteTopic.java" <<'JAVA'
import java.util.*;
import org.apache.kafka.clients.admin.*;
public class DeleteTopic {
    public static void main(String[] a) throws Exception {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, a[0]);
        try (Admin ad = Admin.create(p)) {
            ad.deleteTopics(List.of(a[1])).all().get();
            for (int i = 0; i < 100 && ad.listTopics().names().get().contains(a[1]); i++) Thread.sleep(100);
        }
    }
}
JAVA
    java_run "$DIR/DeleteTopic.java" "$KAFKA_BOOTSTRAP" "$1"
}

case "${1:-}" in
    fetch) do_fetch ;;
    delete-topic) state_dir; delete_topic "${2:-}" ;;
    start) state_dir start; srv_start ;;
    stop|kill|status) state_dir; h_dispatch "$NAME" "$1" ;;
    *) echo "usage: $0 fetch | SEARCHSYNC_KAFKA_DIR=DIR $0 start|stop|kill|status" >&2; exit 2 ;;
esac
