#!/usr/bin/env bash
# t_reindex_writes.sh — a reindex under a writer, with the daemon SIGKILLed
# mid-build and the version's bulk requests held by a proxy: after the switch
# and the catch-up, every document equals the SQL oracle — none missing, none
# extra (a deleted row back in the new version), none stale.
#
# The scenario of a failure seen in use: roots with a
# one-to-one object (department, renamed during the build), a nested relation
# with area_update (skills) and a JSON column (attrs, which makes skill
# changes rebuild whole documents); a seeded writer (hr_writer.py) at
# REINDEX_RATE transactions/s with deletes, delete + re-insert of one id, key
# changes, moves, department renames, skill inserts, updates and deletes; the
# daemon reaches the engine through tests/tools/fault_proxy.py, which holds
# every bulk request naming a version index (hr_emp_vN) 300-1500 ms; the
# daemon SIGKILLed at about half of the build's rows and restarted; near the
# switch an employee renamed every 50 ms and one of its skills inserted a
# second later. An index template gives the versions index.gc_deletes =
# REINDEX_GC_DELETES (default 2s); while one is built the product's own
# [reindex] gc_deletes_s wins over it (asserted: a page read before a delete
# may land after it), and once it is live the test sets it again: the engine forgets a delete's tombstone that soon, so a write
# older than a delete that arrives after it — at the switch, a write queued
# through the alias before it — resurrects the document in seconds instead
# of after a minute. The old code failed 1 run in 3 under the load tier
# (20000 employees: one deleted employee back in v2, carrying the version of
# a department rename).
#
# Knobs: REINDEX_SEED (printed; a failure replays with it; default
# SEARCHSYNC_SEED, then random), REINDEX_EMPLOYEES (default 20000), REINDEX_RATE (default 100), REINDEX_GC_DELETES (2s),
# REINDEX_KEEP_DIR (where a failing run leaves its dumps, default /tmp).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
require_bin
command -v python3 >/dev/null || skip "python3 needed for the writer, the proxy and the oracle"
SEED="${REINDEX_SEED:-${SEARCHSYNC_SEED:-$(( (RANDOM << 15 | RANDOM) % 1000000 ))}}"
N="${REINDEX_EMPLOYEES:-20000}"
RATE="${REINDEX_RATE:-100}"
GC="${REINDEX_GC_DELETES:-2s}"
DEPTS=20
log "seed $SEED, $N employees, writer at $RATE tx/s, gc_deletes $GC of the live version"
D="$(unique_name hr)"
meta="$(unique_name meta)"
ALIAS="hr_emp_$$"
on_exit "curl -s -XDELETE '$SEARCH_URL/${ALIAS}_v*?expand_wildcards=all' >/dev/null; curl -s -XDELETE '$SEARCH_URL/_index_template/$ALIAS' >/dev/null"

# ---- the schema and its rows
mysql_q "CREATE DATABASE \`$D\`"
mysql_q "
CREATE TABLE department (id INT PRIMARY KEY, name VARCHAR(100) NOT NULL, budget DECIMAL(14,2),
  location VARCHAR(40));
CREATE TABLE employee (id INT PRIMARY KEY, name VARCHAR(100) NOT NULL, salary DECIMAL(10,2),
  hired DATETIME, active TINYINT, attrs JSON, department_id INT, KEY (department_id));
CREATE TABLE skill (id INT PRIMARY KEY, employee_id INT NOT NULL, name VARCHAR(40),
  level INT, KEY (employee_id));
INSERT INTO department SELECT seq, CONCAT('dept ', seq), seq * 1000000 + 0.85,
  IF(seq % 2, '東京', 'Berlin') FROM seq_1_to_$DEPTS;
INSERT INTO employee SELECT seq, CONCAT('emp ', seq), 1000 + seq % 90000 + 0.27,
  '2015-03-13 04:33:00' + INTERVAL seq % 1000 HOUR, seq % 2,
  JSON_OBJECT('n', seq, 'f', CONCAT(seq % 10, '.7000'), 'tags', JSON_ARRAY('a', 'b')),
  1 + seq % $DEPTS FROM seq_1_to_$N;
INSERT INTO skill SELECT 2 * seq - 1, seq, 'rust', 3 FROM seq_1_to_$N;
INSERT INTO skill SELECT 2 * seq, seq, 'ops', 5 FROM seq_1_to_$N;" "$D"

# ---- the engine behind a proxy that holds the version indices' bulk requests
# (and an index template asking the versions for index.gc_deletes = $GC: a
# build's own setting, [reindex] gc_deletes_s, wins over it)
curl -s -XPUT "$SEARCH_URL/_index_template/$ALIAS" -H 'Content-Type: application/json' -d "{
  \"index_patterns\": [\"${ALIAS}_v*\"], \"template\": {\"settings\": {\"index.gc_deletes\": \"$GC\"}}}" |
    grep -q '"acknowledged":true' || fail "index template not accepted"
FLAG="$TEST_TMP/slow"
python3 "$SEARCHSYNC_SRCDIR/tests/tools/fault_proxy.py" "$TEST_TMP/proxy.port" "$SEARCH_URL" \
    POST '_bulk' "$FLAG" delay 300-1500 "\"_index\":\"${ALIAS}_v[0-9]" &
PROXY=$!
on_exit "kill $PROXY 2>/dev/null"
wait_until 10 "the proxy listens" test -s "$TEST_TMP/proxy.port"
PROXY_URL="http://127.0.0.1:$(cat "$TEST_TMP/proxy.port")"

cat >"$TEST_TMP/c.ini" <<INI
[source]
name = hr
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = 4102
start = now
[metadata]
database = $meta
reload_interval_ms = 1000
[search]
urls = $PROXY_URL
[reindex]
buckets = 4
page_size = 250
[log]
level = info
INI
cat >"$TEST_TMP/mapping.json" <<JSON
{"version": 1, "indices": [{"alias": "$ALIAS", "shards": 2, "replicas": 0, "tables": [
  {"table": "$D.employee",
   "columns": [{"name": "id", "key": true}, "name", "salary", "hired", "active",
               {"name": "attrs", "index": false}, {"name": "department_id", "extend_name": "department"}],
   "relations": [
     {"column": "department_id", "table": "$D.department", "join_column": "id",
      "columns": ["id", "name", "budget", "location"]},
     {"column": "id", "table": "$D.skill", "join_column": "employee_id", "extend_name": "skills",
      "nested": true, "area_update": true, "columns": [{"name": "id", "key": true}, "name", "level"]}]}]}]}
JSON
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/mapping.json" --yes \
    >"$TEST_TMP/import.out" 2>&1 || fail "import: $(cat "$TEST_TMP/import.out")"
meta_q() { mysql_q "$1" "$meta"; }
building() { meta_q "SELECT building_version FROM index_configs WHERE alias = '$ALIAS'"; }
current() { meta_q "SELECT current_version FROM index_configs WHERE alias = '$ALIAS'"; }
rows_read() { meta_q "SELECT COALESCE(SUM(rows_read), 0) FROM jobs WHERE type = 'index'"; }
current_is() { [ "$(current)" = "$1" ]; }
building_is() { [ "$(building)" = "$1" ]; }
rows_read_past() { [ "$(rows_read)" -ge "$1" ]; }

daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 30 lines)"; tail -30 "$TEST_TMP/run.log"; }'
wait_until 240 "the first build (v1) is live" current_is 1

# ---- the writer, the reindex, the kill
touch "$FLAG"
python3 "$SEARCHSYNC_SRCDIR/tests/integration/hr_writer.py" "$SEED" "$RATE" "$TEST_TMP/stop" \
    "$N" "$DEPTS" "$TEST_TMP/hot" 2>"$TEST_TMP/writer.stats" |
    mariadb --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -u root "$D" 2>"$TEST_TMP/writer.err" &
WRITER=$!
on_exit "touch '$TEST_TMP/stop'"
sleep 3
"$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/c.ini" "$ALIAS" >"$TEST_TMP/reindex.out" 2>&1 &
REINDEX=$!
wait_until 60 "version 2 is being built" building_is 2
assert_eq 3600s "$(curl -s "$SEARCH_URL/${ALIAS}_v2/_settings" | jq -r '.[].settings.index.gc_deletes')" \
    "the version being built keeps deletes for [reindex] gc_deletes_s"
wait_until 300 "half of the rows read" rows_read_past $((N / 2))
log "SIGKILL at $(rows_read) rows read"
daemon_kill
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
wait_until 300 "90% of the rows read" rows_read_past $((N * 9 / 10))
touch "$TEST_TMP/hot" # near the switch
wait_until 300 "version 2 is live" current_is 2
curl -s -XPUT "$SEARCH_URL/${ALIAS}_v2/_settings" -H 'Content-Type: application/json' \
    -d "{\"index\": {\"gc_deletes\": \"$GC\"}}" | grep -q '"acknowledged":true' ||
    fail "index.gc_deletes = $GC not accepted by ${ALIAS}_v2"
rm -f "$TEST_TMP/hot"
wait "$REINDEX" || fail "searchsync reindex exited $?: $(tail -5 "$TEST_TMP/reindex.out")"
sleep 5
touch "$TEST_TMP/stop"
wait "$WRITER" || true
log "$(cat "$TEST_TMP/writer.stats")"
[ ! -s "$TEST_TMP/writer.err" ] || fail "the writer's SQL failed: $(head -3 "$TEST_TMP/writer.err")"
rm -f "$FLAG"
wait_checkpoint "$meta" hr 300
daemon_alive || fail "the daemon exited"

# ---- every document against the SQL oracle
if ! oracle_compare_employees "$D" "$ALIAS"; then
    keep="${REINDEX_KEEP_DIR:-/tmp}/t_reindex_writes.$SEED"
    mkdir -p "$keep" && cp "$TEST_TMP"/emp.* "$TEST_TMP"/*.log "$TEST_TMP"/c.ini "$keep"/ 2>/dev/null
    cat "$TEST_TMP/compare.out"
    fail "seed $SEED: documents differ from the oracle after the reindex (dumps and log in $keep)"
fi
log "$(tail -1 "$TEST_TMP/compare.out")"
assert_eq 0 "$(meta_q 'SELECT COUNT(*) FROM dead_letters')" "no dead letter"
pass
