#!/usr/bin/env bash
# tests/integration/t_run_ddl_after_switch.sh — a schema change that must stop
# an index, read right after a reindex switch, against
# real MariaDB + OpenSearch, with [metadata] reload_interval_ms = 10000 (a
# reload long after the switch).
#
# items joins cats (an object); cats.id and cats.label_n are mapped `integer`.
# A change the mapping cannot follow (items.qty INT -> BIGINT under
# `integer`) stops the index; the mapping is fixed and a reindex lifts the
# stop at its switch. Until the next look at the mapping, what the metadata
# tables hold then differs from the running generation (the stop is gone; a
# widened column recorded does the same). A DDL in that window that the
# mapping cannot follow must still stop the index, as it does when no switch
# happened just before: the log names the statement, `searchsync status`
# exits 3 and says why, and a change made afterwards does not reach the
# stopped version. Before: only "the edited mapping is not applied (the
# running one stays)", the index never stopped, status exited 0.
#   9 s after  ALTER TABLE cats MODIFY id BIGINT 9 s after the switch, a
#   a switch   varchar widened (followed, recorded) just after the switch:
#              the next look is 10 s after that DDL (the report's timing)
#   1 s after  ALTER TABLE cats MODIFY label_n BIGINT 1 s after the next
#   a switch   switch, nothing in between
. "$(dirname "$0")/lib.sh"
require_bin
db="$(unique_name das)"
meta="$(unique_name meta)"
alias="$(unique_name das)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
mysql_q "CREATE DATABASE \`$db\`"
mysql_q "CREATE TABLE cats (id INT PRIMARY KEY, label VARCHAR(20), label_n INT);
  CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(20), qty INT, cat_id INT);
  INSERT INTO cats SELECT seq, CONCAT('cat ', seq), seq FROM seq_1_to_20;
  INSERT INTO items SELECT seq, CONCAT('n', seq), seq % 7, 1 + seq % 20 FROM seq_1_to_2000;" "$db"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = das
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $((7900 + $$ % 90))
start = now
heartbeat_ms = 500
[metadata]
database = $meta
reload_interval_ms = 10000
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
[reindex]
poll_interval_ms = 100
[log]
level = info
INI
mapping() { # QTY_TYPE CATS_ID_TYPE
    jq -n --arg db "$db" --arg alias "$alias" --arg qty "$1" --arg cid "$2" '{version: 1, indices: [{alias: $alias, shards: 1,
      replicas: 0, tables: [{table: ($db + ".items"), columns: [{name: "id", type: "long", key: true},
        {name: "name", type: "keyword"}, {name: "qty", type: $qty}, {name: "cat_id", type: "long"}],
      relations: [{column: "cat_id", table: ($db + ".cats"), join_column: "id", extend_name: "cat",
                   columns: [{name: "id", type: $cid}, {name: "label", type: "keyword"},
                             {name: "label_n", type: "integer"}]}]}]}]}'
}
mapping integer integer >"$TEST_TMP/m1.json"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/m1.json" --yes >"$TEST_TMP/import.out" 2>&1 ||
    fail "import: $(cat "$TEST_TMP/import.out")"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 40 lines)"; tail -40 "$TEST_TMP/run.log"; }'
daemon_wait_log "$alias: live changes no longer written to ${alias}_v1" 90
stopped() { [ "$(mysql_q "SELECT stopped_reason IS NOT NULL FROM \`$meta\`.index_configs WHERE alias = '$alias'")" = 1 ]; }

# ---- a first stop, lifted by a reindex of the fixed mapping
mysql_q "ALTER TABLE items MODIFY qty BIGINT" "$db"
daemon_wait_log "index $alias stopped: after \`ALTER TABLE items MODIFY qty BIGINT\`" 30
# stop_case WHAT ALTER [COLUMN]: ALTER (on cats) stops the index: the log names
# it, status exits 3 and says why and what to do, a change made afterwards
# does not reach the stopped version
n=0
stop_case() {
    n=$((n + 1))
    mysql_q "$2" "$db"
    wait_until 20 "$1: the ALTER of the joined column stops the index" stopped
    assert_true "$1: the log says the index stopped, naming the statement" \
        grep -q "index $alias stopped: after \`$2\` read from the binlog at mysql-bin\.[0-9]*:[0-9]*, the source no longer fits the mapping of index $alias: .*$db.cats.$3" "$TEST_TMP/run.log"
    st=0; "$SEARCHSYNC_BIN" status --config "$TEST_TMP/c.ini" --json >"$TEST_TMP/st.json" 2>&1 || st=$?
    assert_eq 3 "$st" "$1: status: the stopped index is a problem found (exit 3)"
    why="$(jq -r ".indices[] | select(.alias == \"$alias\") | .stopped" "$TEST_TMP/st.json")"
    assert_contains "$why" "$2" "$1: status says which statement stopped it"
    assert_contains "$why" "searchsync reindex --config FILE $alias" "$1: status says what to do"
    mysql_q "UPDATE items SET name = 'after stop $n' WHERE id = $((6 + n))" "$db"
    wait_checkpoint "$meta" das 30
    search_refresh "$alias"
    assert_eq "n$((6 + n))" "$(search_doc "$alias" $((6 + n)) | jq -r .name)" "$1: a change after the stop does not reach the stopped version"
}
lift() { # QTY_TYPE CATS_ID_TYPE VERSION: the fixed mapping, a reindex: the stop lifted at its switch
    mapping "$1" "$2" >"$TEST_TMP/m.json"
    "$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/m.json" --yes >"$TEST_TMP/import.out" 2>&1 ||
        fail "import of the fixed mapping: $(cat "$TEST_TMP/import.out")"
    "$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/c.ini" "$alias" --no-wait >"$TEST_TMP/rx.out" 2>&1 ||
        fail "reindex request: $(cat "$TEST_TMP/rx.out")"
    daemon_wait_log "$alias: version $3 is live: live changes are written through the alias again" 120
    switched=$(date +%s%3N)
    stopped && fail "the switch to version $3 did not lift the stop"
    return 0
}
sleep_until() { # MS after the switch
    sleep "$(awk -v d="$(($(date +%s%3N) - switched))" -v t="$1" 'BEGIN { s = (t - d) / 1000; print (s > 0 ? s : 0) }')"
}

# ---- the report: 9 s after the switch (a widened column followed and
# recorded right after it: the next reload is 10 s after that DDL)
lift long integer 2
mysql_q "ALTER TABLE items MODIFY name VARCHAR(40)" "$db"
daemon_wait_log "$db.items.name is now varchar(40) in the source (was varchar(20)): the mapping follows it" 20
sleep_until 9000
log "ALTER TABLE cats MODIFY id BIGINT $(($(date +%s%3N) - switched)) ms after the switch"
stop_case "9 s after the switch" "ALTER TABLE cats MODIFY id BIGINT" id

# ---- right after the next switch, nothing else in between
lift long long 3
sleep_until 1000
log "ALTER TABLE cats MODIFY label_n BIGINT $(($(date +%s%3N) - switched)) ms after the switch"
stop_case "1 s after the switch" "ALTER TABLE cats MODIFY label_n BIGINT" label_n
kill -0 "$DAEMON" || fail "the daemon stopped"
pass
