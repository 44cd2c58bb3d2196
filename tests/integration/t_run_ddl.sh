#!/usr/bin/env bash
# tests/integration/t_run_ddl.sh — DDL mid-stream under a steady writer
# against real MariaDB + OpenSearch; two index configs,
# A on table a (with a nested child table), B on table b (with a one-to-one
# object from kinds, a delay-effect table: its changes wait for the delayed
# run).
#
#   followed   ADD COLUMN first, in the middle and last, DROP and RENAME of
#              unmapped columns, MODIFY of a mapped column to a wider type,
#              the same on A's child table and on the delay-effect table:
#              rows written before and after each decode with their own
#              shape; every document of A and B equals SQL afterwards (B's
#              kinds once the delayed run took a relabelled kind)
#   stopped    a mapped column of A dropped: A stops at the DDL (the reason
#              names the statement, its binlog position and the column, and
#              what to do — also when the reader builds a transaction written
#              before the DDL after the source ran it: the engine held still,
#              the reader blocked at the high-water mark meanwhile) and keeps
#              its documents as they were; B goes on and equals SQL; a mapped
#              table renamed (RENAME TABLE b TO b2): B stops too; the daemon
#              never stops
. "$(dirname "$0")/lib.sh"
require_bin
db="$(unique_name ddl)"
meta="$(unique_name meta)"
A="$(unique_name ddla)"
B="$(unique_name ddlb)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${A}_v*,${B}_v*?ignore_unavailable=true' >/dev/null"
mysql_q "CREATE DATABASE \`$db\`"
mysql_q "CREATE TABLE \`$db\`.a (id INT PRIMARY KEY, name VARCHAR(20), qty INT, junk VARCHAR(10));
  CREATE TABLE \`$db\`.a_tags (id INT PRIMARY KEY, a_id INT, tag VARCHAR(20), extra INT, KEY (a_id));
  CREATE TABLE \`$db\`.b (id INT PRIMARY KEY, title VARCHAR(30), n INT, kind_id INT);
  CREATE TABLE \`$db\`.kinds (id INT PRIMARY KEY, label VARCHAR(20), spare INT);
  INSERT INTO \`$db\`.kinds VALUES (1, 'one', 0), (2, 'two', 0);
  INSERT INTO \`$db\`.a SELECT seq, CONCAT('a', seq), seq, 'j' FROM seq_1_to_200;
  INSERT INTO \`$db\`.a_tags SELECT seq, seq % 200 + 1, CONCAT('t', seq), 0 FROM seq_1_to_400;
  INSERT INTO \`$db\`.b SELECT seq, CONCAT('b', seq), seq, seq % 2 + 1 FROM seq_1_to_200;" "$db"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = ddl
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $((7500 + $$ % 40))
start = now
# a mapped table renamed away is waited for this long before its index stops
schema_settle_ms = 4000
[metadata]
database = $meta
reload_interval_ms = 300
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
high_watermark = 50
INI
jq -n --arg db "$db" --arg a "$A" --arg b "$B" '{version: 1, indices: [
  {alias: $a, shards: 1, replicas: 0, tables: [{table: ($db + ".a"),
     columns: [{name: "id", key: true}, {name: "name"}, {name: "qty"}],
     relations: [{column: "id", table: ($db + ".a_tags"), join_column: "a_id", nested: true,
                  extend_name: "tags", columns: [{name: "id", key: true}, {name: "tag"}]}]}]},
  {alias: $b, shards: 1, replicas: 0, tables: [{table: ($db + ".b"),
     columns: [{name: "id", key: true}, {name: "title"}, {name: "n"}],
     relations: [{column: "kind_id", table: ($db + ".kinds"), join_column: "id", extend_name: "kind",
                  columns: [{name: "id"}, {name: "label"}]}]},
     {table: ($db + ".kinds"), delay_effect: true}]}]}' >"$TEST_TMP/map.json"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/map.json" --yes >"$TEST_TMP/import.out" 2>&1 ||
    fail "import: $(cat "$TEST_TMP/import.out")"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 40 lines)"; tail -40 "$TEST_TMP/run.log"; }'
daemon_wait_log "$A: live changes no longer written to ${A}_v1" 60
daemon_wait_log "$B: live changes no longer written to ${B}_v1" 60

# the steady writer: updates and inserts on a, a_tags and b, one
# transaction every few milliseconds, until $TEST_TMP/stop exists; each
# statement names only columns every DDL below keeps (its errors while a
# table is renamed are expected and ignored)
# Each statement that went through is counted in $TEST_TMP/writes, so that
# every phase can prove the writer wrote during it. Ids are new in every
# run of the writer (milliseconds), so a restarted writer does not collide.
writer() {
    local i=$(($(date +%s%3N) % 1000000000))
    while [ ! -e "$TEST_TMP/stop" ]; do
        i=$((i + 1))
        mysql_q "UPDATE a SET name = CONCAT('w', $i) WHERE id = $((i % 200 + 1))" "$db" 2>/dev/null &&
            echo a >>"$TEST_TMP/writes"
        mysql_q "INSERT INTO a_tags (id, a_id, tag) VALUES ($i, $((i % 200 + 1)), CONCAT('w', $i))" "$db" 2>/dev/null &&
            echo t >>"$TEST_TMP/writes"
        mysql_q "UPDATE b SET title = CONCAT('w', $i), n = $i WHERE id = $((i % 200 + 1));
          INSERT INTO b (id, title, n) VALUES ($i, 'new', $i)" "$db" 2>/dev/null && echo b >>"$TEST_TMP/writes"
    done
}
: >"$TEST_TMP/writes"
wrote() { # KIND SINCE_LINE: statements of that kind written after that line
    tail -n +"$(($2 + 1))" "$TEST_TMP/writes" | grep -c "^$1\$" || true
}
writer &
wpid=$!
on_exit "touch '$TEST_TMP/stop'; kill $wpid 2>/dev/null"

oracle_a() {
    mysql_q "SELECT JSON_OBJECT('id', a.id, 'name', a.name, 'qty', a.qty, 'tags', COALESCE((SELECT
               JSON_ARRAYAGG(JSON_OBJECT('id', t.id, 'tag', t.tag)) FROM a_tags t WHERE t.a_id = a.id),
               JSON_ARRAY())) FROM a ORDER BY a.id" "$db" | jq -S -c '.tags |= sort_by(.id)' | sort
}
oracle_b() {
    mysql_q "SELECT JSON_OBJECT('id', b.id, 'title', b.title, 'n', b.n, 'kind',
               IF(k.id IS NULL, NULL, JSON_OBJECT('id', k.id, 'label', k.label)))
               FROM b LEFT JOIN kinds k ON k.id = b.kind_id ORDER BY b.id" "$db" |
        jq -S -c 'if .kind == null then del(.kind) else . end' | sort
}
engine() { # ALIAS
    search_refresh "$1"
    search_post "/$1/_search?size=10000" '{"query":{"match_all":{}},"sort":["_doc"]}' |
        jq -S -c '.hits.hits[]._source | del(.ss_version, .ss_hash, .ss_key_hash) | if .tags then .tags |= sort_by(.id) else . end
                  | if has("kind") and .kind == null then del(.kind) else . end' | sort
}
# quiet the writer, wait for the checkpoint, compare; then let it go on
mark=0
in_step() { # WHAT
    touch "$TEST_TMP/stop"
    wait "$wpid" 2>/dev/null || true
    [ "$(wrote a $mark)" -gt 0 ] && [ "$(wrote b $mark)" -gt 0 ] ||
        fail "$1: the writer wrote nothing to a or b during this phase"
    mark=$(wc -l <"$TEST_TMP/writes")
    wait_checkpoint "$meta" ddl 60
    assert_eq "$(oracle_a | md5sum)" "$(engine "$A" | md5sum)" "$1: every document of $A equals SQL"
    assert_eq "$(oracle_b | md5sum)" "$(engine "$B" | md5sum)" "$1: every document of $B equals SQL"
    rm -f "$TEST_TMP/stop"
    writer &
    wpid=$!
}

# ---- followed: each DDL while the writer writes
sleep 0.5
mysql_q "ALTER TABLE a ADD COLUMN first_col INT NOT NULL DEFAULT 7 FIRST" "$db"
sleep 0.3
mysql_q "ALTER TABLE a ADD COLUMN mid_col VARCHAR(5) DEFAULT 'm' AFTER name" "$db"
sleep 0.3
mysql_q "ALTER TABLE a ADD COLUMN last_col DATETIME NULL" "$db"
sleep 0.3
mysql_q "ALTER TABLE a DROP COLUMN junk" "$db"
sleep 0.3
mysql_q "ALTER TABLE a RENAME COLUMN mid_col TO middle" "$db"
sleep 0.3
mysql_q "ALTER TABLE a MODIFY name VARCHAR(60)" "$db"
sleep 0.3
mysql_q "ALTER TABLE a_tags ADD COLUMN note TEXT FIRST, DROP COLUMN extra" "$db"
sleep 0.3
mysql_q "ALTER TABLE b ADD COLUMN z INT DEFAULT 1 AFTER id" "$db"
sleep 0.3
mysql_q "ALTER TABLE kinds ADD COLUMN note TEXT FIRST, DROP COLUMN spare, MODIFY label VARCHAR(40)" "$db"
sleep 0.3
# the delay-effect table's change reaches no document until the delayed run
mysql_q "UPDATE kinds SET label = 'relabelled' WHERE id = 1" "$db"
sleep 0.5
touch "$TEST_TMP/stop"
wait "$wpid" 2>/dev/null || true
wait_checkpoint "$meta" ddl 60
# (documents the writer changed meanwhile were rebuilt whole, with it)
kind1="$(mysql_q "SELECT COUNT(*) FROM b WHERE kind_id = 1" "$db")"
early="$(search_count "$B" '{"query":{"match":{"kind.label":"relabelled"}}}')"
[ "$early" -lt "$kind1" ] || fail "the delay-effect change reached all $kind1 documents before the delayed run"
"$SEARCHSYNC_BIN" delayed-run --config "$TEST_TMP/c.ini" >"$TEST_TMP/delayed.out" 2>&1 ||
    fail "delayed-run: $(cat "$TEST_TMP/delayed.out")"
rm -f "$TEST_TMP/stop"
writer &
wpid=$!
in_step "after ADD/DROP/RENAME of unmapped columns, widenings and the delayed run"
grep -q "$db.a.name is now varchar(60) in the source (was varchar(20)): the mapping follows it" "$TEST_TMP/run.log" ||
    fail "the widening was not followed: $(grep -i "$db.a" "$TEST_TMP/run.log" | tail -3)"
assert_eq 0 "$(grep -c "stopped:" "$TEST_TMP/run.log")" "no index stopped by changes the mappings follow"

# ---- a mapped column of A dropped: A stops, B goes on (the writer paused
# for the snapshot of A, then writing on)
touch "$TEST_TMP/stop"
wait "$wpid" 2>/dev/null || true
wait_checkpoint "$meta" ddl 60
before_a="$(engine "$A" | md5sum)"
rm -f "$TEST_TMP/stop"
# the reader held at the high-water mark (the engine paused, 200 changes of B
# queued) while a transaction of A and then the DROP are written: it builds
# that transaction after the source ran the DROP, and the source refuses the
# column before the reader reaches the DDL in the binlog
bash "$HARNESS/servers.sh" pause opensearch >/dev/null
on_exit "bash '$HARNESS/servers.sh' resume opensearch >/dev/null 2>&1 || true"
mysql_q "UPDATE b SET title = CONCAT('held ', id)" "$db"
sleep 1
mysql_q "UPDATE a SET name = 'before the drop' WHERE id = 1" "$db"
mysql_q "ALTER TABLE a DROP COLUMN qty" "$db"
bash "$HARNESS/servers.sh" resume opensearch >/dev/null
mark=$(wc -l <"$TEST_TMP/writes")
writer &
wpid=$!
# the reason names the DROP, its position, the column and what to do (not
# the query the source refused to the transaction read before it)
stop_named() {
    mysql_q "SELECT stopped_reason FROM \`$meta\`.index_configs WHERE alias = '$A'" |
        grep -q -E "after .ALTER TABLE a DROP COLUMN qty. read from the binlog at [^ ]+:[0-9]+, .*$db.a.qty\): no such column.*fix the mapping .*reindex"
}
wait_until 30 "index $A stopped, its reason naming the DROP" stop_named ||
    fail "the stop's reason: $(mysql_q "SELECT stopped_reason FROM \`$meta\`.index_configs WHERE alias = '$A'")"
daemon_wait_log "index $A stopped: after \`ALTER TABLE a DROP COLUMN qty\` read from the binlog at " 5
# (the case held on purpose: the source refused the column first)
assert_true "the reader built the transaction before the DROP after the source ran it" \
    grep -q "index $A stopped: after the source refused a query of the mapping (.*Unknown column 'qty'" "$TEST_TMP/run.log"
sleep 1 # the writer goes on meanwhile
touch "$TEST_TMP/stop"
wait "$wpid" 2>/dev/null || true
wait_checkpoint "$meta" ddl 60
daemon_alive || fail "the daemon stopped at a dropped mapped column"
[ "$(wrote a $mark)" -gt 0 ] || fail "the writer did not change a after its column was dropped"
assert_eq "$before_a" "$(engine "$A" | md5sum)" "$A's documents stay as they were after its stop"
assert_eq "$(oracle_b | md5sum)" "$(engine "$B" | md5sum)" "$B goes on and equals SQL"
st=0; "$SEARCHSYNC_BIN" status --config "$TEST_TMP/c.ini" >"$TEST_TMP/st.txt" 2>&1 || st=$?
assert_eq 3 "$st" "status exits 3 with a stopped index"
assert_contains "$(cat "$TEST_TMP/st.txt")" "STOPPED: " "status says STOPPED"

# ---- a mapped table renamed: B stops too
rm -f "$TEST_TMP/stop"
writer &
wpid=$!
title_before="$(search_doc "$B" 1 | jq -r .title)"
[ -n "$title_before" ] && [ "$title_before" != null ] || fail "document 1 of $B is missing before the rename"
mysql_q "RENAME TABLE b TO b2" "$db"
# a name taken away may be a moment of an online schema change (a swap puts a
# table back under it): waited for [source] schema_settle_ms first, said;
# unless a writer's transaction read before the RENAME was refused the table
# for longer first (a busy box), which stops the index on that ground and is
# judged again at the RENAME (below)
gone_said() {
    _daemon_log_since | grep -qF -- "index $B: table $db.b, which index $B reads, is gone after \`RENAME TABLE b TO b2\` read from the binlog at " ||
        _daemon_log_since | grep -F -- "index $B stopped: after the source refused a query of the mapping (" |
            grep -qF -- "Table '$db.b' doesn't exist"
}
wait_until 20 "index $B is said gone after the RENAME (or stopped on a refused read before it)" gone_said
# (said after the RENAME read from the binlog, or after the source refused
# the table to a writer's transaction read before it)
daemon_wait_log "index $B stopped: after " 20
grep "index $B stopped: " "$TEST_TMP/run.log" | grep -q -E "(RENAME TABLE b TO b2. read from the binlog at |Table '$db.b' doesn't exist).*table $db.b does not exist" ||
    fail "the stop's reason: $(grep "index $B stopped" "$TEST_TMP/run.log")"
mysql_q "UPDATE b2 SET title = 'renamed' WHERE id = 1" "$db"
touch "$TEST_TMP/stop"
wait "$wpid" 2>/dev/null || true
wait_checkpoint "$meta" ddl 60
daemon_alive || fail "the daemon stopped at a renamed table"
assert_eq "$title_before" "$(search_doc "$B" 1 | jq -r .title)" "$B's documents stay as they were after its stop"
daemon_stop
assert_eq 0 "$DAEMON_RC" "a clean stop"
pass
