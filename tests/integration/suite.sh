#!/usr/bin/env bash
# tests/integration/suite.sh — the integration suite `make check` runs.
#
# Owns: starting the real servers once (MariaDB, ZooKeeper, OpenSearch via
# tests/harness/servers.sh; stopped by a trap on any exit), running every
# tests/integration/t_*.sh against them, healing/resetting the servers between
# tests, and the summary. The last line is always exactly `N passed, N failed`.
#
# usage: suite.sh [--long] [--load] [--seeds N] [--lanes N] [--list] [FILTER...]
#   FILTER   run only tests whose name contains one of the FILTERs (=NAME:
#            the test NAME only)
#   --long   also run tests/integration/long_*.sh (make check-long)
#   --load   run every selected test on a busy box (tests/harness/load.sh:
#            CPU burners at twice the cores, the engine's bulk requests held
#            by a proxy, the engine paused now and then): make check-load
#   --seeds N  run each selected test N times, each with a fresh seed in
#            SEARCHSYNC_SEED (the randomized tests take their seed from it;
#            every seed is printed beside the verdict)
#   --list   print the selected test names and exit
#   --lanes N  run the tests in N lanes at once, each with servers of its own
#            (default SUITE_LANES, else 3 on a machine of 2 cores or more when
#            more than 8 tests run once each without --load; 1 otherwise).
#            Most tests wait on servers and daemons rather than compute: two
#            lanes on two cores left the CPU idle a third of the time; with
#            three it is busy 85-92% of the time, and the suite takes about a
#            sixth less time than with two. The tests
#            balance the lanes by tests/integration/durations.tsv (seconds a
#            test took, for balancing only: refresh it from
#            $SUITE_LOG_DIR/durations.tsv), longest first; those that start a
#            server or tool from a download (MySQL 8, Kafka and its producers,
#            other engines, gh-ost) may run in any lane: the harness locks a
#            cache directory while it fills it, and runs one Maven at a time,
#            so a fetch in another lane only waits for it. The
#            UNDER_LOAD tests run last, when every other lane is done, so the
#            busy box of the load harness slows nothing else.
# Without --load, the tests named in UNDER_LOAD (default: t_reindex_writes)
# still run under load, after the others, with one fresh seed: so every
# `make check` runs a randomized oracle test on a busy box.
# Test protocol: exit 0 pass, 1 fail, 77 skip with a printed `SKIP: ...` reason
# (lib.sh's `skip`); a 77 without a reason counts as a failure. Under CI=true
# a skip counts as a failure too (its reason shown): a test tool missing on
# the CI machine must not turn the run green.
# Knobs: SUITE_TEST_TIMEOUT (seconds per test, default 900), SUITE_LOG_DIR
# (default ./tests/integration/logs), SUITE_NO_RESET=1 (keep databases/indices
# between tests), SEARCHSYNC_KEEP_HARNESS=1 (keep the server dir after the run),
# SEARCHSYNC_KEEP_FAILED=1 (keep a failed test's temp dir: its daemons' logs),
# SEARCHSYNC_JVM_QUICK (default 1: the harness's JVMs, the engines, Kafka and
# its producers, ZooKeeper, compile with the JIT's first tier only, which
# saves a short-lived server about a third of its CPU; 0 for the full JIT).
set -euo pipefail
export SEARCHSYNC_JVM_QUICK="${SEARCHSYNC_JVM_QUICK:-1}"

here="$(cd "$(dirname "$0")" && pwd)"
SEARCHSYNC_SRCDIR="${SEARCHSYNC_SRCDIR:-$(cd "$here/../.." && pwd)}"
export SEARCHSYNC_SRCDIR
HARNESS="$SEARCHSYNC_SRCDIR/tests/harness"
LOG_DIR="${SUITE_LOG_DIR:-$PWD/tests/integration/logs}"
TIMEOUT="${SUITE_TEST_TIMEOUT:-900}"

long=""
list=""
load=""
seeds=1
filters=()
want_seeds=""
lanes="${SUITE_LANES:-}"
want_lanes=""
lane_run=""
for a in "$@"; do
    if [ -n "$want_seeds" ]; then seeds="$a"; want_seeds=""; continue; fi
    if [ -n "$want_lanes" ]; then lanes="$a"; want_lanes=""; continue; fi
    case "$a" in
        --long) long=1; export SEARCHSYNC_LONG=1 ;;
        --load) load=1 ;;
        --seeds) want_seeds=1 ;;
        --seeds=*) seeds="${a#--seeds=}" ;;
        --list) list=1 ;;
        --lanes) want_lanes=1 ;;
        --lanes=*) lanes="${a#--lanes=}" ;;
        --lane-run=*) lane_run="${a#--lane-run=}" ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "unknown option $a" >&2; exit 2 ;;
        *) filters+=("$a") ;;
    esac
done

tests=()
candidates=("$here"/t_*.sh ${long:+"$here"/long_*.sh})
# a lane runs the list its parent gave it (--lane-run, internal)
[ -z "$lane_run" ] || mapfile -t candidates <"$lane_run"
for t in "${candidates[@]}"; do
    [ -f "$t" ] || continue
    name="$(basename "${t%.sh}")"
    if [ ${#filters[@]} -gt 0 ]; then
        keep=""
        for f in "${filters[@]}"; do
            case "$f" in
                =*) [ "$name" != "${f#=}" ] || keep=1 ;;
                *) case "$name" in *"$f"*) keep=1 ;; esac ;;
            esac
        done
        [ -n "$keep" ] || continue
    fi
    tests+=("$t")
done
if [ -n "$list" ]; then
    for t in "${tests[@]}"; do basename "${t%.sh}"; done
    exit 0
fi
if [ ${#tests[@]} = 0 ]; then
    echo "no integration test matches: ${filters[*]:-}"
    echo "0 passed, 0 failed"
    exit 1
fi

if [ -z "$lanes" ]; then
    lanes=1
    if [ -z "$lane_run" ] && [ -z "$load" ] && [ "$seeds" = 1 ] && [ ${#tests[@]} -gt 8 ] &&
        [ "$(nproc 2>/dev/null || echo 1)" -ge 2 ]; then
        lanes=3
    fi
fi
[[ "$lanes" =~ ^[1-9][0-9]*$ ]] || { echo "--lanes: a whole number of lanes, 1 or more (got $lanes)" >&2; exit 2; }

# ---- lanes: this process only splits the tests, runs a suite.sh per lane and
# adds up their verdicts
if [ "$lanes" -gt 1 ] && [ -z "$lane_run" ]; then
    mkdir -p "$LOG_DIR"
    ldir="$(mktemp -d "${TMPDIR:-/tmp}/searchsync-lanes.XXXXXX")"
    # one file of handed-out ports for every lane's harness (h_free_port)
    export SEARCHSYNC_PORTS_TAKEN="$ldir/ports.taken"
    touch "$SEARCHSYNC_PORTS_TAKEN"
    pids=()
    stop_lanes() {
        local p
        for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
        wait 2>/dev/null || true
        rm -rf "$ldir"
    }
    trap stop_lanes EXIT
    trap 'exit 130' INT TERM
    secs_of() {
        local s
        s="$(awk -F'\t' -v n="$1" '$1 == n { print $2; exit }' "$here/durations.tsv" 2>/dev/null)"
        echo "${s:-20}"
    }
    declare -a load_s list_f
    for ((i = 0; i < lanes; i++)); do load_s[i]=0; list_f[i]="$ldir/lane$i.list"; : >"${list_f[i]}"; done
    rest=()
    for t in "${tests[@]}"; do
        n="$(basename "${t%.sh}")"
        case " ${UNDER_LOAD-t_reindex_writes} " in *" $n "*) rest+=("0 $t") ; continue ;; esac
        rest+=("$(secs_of "$n") $t")
    done
    # longest first, each to the lane with the least so far
    while read -r s t; do
        [ -n "$t" ] || continue
        if [ "$s" = 0 ]; then echo "$t" >>"${list_f[lanes - 1]}"; continue; fi
        best=0
        for ((i = 1; i < lanes; i++)); do [ "${load_s[i]}" -lt "${load_s[best]}" ] && best=$i; done
        echo "$t" >>"${list_f[best]}"
        load_s[best]=$((load_s[best] + s))
    done < <(printf '%s\n' "${rest[@]}" | sort -rn)
    t0=$(date +%s)
    echo "${#tests[@]} tests in $lanes lanes (about ${load_s[*]} s each, by durations.tsv)"
    waits=""
    for ((i = 0; i < lanes - 1; i++)); do waits+=" $ldir/lane$i.done"; done
    for ((i = 0; i < lanes; i++)); do
        # more lanes than tests: a lane with none starts no servers
        if [ ! -s "${list_f[i]}" ]; then
            echo "0 passed, 0 failed" >"$ldir/lane$i.out"
            touch "$ldir/lane$i.done"
            pids+=("")
            continue
        fi
        SUITE_LANE="$i" SUITE_LANE_DONE="$ldir/lane$i.done" SUITE_LANE_WAIT="${waits# }" \
            bash "$0" ${long:+--long} --lanes 1 "--lane-run=${list_f[i]}" >"$ldir/lane$i.out" 2>&1 &
        pids+=("$!")
    done
    rcs=0
    for ((i = 0; i < lanes; i++)); do [ -z "${pids[i]}" ] || wait "${pids[i]}" || rcs=1; done
    pids=()
    passed=0 failed=0 skipped=0 names=""
    for ((i = 0; i < lanes; i++)); do
        echo "--- lane $i"
        grep -v -E '^[0-9]+ passed, [0-9]+ failed$|^failed: |^[0-9]+ skipped$' "$ldir/lane$i.out" || true
        last="$(tail -n 1 "$ldir/lane$i.out")"
        if [[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
            passed=$((passed + BASH_REMATCH[1])); failed=$((failed + BASH_REMATCH[2]))
        else
            failed=$((failed + 1)); names+=" lane$i(no verdict)"
        fi
        s="$(sed -n 's/^\([0-9]*\) skipped$/\1/p' "$ldir/lane$i.out")"
        skipped=$((skipped + ${s:-0}))
        f="$(sed -n 's/^failed: \(.*\) (server logs in .*/\1/p' "$ldir/lane$i.out")"
        [ -z "$f" ] || names+=" $f"
    done
    grep -hE '^PASS|^FAIL' "$ldir"/lane*.out | grep -v 'under load' |
        sed -E 's/^(PASS|FAIL) (t_[a-z0-9_]+) \(([0-9.]+)s.*/\2\t\3/' | grep -P '\t' |
        awk -F'\t' '{ printf "%s\t%d\n", $1, $2 + 0.5 }' | sort >"$LOG_DIR/durations.tsv" || true
    echo "all lanes done in $(( $(date +%s) - t0 )) s"
    [ -z "$names" ] || echo "failed:$names (server logs in $LOG_DIR/servers.lane*/)"
    [ "$skipped" = 0 ] || echo "$skipped skipped"
    echo "$passed passed, $failed failed"
    [ "$failed" = 0 ] && [ "$rcs" = 0 ]
    exit
fi

# one lane's server logs apart from another's
SSTART="$LOG_DIR/servers-start${SUITE_LANE:+.lane$SUITE_LANE}.log"
SDUMP="$LOG_DIR/servers${SUITE_LANE:+.lane$SUITE_LANE}"
mkdir -p "$LOG_DIR"
export SEARCHSYNC_HARNESS_DIR
SEARCHSYNC_HARNESS_DIR="$(mktemp -d "${TMPDIR:-/tmp}/searchsync-suite.XXXXXX")"
touch "$SEARCHSYNC_HARNESS_DIR/.temporary"
stop_servers() {
    bash "$HARNESS/load.sh" stop >/dev/null 2>&1 || true
    bash "$HARNESS/servers.sh" stop >/dev/null 2>&1 || bash "$HARNESS/servers.sh" stop || true
    # a lane that ends, however, lets the lane waiting for it go on
    [ -z "${SUITE_LANE_DONE:-}" ] || touch "$SUITE_LANE_DONE"
}
trap stop_servers EXIT
trap 'exit 130' INT TERM

passed=0
failed=0
skipped=0
failed_names=()

t0=$(date +%s)
if ! bash "$HARNESS/servers.sh" start >"$SSTART" 2>&1; then
    echo "FAIL servers: could not start the test servers; $SSTART:"
    sed 's/^/  | /' "$SSTART" | tail -n 80
    echo "0 passed, 1 failed"
    exit 1
fi
echo "servers up in $(( $(date +%s) - t0 ))s ($(grep -o 'mariadb [0-9.]*-MariaDB' "$SSTART" | head -1), $(grep -o 'engine opensearch [0-9.]*' "$SSTART" | head -1 | cut -d' ' -f2-), $(grep -o 'zookeeper [0-9.]* ready' "$SSTART" | head -1 | sed 's/ ready//'))"
. "$SEARCHSYNC_HARNESS_DIR/env.sh"

# heal: a test may leave a server paused or killed (fault tests); put it back.
heal_servers() {
    local n
    for n in mariadb zookeeper opensearch; do
        bash "$HARNESS/$n.sh" resume >/dev/null 2>&1 || true
        if ! bash "$HARNESS/$n.sh" status >/dev/null 2>&1; then
            echo "  (restarting $n, left dead by the previous test)"
            bash "$HARNESS/$n.sh" restart >>"$SSTART" 2>&1 ||
                echo "  (restart of $n FAILED; see $SSTART)"
        fi
    done
    . "$SEARCHSYNC_HARNESS_DIR/env.sh"
}

# reset: drop test databases and search indices so each test starts clean.
reset_data() {
    local db idx
    [ -z "${SUITE_NO_RESET:-}" ] || return 0
    for db in $(mariadb --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -uroot -N -B \
            -e 'SHOW DATABASES' 2>/dev/null); do
        case "$db" in information_schema|performance_schema|mysql|sys) continue ;; esac
        mariadb --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -uroot \
            -e "DROP DATABASE \`$db\`" >/dev/null 2>&1 || true
    done
    for idx in $(curl -sf -m 30 "$SEARCH_URL/_cat/indices?h=index&expand_wildcards=open,closed" 2>/dev/null); do
        case "$idx" in .*) continue ;; esac
        curl -sf -m 30 -X DELETE "$SEARCH_URL/$idx" >/dev/null 2>&1 || true
    done
    for idx in $(curl -sf -m 30 "$SEARCH_URL/_index_template" 2>/dev/null | jq -r '.index_templates[].name' 2>/dev/null); do
        case "$idx" in .*) continue ;; esac
        curl -sf -m 30 -X DELETE "$SEARCH_URL/_index_template/$idx" >/dev/null 2>&1 || true
    done
}

# load_on / load_off: the busy box (tests/harness/load.sh); SEARCH_URL then
# leads through its proxy
# (SEARCHSYNC_LOAD=1 tells a test it runs on the busy box: the loops of the
# load tier take their load-tier length from it)
load_on() {
    bash "$HARNESS/load.sh" start >>"$SSTART" 2>&1 ||
        { echo "FAIL load: could not start the load; $SSTART"; return 1; }
    . "$SEARCHSYNC_HARNESS_DIR/load.env"
    export SEARCHSYNC_LOAD=1
}
load_off() {
    bash "$HARNESS/load.sh" stop >>"$SSTART" 2>&1 || true
    . "$SEARCHSYNC_HARNESS_DIR/env.sh"
    unset SEARCHSYNC_LOAD
}

# run_one TEST [SEED]
run_one() {
    local t="$1" seed="${2:-}" name logf start rc secs reason label
    name="$(basename "${t%.sh}")"
    label="$name${seed:+ seed=$seed}${under_load:+ (under load)}"
    logf="$LOG_DIR/$name${seed:+.$seed}.log"
    start=$(date +%s.%N)
    set +e
    SEARCHSYNC_SEED="$seed" timeout -k 15 "$TIMEOUT" bash "$t" >"$logf" 2>&1
    rc=$?
    set -e
    secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
    reason=""
    if [ "$rc" = 77 ]; then
        reason="$(sed -n 's/^SKIP: [^:]*: //p' "$logf" | tail -1)"
        [ -n "$reason" ] || rc=1 reason="exit 77 without a printed SKIP reason"
    fi
    case "$rc" in
        0)  passed=$((passed + 1)); echo "PASS $label (${secs}s)" ;;
        77) if [ "${CI:-}" = true ]; then
                failed=$((failed + 1)); failed_names+=("$name${seed:+:$seed}")
                echo "FAIL $label (${secs}s, skipped, and under CI=true a skip is a failure): $reason — log: $logf"
            else
                skipped=$((skipped + 1)); echo "SKIP $label (${secs}s): $reason"
            fi ;;
        *)  failed=$((failed + 1)); failed_names+=("$name${seed:+:$seed}")
            [ "$rc" = 124 ] && reason="timed out after ${TIMEOUT}s"
            echo "FAIL $label (${secs}s, exit $rc${reason:+; $reason}) — log: $logf"
            # the verdict first (a test's exit hooks may print pages of
            # server logs after it), then the log's last lines
            # (a log without such a line, as a timeout leaves, must not end
            # the lane under set -e and pipefail: the next test still runs)
            { grep -n -A6 -E '^(assertion failed|FAIL: )' "$logf" | head -n 30 | sed 's/^/  > /'; } || true
            { tail -n 60 "$logf" | sed 's/^/  | /'; } || true ;;
    esac
    heal_servers
    [ -z "$under_load" ] || . "$SEARCHSYNC_HARNESS_DIR/load.env"
    reset_data
}
fresh_seed() { echo $(( ( (RANDOM << 15) | RANDOM ) % 1000000000 )); }

under_load=""
later=()
if [ -n "$load" ]; then
    load_on || exit 1
    under_load=1
fi
for t in "${tests[@]}"; do
    if [ -z "$load" ] && [ "$seeds" = 1 ]; then
        case " ${UNDER_LOAD-t_reindex_writes} " in
            *" $(basename "${t%.sh}") "*) later+=("$t"); continue ;;
        esac
    fi
    if [ "$seeds" = 1 ] && [ -z "$load" ]; then
        run_one "$t"
    else
        for ((k = 0; k < seeds; k++)); do run_one "$t" "$(fresh_seed)"; done
    fi
done
[ -z "${SUITE_LANE_DONE:-}" ] || touch "$SUITE_LANE_DONE"
if [ ${#later[@]} -gt 0 ]; then
    # the busy box only once the other lanes are done (it would slow them)
    for f in ${SUITE_LANE_WAIT:-}; do
        until [ -e "$f" ]; do sleep 2; done
    done
    echo "under load: ${later[*]##*/}"
    if load_on; then
        under_load=1
        for t in "${later[@]}"; do run_one "$t" "$(fresh_seed)"; done
        under_load=""
        load_off
    else
        failed=$((failed + 1)); failed_names+=(load)
    fi
fi
[ -z "$load" ] || load_off

if [ "$failed" -gt 0 ]; then
    # keep the server logs of a failing run next to the test logs
    mkdir -p "$SDUMP"
    for f in mariadb/mariadbd.err zookeeper/zookeeper.log opensearch/opensearch.log; do
        [ -f "$SEARCHSYNC_HARNESS_DIR/$f" ] && cp "$SEARCHSYNC_HARNESS_DIR/$f" "$SDUMP/" || true
    done
    echo "failed: ${failed_names[*]} (server logs in $SDUMP/)"
fi
[ "$skipped" = 0 ] || echo "$skipped skipped"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
