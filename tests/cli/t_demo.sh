#!/usr/bin/env bash
# The demo's word on the admin web UI (scripts/demo.sh): it ends with the UI's
# address and how to log in, the same address its searchsync.ini listens on,
# and never says the UI is missing. Running the whole demo (packages, build,
# MariaDB + OpenSearch, the shop loaded) is minutes, so the final message is
# checked where it is written, and `demo.sh status` (which prints the same
# lines) is run on a demo directory as the demo leaves it.
set -uo pipefail
src=${SEARCHSYNC_SRCDIR:-.}
demo="$src/scripts/demo.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
ok() { echo "ok   $*"; }

# no claim that the UI is missing, anywhere in the demo
if grep -inE 'web UI is not|UI is not in this build|no (web )?UI' "$demo" >"$tmp/claim"; then
  fail "demo.sh says the web UI is missing:"; sed 's/^/     /' "$tmp/claim"
else ok "demo.sh does not say the web UI is missing"; fi

# the address it prints is the one it configures: [admin] listen and the
# printed URL both come from admin.port, the login token from admin.token
grep -qF 'listen = 127.0.0.1:$(cat "$DEMO_DIR/admin.port")' "$demo" &&
  grep -qF 'token = $(cat "$DEMO_DIR/admin.token")' "$demo" &&
  ok "searchsync.ini of the demo: [admin] listen from admin.port, token from admin.token" ||
  fail "the demo's searchsync.ini no longer takes [admin] listen/token from admin.port/admin.token"
# the final message (after `say "ready"`) prints the UI lines
sed -n '/^say "ready"/,$p' "$demo" >"$tmp/ready"
grep -q 'ui_lines' "$tmp/ready" && ok "the final message prints the web UI lines" ||
  fail "the final message of demo.sh (after say \"ready\") does not print the web UI address"

# the lines themselves, from a demo directory as the start leaves it
mkdir -p "$tmp/demo"
echo 45678 >"$tmp/demo/admin.port"
echo 0123456789abcdef0123456789abcdef >"$tmp/demo/admin.token"
SEARCHSYNC_DEMO_DIR="$tmp/demo" bash "$demo" status >"$tmp/out" 2>&1
grep -qE '^Web UI +http://127\.0\.0\.1:45678/ ' "$tmp/out" && ok "demo.sh status prints the web UI address" ||
  { fail "demo.sh status does not print 'Web UI  http://127.0.0.1:45678/':"; sed 's/^/     /' "$tmp/out"; }
grep -qE 'log in with the token 0123456789abcdef0123456789abcdef' "$tmp/out" &&
  ok "demo.sh status says the token to log in with" ||
  { fail "demo.sh status does not say how to log in (the token):"; sed 's/^/     /' "$tmp/out"; }

echo "$failures failures"
[ "$failures" -eq 0 ]
