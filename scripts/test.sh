#!/usr/bin/env bash
# scripts/test.sh — the full build-and-test run (what CI executes via .ci/run).
#
# Owns: the order of steps: install packages (tests/harness/deps.sh), autoreconf,
# configure, build, the distribution tarball built (scripts/dist-check.sh:
# `make dist`, unpacked, configured and compiled; a file missing from it is
# named), `make check`; on failure, print the logs of the failing
# tests. The exit status is make's.
#   CONFIGURE_FLAGS="..."   extra ./configure arguments
#   MAKE_JOBS=N             parallel jobs (default 2)
#   CI=true                 a skipped test is a failure (.ci/run exports it;
#                           honoured by tests/no_skip_in_ci.sh and the suite)
#   SEARCHSYNC_LOAD=1       then the load tier too (make check-load: the
#                           randomized oracle tests on a busy box, LOAD_SEEDS
#                           seeds each)
set -euo pipefail

cd "$(dirname "$0")/.."
jobs="${MAKE_JOBS:-2}"

step() { printf '\n=== %s (%s)\n' "$*" "$(date -u +%H:%M:%S)"; }

step "dependencies"
bash tests/harness/deps.sh

step "autoreconf -fi"
autoreconf -fi

step "./configure ${CONFIGURE_FLAGS:-}"
# shellcheck disable=SC2086
./configure ${CONFIGURE_FLAGS:-}

step "make -j$jobs"
make -j"$jobs"

if [ ! -f Makefile ]; then
    echo "no Makefile after configure: nothing to check" >&2
    exit 1
fi

step "the distribution tarball builds (scripts/dist-check.sh)"
MAKE_JOBS="$jobs" bash scripts/dist-check.sh

step "make -j$jobs check"
rc=0
make -j"$jobs" check || rc=$?

if [ "$rc" = 0 ] && [ "${SEARCHSYNC_LOAD:-}" = 1 ]; then
    step "make check-load (LOAD_SEEDS=${LOAD_SEEDS:-3})"
    make check-load || rc=$?
fi

if [ "$rc" != 0 ]; then
    step "failing test logs"
    # automake's test driver writes NAME.trs (results) beside NAME.log
    while IFS= read -r trs; do
        if grep -Eq '^:test-result: (FAIL|ERROR|XPASS)' "$trs"; then
            log="${trs%.trs}.log"
            printf '\n----- %s -----\n' "$log"
            tail -n 300 "$log" 2>/dev/null || echo "(missing)"
        fi
    done < <(find . -name '*.trs' -not -path './.git/*' | sort)
    # the integration suite keeps one log per test; show the failing ones in full
    if [ -d tests/integration/logs ] && [ -f tests/integration/suite.sh.log ]; then
        for name in $(sed -n 's/^FAIL \(t_[A-Za-z0-9_]*\|long_[A-Za-z0-9_]*\) .*/\1/p' tests/integration/suite.sh.log); do
            printf '\n----- tests/integration/logs/%s.log -----\n' "$name"
            tail -n 300 "tests/integration/logs/$name.log" 2>/dev/null || echo "(missing)"
        done
    fi
    [ -f test-suite.log ] && { printf '\n----- test-suite.log (summary) -----\n'; head -n 40 test-suite.log; }
    step "make check FAILED (exit $rc)"
else
    step "make check passed"
fi
exit "$rc"
