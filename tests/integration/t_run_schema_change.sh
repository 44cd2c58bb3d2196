#!/usr/bin/env bash
# tests/integration/t_run_schema_change.sh — the mapping against a changing
# source and against edits during a build, with `searchsync run` running:
#
#   widened      ALTER TABLE ... MODIFY a mapped VARCHAR(10) to VARCHAR(40):
#                the running daemon says at the DDL that it follows it and
#                records the new type; a longer value syncs; a restart starts
#                (before: exit 2 until someone re-imported the mapping)
#   incompatible a column typed `integer` in the engine widened to BIGINT:
#                the running daemon stops that index at the DDL (status says
#                why, exit 3); a change made meanwhile does not reach the
#                stopped version (its documents stay as they were); the
#                mapping fixed (long) and a reindex: the new version holds
#                that change, the stop is lifted, changes flow again
#   edit during  the mapping edited (a column added) while a version is built:
#   a build      that build is cancelled and the next version is built with
#                the new mapping; every document then has the new column,
#                equal to SQL
#   at start     a mapped column dropped while the daemon was down, a version
#                being built: the start stops the index, cancels the build
#                (once the engine's client exists) and runs on
. "$(dirname "$0")/lib.sh"
require_bin
db="$(unique_name sch)"
meta="$(unique_name meta)"
alias="$(unique_name items)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
mysql_q "CREATE DATABASE \`$db\`;
  CREATE TABLE \`$db\`.items (id INT PRIMARY KEY, name VARCHAR(10), qty INT, note VARCHAR(20));"
mysql_q "INSERT INTO \`$db\`.items
  SELECT seq, CONCAT('n', seq), seq % 7, CONCAT('note ', seq) FROM \`$db\`.seq_1_to_20000"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = sch
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = 7321
start = now
heartbeat_ms = 500
[metadata]
database = $meta
reload_interval_ms = 1000
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
[reindex]
page_size = 10
parallel_jobs = 1
buckets = 1
[log]
level = info
INI
mapping() { # EXTRA_COLUMNS_JSON
    cat <<JSON
{"version": 1, "indices": [{"alias": "$alias", "shards": 1, "replicas": 0, "tables": [{
  "table": "$db.items", "columns": [
    {"name": "id", "type": "long", "key": true},
    {"name": "name", "type": "keyword"},
    {"name": "qty", "type": "${QTY_TYPE:-integer}"}$1]}]}]}
JSON
}
mapping "" >"$TEST_TMP/m1.json"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/m1.json" --yes >"$TEST_TMP/import.out" 2>&1 ||
    fail "import: $(cat "$TEST_TMP/import.out")"
start_daemon() { daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"; }
start_daemon
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 40 lines)"; tail -40 "$TEST_TMP/run.log"; }'
wait_until 120 "the first version is live" grep -q "$alias: version 1 live" "$TEST_TMP/run.log" ||
    fail "no first sync: $(tail -20 "$TEST_TMP/run.log")"

# ---- widened
mysql_q "ALTER TABLE \`$db\`.items MODIFY name VARCHAR(40)"
wait_until 15 "the daemon follows the widened column" \
    grep -q "$db.items.name is now varchar(40) in the source (was varchar(10)): the mapping follows it" "$TEST_TMP/run.log" ||
    fail "the widening was not noticed at the DDL: $(tail -10 "$TEST_TMP/run.log")"
assert_eq "varchar(40)" "$(mysql_q "SELECT mysql_type FROM \`$meta\`.mapping_columns WHERE name = 'name'")" \
    "the new type is recorded in the mapping"
mysql_q "UPDATE \`$db\`.items SET name = 'a name longer than ten characters' WHERE id = 5"
wait_until 20 "the long name synced" bash -c \
    "curl -s '$SEARCH_URL/$alias/_doc/5' | jq -e '._source.name == \"a name longer than ten characters\"' >/dev/null" ||
    fail "long name not synced"
daemon_stop
[ "$DAEMON_RC" = 0 ] || fail "the daemon did not stop cleanly after the widening: $(tail -5 "$TEST_TMP/run.log")"
start_daemon
mysql_q "UPDATE \`$db\`.items SET name = 'after the restart' WHERE id = 6"
wait_until 30 "a change after the restart synced" bash -c \
    "curl -s '$SEARCH_URL/$alias/_doc/6' | jq -e '._source.name == \"after the restart\"' >/dev/null" ||
    fail "the daemon did not start again after a widening: $(tail -10 "$TEST_TMP/run.log")"

# ---- incompatible: an `integer` field cannot follow BIGINT: the index stops
mysql_q "ALTER TABLE \`$db\`.items MODIFY qty BIGINT"
wait_until 15 "the daemon stops the index at the DDL" \
    grep -q "index $alias stopped: after \`ALTER TABLE .*read from the binlog at mysql-bin\.[0-9]*:[0-9]*, the source no longer fits the mapping of index $alias: .*column $db.items.qty.*integer cannot follow it" "$TEST_TMP/run.log" ||
    fail "the incompatible change did not stop the index at the DDL: $(tail -10 "$TEST_TMP/run.log")"
st=0; "$SEARCHSYNC_BIN" status --config "$TEST_TMP/c.ini" --json >"$TEST_TMP/st.json" 2>&1 || st=$?
assert_eq 3 "$st" "status: a stopped index is a problem found (exit 3)"
assert_contains "$(jq -r ".indices[] | select(.alias == \"$alias\") | .stopped" "$TEST_TMP/st.json")" \
    "searchsync reindex --config FILE $alias" "status --json says why and what to do"
mysql_q "UPDATE \`$db\`.items SET name = 'while stopped', qty = 5000000000 WHERE id = 7;
  UPDATE \`$db\`.items SET name = 'fits too' WHERE id = 9"
wait_checkpoint "$meta" sch 30
kill -0 "$DAEMON" || fail "the daemon stopped at an incompatible change"
search_refresh "$alias"
assert_eq "n7" "$(search_doc "$alias" 7 | jq -r .name)" "the stopped version did not take the change (no document from a shape it cannot hold)"
# (a change the engine would take as well: only the stop keeps it out)
assert_eq "n9" "$(search_doc "$alias" 9 | jq -r .name)" "the stopped version takes no change at all"
# the mapping fixed, the index rebuilt: the stop is lifted when it goes live
QTY_TYPE=long mapping "" >"$TEST_TMP/m1b.json"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/m1b.json" --yes >"$TEST_TMP/import1b.out" 2>&1 ||
    fail "import of the fixed mapping: $(cat "$TEST_TMP/import1b.out")"
# the reindex asked at once, as a user would: the daemon looks for edits
# before it starts a newly asked build ([reindex] poll_interval_ms is 100 ms,
# [metadata] reload_interval_ms 1000), so version 2 is built from the fixed
# mapping, not from the one it replaces and then cancelled for the edit
"$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/c.ini" "$alias" --no-wait >"$TEST_TMP/rx1.out" 2>&1 ||
    fail "reindex request: $(cat "$TEST_TMP/rx1.out")"
wait_until 180 "version 2 is live (or cancelled)" \
    grep -qE "$alias: (version 2 live|build of version 2 cancelled)" "$TEST_TMP/run.log" ||
    fail "version 2 did not go live: $(tail -10 "$TEST_TMP/run.log")"
assert_true "version 2 was built from the fixed mapping (not cancelled for it)" \
    bash -c "! grep -q '$alias: build of version 2 cancelled' '$TEST_TMP/run.log'"
wait_until 15 "the reader writes through the alias again" \
    grep -q "$alias: version 2 is live: live changes are written through the alias again" "$TEST_TMP/run.log" ||
    fail "the stop was not lifted: $(tail -10 "$TEST_TMP/run.log")"
search_refresh "$alias"
assert_eq "while stopped 5000000000" "$(search_doc "$alias" 7 | jq -r '"\(.name) \(.qty)"')" "the rebuilt version holds the change made while stopped"
assert_eq "fits too" "$(search_doc "$alias" 9 | jq -r .name)" "and the other change made while stopped"
mysql_q "UPDATE \`$db\`.items SET name = 'after the stop' WHERE id = 8"
wait_until 20 "a change after the stop synced" bash -c \
    "curl -s '$SEARCH_URL/$alias/_doc/8' | jq -e '._source.name == \"after the stop\"' >/dev/null" ||
    fail "changes do not flow after the stop was lifted"
"$SEARCHSYNC_BIN" status --config "$TEST_TMP/c.ini" --json >"$TEST_TMP/st2.json" 2>&1 || true
assert_eq "null" "$(jq -r ".indices[] | select(.alias == \"$alias\") | .stopped" "$TEST_TMP/st2.json")" "status: no longer stopped"
export QTY_TYPE=long # (qty stays BIGINT: the mapping now says long)

# ---- a mapping edit while a version is built
"$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/c.ini" "$alias" --no-wait >"$TEST_TMP/rx.out" 2>&1 ||
    fail "reindex request: $(cat "$TEST_TMP/rx.out")"
wait_until 30 "version 3 is being built" grep -q "$alias: building version 3" "$TEST_TMP/run.log" ||
    fail "the build did not start: $(tail -10 "$TEST_TMP/run.log")"
mapping ', {"name": "note", "type": "keyword"}' >"$TEST_TMP/m2.json"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/m2.json" --yes >"$TEST_TMP/import2.out" 2>&1 ||
    fail "import 2: $(cat "$TEST_TMP/import2.out")"
wait_until 30 "the build of two mappings is cancelled and queued again" \
    grep -q "$alias: the mapping was edited while version 3 was built: that build is cancelled and version 4 is built with the new mapping" "$TEST_TMP/run.log" ||
    fail "the edit during the build was not reconciled: $(tail -15 "$TEST_TMP/run.log")"
wait_until 180 "version 4 is live" grep -q "$alias: version 4 live" "$TEST_TMP/run.log" ||
    fail "version 4 did not go live: $(tail -10 "$TEST_TMP/run.log")"
assert_eq "${alias}_v4" "$(curl -s "$SEARCH_URL/_alias/$alias" | jq -r 'keys[0]')" "the alias is on version 4"
search_refresh "$alias"
want="$(mysql_q "SELECT COUNT(*) FROM \`$db\`.items")"
assert_eq "$want" "$(search_count "$alias" '{"query":{"exists":{"field":"note"}}}')" \
    "every document of version 4 has the column added during the build"
assert_eq "note 1234" "$(search_doc "$alias" 1234 | jq -r .note)" "a document's new column equals SQL"

# ---- stopped at start: a mapped column dropped while the daemon was down,
# with a version being built (the engine's client does not exist yet when
# the start finds the mapping unfit: the build is cancelled once it does)
"$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/c.ini" "$alias" --no-wait >"$TEST_TMP/rx5.out" 2>&1 ||
    fail "reindex request: $(cat "$TEST_TMP/rx5.out")"
wait_until 30 "version 5 is being built" grep -q "$alias: building version 5" "$TEST_TMP/run.log" ||
    fail "the build did not start: $(tail -10 "$TEST_TMP/run.log")"
daemon_stop
grep -q "$alias: version 5 live" "$TEST_TMP/run.log" && fail "version 5 went live before the stop (the test needs it mid-build)"
mysql_q "ALTER TABLE \`$db\`.items DROP COLUMN note"
start_daemon
wait_until 30 "the start stops the index" \
    grep -q "index $alias stopped: at start, the source no longer fits the mapping of index $alias" "$TEST_TMP/run.log" ||
    fail "the dropped column did not stop the index at start: $(tail -10 "$TEST_TMP/run.log")"
wait_until 30 "the build from the unfit mapping is cancelled" \
    grep -q "index $alias: the version being built is cancelled too" "$TEST_TMP/run.log" ||
    fail "the build was not cancelled: $(tail -10 "$TEST_TMP/run.log")"
sleep 1
kill -0 "$DAEMON" 2>/dev/null || fail "the daemon died after stopping an index at start: $(tail -5 "$TEST_TMP/run.log")"
st=0; "$SEARCHSYNC_BIN" status --config "$TEST_TMP/c.ini" --json >"$TEST_TMP/st5.json" 2>&1 || st=$?
assert_eq 3 "$st" "status: the index stopped at start is a problem found (exit 3)"
assert_eq "${alias}_v4" "$(curl -s "$SEARCH_URL/_alias/$alias" | jq -r 'keys[0]')" "the alias stays on version 4"
daemon_stop
assert_eq 0 "$DAEMON_RC" "the daemon stopped cleanly"
pass
