#!/usr/bin/env bash
# tests/bench/bench_sources.sh — one index fed by 1, 2 and 4 sources on the
# same box (docs/cluster.md, "Several sources, one index"; docs/sizing.md,
# "Several sources on one index").
#
# BENCH_SOURCES_MAX (default: the largest count) MariaDB servers of their own
# (tests/harness/mariadb.sh, on free ports, 128 MB buffer pools) beside the
# harness's, which keeps the metadata. For each count K of BENCH_SOURCES
# (default "1 2 4"): an index config over database bsK, whose
# BENCH_SOURCES_ROWS orders (default 200000, 2 items each, nested) are split
# evenly over K of the servers (the same keys on each: ids carry the
# source), each server a source read by a `searchsync run` of its own. Every
# count's daemons run side by side; then BENCH_ROUNDS rounds (default 3),
# the counts in a rotating order, of:
#   - build: `searchsync reindex` of the count's alias, documents/s from its
#     reindex_runs row (queued to switched: every source's part, the switch
#     waiting for the last), with the CPU seconds of its daemons, of the
#     source servers and of the engine
# and at the end each daemon's peak and idle RSS.
# Target: the multi-source rates per document within 10% of one source's.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
SEARCHSYNC_SRCDIR="${SEARCHSYNC_SRCDIR:-$(cd "$here/../.." && pwd)}"
HARNESS="$SEARCHSYNC_SRCDIR/tests/harness"
. "$SEARCHSYNC_HARNESS_DIR/env.sh"
BIN="${SEARCHSYNC_BIN:-$PWD/searchsync}"
[ -x "$BIN" ] || BIN="$SEARCHSYNC_SRCDIR/searchsync"
N="${BENCH_SOURCES_ROWS:-200000}"
COUNTS=(${BENCH_SOURCES:-1 2 4})
ROUNDS="${BENCH_ROUNDS:-3}"
MAX=0
for k in "${COUNTS[@]}"; do [ "$k" -gt "$MAX" ] && MAX=$k; done
MAX="${BENCH_SOURCES_MAX:-$MAX}"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/bench-sources.XXXXXX")"
P="bsrc$$"
meta="${P}_meta"
declare -A DAEMON=()
cleanup() {
    local d i
    for d in "${DAEMON[@]}"; do kill -9 "$d" 2>/dev/null || true; done
    curl -s -XDELETE "$SEARCH_URL/${P}_*?expand_wildcards=all" >/dev/null || true
    q -e "DROP DATABASE IF EXISTS \`$meta\`" 2>/dev/null || true
    for ((i = 1; i <= MAX; i++)); do
        SEARCHSYNC_HARNESS_DIR="$tmp/s$i" bash "$HARNESS/mariadb.sh" stop >/dev/null 2>&1 || true
    done
    rm -rf "$tmp"
}
trap cleanup EXIT
q() { mariadb --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -u root -N -B "$@"; }
port_of() { (. "$tmp/s$1/mariadb.env" && echo "$MYSQL_PORT"); }
pid_of() { (. "$tmp/s$1/mariadb.env" && echo "$MYSQL_PID"); }
sq() { local s=$1; shift; mariadb --no-defaults -h 127.0.0.1 -P "$(port_of "$s")" -u root -N -B "$@"; }
TCK=$(getconf CLK_TCK)
cpu_of() { sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | awk -v t="$TCK" '{printf "%.2f", ($12 + $13) / t}'; }
engine_cpu() { # every process of the engine's process group
    local pg
    pg="$(ps -o pgid= -p "$SEARCH_PID" | tr -d ' ')"
    for p in $(ps -o pid= -g "$pg"); do cpu_of "$p"; echo; done | awk '{s += $1} END {printf "%.2f", s}'
}
sum_cpu() { local p; for p in "$@"; do cpu_of "$p"; echo; done | awk '{s += $1} END {printf "%.2f", s}'; }

echo "bench_sources: $N orders (2 items each, nested) on one index from ${COUNTS[*]} source(s); $ROUNDS rounds"
pids=()
for ((i = 1; i <= MAX; i++)); do
    mkdir -p "$tmp/s$i"
    SEARCHSYNC_HARNESS_DIR="$tmp/s$i" MARIADB_EXTRA_ARGS="--innodb-buffer-pool-size=128M" \
        bash "$HARNESS/mariadb.sh" start >"$tmp/s$i.start.log" 2>&1 &
    pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || { cat "$tmp"/s*.start.log; exit 1; }; done

config() { # K I: the configuration of source I of count K
    cat >"$tmp/k$1_s$2.ini" <<INI
[source]
name = ${P}_k$1_s$2
mapping = ${P}_k$1
host = 127.0.0.1
port = $(port_of "$2")
user = root
server_id = $((7800 + 10 * $1 + $2))
start = now
[metadata]
host = $MYSQL_HOST
port = $MYSQL_PORT
user = root
database = $meta
[search]
urls = $SEARCH_URL
[reindex]
poll_interval_ms = 200
INI
}
for k in "${COUNTS[@]}"; do
    per=$((N / k))
    srcs=""
    for ((i = 1; i <= k; i++)); do
        sq "$i" -e "CREATE DATABASE bs$k"
        sq "$i" "bs$k" -e "CREATE TABLE bs$k.orders (id INT PRIMARY KEY, brand_id INT, total DECIMAL(10,2), note VARCHAR(40));
          CREATE TABLE bs$k.items (id INT PRIMARY KEY, order_id INT, qty INT, KEY (order_id));
          INSERT INTO bs$k.orders SELECT seq, seq % 100, seq * 1.5, CONCAT('order ', seq) FROM seq_1_to_$per;
          INSERT INTO bs$k.items SELECT seq, (seq + 1) DIV 2, seq FROM seq_1_to_$((2 * per));"
        config "$k" "$i"
        srcs="$srcs${srcs:+,}\"${P}_k${k}_s$i\""
    done
    jq -n --arg a "${P}_k$k" --arg d "bs$k" --argjson s "[$srcs]" '{version: 1, indices: [
      {alias: $a, sources: $s, replicas: 0, tables: [{table: ($d + ".orders"),
        columns: [{name: "id", key: true}, "brand_id", "total", "note"],
        relations: [{column: "id", table: ($d + ".items"), join_column: "order_id", nested: true,
                     extend_name: "items", columns: [{name: "id", key: true}, "qty"]}]}]}]}' >"$tmp/k$k.json"
    "$BIN" mapping import --config "$tmp/k${k}_s1.ini" "$tmp/k$k.json" --yes >"$tmp/import.out" 2>&1 ||
        { cat "$tmp/import.out"; exit 1; }
done
for k in "${COUNTS[@]}"; do
    for ((i = 1; i <= k; i++)); do
        "$BIN" run --config "$tmp/k${k}_s$i.ini" >>"$tmp/k${k}_s$i.log" 2>&1 &
        DAEMON[k${k}_s$i]=$!
    done
done
wait_for() { # SECONDS CMD...
    local s=$1 i
    shift
    for ((i = 0; i < s * 10; i++)); do "$@" && return 0; sleep 0.1; done
    echo "bench_sources: timed out: $*"; tail -20 "$tmp"/*.log; exit 1
}
live() { # ALIAS VERSION
    [ "$(q "$meta" -e "SELECT current_version FROM index_configs WHERE alias = '$1'")" = "$2" ]
}
for k in "${COUNTS[@]}"; do wait_for 900 live "${P}_k$k" 1; done
declare -A ver=()
for k in "${COUNTS[@]}"; do ver[$k]=1; done
build_once() { # K: sets rate
    local a="${P}_k$1" docs s d=() m=() i c0 c1 m0 m1 e0 e1
    for ((i = 1; i <= $1; i++)); do d+=("${DAEMON[k${1}_s$i]}"); m+=("$(pid_of "$i")"); done
    c0=$(sum_cpu "${d[@]}"); m0=$(sum_cpu "${m[@]}"); e0=$(engine_cpu)
    "$BIN" reindex --config "$tmp/k${1}_s1.ini" "$a" >"$tmp/reindex.out" 2>&1 || { cat "$tmp/reindex.out"; exit 1; }
    c1=$(sum_cpu "${d[@]}"); m1=$(sum_cpu "${m[@]}"); e1=$(engine_cpu)
    ver[$1]=$((ver[$1] + 1))
    read -r docs s <<<"$(q "$meta" -e "SELECT r.docs_written, TIMESTAMPDIFF(MICROSECOND, r.started_at, r.finished_at) / 1e6
        FROM reindex_runs r WHERE r.alias = '$a' AND r.version = ${ver[$1]}")"
    [ "$docs" = "$N" ] || { echo "bench_sources: version ${ver[$1]} of $a wrote $docs documents, not $N"; exit 1; }
    rate=$(awk -v d="$docs" -v s="$s" 'BEGIN {printf "%.0f", d / s}')
    cpu=$(awk -v a="$c0" -v b="$c1" -v n="$docs" 'BEGIN {printf "%.1f", (b - a) * 1e6 / n}')
    echo "    $1 source(s) (v${ver[$1]}): $docs documents in $s s = $rate docs/s; CPU µs a document: daemons $cpu, MariaDB $(awk -v a="$m0" -v b="$m1" -v n="$docs" 'BEGIN {printf "%.1f", (b - a) * 1e6 / n}'), engine $(awk -v a="$e0" -v b="$e1" -v n="$docs" 'BEGIN {printf "%.1f", (b - a) * 1e6 / n}')"
}
median() { sort -n | awk '{v[NR] = $1} END {m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.0f (range %.0f-%.0f)", m, v[1], v[NR]}'; }
for k in "${COUNTS[@]}"; do : >"$tmp/b_$k"; done
for ((r = 1; r <= ROUNDS; r++)); do
    echo "  round $r"
    n=${#COUNTS[@]}
    for ((j = 0; j < n; j++)); do
        k=${COUNTS[$(((j + r - 1) % n))]}
        build_once "$k"
        echo "$rate" >>"$tmp/b_$k"
    done
done
hwm_of() { awk '/VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$1/status"; }
rss_of() { awk '/VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$1/status"; }
sleep 5 # idle: every build done
for k in "${COUNTS[@]}"; do
    h=""; r=""
    for ((i = 1; i <= k; i++)); do
        h="$h${h:+ }$(hwm_of "${DAEMON[k${k}_s$i]}")"; r="$r${r:+ }$(rss_of "${DAEMON[k${k}_s$i]}")"
    done
    echo "  memory, $k source(s): each daemon's peak RSS $h MiB, idle RSS $r MiB"
done
one=""
for k in "${COUNTS[@]}"; do
    m=$(median <"$tmp/b_$k")
    [ -n "$one" ] || one="${m%% *}"
    echo "  build, docs/s (median of $ROUNDS): $k source(s) $m: $(awk -v a="${m%% *}" -v b="$one" 'BEGIN {printf "%.0f%%", 100 * a / b}') of ${COUNTS[0]} source(s)"
done
