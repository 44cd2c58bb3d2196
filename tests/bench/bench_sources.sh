#!/usr/bin/env bash
# tests/bench/bench_sources.sh — one index fed by 1, 2 and 4 sources on the
# same box, and by 3 sources on a 3-node cluster (docs/cluster.md, "Several
# sources, one index"; docs/sizing.md, "Several sources on one index").
#
# BENCH_SOURCES_MAX (default: the largest count) MariaDB servers of their own
# (tests/harness/mariadb.sh, on free ports, 128 MB buffer pools) beside the
# harness's, which keeps the metadata. For each count K of BENCH_SOURCES
# (default "1 2 4"): an index config over database bsK, whose
# BENCH_SOURCES_ROWS orders (default 200000, 2 items each, nested) are split
# evenly over K of the servers (the same keys on each: ids carry the
# source), each server a source read by a `searchsync run` of its own. The
# cluster set (BENCH_SOURCES_CLUSTER sources, default 3; 0: none): database
# bsc split over that many servers, each source run by a process on each of
# as many nodes of one ZooKeeper cluster (3 x 3 processes: a reader and two
# standbys a source). Every set's daemons run side by side; then
# BENCH_ROUNDS rounds (default 3), the sets in a rotating order, of:
#   - build (BENCH_SOURCES_BUILD=1, the default; counts only):
#     `searchsync reindex` of the count's alias, documents/s from its
#     reindex_runs row (queued to switched: every source's part, the switch
#     waiting for the last), with the CPU seconds of its daemons, of the
#     source servers and of the engine;
#   - live (BENCH_SOURCES_LIVE=1, the default; tests/bench/sources_live.py):
#     fixed: a writer per source at BENCH_LIVE_RATE transactions a second
#     (default 20) for BENCH_LIVE_SECS (20), the acknowledged lag of a probe
#     every 0.5 s, and the CPU of daemons, servers and engine per
#     transaction; saturation: BENCH_LIVE_TOTAL transactions (default
#     12000) split over the set's sources, written as fast as the clients
#     take them, timed until every source's last change is in the engine:
#     the transactions a second the daemons carry together.
# Each figure with the box's load average (uptime) when it was taken; at the
# end each daemon's peak and idle RSS and the medians with their ranges.
# Targets: the multi-source build rates per document within 10% of one
# source's; the live figures are the sizing curve (docs/sizing.md).
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
CL="${BENCH_SOURCES_CLUSTER:-3}"
BUILD="${BENCH_SOURCES_BUILD:-1}"
LIVE="${BENCH_SOURCES_LIVE:-1}"
LRATE="${BENCH_LIVE_RATE:-20}"
LSECS="${BENCH_LIVE_SECS:-20}"
LTOTAL="${BENCH_LIVE_TOTAL:-12000}"
MAX="$CL"
for k in "${COUNTS[@]}"; do [ "$k" -gt "$MAX" ] && MAX=$k; done
MAX="${BENCH_SOURCES_MAX:-$MAX}"
if [ "$CL" -gt 0 ] && [ -z "${ZK_HOSTS:-}" ]; then
    bash "$SEARCHSYNC_SRCDIR/tests/harness/servers.sh" start zookeeper >/dev/null
    . "$SEARCHSYNC_HARNESS_DIR/env.sh"
fi
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
trap "exit 143" TERM INT # (the EXIT trap runs then too)
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

load() { cut -d, -f1 /proc/loadavg | awk '{print $1}'; }
echo "bench_sources: $N orders (2 items each, nested) on one index from ${COUNTS[*]} source(s)$([ "$CL" = 0 ] || echo " and $CL sources on a $CL-node cluster"); $ROUNDS rounds; load average $(load)"
pids=()
for ((i = 1; i <= MAX; i++)); do
    mkdir -p "$tmp/s$i"
    SEARCHSYNC_HARNESS_DIR="$tmp/s$i" MARIADB_EXTRA_ARGS="--innodb-buffer-pool-size=128M" \
        bash "$HARNESS/mariadb.sh" start >"$tmp/s$i.start.log" 2>&1 &
    pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || { cat "$tmp"/s*.start.log; exit 1; }; done

config() { # K I [NODE]: the configuration of source I of set K (NODE: of the cluster set)
    local f="$tmp/k$1_s$2${3:+_n$3}.ini"
    cat >"$f" <<INI
[source]
name = ${P}_k$1_s$2
mapping = ${P}_k$1
host = 127.0.0.1
port = $(port_of "$2")
user = root
server_id = $((7800 + 100 * ${3:-0} + 10 * ${1/c/9} + $2))
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
    [ -z "${3:-}" ] || printf '[cluster]\nzookeeper = %s\nname = %s\nnode_id = n%s-s%s\n' "$ZK_HOSTS" "${P}_k$1" "$3" "$2" >>"$f"
}
SETS=("${COUNTS[@]}")
[ "$CL" = 0 ] || SETS+=(c)
nsrc() { if [ "$1" = c ]; then echo "$CL"; else echo "$1"; fi; }
for k in "${SETS[@]}"; do
    per=$((N / $(nsrc "$k")))
    srcs=""
    for ((i = 1; i <= $(nsrc "$k"); i++)); do
        sq "$i" -e "CREATE DATABASE bs$k"
        sq "$i" "bs$k" -e "CREATE TABLE bs$k.orders (id INT PRIMARY KEY, brand_id INT, total DECIMAL(10,2), note VARCHAR(40));
          CREATE TABLE bs$k.items (id INT PRIMARY KEY, order_id INT, qty INT, KEY (order_id));
          INSERT INTO bs$k.orders SELECT seq, seq % 100, seq * 1.5, CONCAT('order ', seq) FROM seq_1_to_$per;
          INSERT INTO bs$k.items SELECT seq, (seq + 1) DIV 2, seq FROM seq_1_to_$((2 * per));"
        if [ "$k" = c ]; then for ((j = 1; j <= CL; j++)); do config c "$i" "$j"; done; else config "$k" "$i"; fi
        srcs="$srcs${srcs:+,}\"${P}_k${k}_s$i\""
    done
    jq -n --arg a "${P}_k$k" --arg d "bs$k" --argjson s "[$srcs]" '{version: 1, indices: [
      {alias: $a, sources: $s, replicas: 0, tables: [{table: ($d + ".orders"),
        columns: [{name: "id", key: true}, "brand_id", "total", "note"],
        relations: [{column: "id", table: ($d + ".items"), join_column: "order_id", nested: true,
                     extend_name: "items", columns: [{name: "id", key: true}, "qty"]}]}]}]}' >"$tmp/k$k.json"
    "$BIN" mapping import --config "$(ls "$tmp/k${k}_s1"*.ini | head -1)" "$tmp/k$k.json" --yes >"$tmp/import.out" 2>&1 ||
        { cat "$tmp/import.out"; exit 1; }
done
for k in "${SETS[@]}"; do
    for f in "$tmp/k${k}_s"*.ini; do
        n="$(basename "${f%.ini}")"
        "$BIN" run --config "$f" >>"$tmp/$n.log" 2>&1 &
        DAEMON[$n]=$!
    done
done
daemons_of() { # SET: the pids of its daemons
    local n
    for n in "${!DAEMON[@]}"; do case "$n" in "k${1}_s"*) echo "${DAEMON[$n]}" ;; esac; done
}
wait_for() { # SECONDS CMD...
    local s=$1 i
    shift
    for ((i = 0; i < s * 10; i++)); do "$@" && return 0; sleep 0.1; done
    echo "bench_sources: timed out: $*"; tail -20 "$tmp"/*.log; exit 1
}
live() { # ALIAS VERSION
    [ "$(q "$meta" -e "SELECT current_version FROM index_configs WHERE alias = '$1'")" = "$2" ]
}
for k in "${SETS[@]}"; do wait_for 900 live "${P}_k$k" 1; done
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
median1() { sort -n | awk '{v[NR] = $1} END {m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.1f (%.1f-%.1f)", m, v[1], v[NR]}'; }
median2() { sort -n | awk '{v[NR] = $1} END {m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.2f (%.2f-%.2f)", m, v[1], v[NR]}'; }
per_txn() { awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN {printf "%.0f", (b - a) * 1e6 / n}'; }
cores() { awk -v a="$1" -v b="$2" -v s="$3" 'BEGIN {printf "%.2f", (b - a) / s}'; }
label() { if [ "$1" = c ]; then echo "$CL sources, $CL-node cluster"; else echo "$1 source(s)"; fi; }
live_once() { # SET MODE: one live run, its figures appended to $tmp/l_SET_MODE
    local k=$1 mode=$2 d m=() i src=() c0 c1 m0 m1 e0 e1 out ld
    mapfile -t d < <(daemons_of "$k")
    for ((i = 1; i <= $(nsrc "$k"); i++)); do m+=("$(pid_of "$i")"); src+=("${P}_k${k}_s$i:$(port_of "$i")"); done
    ld=$(load)
    c0=$(sum_cpu "${d[@]}"); m0=$(sum_cpu "${m[@]}"); e0=$(engine_cpu)
    out="$(python3 "$here/sources_live.py" --mode "$mode" --alias "${P}_k$k" --db "bs$k" --search "$SEARCH_URL" \
        --orders $((N / $(nsrc "$k"))) --rate "$LRATE" --secs "$LSECS" --total "$LTOTAL" --seed "$r" "${src[@]}")" ||
        { echo "bench_sources: the live run of $(label "$k") failed"; tail -5 "$tmp"/k"${k}"_*.log; exit 1; }
    c1=$(sum_cpu "${d[@]}"); m1=$(sum_cpu "${m[@]}"); e1=$(engine_cpu)
    local tx wall tps p50 p99 mx cm dr
    read -r tx wall tps p50 p99 mx cm dr <<<"$(jq -r '"\(.txns) \(.wall_s) \(.txn_per_s) \(.lag_p50_ms) \(.lag_p99_ms) \(.lag_max_ms) \(.committed_s) \(.drain_s)"' <<<"$out")"
    echo "$tps $p50 $p99 $(per_txn "$c0" "$c1" "$tx") $(per_txn "$m0" "$m1" "$tx") $(per_txn "$e0" "$e1" "$tx") $(cores "$c0" "$c1" "$wall") $(cores "$e0" "$e1" "$wall") $ld" >>"$tmp/l_${k}_$mode"
    if [ "$mode" = fixed ]; then
        echo "    $(label "$k"), $LRATE tx/s each: $tx transactions in $wall s ($tps tx/s), lag p50 $p50 ms, p99 $p99 ms, max $mx ms; CPU µs a transaction: daemons $(per_txn "$c0" "$c1" "$tx"), MariaDB $(per_txn "$m0" "$m1" "$tx"), engine $(per_txn "$e0" "$e1" "$tx"); daemons $(cores "$c0" "$c1" "$wall") cores, engine $(cores "$e0" "$e1" "$wall"); load $ld"
    else
        echo "    $(label "$k"), saturation: $tx transactions in $wall s = $tps tx/s (committed in $cm s, the rest $dr s); CPU µs a transaction: daemons $(per_txn "$c0" "$c1" "$tx"), MariaDB $(per_txn "$m0" "$m1" "$tx"), engine $(per_txn "$e0" "$e1" "$tx"); daemons $(cores "$c0" "$c1" "$wall") cores, engine $(cores "$e0" "$e1" "$wall"); load $ld"
    fi
}
for k in "${SETS[@]}"; do : >"$tmp/b_$k"; : >"$tmp/l_${k}_fixed"; : >"$tmp/l_${k}_sat"; done
for ((r = 1; r <= ROUNDS; r++)); do
    echo "  round $r (load average $(load))"
    n=${#SETS[@]}
    for ((j = 0; j < n; j++)); do
        k=${SETS[$(((j + r - 1) % n))]}
        if [ "$BUILD" = 1 ] && [ "$k" != c ]; then
            build_once "$k"
            echo "$rate $(load)" >>"$tmp/b_$k"
        fi
        if [ "$LIVE" = 1 ]; then live_once "$k" fixed; live_once "$k" sat; fi
    done
done
hwm_of() { awk '/VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$1/status"; }
rss_of() { awk '/VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$1/status"; }
sleep 5 # idle: every run done
for k in "${SETS[@]}"; do
    h=""; rs=""
    for d in $(daemons_of "$k"); do h="$h${h:+ }$(hwm_of "$d")"; rs="$rs${rs:+ }$(rss_of "$d")"; done
    echo "  memory, $(label "$k"): each daemon's peak RSS $h MiB, idle RSS $rs MiB"
done
col() { awk -v c="$1" '{print $c}' "$2"; }
if [ "$BUILD" = 1 ]; then
    one=""
    for k in "${COUNTS[@]}"; do
        m=$(col 1 "$tmp/b_$k" | median)
        [ -n "$one" ] || one="${m%% *}"
        echo "  build, docs/s (median of $ROUNDS): $k source(s) $m: $(awk -v a="${m%% *}" -v b="$one" 'BEGIN {printf "%.0f%%", 100 * a / b}') of ${COUNTS[0]} source(s); load $(col 2 "$tmp/b_$k" | median1)"
    done
fi
if [ "$LIVE" = 1 ]; then
    echo "  live, medians of $ROUNDS (ranges); columns: sources | fixed $LRATE tx/s each: tx/s, lag p50 ms, lag p99 ms, daemons CPU µs/tx, daemons cores, load | saturation ($LTOTAL tx): tx/s, of 1 source, daemons / MariaDB / engine CPU µs/tx, daemons / engine cores, load"
    one=""
    for k in "${SETS[@]}"; do
        f="$tmp/l_${k}_fixed" s="$tmp/l_${k}_sat"
        sat=$(col 1 "$s" | median)
        [ -n "$one" ] || one="${sat%% *}"
        echo "  | $(label "$k") | $(col 1 "$f" | median) | $(col 2 "$f" | median) | $(col 3 "$f" | median) | $(col 4 "$f" | median) | $(col 7 "$f" | median2) | $(col 9 "$f" | median1) | $sat | $(awk -v a="${sat%% *}" -v b="$one" 'BEGIN {printf "%.0f%%", 100 * a / b}') | $(col 4 "$s" | median) / $(col 5 "$s" | median) / $(col 6 "$s" | median) | $(col 7 "$s" | median2) / $(col 8 "$s" | median2) | $(col 9 "$s" | median1) |"
    done
fi
