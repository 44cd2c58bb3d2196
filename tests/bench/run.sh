#!/usr/bin/env bash
# tests/bench/run.sh — `make bench`: starts the real servers once and runs
# every tests/bench/bench_*.sh against them (each prints its own figures and
# the baseline it is compared with, measured in the same run). Copy the
# figures into docs/benchmarks.md with the command line printed here.
#   usage: run.sh [FILTER...]     run only benchmarks whose name contains FILTER
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
SEARCHSYNC_SRCDIR="${SEARCHSYNC_SRCDIR:-$(cd "$here/../.." && pwd)}"
export SEARCHSYNC_SRCDIR
HARNESS="$SEARCHSYNC_SRCDIR/tests/harness"

benches=()
for b in "$here"/bench_*.sh; do
    [ -f "$b" ] || continue
    name="$(basename "${b%.sh}")"
    if [ $# -gt 0 ]; then
        keep=""
        for f in "$@"; do case "$name" in *"$f"*) keep=1 ;; esac; done
        [ -n "$keep" ] || continue
    fi
    benches+=("$b")
done
[ ${#benches[@]} -gt 0 ] || { echo "no benchmark matches: $*"; exit 1; }

if [ -z "${SEARCHSYNC_HARNESS_DIR:-}" ] || [ ! -f "$SEARCHSYNC_HARNESS_DIR/env.sh" ]; then
    SEARCHSYNC_HARNESS_DIR="$(mktemp -d "${TMPDIR:-/tmp}/searchsync-bench.XXXXXX")"
    export SEARCHSYNC_HARNESS_DIR
    touch "$SEARCHSYNC_HARNESS_DIR/.temporary" # servers.sh stop deletes it
    trap 'bash "$HARNESS/servers.sh" stop' EXIT
    bash "$HARNESS/servers.sh" start mariadb opensearch >/dev/null
fi

echo "# make bench on $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(uname -m)"
rc=0
for b in "${benches[@]}"; do
    echo
    echo "## $(basename "${b%.sh}")   (command: bash tests/bench/run.sh $(basename "${b%.sh}" | sed 's/^bench_//'))"
    bash "$b" || { echo "benchmark $(basename "$b") failed"; rc=1; }
done
exit $rc
