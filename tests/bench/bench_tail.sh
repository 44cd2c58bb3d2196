#!/usr/bin/env bash
# tests/bench/bench_tail.sh — `searchsync tail --stop-at-end` against
# `mariadb-binlog --read-from-remote-server --verbose` over the same binlog
# range (BENCH_ROWS rows, default 1,000,000, of a 12-column mixed-type table),
# in the same run; plus the decode + JSON step alone on one core
# (tests/bench/bench_decode over the server's binlog files). Peak RSS of
# each process from /usr/bin/time. Run by `make bench`.
set -euo pipefail
ROWS="${BENCH_ROWS:-1000000}"
SEARCHSYNC_SRCDIR="${SEARCHSYNC_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
BIN="${SEARCHSYNC_BIN:-$PWD/searchsync}"
DECODE="$(dirname "$BIN")/tests/bench/bench_decode"
HARNESS="$SEARCHSYNC_SRCDIR/tests/harness"
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "bench_tail: /usr/bin/time is needed (apt-get install time)"; exit 1; }

if [ -z "${SEARCHSYNC_HARNESS_DIR:-}" ] || [ ! -f "$SEARCHSYNC_HARNESS_DIR/env.sh" ]; then
    SEARCHSYNC_HARNESS_DIR="$(mktemp -d "${TMPDIR:-/tmp}/searchsync-bench.XXXXXX")"
    export SEARCHSYNC_HARNESS_DIR
    touch "$SEARCHSYNC_HARNESS_DIR/.temporary"
    trap 'bash "$HARNESS/servers.sh" stop >/dev/null 2>&1 || true' EXIT
    bash "$HARNESS/servers.sh" start mariadb >/dev/null
fi
. "$SEARCHSYNC_HARNESS_DIR/env.sh"
q() { mariadb --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -u root --batch --skip-column-names -e "$1"; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"; [ -f "$SEARCHSYNC_HARNESS_DIR/.temporary" ] && bash "$HARNESS/servers.sh" stop >/dev/null 2>&1 || true' EXIT

db="searchsync_bench_$$"
q "CREATE DATABASE $db; CREATE TABLE $db.t12 (
     id BIGINT PRIMARY KEY, i INT, u INT UNSIGNED, bi BIGINT, d DECIMAL(12,2), f FLOAT, dbl DOUBLE,
     dt DATETIME(3), ts TIMESTAMP NULL, v VARCHAR(64), c CHAR(8), e ENUM('red','green','blue'))"
read -r f0 p0 <<<"$(q 'SHOW MASTER STATUS' | cut -f1,2)"
t0=$(date +%s.%N)
chunk=100000
for ((s = 1; s <= ROWS; s += chunk)); do
    e=$((s + chunk - 1)); [ $e -gt "$ROWS" ] && e=$ROWS
    q "INSERT INTO $db.t12 SELECT seq, CAST(seq AS SIGNED) * 7 - 500000, seq * 3, seq * 1000003, seq / 100, seq / 7, seq / 3,
         '2024-01-01 00:00:00.000' + INTERVAL seq SECOND, FROM_UNIXTIME(1700000000 + seq),
         CONCAT('name-', seq, '-', MD5(seq)), LEFT(MD5(seq), 8), 1 + seq % 3
       FROM $db.seq_${s}_to_${e}"
done
read -r f1 p1 <<<"$(q 'SHOW MASTER STATUS' | cut -f1,2)"
echo "filled $ROWS rows in $(echo "$(date +%s.%N) - $t0" | bc) s; binlog $f0:$p0 .. $f1:$p1"
[ "$f0" = "$f1" ] || echo "note: the range spans files $f0 .. $f1"

measure() { # label, command... → "seconds user sys maxrss_kb lines"
    local label="$1"
    shift
    $TIME -f "%e %U %S %M" -o "$tmp/time" "$@" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
    echo "$(cat "$tmp/time") $(wc -l <"$tmp/out")"
}

SRC="mysql://$MYSQL_USER:$MYSQL_PASSWORD@$MYSQL_HOST:$MYSQL_PORT"
read -r ts tu tsy trss tl <<<"$(measure tail "$BIN" tail --source "$SRC" --file "$f0" --pos "$p0" --stop-at-end --tables "$db.t12")"
[ "$tl" = "$ROWS" ] || { echo "tail printed $tl lines, expected $ROWS"; exit 1; }
read -r ms mu msy mrss _ <<<"$(measure mariadb-binlog mariadb-binlog --no-defaults --read-from-remote-server \
    --host="$MYSQL_HOST" --port="$MYSQL_PORT" --user=root --verbose --start-position="$p0" \
    --stop-position="$p1" "$f0")"
ml="$(grep -c '^### INSERT' "$tmp/out")"

echo
printf '%-58s %10s %10s %12s %10s\n' "end to end, $ROWS rows" "wall s" "cpu s" "rows/s" "max RSS"
printf '%-58s %10s %10.2f %12.0f %8s MB\n' "searchsync tail --stop-at-end (JSON lines)" "$ts" "$(echo "$tu + $tsy" | bc)" \
    "$(echo "$ROWS / $ts" | bc -l)" "$((trss / 1024))"
printf '%-58s %10s %10.2f %12.0f %8s MB\n' "mariadb-binlog --read-from-remote-server --verbose ($ml rows)" "$ms" \
    "$(echo "$mu + $msy" | bc)" "$(echo "$ROWS / $ms" | bc -l)" "$((mrss / 1024))"

if [ -x "$DECODE" ] && [ -n "${MYSQL_DATADIR:-}" ] && [ -r "$MYSQL_DATADIR/$f0" ]; then
    files=()
    for f in $(q 'SHOW BINARY LOGS' | cut -f1); do files+=("$MYSQL_DATADIR/$f"); done
    echo
    echo "decode + JSON on one core (bench_decode over every binlog file of the server, 3 runs):"
    for i in 1 2 3; do
        r="$("$DECODE" "${files[@]}")"
        echo "  $r"
    done
fi
q "DROP DATABASE $db"
