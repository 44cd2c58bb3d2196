#!/usr/bin/env bash
# tests/integration/t_reindex_keys.sh — a reindex's keyset pages and the key
# ranges their relations read (sync/pipeline/docbuild.c docbuild_page), against real
# MariaDB + OpenSearch, with the nested arrays compared to SQL:
#   codes  a VARCHAR key holding integer-looking values: SQL orders "10"
#          before "2", so a page's first and last keys are no numeric range
#          and its relations must be read by the list of keys
#   nums   a BIGINT key with gaps, in 3 range buckets: a page's relations read
#          its key range, rows in the gaps (children of no row) included and
#          never embedded; then in 3 MOD buckets, where they read the keys
#   parts  an INT key whose relation joins a VARCHAR column holding the ids
#          as text: the relation's lookups must be quoted strings, which use
#          that column's index (number literals or a number range against a
#          VARCHAR column scan the whole table for every page); one replica,
#          so the switch flushes the version before restoring it
# Pages of 40 rows, a job's first ones 10, 10 and 20 (the ramp), so page
# boundaries fall between related rows.
# Reindex requests reach the daemon through its supervisor's look at the
# build table ([reindex] poll_interval_ms, 100 ms), never as binlog rows of
# the metadata schema it happens to read.
. "$(dirname "$0")/lib.sh"
require_bin

db="$(unique_name keys)"
meta="$(unique_name meta)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${db}_*?expand_wildcards=all' >/dev/null"

mysql_q "CREATE DATABASE \`$db\`"
cat >"$TEST_TMP/schema.sql" <<'SQL'
CREATE TABLE codes (code VARCHAR(16) PRIMARY KEY, name VARCHAR(50) NOT NULL);
CREATE TABLE code_items (id INT PRIMARY KEY, code VARCHAR(16), v INT NOT NULL, KEY (code));
CREATE TABLE nums (id BIGINT PRIMARY KEY, name VARCHAR(50) NOT NULL);
CREATE TABLE num_items (id INT PRIMARY KEY, num_id BIGINT, v INT NOT NULL, KEY (num_id));
-- codes "1".."150": in string order "1","10","100","101",...
INSERT INTO codes SELECT seq, CONCAT('code ', seq) FROM seq_1_to_150;
INSERT INTO code_items SELECT seq, 1 + (seq * 7) % 150, seq FROM seq_1_to_300 WHERE seq % 4 <> 0;
-- nums with gaps: every third id from 3 to 900; children also of the missing ids
INSERT INTO nums SELECT seq, CONCAT('num ', seq) FROM seq_3_to_900_step_3;
INSERT INTO num_items SELECT seq, 1 + (seq * 13) % 900, seq FROM seq_1_to_1200;
CREATE TABLE parts (id INT PRIMARY KEY, name VARCHAR(50) NOT NULL);
CREATE TABLE part_tags (id INT PRIMARY KEY, part_ref VARCHAR(16), tag VARCHAR(20) NOT NULL, KEY (part_ref));
INSERT INTO parts SELECT seq, CONCAT('part ', seq) FROM seq_1_to_300;
-- 6000 tags, some of ids no part has (301..400)
INSERT INTO part_tags SELECT seq, CAST(1 + (seq * 7) % 400 AS CHAR), CONCAT('t', seq) FROM seq_1_to_6000;
SQL
mysql_file "$TEST_TMP/schema.sql" "$db"

cat >"$TEST_TMP/mapping.json" <<JSON
{"version": 1, "indices": [
  {"alias": "${db}_codes", "shards": 2, "replicas": 0, "tables": [
    {"table": "$db.codes",
     "columns": [{"name": "code", "type": "keyword", "key": true}, {"name": "name", "type": "keyword"}],
     "relations": [{"column": "code", "table": "$db.code_items", "join_column": "code",
                    "extend_name": "items", "nested": true,
                    "columns": [{"name": "id", "type": "long", "key": true}, {"name": "v", "type": "long"}]}]}]},
  {"alias": "${db}_nums", "shards": 2, "replicas": 0, "tables": [
    {"table": "$db.nums",
     "columns": [{"name": "id", "type": "long", "key": true}, {"name": "name", "type": "keyword"}],
     "relations": [{"column": "id", "table": "$db.num_items", "join_column": "num_id",
                    "extend_name": "items", "nested": true, "where": "v % 5 <> 0",
                    "columns": [{"name": "id", "type": "long", "key": true}, {"name": "v", "type": "long"}]}]}]},
  {"alias": "${db}_parts", "shards": 1, "replicas": 1, "tables": [
    {"table": "$db.parts",
     "columns": [{"name": "id", "type": "long", "key": true}, {"name": "name", "type": "keyword"}],
     "relations": [{"column": "id", "table": "$db.part_tags", "join_column": "part_ref",
                    "extend_name": "items", "nested": true,
                    "columns": [{"name": "id", "type": "long", "key": true}, {"name": "tag", "type": "keyword"}]}]}]}
]}
JSON
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = keys
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = 7323
start = now
heartbeat_ms = 500
[metadata]
database = $meta
reload_interval_ms = 600000
[search]
urls = $SEARCH_URL
[reindex]
buckets = 3
page_size = 40
poll_interval_ms = 100
[log]
level = info
INI
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/mapping.json" --yes \
    >"$TEST_TMP/import.out" 2>&1 || fail "import: $(cat "$TEST_TMP/import.out")"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 40 lines)"; tail -40 "$TEST_TMP/run.log"; }'

# each document's key and its items' ids, from the engine and from SQL
engine_items() { # $1 alias
    python3 "$SEARCHSYNC_SRCDIR/tests/integration/engine_dump.py" "$SEARCH_URL" "$1" 2>/dev/null |
        jq -r '.doc | "\(.code // .id)\t\([.items[].id] | sort | map(tostring) | join(","))"' | sort
}
check() { # $1 what
    local want got
    want="$(mysql_q "SELECT c.code, COALESCE(GROUP_CONCAT(i.id ORDER BY i.id), '') FROM \`$db\`.codes c LEFT JOIN \`$db\`.code_items i ON i.code = c.code GROUP BY c.code" | sort)"
    got="$(engine_items "${db}_codes")"
    assert_eq "$(wc -l <<<"$want")" "$(wc -l <<<"$got")" "$1: one codes document per row"
    assert_eq "" "$(diff <(echo "$want") <(echo "$got") | head -5)" "$1: every code's items as SQL has them"
    want="$(mysql_q "SELECT n.id, COALESCE(GROUP_CONCAT(i.id ORDER BY i.id), '') FROM \`$db\`.nums n LEFT JOIN \`$db\`.num_items i ON i.num_id = n.id AND i.v % 5 <> 0 GROUP BY n.id" | sort)"
    got="$(engine_items "${db}_nums")"
    assert_eq "300" "$(wc -l <<<"$got")" "$1: one nums document per row"
    assert_eq "" "$(diff <(echo "$want") <(echo "$got") | head -5)" "$1: every num's items as SQL has them (none from the gaps)"
    want="$(mysql_q "SELECT p.id, COALESCE(GROUP_CONCAT(i.id ORDER BY i.id), '') FROM \`$db\`.parts p LEFT JOIN \`$db\`.part_tags i ON CAST(i.part_ref AS BINARY) = CAST(p.id AS BINARY) GROUP BY p.id" | sort)"
    got="$(engine_items "${db}_parts")"
    assert_eq "300" "$(wc -l <<<"$got")" "$1: one parts document per row"
    assert_eq "" "$(diff <(echo "$want") <(echo "$got") | head -5)" "$1: every part's items as SQL has them"
}

wait_until 60 "first sync of the indices" bash -c "curl -sf '$SEARCH_URL/_alias/${db}_codes' >/dev/null && curl -sf '$SEARCH_URL/_alias/${db}_nums' >/dev/null && curl -sf '$SEARCH_URL/_alias/${db}_parts' >/dev/null"
search_refresh "${db}_codes"; search_refresh "${db}_nums"; search_refresh "${db}_parts"
check "first sync"
# the parts reindex reads its tags by part_ref's index: the server's rows read
# by table scans over the whole reindex stay below one scan of part_tags
scans() { mysql_q "SHOW GLOBAL STATUS LIKE 'Handler_read_rnd_next'" | cut -f2; }
s0="$(scans)"
timeout 60 "$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/c.ini" "${db}_parts" >"$TEST_TMP/r.out" 2>&1 ||
    fail "reindex ${db}_parts: $(cat "$TEST_TMP/r.out")"
s1="$(scans)"
echo "parts reindex: $((s1 - s0)) rows read by table scans"
assert_true "parts: rows read by table scans during its reindex, $((s1 - s0)), stay below one scan of part_tags (6000)" test "$((s1 - s0))" -lt 6000
assert_eq "${db}_parts_v2" "$(curl -s "$SEARCH_URL/_alias/${db}_parts" | jq -r 'keys | join(",")')" "parts: the alias moved to v2"
# parts has a replica (unassigned on this one-node engine): the version was
# flushed before its replicas were restored, so a replica copies files
# instead of replaying the translog; nums (no replica) was flushed at its
# switch too, since it was built with its translog written asynchronously
assert_eq 1 "$(curl -s "$SEARCH_URL/${db}_parts_v2/_settings" | jq -r '.[].settings.index.number_of_replicas')" "parts v2: its replica restored"
assert_true "parts v2: flushed before its replica was restored" \
    test "$(curl -s "$SEARCH_URL/${db}_parts_v2/_stats/flush" | jq '._all.primaries.flush.total')" -ge 1
assert_true "nums v1 (no replicas): flushed at its switch" \
    test "$(curl -s "$SEARCH_URL/${db}_nums_v1/_stats/flush" | jq '._all.primaries.flush.total')" -ge 1
assert_eq "null" "$(curl -s "$SEARCH_URL/${db}_nums_v1/_settings" | jq -r '.[].settings.index.translog.durability')" \
    "nums v1 after its switch: the translog durability back to the default"
search_refresh "${db}_parts"
for a in codes nums; do
    timeout 60 "$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/c.ini" "${db}_$a" >"$TEST_TMP/r.out" 2>&1 ||
        fail "reindex ${db}_$a (not started from the binlog?): $(cat "$TEST_TMP/r.out")"
    assert_eq "${db}_${a}_v2" "$(curl -s "$SEARCH_URL/_alias/${db}_$a" | jq -r 'keys | join(",")')" "$a: the alias moved to v2"
    search_refresh "${db}_$a"
done
check "reindex"
# MOD buckets: a page is no interval of the key, so its relations are read by
# the list of its keys
timeout 60 "$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/c.ini" "${db}_nums" --by-mod >"$TEST_TMP/r.out" 2>&1 || fail "reindex --by-mod: $(cat "$TEST_TMP/r.out")"
assert_eq "${db}_nums_v3" "$(curl -s "$SEARCH_URL/_alias/${db}_nums" | jq -r 'keys | join(",")')" "nums: the alias moved to the MOD-bucket build"
assert_eq "mod" "$(mysql_q "SELECT bucketing FROM index_versions v JOIN index_configs c ON c.id = v.index_id WHERE c.alias = '${db}_nums' AND v.version = 3" "$meta")" "nums v3 was built in MOD buckets"
search_refresh "${db}_nums"
check "reindex --by-mod"
# live changes of string-keyed roots ("2", "10") and of a num in a gap's neighbourhood
mysql_q "INSERT INTO \`$db\`.code_items VALUES (1001, '2', 5), (1002, '10', 6); DELETE FROM \`$db\`.code_items WHERE code = '100'; UPDATE \`$db\`.code_items SET code = '9' WHERE id = 1; INSERT INTO \`$db\`.num_items VALUES (5001, 6, 1), (5002, 7, 2)"
wait_checkpoint "$meta" keys
search_refresh "${db}_codes"; search_refresh "${db}_nums"
check "live changes"
daemon_stop
assert_eq "" "$(grep -E 'ERROR' "$TEST_TMP/run.log" || true)" "no errors in the daemon log"
pass
