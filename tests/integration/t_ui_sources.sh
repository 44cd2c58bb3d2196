#!/usr/bin/env bash
# t_ui_sources — the UI's Databases screen (web/ui/screens/databases.js) in a
# real headless Chromium (t_ui_sources.mjs, playwright-core driving Debian's
# chromium) against the daemon of source east, with a second MariaDB, west,
# that the index config lists but no daemon reads yet (lib.sh extra_mariadb):
#   - the list: east read by this daemon, west listed as not read;
#   - "Add a database" with a wrong password: the error shown beside the
#     password field, the field emptied, nothing written;
#   - with the right one: the result names NAME.ini and the command; a
#     watcher here starts `searchsync run --config DIR/west.ini` when the file
#     appears (what searchsync-sources.path does), and the list shows west up
#     with its reader node and lag;
#   - "Edit": the password shown only as "set"; a wrong one refused inline;
#     no password anywhere in the page after submit;
#   - the phone width without horizontal scroll.
# Then: the alias equals the union of both servers' SQL oracles, and no
# password is in any daemon log.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
. "$(dirname "$0")/multi_lib.sh"
require_bin
. "$(dirname "$0")/ui_lib.sh"
ui_setup

SRC=(east west)
meta="$(unique_name ssui)"
alias="$(unique_name uisrc)"
mapping_name="shopui_$$"
etc="$TEST_TMP/etc"
mkdir -p "$etc"
PW_W="Wui-$RANDOM-p8Lq3"
PW_BAD="Bui-$RANDOM-c5Rn2"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
on_exit '[ "$rc" = 0 ] || { for f in "$TEST_TMP"/*.log; do echo "--- $f (last 20 lines)"; tail -20 "$f"; done; }'

extra_mariadb east west
shop_schema east 1 80
shop_schema west 2 80
extra_q west "CREATE USER 'repl_w'@'%' IDENTIFIED BY '$PW_W';
  GRANT REPLICATION SLAVE, BINLOG MONITOR, SELECT ON *.* TO 'repl_w'@'%'" || fail "user on west"

admin_daemon east 4501 "$etc"

# what searchsync-sources.path does: west.ini appears, its daemon starts
( while [ ! -f "$etc/west.ini" ]; do sleep 0.2; done
  exec "$SEARCHSYNC_BIN" run --config "$etc/west.ini" >>"$TEST_TMP/west.log" 2>&1 ) &
DPID[west]=$!

export UI_URL="$URL" TOKEN SHOTS PW_DIR CHROMIUM PW_W PW_BAD
export WEST_PORT="$(extra_port west)"
start=$(date +%s)
node "$SEARCHSYNC_SRCDIR/tests/integration/t_ui_sources.mjs" >"$TEST_TMP/browser.out" 2>&1 || {
    cat "$TEST_TMP/browser.out"
    fail "the browser run failed (screenshots so far in $SHOTS)"
}
cat "$TEST_TMP/browser.out"
n_ok="$(grep -c '^ok: ' "$TEST_TMP/browser.out")"
_LIB_ASSERTS=$((_LIB_ASSERTS + n_ok))
log "browser: $n_ok checks in $(( $(date +%s) - start )) s"

wait_until 60 "version 1 of $alias is live" version_is 1
check_oracle "east and west, west added from the UI"
assert_eq 600 "$(stat -c %a "$etc/west.ini")" "west.ini is mode 0600"
for f in "$TEST_TMP"/*.log "$TEST_TMP/browser.out" "$etc/west.ini"; do
    for p in "$PW_W" "$PW_BAD"; do
        if grep -qF -- "$p" "$f"; then fail "a password is in $f"; fi
    done
done
for s in databases databases-edit databases-phone; do
    assert_true "screenshot $s.png" test -s "$SHOTS/$s.png"
done
pass
