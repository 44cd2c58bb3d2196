#!/usr/bin/env bash
# t_multi_delayed — the delayed run of an index fed by several sources
# (docs/cluster.md, "Several sources, one index"; docs/operations.md,
# "Delayed run"). Three MariaDB servers, east, west and north (lib.sh's
# extra_mariadb, multi_lib.sh's shop: the same keys on every server), each
# read by a daemon of its own with `[delayed] schedule = every 2s`. The
# orders carry their status's row of shop.statuses (code, label), a
# delay-effect table: a label changed refreshes, in the next delayed run,
# the orders of that status. Statuses and labels differ per server, so a
# document rebuilt from another server's rows would differ from its own
# server's oracle. Against the union of the three servers' SQL oracles:
#   1. a label changed on east: east's run rebuilds exactly east's orders of
#      that status (their number from east's SQL), and no document of west
#      or north is written (their _seq_no unchanged);
#   2. labels changed on west (two) and north (one, the code east changed
#      too) at once: each source's run rebuilds its own orders only;
#   3. a label changed on east and on north, then north's server killed
#      before north's run (its run's lock held by the test until then):
#      east's run refreshes east's documents; north's scheduled runs and a
#      `delayed-run` from north's configuration fail and say so, north's
#      snapshot waits (not counted as an attempt) and its documents stay as
#      they were; north's server back, its next run refreshes them;
#   4. north's server killed in the middle of a run (`delayed-run
#      --max-attempts 1`, held after its page's position by the test-only
#      pause): the run stays for the next one rather than failing its
#      snapshot, and north's daemon, started again with its server, takes
#      it over and refreshes the documents.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
. "$(dirname "$0")/multi_lib.sh"
require_bin

SRC=(east west north)
meta="$(unique_name ssmdr)"
alias="$(unique_name orders)"
mapping_name="shopdr_$$"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
on_exit '[ "$rc" = 0 ] || for f in "$TEST_TMP"/*.log; do echo "--- $f (last 30 lines)"; tail -30 "$f"; done'

t0=$(date +%s)
extra_mariadb east west north
n=0
for s in "${SRC[@]}"; do
    n=$((n + 1))
    shop_schema "$s" "$n" 40
    # statuses spread differently on each server, labels naming the server
    extra_q "$s" "CREATE TABLE statuses (code VARCHAR(16) PRIMARY KEY, label VARCHAR(64) NOT NULL);
      INSERT INTO statuses VALUES ('new', 'New at $s'), ('paid', 'Paid at $s'), ('sent', 'Sent at $s');
      UPDATE orders SET status = ELT(1 + (id + $n) % 3, 'new', 'paid', 'sent')" shop ||
        fail "statuses on $s"
done
MULTI_ORACLE_FIELDS="'state', JSON_EXTRACT((SELECT JSON_OBJECT('code', s.code, 'label', s.label)
      FROM statuses s WHERE s.code = o.status), '\$')"

config() { # SOURCE SERVER_ID
    { MULTI_BUCKETS=1 MULTI_POLL_MS=300 source_ini "$1" $2
      cat <<INI
[delayed]
schedule = every 2s
[log]
level = info
INI
    } >"$TEST_TMP/$1.ini"
}
config east 4501
config west 4502
config north 4503
shop_mapping "$TEST_TMP/m0.json"
jq '.indices[0].tables[0].relations += [{"column": "status", "table": "shop.statuses",
      "join_column": "code", "extend_name": "state", "refresh_parent": false,
      "columns": [{"name": "code", "type": "keyword"}, {"name": "label", "type": "keyword"}]}]
    | .indices[0].tables += [{"table": "shop.statuses", "delay_effect": true}]' \
    "$TEST_TMP/m0.json" >"$TEST_TMP/m.json"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/east.ini" --yes "$TEST_TMP/m.json" \
    >"$TEST_TMP/import.out" 2>&1 || fail "mapping import: $(cat "$TEST_TMP/import.out")"
for s in "${SRC[@]}"; do dstart "$s"; done
wait_until 90 "version 1 of $alias is live" version_is 1
check_oracle "first sync"
log "first sync after $(($(date +%s) - t0)) s"

m_q() { mysql_q "$1" | tr '\t' ' '; }
runs_done() { m_q "SELECT COUNT(*) FROM \`$meta\`.delayed_runs WHERE source = '$1' AND status = 'done'"; }
runs_at_least() { [ "$(runs_done "$1")" -ge "$2" ]; }
last_run_docs() {
    m_q "SELECT docs_written FROM \`$meta\`.delayed_runs WHERE source = '$1' AND status = 'done' ORDER BY id DESC LIMIT 1"
}
orders_of() { extra_q "$1" "SELECT COUNT(*) FROM shop.orders WHERE status IN ($2)"; }
# every document's _seq_no, "id seq_no" sorted
seqnos() {
    search_refresh "$alias"
    search_post "/$alias/_search" '{"size": 1000, "seq_no_primary_term": true, "_source": false}' |
        jq -r '.hits.hits[] | "\(._id) \(._seq_no)"' | sort
}
of_sources() { grep -E "^($(IFS='|'; echo "$*")):" || true; }
snapshot_is() { # SOURCE "status attempts" of its newest snapshot
    [ "$(m_q "SELECT status, attempts FROM \`$meta\`.change_snapshots WHERE source = '$1' ORDER BY id DESC LIMIT 1")" = "$2" ]
}
# a run of SOURCE held off: the test takes the lock its delayed runs take
# (one per source and metadata schema), so that they find it busy and do
# nothing until lock_release
lock_hold() {
    mkfifo "$TEST_TMP/lock.fifo"
    mariadb --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -u root --batch --unbuffered \
        --skip-column-names "$meta" <"$TEST_TMP/lock.fifo" >"$TEST_TMP/lock.out" 2>&1 &
    LOCKPID=$!
    exec 7>"$TEST_TMP/lock.fifo"
    echo "SELECT GET_LOCK(CONCAT('searchsync.delayed.', LEFT(SHA1(CONCAT(DATABASE(), '.', '$1')), 24)), 30);" >&7
    wait_until 40 "the test holds the delayed-run lock of $1" grep -qx 1 "$TEST_TMP/lock.out"
}
lock_release() {
    echo "DO RELEASE_ALL_LOCKS();" >&7
    exec 7>&-
    wait "$LOCKPID" 2>/dev/null || true
    rm -f "$TEST_TMP/lock.fifo" "$TEST_TMP/lock.out"
}

# ---- 1. a label changed on east: east's orders of that status, no other
before="$(seqnos)"
extra_q east "UPDATE statuses SET label = 'Paid at east, renamed' WHERE code = 'paid'" shop
wait_until 30 "east's delayed run is done" runs_at_least east 1
assert_eq "$(orders_of east "'paid'")" "$(last_run_docs east)" \
    "east's run rebuilt exactly east's paid orders (SQL on east)"
after="$(seqnos)"
assert_eq "$(of_sources west north <<<"$before")" "$(of_sources west north <<<"$after")" \
    "no document of west or north was written by east's run (their _seq_no unchanged)"
assert_eq "$(orders_of east "'paid'")" \
    "$(diff <(of_sources east <<<"$before") <(of_sources east <<<"$after") | grep -c '^>')" \
    "east's documents written: its paid orders, each once"
check_oracle "after east's run"

# ---- 2. west (two labels) and north (the code east changed) at once
extra_q west "UPDATE statuses SET label = CONCAT(label, ', renamed') WHERE code IN ('paid', 'sent')" shop
extra_q north "UPDATE statuses SET label = 'Paid at north, renamed' WHERE code = 'paid'" shop
wait_until 30 "west's and north's delayed runs are done" eval 'runs_at_least west 1 && runs_at_least north 1'
assert_eq "$(orders_of west "'paid', 'sent'")" "$(last_run_docs west)" "west's run rebuilt exactly west's paid and sent orders"
assert_eq "$(orders_of north "'paid'")" "$(last_run_docs north)" "north's run rebuilt exactly north's paid orders"
assert_eq 1 "$(runs_done east)" "east ran nothing more"
check_oracle "after west's and north's runs"

# ---- 3. north's server down when its run comes
oracle_of north >"$TEST_TMP/north.oracle" # (its documents as they must stay while down)
lock_hold north
extra_q north "UPDATE statuses SET label = 'Sent at north, renamed' WHERE code = 'sent'" shop
extra_q east "UPDATE statuses SET label = 'New at east, renamed' WHERE code = 'new'" shop
wait_until 30 "north's snapshot is recorded" snapshot_is north "init 0"
caught_up 30 north
extra_ctl north kill >/dev/null 2>&1 || fail "killing north's server"
lock_release
wait_until 30 "east's second delayed run is done" runs_at_least east 2
assert_eq "$(orders_of east "'new'")" "$(last_run_docs east)" "east's run rebuilt east's new orders while north is down"
dwait_log north "scheduled delayed run failed" 20
st=0; "$SEARCHSYNC_BIN" delayed-run --config "$TEST_TMP/north.ini" >"$TEST_TMP/cron.out" 2>&1 || st=$?
log "delayed-run of north while its server is down: exit $st: $(cat "$TEST_TMP/cron.out")"
assert_eq 1 "$st" "a delayed-run of north while its server is down: exit 1"
assert_contains "$(cat "$TEST_TMP/cron.out")" "$(extra_port north)" "its message names north's server"
sleep 2 # (one more scheduled attempt of north's daemon)
assert_true "north's snapshot waits, not counted as an attempt" snapshot_is north "init 0"
assert_eq 1 "$(runs_done north)" "north's runs: only the one of before"
for s in east west; do oracle_of "$s" >"$TEST_TMP/$s.oracle"; done
check_docs "north down: east and west refreshed, north's as they were" "$alias" east west north
extra_ctl north restart >"$TEST_TMP/north.restart.log" 2>&1 || fail "north's server did not restart: $(tail "$TEST_TMP/north.restart.log")"
wait_until 60 "north's delayed run is done once its server is back" snapshot_is north "done 0"
assert_eq "$(orders_of north "'sent'")" "$(last_run_docs north)" "north's run rebuilt its sent orders"
check_oracle "north back"

# ---- 4. north's server gone in the middle of a run
lock_hold north
extra_q north "UPDATE statuses SET label = 'New at north, renamed' WHERE code = 'new'" shop
wait_until 30 "north's snapshot is recorded" snapshot_is north "init 0"
dstop north
lock_release
SEARCHSYNC_TEST_DELAYED_PAUSE_MS=5000 "$SEARCHSYNC_BIN" delayed-run --config "$TEST_TMP/north.ini" \
    --max-attempts 1 >"$TEST_TMP/mid.out" 2>&1 &
mpid=$!
wait_until 30 "the run of north holds after its page's position" grep -q "test pause" "$TEST_TMP/mid.out"
extra_ctl north kill >/dev/null 2>&1 || fail "killing north's server"
st=0; wait "$mpid" || st=$?
log "delayed-run of north, its server killed midway: exit $st: $(cat "$TEST_TMP/mid.out")"
assert_eq 1 "$st" "the run whose server went away midway: exit 1"
assert_contains "$(cat "$TEST_TMP/mid.out")" "the next delayed run takes it over" "it says the next run goes on with it"
assert_true "north's snapshot stays with its run (not failed, not in error)" snapshot_is north "running 0"
extra_ctl north restart >"$TEST_TMP/north.restart.log" 2>&1 || fail "north's server did not restart: $(tail "$TEST_TMP/north.restart.log")"
dstart north
wait_until 60 "north's daemon took the run over and refreshed its documents" snapshot_is north "done 0"
dwait_log north "taking over delayed run" 5
check_oracle "north's run taken over"
for s in "${SRC[@]}"; do dstop "$s"; done
log "$(($(date +%s) - t0)) s"
pass
