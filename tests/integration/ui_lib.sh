# tests/integration/ui_lib.sh — sourced by the browser tests (t_ui_*.sh):
# Debian's chromium and playwright-core (pinned, installed by npm into
# $SEARCHSYNC_CACHE/ui-tests; the browser itself is never downloaded), and
# the screenshot directory. Sets CHROMIUM, PW_DIR, SHOTS.
PW_VERSION=1.65.1
ui_setup() {
    CHROMIUM="$(command -v chromium || true)"
    [ -n "$CHROMIUM" ] || skip "no chromium: run tests/harness/deps.sh (it installs Debian's chromium)"
    command -v node >/dev/null && command -v npm >/dev/null || skip "no node/npm: run tests/harness/deps.sh"
    local cache="${SEARCHSYNC_CACHE:-${HOME:-/root}/.cache/searchsync}"
    PW_DIR="$cache/ui-tests"
    if [ "$(jq -r .version "$PW_DIR/node_modules/playwright-core/package.json" 2>/dev/null)" != "$PW_VERSION" ]; then
        mkdir -p "$PW_DIR"
        log "installing playwright-core@$PW_VERSION into $PW_DIR"
        # PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: the system chromium is used
        PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --prefix "$PW_DIR" --no-audit --no-fund --silent \
            "playwright-core@$PW_VERSION" >"$TEST_TMP/npm.log" 2>&1 ||
            fail "npm install playwright-core@$PW_VERSION into $PW_DIR failed: $(tail -20 "$TEST_TMP/npm.log")"
    fi
    SHOTS="${SUITE_LOG_DIR:-$PWD/tests/integration/logs}/ui"
    mkdir -p "$SHOTS"
}
