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
#        SEARCHSYNC_KAFKA_DIR=DIR kafka.sh scram USER PASSWORD
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
#   scram USER PASSWORD  (KAFKA_SECURE=1) set USER's SCRAM-SHA-512 and -256
#           credentials on the running broker, through its PLAINTEXT
#           listener (Admin.alterUserScramCredentials)
# DIR/kafka.env exports KAFKA_BOOTSTRAP (127.0.0.1:PORT), KAFKA_PORT,
# KAFKA_CONTROLLER_PORT, KAFKA_PID, KAFKA_LOG.
# Topics are created on first use (auto.create.topics.enable, 1 partition;
# KAFKA_PARTITIONS changes the default). Knobs: KAFKA_HEAP (default 512m),
# SEARCHSYNC_CACHE (default ~/.cache/searchsync).
# KAFKA_SECURE=1 adds two secured listeners beside PLAINTEXT (which the
# tests' producers keep using), with certificates made by openssl in
# DIR/tls (a CA; the broker's certificate naming 127.0.0.1 and localhost; a
# client certificate; another CA that signed nothing of this broker):
#   SASL_SSL  TLS and SASL: PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 for the
#             user searchsync (password ss-secret; the SCRAM credentials
#             written by StorageTool format --add-scram)
#   SSL       TLS with a client certificate required (ssl.client.auth)
# and kafka.env also exports KAFKA_SASL_SSL_BOOTSTRAP, KAFKA_SSL_BOOTSTRAP,
# KAFKA_TLS (the certificates' directory: ca.pem, other-ca.pem, client.pem,
# client.key), KAFKA_SASL_USER and KAFKA_SASL_PASSWORD.
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

SASL_USER=searchsync
SASL_PASSWORD=ss-secret

# make_tls — DIR/tls: a CA, the broker's key and certificate (a PKCS#12
# keystore, password kstore), a client key and certificate signed by the
# CA, and a second CA that signed nothing here (a client trusting it must
# refuse the broker)
make_tls() {
    local t="$DIR/tls"
    [ -s "$t/broker.p12" ] && return 0
    command -v openssl >/dev/null || h_die "openssl missing (it makes the TLS listeners' certificates); run tests/harness/deps.sh"
    mkdir -p "$t"
    (
        cd "$t"
        for ca in ca other-ca; do
            openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=searchsync test $ca" \
                -keyout "$ca.key" -out "$ca.pem"
        done
        openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout broker.key -out broker.csr
        printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >broker.ext
        openssl x509 -req -in broker.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 30 \
            -extfile broker.ext -out broker.pem
        openssl pkcs12 -export -in broker.pem -inkey broker.key -certfile ca.pem -name broker \
            -passout pass:kstore -out broker.p12
        openssl req -newkey rsa:2048 -nodes -subj "/CN=searchsync client" -keyout client.key -out client.csr
        openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 30 -out client.pem
    ) >>"$LOGF" 2>&1 || h_die "openssl could not make the TLS certificates (log: $LOGF)"
}

# launch PORT CPORT [SASLPORT SSLPORT] — format the storage and spawn the
# node; 0 when a metadata request is answered, 1 when it died or never
# answered
launch() {
    local port="$1" cport="$2" sport="${3:-}" tport="${4:-}" cluster_id
    local listeners="PLAINTEXT://127.0.0.1:$port" advertised="PLAINTEXT://127.0.0.1:$port"
    local protomap="PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT" scram=()
    if [ -n "$sport" ]; then
        listeners="$listeners,SASL_SSL://127.0.0.1:$sport,SSL://127.0.0.1:$tport"
        advertised="$advertised,SASL_SSL://127.0.0.1:$sport,SSL://127.0.0.1:$tport"
        protomap="$protomap,SASL_SSL:SASL_SSL,SSL:SSL"
        scram=(--add-scram "SCRAM-SHA-512=[name=$SASL_USER,password=$SASL_PASSWORD]"
               --add-scram "SCRAM-SHA-256=[name=$SASL_USER,password=$SASL_PASSWORD]")
    fi
    rm -rf "$DIR/data"
    mkdir -p "$DIR/data"
    cat >"$DIR/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
listeners=$listeners,CONTROLLER://127.0.0.1:$cport
advertised.listeners=$advertised
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=$protomap
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
    if [ -n "$sport" ]; then
        cat >>"$DIR/server.properties" <<EOF
ssl.keystore.type=PKCS12
ssl.keystore.location=$DIR/tls/broker.p12
ssl.keystore.password=kstore
ssl.key.password=kstore
ssl.truststore.type=PEM
ssl.truststore.location=$DIR/tls/ca.pem
listener.name.ssl.ssl.client.auth=required
sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_$SASL_USER="$SASL_PASSWORD";
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
EOF
    fi
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
    java_run kafka.tools.StorageTool format --cluster-id="$cluster_id" -c "$DIR/server.properties" "${scram[@]}" \
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
    local port cport sport="" tport="" t0 attempt
    command -v java >/dev/null || h_die "java missing; run tests/harness/deps.sh"
    command -v kcat >/dev/null || h_die "kcat missing (its metadata request tells when the broker is up); run tests/harness/deps.sh"
    if h_alive "$NAME"; then
        h_log "kafka already running in $DIR (pgid $(h_pid "$NAME"))"
        return 0
    fi
    do_fetch
    touch "$LOGF"
    [ "${KAFKA_SECURE:-0}" = 1 ] && make_tls
    t0="$(h_now)"
    for attempt in 1 2 3; do
        port="$(h_free_port)"
        cport="$(h_free_port)"
        if [ "${KAFKA_SECURE:-0}" = 1 ]; then
            sport="$(h_free_port)"
            tport="$(h_free_port)"
        fi
        launch "$port" "$cport" $sport $tport && break
        [ "$attempt" = 3 ] && h_die "kafka did not start (log: $LOGF)"
        h_log "kafka start failed; retrying on new ports"
    done
    local secure=()
    [ -z "$sport" ] || secure=(KAFKA_SASL_SSL_BOOTSTRAP="127.0.0.1:$sport"
        KAFKA_SSL_BOOTSTRAP="127.0.0.1:$tport" KAFKA_TLS="$DIR/tls" KAFKA_SASL_USER="$SASL_USER"
        KAFKA_SASL_PASSWORD="$SASL_PASSWORD")
    h_write_env "$NAME" KAFKA_BOOTSTRAP="$BOOTSTRAP" KAFKA_PORT="$port" \
        KAFKA_CONTROLLER_PORT="$cport" KAFKA_PID="$(h_pid "$NAME")" KAFKA_LOG="$LOGF" "${secure[@]}"
    h_log "kafka $KAFKA_VERSION (KRaft) ready on $BOOTSTRAP in $(h_elapsed "$t0")s; env: $DIR/kafka.env"
}

# admin ACTION ARGS... — Kafka's Admin client on the running node, as a
# single-file Java program run from the jars (the cached classpath has no
# kafka-topics or kafka-configs tool):
#   delete-topic TOPIC      deleteTopics, then wait until it is gone
#   scram USER PASSWORD     alterUserScramCredentials for both mechanisms,
#                           one a request (the broker refuses two of a user)
admin() {
    [ -s "$DIR/kafka.env" ] || h_die "no Kafka in $DIR (kafka.env missing): start it first"
    . "$DIR/kafka.env"
    cat >"$DIR/KafkaAdmin.java" <<'JAVA'
import java.util.*;
import org.apache.kafka.clients.admin.*;
public class KafkaAdmin {
    public static void main(String[] a) throws Exception {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, a[0]);
        try (Admin ad = Admin.create(p)) {
            if (a[1].equals("delete-topic")) {
                ad.deleteTopics(List.of(a[2])).all().get();
                for (int i = 0; i < 100 && ad.listTopics().names().get().contains(a[2]); i++) Thread.sleep(100);
                return;
            }
            for (ScramMechanism m : List.of(ScramMechanism.SCRAM_SHA_512, ScramMechanism.SCRAM_SHA_256))
                ad.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion(a[2],
                    new ScramCredentialInfo(m, 4096), a[3]))).all().get();
        }
    }
}
JAVA
    java_run "$DIR/KafkaAdmin.java" "$KAFKA_BOOTSTRAP" "$@"
}

case "${1:-}" in
    fetch) do_fetch ;;
    delete-topic)
        [ -n "${2:-}" ] || h_die "usage: kafka.sh delete-topic TOPIC"
        state_dir; admin delete-topic "$2" ;;
    scram)
        [ -n "${3:-}" ] || h_die "usage: kafka.sh scram USER PASSWORD"
        state_dir; admin scram "$2" "$3" ;;
    start) state_dir start; srv_start ;;
    stop|kill|status) state_dir; h_dispatch "$NAME" "$1" ;;
    *) echo "usage: $0 fetch | SEARCHSYNC_KAFKA_DIR=DIR $0 start|stop|kill|status" >&2; exit 2 ;;
esac
