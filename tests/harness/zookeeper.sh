#!/usr/bin/env bash
# tests/harness/zookeeper.sh — a throw-away single-node ZooKeeper (Debian's 3.8).
#
# Owns: one ZooKeeperServerMain JVM in $SEARCHSYNC_HARNESS_DIR/zookeeper
# (zoo.cfg, data, log) on a free 127.0.0.1 port.
# zookeeper.jar's manifest Class-Path pulls in jute, netty, metrics, etc.,
# so the two jars below are the whole classpath.
#
# usage: SEARCHSYNC_HARNESS_DIR=DIR zookeeper.sh start|stop|pause|resume|kill|restart|status
# Writes DIR/zookeeper.env: ZK_HOSTS (host:port), ZK_PORT.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

NAME=zookeeper
ZK_JARS="${ZK_JARS:-/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar}"

# zk_4lw PORT WORD — send a four-letter word, print the answer.
zk_4lw() {
    local ans
    exec 3<>"/dev/tcp/127.0.0.1/$1" || return 1
    printf '%s' "$2" >&3
    ans="$(timeout 5 cat <&3)" || true
    exec 3<&- 3>&-
    printf '%s\n' "$ans"
}
# ruok answers imok before the server serves requests; srvr tells the truth.
zk_ok() { [ "$(zk_4lw "$1" ruok)" = imok ] && zk_4lw "$1" srvr | grep -q '^Zookeeper version'; }

srv_start() {
    local dir port t0 jar
    dir="$(h_state_dir)/zookeeper"
    for jar in ${ZK_JARS//:/ }; do
        [ -f "$jar" ] || h_die "$jar missing; run tests/harness/deps.sh"
    done
    command -v java >/dev/null || h_die "java missing; run tests/harness/deps.sh"
    if h_alive "$NAME"; then
        h_log "zookeeper already running (pgid $(h_pid "$NAME"))"
        return 0
    fi
    mkdir -p "$dir/data"
    port="$(h_env_get "$NAME" ZK_PORT)"
    if [ -z "$port" ] || h_port_in_use "$port"; then
        [ -n "$port" ] && [ -n "${H_RESTART:-}" ] && h_die "zookeeper port $port is taken, cannot restart on it"
        port="$(h_free_port)"
    fi
    cat >"$dir/zoo.cfg" <<EOF
tickTime=2000
dataDir=$dir/data
clientPort=$port
clientPortAddress=127.0.0.1
admin.enableServer=false
4lw.commands.whitelist=ruok,srvr,stat
maxClientCnxns=0
EOF
    t0="$(h_now)"
    h_spawn "$NAME" "$dir/zookeeper.log" java -Xmx256m $(h_jvm_quick) -Dzookeeper.log.dir="$dir" \
        -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
        -cp "$ZK_JARS" org.apache.zookeeper.server.ZooKeeperServerMain "$dir/zoo.cfg"
    H_WAIT_NAME=$NAME h_wait_for 60 "zookeeper ruok on 127.0.0.1:$port" zk_ok "$port" || {
        h_tail_log "$dir/zookeeper.log"; h_stop "$NAME" 5; h_die "zookeeper did not start"; }
    h_write_env "$NAME" ZK_HOSTS="127.0.0.1:$port" ZK_PORT="$port" ZK_PID="$(h_pid "$NAME")" \
        ZK_LOG="$dir/zookeeper.log"
    h_log "zookeeper $(zk_4lw "$port" srvr | sed -n 's/^Zookeeper version: \([^,-]*\).*/\1/p') ready on 127.0.0.1:$port in $(h_elapsed "$t0")s"
}

h_dispatch "$NAME" "${1:-}"
