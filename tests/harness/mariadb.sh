#!/usr/bin/env bash
# tests/harness/mariadb.sh — a throw-away MariaDB for tests and the demo.
#
# Owns: one mariadbd in $SEARCHSYNC_HARNESS_DIR/mariadb (datadir, socket, log)
# on a free 127.0.0.1 port, with the binlog settings searchsync needs
# (log-bin, ROW format, FULL row metadata, server-id 1). Never touches the
# system MariaDB service.
#
# usage: SEARCHSYNC_HARNESS_DIR=DIR mariadb.sh start|stop|pause|resume|kill|restart|status
#   start    initialise the datadir if new, start, wait until ready, create users
#   restart  stop (SIGTERM) then start again on the same port with the same data
#   kill     SIGKILL (a crash; `restart` or `start` recovers from it)
# Writes DIR/mariadb.env: MYSQL_HOST MYSQL_PORT MYSQL_SOCKET MYSQL_USER
# MYSQL_PASSWORD (replication user) MYSQL_ROOT_USER (root, no password).
# Extra server options: MARIADB_EXTRA_ARGS="--opt=val ...".
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# The client tools read these from the environment, and a shell that sourced
# another harness's env.sh exports MYSQL_HOST: `mariadb --socket=...` would
# then go to 127.0.0.1:3306 instead of this server's socket. This script
# names its server explicitly, by socket or by port.
unset MYSQL_HOST MYSQL_TCP_PORT MYSQL_UNIX_PORT MYSQL_PWD

NAME=mariadb
REPL_USER=searchsync
REPL_PASSWORD=searchsync

find_bin() {
    local b
    for b in "$@"; do
        command -v "$b" 2>/dev/null && return 0
        [ -x "/usr/sbin/$b" ] && { echo "/usr/sbin/$b"; return 0; }
        [ -x "/usr/bin/$b" ] && { echo "/usr/bin/$b"; return 0; }
    done
    h_die "none of [$*] found; run tests/harness/deps.sh"
}

ping_server() {
    "$ADMIN" --no-defaults --socket="$SOCK" -uroot --connect-timeout=2 ping
}

srv_start() {
    local state dir t0 port user_opt
    state="$(h_state_dir)"
    dir="$state/mariadb"
    SOCK="$dir/mysqld.sock"
    MARIADBD="$(find_bin mariadbd mysqld)"
    ADMIN="$(find_bin mariadb-admin mysqladmin)"
    CLIENT="$(find_bin mariadb mysql)"
    INSTALL_DB="$(find_bin mariadb-install-db mysql_install_db)"

    if h_alive "$NAME"; then
        h_log "mariadb already running (pgid $(h_pid "$NAME"))"
        return 0
    fi
    mkdir -p "$dir/tmp"
    # Same port on restart / when reusing a persistent state dir.
    port="$(h_env_get "$NAME" MYSQL_PORT)"
    if [ -z "$port" ] || h_port_in_use "$port"; then
        [ -n "$port" ] && [ -n "${H_RESTART:-}" ] && h_die "mariadb port $port is taken, cannot restart on it"
        port="$(h_free_port)"
    fi
    user_opt=()
    [ "$(id -u)" = 0 ] && user_opt=(--user=root)

    t0="$(h_now)"
    local fresh=""
    if [ ! -d "$dir/data/mysql" ]; then
        fresh=1
        rm -rf "$dir/data"
        mkdir -p "$dir/tmp"
        # its own tmpdir: two installs at once (two suites) collide in /tmp's
        # temporary table names ("Unknown table 'mysql.tmp_user_sys'")
        "$INSTALL_DB" --no-defaults --datadir="$dir/data" --tmpdir="$dir/tmp" "${user_opt[@]}" \
            --auth-root-authentication-method=normal --skip-name-resolve \
            --skip-test-db >"$dir/install.log" 2>&1 ||
            { h_tail_log "$dir/install.log"; h_die "mariadb-install-db failed"; }
    fi
    # shellcheck disable=SC2086
    h_spawn "$NAME" "$dir/mariadbd.log" "$MARIADBD" --no-defaults \
        --datadir="$dir/data" --socket="$SOCK" --port="$port" \
        --bind-address=127.0.0.1 --pid-file="$dir/mariadbd.pid" --tmpdir="$dir/tmp" \
        --log-bin=mysql-bin --binlog-format=ROW --server-id=1 \
        --binlog-row-metadata=FULL "${user_opt[@]}" \
        --skip-name-resolve --innodb-buffer-pool-size=256M --max-connections=500 \
        --innodb-flush-log-at-trx-commit=2 --sync-binlog=0 \
        --character-set-server=utf8mb4 --collation-server=utf8mb4_unicode_ci \
        --max-allowed-packet=64M --log-error="$dir/mariadbd.err" \
        ${MARIADB_EXTRA_ARGS:-}
    H_WAIT_NAME=$NAME h_wait_for 60 "mariadb ready on $SOCK" ping_server || {
        h_tail_log "$dir/mariadbd.err"; h_tail_log "$dir/mariadbd.log"; h_stop "$NAME" 5
        h_die "mariadb did not start"; }

    if [ -n "$fresh" ]; then
        h_mysql_users "$CLIENT" "$SOCK" "BINLOG MONITOR, "
    fi
    h_write_env "$NAME" MYSQL_HOST=127.0.0.1 MYSQL_PORT="$port" MYSQL_SOCKET="$SOCK" \
        MYSQL_USER="$REPL_USER" MYSQL_PASSWORD="$REPL_PASSWORD" MYSQL_ROOT_USER=root \
        MYSQL_PID="$(h_pid "$NAME")" MYSQL_DATADIR="$dir/data" MYSQL_LOG="$dir/mariadbd.err"
    h_log "mariadb $("$CLIENT" --no-defaults -h127.0.0.1 -P"$port" -uroot -N -B -e 'SELECT VERSION()') ready on 127.0.0.1:$port (socket $SOCK) in $(h_elapsed "$t0")s"
}

h_dispatch "$NAME" "${1:-}"
