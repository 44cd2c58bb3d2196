#!/bin/sh
# tests/no_skip_in_ci.sh — the log compiler of every `make check` entry: runs
# the test and, under CI=true, turns a skip (exit 77) into a failure, so a
# missing tool or server can never make CI green by skipping what it tests.
"$@"
rc=$?
if [ "$rc" = 77 ] && [ "${CI:-}" = true ]; then
    echo "FAIL: $1 skipped, and under CI=true a skip is a failure" >&2
    exit 1
fi
exit "$rc"
