#!/usr/bin/env bash
# tests/integration/t_run_on_purged.sh — [source] on_purged, against real
# MariaDB + OpenSearch: the binlog after the checkpoint purged, under a writer
# (inserts, updates, deletes of roots and of their nested children; seeded by
# SEARCHSYNC_SEED), every document compared with SQL afterwards.
#
#   stop (default)   a purge while the daemon is stopped: run refuses (exit
#                    1), naming --from-current and on_purged = rebuild
#   rebuild, stopped the same purge: the daemon starts at the binlog's end by
#                    itself, says which stretch it skipped, rebuilds the
#                    index (the gap's changes are in it), counts it in
#                    /metrics, the sync log and status (text and --json)
#   rebuild, running the reader behind (its process stopped) while the binlog
#                    rotates and its file is purged, its connection killed:
#                    the reconnect finds the purge and heals the same way,
#                    the daemon never exits
#   rebuild, GTID    [source] versions = gtid: a purged GTID range healed
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
require_bin
seed="${SEARCHSYNC_SEED:-$RANDOM}"
log "seed $seed"
RANDOM=$seed
db="$(unique_name pg)"
meta="$(unique_name meta)"
alias="$(unique_name pg)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
mysql_q "CREATE DATABASE \`$db\`"
mysql_q "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(40));
  CREATE TABLE kid (id INT PRIMARY KEY, t_id INT, n INT, KEY (t_id));
  INSERT INTO t SELECT seq, CONCAT('v', seq) FROM seq_1_to_300;
  INSERT INTO kid SELECT seq, seq % 300 + 1, seq FROM seq_1_to_600;" "$db"
ini() { # ON_PURGED VERSIONS
    cat >"$TEST_TMP/c.ini" <<INI
[source]
name = pg
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $((7600 + $$ % 80))
start = now
on_purged = $1
versions = $2
[metadata]
database = $meta
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 20
checkpoint_interval_ms = 200
INI
}
ini stop position
jq -n --arg db "$db" --arg a "$alias" '{version: 1, indices: [{alias: $a, shards: 1, replicas: 0,
  tables: [{table: ($db + ".t"), columns: [{name: "id", key: true}, {name: "v"}],
    relations: [{column: "id", table: ($db + ".kid"), join_column: "t_id", nested: true,
                 extend_name: "kids", columns: [{name: "id", key: true}, {name: "n"}]}]}]}]}' \
    >"$TEST_TMP/map.json"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/map.json" --yes \
    >"$TEST_TMP/import.out" 2>&1 || fail "import: $(cat "$TEST_TMP/import.out")"

# the writer: N transactions of random changes to roots and children
write_some() {
    local i sql next_id
    next_id="$(mysql_q "SELECT GREATEST(10000, (SELECT COALESCE(MAX(id), 0) FROM t),
                                      (SELECT COALESCE(MAX(id), 0) FROM kid)) + 1" "$db")"
    for ((i = 0; i < $1; i++)); do
        case $((RANDOM % 6)) in
        0) sql="INSERT INTO t VALUES ($next_id, 'new $next_id'); INSERT INTO kid VALUES ($next_id, $next_id, $RANDOM)"
           next_id=$((next_id + 1)) ;;
        1) sql="UPDATE t SET v = 'up $RANDOM' WHERE id = $((RANDOM % 300 + 1))" ;;
        2) sql="DELETE FROM t WHERE id = $((RANDOM % 300 + 1))" ;;
        3) sql="UPDATE kid SET n = $RANDOM WHERE id = $((RANDOM % 600 + 1))" ;;
        4) sql="UPDATE kid SET t_id = $((RANDOM % 300 + 1)) WHERE id = $((RANDOM % 600 + 1))" ;;
        5) sql="DELETE FROM kid WHERE id = $((RANDOM % 600 + 1))" ;;
        esac
        echo "START TRANSACTION; $sql; COMMIT;"
    done | mysql_q "$(cat)" "$db"
}
same_as_sql() {
    search_refresh "$alias" >/dev/null
    mysql_q "SELECT JSON_OBJECT('id', CAST(t.id AS CHAR), 'routing', NULL, 'doc', JSON_OBJECT('id', t.id, 'v', t.v,
      'kids', COALESCE((SELECT JSON_ARRAYAGG(JSON_OBJECT('id', k.id, 'n', k.n)) FROM kid k WHERE k.t_id = t.id), JSON_ARRAY())))
      FROM t ORDER BY t.id" "$db" >"$TEST_TMP/oracle.ndjson"
    engine_dump "$alias" "$TEST_TMP/engine.ndjson" 2>/dev/null &&
        python3 "$SEARCHSYNC_SRCDIR/tests/integration/compare_docs.py" --numbers value \
            --ignore-field ss_version --ignore-field ss_hash --ignore-field ss_key_hash \
            "$TEST_TMP/engine.ndjson" "$TEST_TMP/oracle.ndjson" >"$TEST_TMP/cmp.out" 2>&1
}
# purge every binlog file up to the current one, until `file` is gone
# (MariaDB keeps a file until its binlog checkpoint passed it: flush twice)
purge_past() {
    mysql_q "FLUSH BINARY LOGS"
    mysql_q "FLUSH BINARY LOGS"
    gone() {
        mysql_q "PURGE BINARY LOGS TO '$(mysql_q 'SHOW MASTER STATUS' | cut -f1)'" 2>/dev/null
        ! mysql_q "SHOW BINARY LOGS" | cut -f1 | grep -qx "$1"
    }
    wait_until 20 "binlog file $1 is purged" gone "$1"
}
ckpt_file() { mysql_q "SELECT SUBSTRING_INDEX(position, ':', 1) FROM \`$meta\`.offsets WHERE source = 'pg'"; }
metric() { curl -s -H "Authorization: Bearer $SEARCHSYNC_ADMIN_TOKEN" "http://$ADMIN/metrics" | awk -v m="$1" '$1 ~ "^"m"[{ ]" || $1 == m {print $2}' | tail -1; }

daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run1.log"
daemon_wait_log "$alias: live changes no longer written to ${alias}_v1" 60
write_some 50
wait_checkpoint "$meta" pg 30
wait_until 30 "the index equals SQL before the purges" same_as_sql || fail "$(cat "$TEST_TMP/cmp.out")"
daemon_stop

# ---- stop (the default): a purge while stopped is refused, saying what to do
write_some 40
purge_past "$(ckpt_file)"
st=0; "$SEARCHSYNC_BIN" run --config "$TEST_TMP/c.ini" >"$TEST_TMP/refused.log" 2>&1 || st=$?
assert_eq 1 "$st" "on_purged = stop: run refuses a purged checkpoint (exit 1)"
assert_contains "$(cat "$TEST_TMP/refused.log")" "is no longer on the source (purged)" "it says why"
assert_contains "$(cat "$TEST_TMP/refused.log")" "--from-current" "it names --from-current"
assert_contains "$(cat "$TEST_TMP/refused.log")" "on_purged = rebuild" "and on_purged = rebuild"

# ---- rebuild: the same purge heals by itself at start
ini rebuild position
ADMIN="127.0.0.1:$(free_port)"
export SEARCHSYNC_ADMIN_TOKEN="$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
printf '[admin]\nlisten = %s\n' "$ADMIN" >>"$TEST_TMP/c.ini"
was="$(mysql_q "SELECT position FROM \`$meta\`.offsets WHERE source = 'pg'")"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run2.log"
daemon_wait_log "[source] on_purged = rebuild: the binlog from $was to " 30
daemon_wait_log "$alias: version 2 live" 90
write_some 30
wait_checkpoint "$meta" pg 30
wait_until 30 "the index equals SQL after the purge healed at start (the gap's changes in it)" same_as_sql ||
    fail "$(cat "$TEST_TMP/cmp.out")"
assert_eq 1 "$(metric searchsync_binlog_purged_rebuilds_total)" "/metrics counts the heal"
assert_contains "$(mysql_q "SELECT detail FROM \`$meta\`.sync_log WHERE source = 'pg' AND event = 'binlog skipped' ORDER BY id DESC LIMIT 1")" \
    "$alias v2" "the sync log says what was skipped and rebuilt"
"$SEARCHSYNC_BIN" status --config "$TEST_TMP/c.ini" --json >"$TEST_TMP/st.json" 2>/dev/null || true
assert_contains "$(jq -r '.source.binlog_skipped.detail' "$TEST_TMP/st.json")" "the binlog from $was to " "status --json: the stretch skipped"
assert_contains "$(jq -r '.source.binlog_skipped.detail' "$TEST_TMP/st.json")" "$alias v2" "status --json: the versions queued"
assert_true "status --json: when" jq -e '.source.binlog_skipped.at | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T")' "$TEST_TMP/st.json"
assert_contains "$("$SEARCHSYNC_BIN" status --config "$TEST_TMP/c.ini" 2>/dev/null || true)" "skipped     at " "status: the skip said in text"

# ---- rebuild, running: the reader's file purged while it is behind
kill -STOP "$DAEMON"
on_exit "kill -CONT $DAEMON 2>/dev/null || true"
write_some 40
file="$(ckpt_file)"
for tid in $(mysql_q "SELECT id FROM information_schema.processlist WHERE command LIKE 'Binlog Dump%'"); do
    mysql_q "KILL $tid" 2>/dev/null || true
done
purge_past "$file"
kill -CONT "$DAEMON"
daemon_wait_log "reconnecting to the source: " 30
daemon_wait_log "$alias: version 3 live" 90
write_some 30
wait_checkpoint "$meta" pg 30
wait_until 30 "the index equals SQL after the purge healed while running" same_as_sql ||
    fail "$(cat "$TEST_TMP/cmp.out")"
daemon_alive || fail "the daemon exited at the purge"
assert_eq 2 "$(metric searchsync_binlog_purged_rebuilds_total)" "/metrics counts both heals"
daemon_stop
assert_eq 0 "$DAEMON_RC" "a clean stop"

# ---- rebuild, GTID mode: a purged GTID range
mysql_q "DELETE FROM \`$meta\`.offsets WHERE source = 'pg'"
ini rebuild gtid
printf '[admin]\nlisten = %s\n' "$ADMIN" >>"$TEST_TMP/c.ini"
"$SEARCHSYNC_BIN" epoch bump --config "$TEST_TMP/c.ini" --reset-checkpoint >"$TEST_TMP/bump.out" 2>&1 ||
    fail "epoch bump: $(cat "$TEST_TMP/bump.out")"
"$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/c.ini" "$alias" --no-wait >/dev/null 2>&1 || true
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run3.log"
daemon_wait_log "$alias: version 4 live" 90
write_some 20
wait_checkpoint "$meta" pg 30
daemon_stop
write_some 40
purge_past "$(ckpt_file)"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run4.log"
daemon_wait_log "[source] on_purged = rebuild: the binlog from " 30
daemon_wait_log "$alias: version 5 live" 90
write_some 30
wait_checkpoint "$meta" pg 30
wait_until 30 "the index equals SQL after the purged GTID range healed" same_as_sql ||
    fail "$(cat "$TEST_TMP/cmp.out")"
daemon_stop
assert_eq 0 "$DAEMON_RC" "a clean stop"
pass
