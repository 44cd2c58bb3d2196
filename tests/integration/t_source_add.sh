#!/usr/bin/env bash
# t_source_add — sources added at run time (docs/cluster.md, "Adding a
# source"): one index over three MariaDB servers (lib.sh extra_mariadb), the
# daemon of east running; west added with `searchsync source add`, north with
# POST /api/v1/sources on east's admin server, each started from the file
# the add wrote, the way searchsync@NAME starts it (`searchsync run --config
# DIR/NAME.ini`). Checked:
#   - refusals before anything is written: a wrong password (exit 2, names
#     the user and password), a user without the replication grants (names
#     the GRANT), a server without the mapping's tables (names the table),
#     an existing name; no file and no registry row after any of them;
#   - the files: NAME.ini and NAME.password mode 0600, the ini derived from
#     east's (the same metadata schema and engine, its own [source] and
#     [admin] listen port);
#   - version 1 waits for the added sources' parts, then holds exactly the
#     union of the three servers' SQL oracles (multi_lib.sh);
#   - `source list` and GET /api/v1/sources: every source up, its reader
#     node, the index config it feeds; west's own /metrics labelled west;
#   - edit with a wrong password (CLI and PUT): refused with a clear message,
#     its files and registry row unchanged; edit with the right one
#     rewrites the ini, and the restarted process goes on syncing;
#   - remove refused while the index config lists the source;
#   - no password in any answer, output, file but NAME.password, or log.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
. "$(dirname "$0")/multi_lib.sh"
require_bin

SRC=(east west north)
ORDERS=120
meta="$(unique_name sssa)"
alias="$(unique_name srcadd)"
mapping_name="shopsa_$$"
etc="$TEST_TMP/etc"
mkdir -p "$etc"
PW_W="Wpw-$RANDOM-q7Zr9"   # the secrets searched for in every output
PW_N="Npw-$RANDOM-k2Xv5"
PW_BAD="Bad-$RANDOM-m4Tt1"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
on_exit '[ "$rc" = 0 ] || { for f in "$TEST_TMP"/*.log "$TEST_TMP"/*.out; do echo "--- $f (last 20 lines)"; tail -20 "$f"; done; }'

t0=$(date +%s)
extra_mariadb east west north
log "three servers up in $(($(date +%s) - t0)) s"
shop_schema east 1 "$ORDERS"
shop_schema west 2 "$ORDERS"
# north's tables come later: first it is refused for lacking them
for s in west north; do
    pw=$PW_W; [ "$s" = north ] && pw=$PW_N
    extra_q "$s" "CREATE USER 'repl_$s'@'%' IDENTIFIED BY '$pw';
      GRANT REPLICATION SLAVE, BINLOG MONITOR, SELECT ON *.* TO 'repl_$s'@'%';
      CREATE USER 'weak'@'%' IDENTIFIED BY 'weakpw'; GRANT SELECT ON *.* TO 'weak'@'%';" ||
        fail "users on $s"
done

admin_daemon east 4401 "$etc"

# api METHOD PATH [BODY] — sets CODE and BODY; every answer kept for the grep
api() {
    local data=()
    [ -n "${3:-}" ] && data=(-H 'Content-Type: application/json' --data-binary "$3")
    CODE="$(curl -sS -m 60 -X "$1" -o "$TEST_TMP/.b" -w '%{http_code}' \
        -H "Authorization: Bearer $TOKEN" "${data[@]}" "$URL$2")" || fail "curl $1 $2"
    BODY="$(cat "$TEST_TMP/.b")"
    printf '%s %s -> %s %s\n' "$1" "$2" "$CODE" "$BODY" >>"$TEST_TMP/api.out"
}
# src ACTION ARGS... — `searchsync source` with east's configuration; sets RC, OUT
src() {
    local a="$1"
    shift
    RC=0
    OUT="$("$SEARCHSYNC_BIN" source "$a" --config "$TEST_TMP/east.ini" "$@" 2>&1)" || RC=$?
    printf '$ source %s %s -> %s\n%s\n' "$a" "$*" "$RC" "$OUT" >>"$TEST_TMP/cli.out"
}
registry() { mysql_q "SELECT CONCAT_WS(' ', name, host, port, user, server_id) FROM \`$meta\`.sources WHERE host IS NOT NULL ORDER BY name"; }
nothing_written() { # LABEL
    assert_eq "" "$(ls "$etc")" "$1: no file written"
    assert_eq "" "$(registry)" "$1: no registry row"
}
printf '%s\n' "$PW_BAD" >"$TEST_TMP/bad.pw"
printf '%s\n' "$PW_W" >"$TEST_TMP/west.pw"
printf '%s\n' "$PW_N" >"$TEST_TMP/north.pw"
WPORT="$(extra_port west)"
NPORT="$(extra_port north)"

# ---- refusals, before anything is written
src add west --host 127.0.0.1 --port "$WPORT" --user repl_west --password-file "$TEST_TMP/bad.pw"
assert_eq 2 "$RC" "a wrong password: exit 2"
assert_contains "$OUT" "cannot connect to the source server 127.0.0.1:$WPORT as repl_west" "a wrong password: says which server and user"
assert_contains "$OUT" "check the user and password given" "a wrong password: says what to check"
nothing_written "a wrong password"
printf 'weakpw\n' >"$TEST_TMP/weak.pw"
src add west --host 127.0.0.1 --port "$WPORT" --user weak --password-file "$TEST_TMP/weak.pw"
assert_eq 2 "$RC" "a user without replication grants: exit 2"
assert_contains "$OUT" "GRANT BINLOG MONITOR ON *.* TO 'weak'@" "names the missing grant"
assert_contains "$OUT" "REPLICATION SLAVE" "names REPLICATION SLAVE"
nothing_written "missing grants"
api POST /api/v1/sources "{\"name\":\"north\",\"host\":\"127.0.0.1\",\"port\":$NPORT,\"user\":\"repl_north\",\"password\":\"$PW_N\"}"
assert_eq 400 "$CODE" "a server without the mapping's tables: 400"
assert_contains "$BODY" "table shop.orders (of index config $alias) is not on the server" "names the missing table"
nothing_written "missing tables"
shop_schema north 3 "$ORDERS"
api POST /api/v1/sources "{\"name\":\"north\",\"host\":\"127.0.0.1\",\"port\":$NPORT,\"user\":\"repl_north\",\"password\":\"$PW_BAD\"}"
assert_eq 400 "$CODE" "API, a wrong password: 400"
assert_eq password "$(jq -r .field <<<"$BODY")" "API, a wrong password: the field at fault"
nothing_written "API, a wrong password"
api POST /api/v1/sources '{"name":"east","host":"127.0.0.1","user":"x","password":"y"}'
assert_eq 409 "$CODE" "an existing name: 409"
dead="$(free_port)"
src add west --host 127.0.0.1 --port "$dead" --user repl_west --password-file "$TEST_TMP/west.pw"
assert_eq 1 "$RC" "a server that does not answer: exit 1"
assert_contains "$OUT" "is the server running and reachable at the host and port given?" "a server that does not answer: says what to check"
nothing_written "a server that does not answer"
echo "# by hand" >"$etc/south.ini"
src add south --host 127.0.0.1 --port "$WPORT" --user repl_west --password-file "$TEST_TMP/west.pw"
assert_eq 2 "$RC" "a configuration written by hand: exit 2"
assert_contains "$OUT" "$etc/south.ini exists already" "a configuration written by hand is never written over"
assert_eq "# by hand" "$(cat "$etc/south.ini")" "the file written by hand as it was"
rm -f "$etc/south.ini"
nothing_written "a configuration written by hand"

# ---- west with the CLI, north with the API
src add west --host 127.0.0.1 --port "$WPORT" --user repl_west --password-file "$TEST_TMP/west.pw"
assert_eq 0 "$RC" "source add west: $OUT"
assert_contains "$OUT" "start it: searchsync run --config $etc/west.ini" "says how to start it"
api POST /api/v1/sources "{\"name\":\"north\",\"host\":\"127.0.0.1\",\"port\":$NPORT,\"user\":\"repl_north\",\"password\":\"$PW_N\"}"
assert_eq 201 "$CODE" "POST /api/v1/sources north: $BODY"
assert_eq set "$(jq -r .password <<<"$BODY")" "the answer says the password is set"
for s in west north; do
    assert_eq 600 "$(stat -c %a "$etc/$s.ini")" "$s.ini is mode 0600"
    assert_eq 600 "$(stat -c %a "$etc/$s.password")" "$s.password is mode 0600"
    "$SEARCHSYNC_BIN" config check --config "$etc/$s.ini" >"$TEST_TMP/check-$s.out" 2>&1 ||
        fail "config check of $s.ini: $(cat "$TEST_TMP/check-$s.out")"
done
assert_eq "database = \"$meta\"" "$(grep '^database' "$etc/west.ini")" "west.ini: east's metadata schema"
assert_eq "urls = $SEARCH_URL" "$(grep '^urls' "$etc/west.ini")" "west.ini: east's engine"
WLISTEN="$(sed -n 's/^listen = "\(.*\)"$/\1/p' "$etc/west.ini")"
NLISTEN="$(sed -n 's/^listen = "\(.*\)"$/\1/p' "$etc/north.ini")"
assert_ne "" "$WLISTEN" "west has an admin port of its own"
assert_ne "$WLISTEN" "$NLISTEN" "west and north have different admin ports"
assert_eq 2 "$(registry | wc -l)" "two sources in the registry"

# ---- started as the unit starts them
srun() { # NAME — `searchsync run` of the written file, logged to NAME.log
    LOGAT[$1]="$(stat -c %s "$TEST_TMP/$1.log" 2>/dev/null || echo 0)"
    "$SEARCHSYNC_BIN" run --config "$etc/$1.ini" >>"$TEST_TMP/$1.log" 2>&1 &
    DPID[$1]=$!
}
srun west
srun north
wait_until 90 "version 1 of $alias is live" version_is 1
check_oracle "three sources, two added at run time"
assert_eq "200" "$(curl -s -o "$TEST_TMP/west.metrics" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "http://$WLISTEN/metrics")" "west's own admin server"
assert_contains "$(grep -m1 '^searchsync_binlog_lag_seconds' "$TEST_TMP/west.metrics")" 'source="west"' "west's /metrics are labelled west"

# ---- listed
wait_until 20 "every source listed up" bash -c "'$SEARCHSYNC_BIN' source list --config '$TEST_TMP/east.ini' --json | jq -e '[.sources[] | select(.source_up == true)] | length == 3'"
src list --json
assert_eq 0 "$RC" "source list"
assert_eq "east,north,west" "$(jq -r '[.sources[].name] | join(",")' <<<"$OUT")" "every source listed"
assert_eq "$alias" "$(jq -r '.sources[] | select(.name == "west") | .index_configs | join(",")' <<<"$OUT")" "west feeds the index config"
assert_eq "true" "$(jq -r '.sources[] | select(.name == "north") | .read' <<<"$OUT")" "north is read"
api GET /api/v1/sources
assert_eq 200 "$CODE" "GET /api/v1/sources"
assert_eq "127.0.0.1:$WPORT:set" "$(jq -r '.sources[] | select(.name == "west") | "\(.host):\(.port):\(.password)"' <<<"$BODY")" "the API lists west, its password only as set"
src list
assert_contains "$OUT" "west " "the text list"

# ---- edit with a wrong password: refused, nothing changed
before="$(sha256sum "$etc"/west.* | sha256sum)"
reg_before="$(registry)"
src edit west --password-file "$TEST_TMP/bad.pw" --port "$WPORT"
assert_eq 2 "$RC" "edit with a wrong password: exit 2"
assert_contains "$OUT" "check the user and password given" "edit with a wrong password: says what to check"
api PUT /api/v1/sources/west "{\"password\":\"$PW_BAD\"}"
assert_eq 400 "$CODE" "PUT with a wrong password: 400"
assert_eq "$before" "$(sha256sum "$etc"/west.* | sha256sum)" "west's files unchanged"
assert_eq "$reg_before" "$(registry)" "the registry unchanged"
# the right one, and the admin port given up: the ini rewritten, its process
# restarted (what searchsync-sources.path does) goes on
api PUT /api/v1/sources/west "{\"password\":\"$PW_W\",\"admin_listen\":\"none\"}"
assert_eq 200 "$CODE" "PUT west: $BODY"
assert_eq 'listen = ""' "$(grep '^listen' "$etc/west.ini")" "west.ini rewritten"
dstop west
srun west
extra_q west "UPDATE shop.orders SET status = 'edited' WHERE id <= 5" shop || fail "update on west"
caught_up 30 west
check_oracle "after west's edit and restart"

# ---- remove: refused while listed
src remove west
assert_eq 2 "$RC" "remove while listed: exit 2"
assert_contains "$OUT" "feeds index config(s) $alias" "remove names the index config"
assert_true "west.ini kept" test -f "$etc/west.ini"
api DELETE /api/v1/sources/north
assert_eq 409 "$CODE" "DELETE while listed: 409"
api DELETE "/api/v1/sources/north?force=true"
assert_eq 200 "$CODE" "DELETE ?force=true: $BODY"
assert_eq "$alias" "$(jq -r .still_listed_by <<<"$BODY")" "it says which index config still lists it"
assert_true "north's files removed" test ! -e "$etc/north.ini" -a ! -e "$etc/north.password"
assert_eq "west" "$(registry | cut -d' ' -f1)" "north's registry row removed"
assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM \`$meta\`.offsets WHERE source = 'north'")" "and its checkpoint"

# ---- no password anywhere but NAME.password
for f in "$TEST_TMP"/*.log "$TEST_TMP"/api.out "$TEST_TMP"/cli.out "$TEST_TMP"/check-*.out "$etc"/*.ini; do
    for p in "$PW_W" "$PW_N" "$PW_BAD"; do
        if grep -qF -- "$p" "$f"; then fail "a password is in $f"; fi
    done
done
mariadb-dump --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -u root "$meta" >"$TEST_TMP/meta.sql" 2>/dev/null ||
    fail "dumping the metadata schema"
for p in "$PW_W" "$PW_N" "$PW_BAD"; do
    if grep -qF -- "$p" "$TEST_TMP/meta.sql"; then fail "a password is in the metadata schema"; fi
done
log "t_source_add passed in $(($(date +%s) - t0)) s"
pass
