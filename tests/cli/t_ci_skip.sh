#!/usr/bin/env bash
# Under CI=true a skipped test is a failure: .ci/run exports CI=true before
# it runs scripts/test.sh; the integration suite (tests/integration/suite.sh)
# then counts a skipped test as failed and exits non-zero, and
# tests/no_skip_in_ci.sh (the log compiler of every `make check` entry) turns
# an exit 77 into 1. Without CI the same skip is only reported. The suite
# runs from a copy beside stand-in server scripts, so no server is started.
set -uo pipefail
src=${SEARCHSYNC_SRCDIR:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
check() { # check NAME EXPECTED_RC ACTUAL_RC
  if [ "$2" != "$3" ]; then echo "FAIL $1: exit $3, expected $2"; failures=$((failures + 1));
  else echo "ok   $1"; fi
}
contains() { # contains NAME NEEDLE FILE
  if grep -qF -- "$2" "$3"; then echo "ok   $1"; else
    echo "FAIL $1: output lacks \"$2\":"; sed 's/^/     /' "$3"; failures=$((failures + 1)); fi
}

# ---- .ci/run exports CI=true to scripts/test.sh (a stand-in that prints it)
mkdir -p "$tmp/repo/.ci" "$tmp/repo/scripts"
cp "$src/.ci/run" "$tmp/repo/.ci/run"
printf '#!/usr/bin/env bash\necho "CI=${CI:-unset}"\n' >"$tmp/repo/scripts/test.sh"
env -u CI bash "$tmp/repo/.ci/run" >"$tmp/out" 2>&1; check ".ci/run runs scripts/test.sh" 0 $?
contains ".ci/run exports CI=true" "CI=true" "$tmp/out"

# ---- the integration suite, with one test that skips
suite="$tmp/tree/tests/integration"
mkdir -p "$suite" "$tmp/tree/tests/harness"
cp "$src/tests/integration/suite.sh" "$suite/suite.sh"
cat >"$suite/t_needs_a_tool.sh" <<'SH'
printf 'SKIP: t_needs_a_tool: frobnicate is not installed\n'
exit 77
SH
cat >"$tmp/tree/tests/harness/servers.sh" <<'SH'
case "$1" in
    start) echo "mariadb 0.0-MariaDB, engine opensearch 0.0, zookeeper 0.0 ready"
           : >"$SEARCHSYNC_HARNESS_DIR/env.sh" ;;
    stop) [ -f "$SEARCHSYNC_HARNESS_DIR/.temporary" ] && rm -rf "$SEARCHSYNC_HARNESS_DIR" ;;
esac
exit 0
SH
for n in mariadb zookeeper opensearch; do echo 'exit 0' >"$tmp/tree/tests/harness/$n.sh"; done
run_suite() { # run_suite CI_VALUE OUT
  SEARCHSYNC_SRCDIR="$tmp/tree" SUITE_LOG_DIR="$tmp/logs" SUITE_NO_RESET=1 CI="$1" \
    bash "$suite/suite.sh" >"$2" 2>&1
}
run_suite true "$tmp/ci"; check "suite under CI=true: a skip fails the run" 1 $?
contains "suite under CI=true: the skip is a failure" "FAIL t_needs_a_tool" "$tmp/ci"
contains "suite under CI=true: its reason shown" "frobnicate is not installed" "$tmp/ci"
contains "suite under CI=true: counted failed" "0 passed, 1 failed" "$tmp/ci"
run_suite "" "$tmp/noci"; check "suite without CI: a skip passes the run" 0 $?
contains "suite without CI: reported as a skip" "SKIP t_needs_a_tool" "$tmp/noci"
contains "suite without CI: counted" "1 skipped" "$tmp/noci"
# the same in more lanes than tests: a lane with no test is no failure
SUITE_LANES=3 run_suite "" "$tmp/lanes"; check "suite in 3 lanes, 1 test: a skip passes the run" 0 $?
contains "suite in 3 lanes, 1 test: reported as a skip" "SKIP t_needs_a_tool" "$tmp/lanes"
contains "suite in 3 lanes, 1 test: counted" "0 passed, 0 failed" "$tmp/lanes"

# ---- make check's log compiler: exit 77 is a failure only under CI=true
CI=true sh "$src/tests/no_skip_in_ci.sh" sh -c 'exit 77' >"$tmp/out" 2>&1
check "no_skip_in_ci.sh under CI=true: 77 becomes 1" 1 $?
contains "no_skip_in_ci.sh under CI=true: says why" "under CI=true a skip is a failure" "$tmp/out"
CI= sh "$src/tests/no_skip_in_ci.sh" sh -c 'exit 77' >"$tmp/out" 2>&1
check "no_skip_in_ci.sh without CI: 77 stays a skip" 77 $?
CI=true sh "$src/tests/no_skip_in_ci.sh" sh -c 'exit 0' >"$tmp/out" 2>&1
check "no_skip_in_ci.sh under CI=true: a pass stays a pass" 0 $?

echo "$failures failures"
[ "$failures" -eq 0 ]
