# tests/integration/deliver_lib.sh — shared by the t_deliver_*.sh tests.
# Finds tests/tools/deliver_driver (built by `make check`) and wraps it.
# shellcheck shell=bash
DRIVER=""
for _d in "${DELIVER_DRIVER:-}" "$(dirname "$SEARCHSYNC_BIN")/tests/tools/deliver_driver" \
          "$PWD/tests/tools/deliver_driver" "$SEARCHSYNC_SRCDIR/tests/tools/deliver_driver"; do
    [ -n "$_d" ] && [ -x "$_d" ] && { DRIVER="$_d"; break; }
done
[ -n "$DRIVER" ] || skip "tests/tools/deliver_driver not built (make check builds it)"

# driver ARGS... — run the driver against the suite's engine
driver() { "$DRIVER" --url "$SEARCH_URL" "$@"; }
# json_field JSON KEY — a number from the driver's one-line JSON output
json_field() { printf '%s\n' "$1" | tail -n 1 | jq -r ".$2"; }
# engine_pid — the OpenSearch JVM's pid (for SIGSTOP/SIGCONT/SIGKILL)
engine_action() { bash "$HARNESS/servers.sh" "$1" opensearch >/dev/null; . "$SEARCHSYNC_HARNESS_DIR/env.sh"; }
