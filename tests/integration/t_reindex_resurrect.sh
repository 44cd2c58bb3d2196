#!/usr/bin/env bash
# t_reindex_resurrect.sh — a write decided before a version's switch and held
# on its way to the engine never lands after a newer delete of the same
# document: no deleted row comes back in the new version (I3).
#
# The shape of the failure this guards against: after a reindex under writes
# (the daemon SIGKILLed mid-build, the reader minutes behind at the switch),
# deleted employees were back in the new version, carrying the version of an
# older rename of their department. The rename's rebuild of the department's
# employees was sent through the alias just before the reader saw the switch;
# their deletes came after it. While writes through the alias were queued by
# the version the alias pointed at (and a version's own writes by its name),
# the deletes went out in the new version's queue, landed first, and the
# rename's older writes, still on their way through the alias, landed in the
# new version once the engine had forgotten the deletes (index.gc_deletes).
# Every write of an index config now leaves in one queue (targets_queue),
# so a document's delete is sent only once its older write has returned.
#
# Targeted, so that the window is hit in most runs rather than now and then:
#   - a small HR schema (department one-to-one, skills nested with
#     area_update, a JSON column), a seeded writer (hr_writer.py) whose
#     "hot" window, near the switch, renames a department about four times
#     a second and deletes three of its employees a second later;
#   - the daemon SIGKILLed at half the rows and restarted, so the reader
#     replays a backlog and is behind at the switch;
#   - two fault proxies in front of the engine: the inner one holds every
#     bulk request naming a version 300-1500 ms (a busy version being
#     built), the outer one holds every bulk request that writes through the
#     alias 6 s while a flag exists: from near the end of the build until
#     the reader says it saw the switch. A write sent through the alias
#     before the switch is thus still on its way when the reader decides the
#     deletes that follow it;
#   - once the version is live it gets index.gc_deletes = 1s and is refreshed
#     every 250 ms (tombstones are pruned at refreshes), so a delete is
#     forgotten within about a second instead of a minute; the versions
#     keep deletes 1 h while they are built (an index template as well as
#     [reindex] gc_deletes_s, whatever the binary sets: a page landing after
#     a delete, closed by that setting, stays out of this test).
# Then every document against the SQL oracle: none extra, missing or stale.
#
# Knobs: RESURRECT_SEED (default SEARCHSYNC_SEED, then random; printed),
# RESURRECT_EMPLOYEES (4000), RESURRECT_RATE (80 transactions/s),
# RESURRECT_HOLD_MS (6000), RESURRECT_KEEP_DIR (where a failing run leaves
# its dumps, default /tmp).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
require_bin
command -v python3 >/dev/null || skip "python3 needed for the writer, the proxies and the oracle"
SEED="${RESURRECT_SEED:-${SEARCHSYNC_SEED:-$(( (RANDOM << 15 | RANDOM) % 1000000 ))}}"
N="${RESURRECT_EMPLOYEES:-4000}"
RATE="${RESURRECT_RATE:-80}"
HOLD="${RESURRECT_HOLD_MS:-6000}"
DEPTS=8
log "seed $SEED, $N employees, writer at $RATE tx/s, alias writes held ${HOLD} ms near the switch"
D="$(unique_name hr)"
meta="$(unique_name meta)"
ALIAS="hr_res_$$"
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

# ---- the engine behind two proxies (see the top), and a template keeping
# the versions' deletes 1 h while they are built
curl -s -XPUT "$SEARCH_URL/_index_template/$ALIAS" -H 'Content-Type: application/json' -d "{
  \"index_patterns\": [\"${ALIAS}_v*\"], \"template\": {\"settings\": {\"index.gc_deletes\": \"1h\"}}}" |
    grep -q '"acknowledged":true' || fail "index template not accepted"
SLOW="$TEST_TMP/slow"
python3 "$SEARCHSYNC_SRCDIR/tests/tools/fault_proxy.py" "$TEST_TMP/inner.port" "$SEARCH_URL" \
    POST '_bulk' "$SLOW" delay 300-1500 "\"_index\":\"${ALIAS}_v[0-9]" 2>"$TEST_TMP/inner.err" &
INNER=$!
on_exit "kill $INNER 2>/dev/null"
wait_until 10 "the inner proxy listens" test -s "$TEST_TMP/inner.port"
HELD="$TEST_TMP/held"
python3 "$SEARCHSYNC_SRCDIR/tests/tools/fault_proxy.py" "$TEST_TMP/outer.port" \
    "http://127.0.0.1:$(cat "$TEST_TMP/inner.port")" POST '_bulk' "$HELD" delay "$HOLD" \
    "\"_index\":\"${ALIAS}\"" \
    2>"$TEST_TMP/outer.err" &
OUTER=$!
on_exit "kill $OUTER 2>/dev/null"
wait_until 10 "the outer proxy listens" test -s "$TEST_TMP/outer.port"

cat >"$TEST_TMP/c.ini" <<INI
[source]
name = hr
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = 4103
start = now
[metadata]
database = $meta
reload_interval_ms = 1000
[search]
urls = http://127.0.0.1:$(cat "$TEST_TMP/outer.port")
[reindex]
buckets = 4
page_size = 100
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
current() { meta_q "SELECT current_version FROM index_configs WHERE alias = '$ALIAS'"; }
building() { meta_q "SELECT building_version FROM index_configs WHERE alias = '$ALIAS'"; }
rows_read() { meta_q "SELECT COALESCE(SUM(rows_read), 0) FROM jobs WHERE type = 'index' AND version = 2"; }
current_is() { [ "$(current)" = "$1" ]; }
building_is() { [ "$(building)" = "$1" ]; }
rows_read_past() { [ "$(rows_read)" -ge "$1" ]; }

daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 30 lines)"; tail -30 "$TEST_TMP/run.log"; }'
wait_until 120 "the first build (v1) is live" current_is 1

# ---- the writer, the reindex, the kill
touch "$SLOW"
HR_HOT_DEPT_SHARE=0.2 HR_HOT_DEPT_DELETES=3 \
    python3 "$SEARCHSYNC_SRCDIR/tests/integration/hr_writer.py" "$SEED" "$RATE" \
    "$TEST_TMP/stop" "$N" "$DEPTS" "$TEST_TMP/hot" 2>"$TEST_TMP/writer.stats" |
    mariadb --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -u root "$D" 2>"$TEST_TMP/writer.err" &
WRITER=$!
on_exit "touch '$TEST_TMP/stop'"
sleep 2
"$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/c.ini" "$ALIAS" --no-wait >"$TEST_TMP/reindex.out" 2>&1 ||
    fail "reindex: $(cat "$TEST_TMP/reindex.out")"
wait_until 60 "version 2 is being built" building_is 2
wait_until 300 "half of the rows read" rows_read_past $((N / 2))
log "SIGKILL at $(rows_read) rows read"
daemon_kill
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
wait_until 300 "80% of the rows read" rows_read_past $((N * 8 / 10))
touch "$TEST_TMP/hot" "$HELD" # the switch's window: renames and deletes, alias writes held
wait_until 300 "version 2 is live" current_is 2
curl -s -XPUT "$SEARCH_URL/${ALIAS}_v2/_settings" -H 'Content-Type: application/json' \
    -d '{"index": {"gc_deletes": "1s"}}' | grep -q '"acknowledged":true' ||
    fail "index.gc_deletes = 1s not accepted by ${ALIAS}_v2"
( while [ ! -e "$TEST_TMP/stop.refresh" ]; do
      curl -s -m 5 -XPOST "$SEARCH_URL/${ALIAS}_v2/_refresh" >/dev/null; sleep 0.25
  done ) &
REFRESHER=$!
on_exit "touch '$TEST_TMP/stop.refresh'; wait $REFRESHER 2>/dev/null"
# the reader saw the switch: what it sends from here goes unheld
daemon_wait_log "live changes no longer written to ${ALIAS}_v2" 300
rm -f "$HELD"
log "the reader saw the switch; $(wc -l <"$HELD.delayed" 2>/dev/null || echo 0) bulk request(s) through the alias were held"
sleep 3
rm -f "$TEST_TMP/hot"
sleep 2
touch "$TEST_TMP/stop"
wait "$WRITER" || true
log "$(cat "$TEST_TMP/writer.stats")"
[ ! -s "$TEST_TMP/writer.err" ] || fail "the writer's SQL failed: $(head -3 "$TEST_TMP/writer.err")"
rm -f "$SLOW"
wait_checkpoint "$meta" hr 300
daemon_alive || fail "the daemon exited"
sleep 3 # beyond the 1 s the engine now keeps a delete: a late write would be in
touch "$TEST_TMP/stop.refresh"

# ---- every document against the SQL oracle
if ! oracle_compare_employees "$D" "$ALIAS"; then
    keep="${RESURRECT_KEEP_DIR:-/tmp}/t_reindex_resurrect.$SEED"
    mkdir -p "$keep" && cp "$TEST_TMP"/emp.* "$TEST_TMP"/*.log "$TEST_TMP"/c.ini "$keep"/ 2>/dev/null
    cat "$TEST_TMP/compare.out"
    # each extra document's version as a binlog position, and its department
    python3 - "$TEST_TMP/emp.engine" "$TEST_TMP/emp.oracle" <<'PY'
import json, sys
rows = {json.loads(l)["id"] for l in open(sys.argv[2])}
for l in open(sys.argv[1]):
    d = json.loads(l)
    if d["id"] not in rows:
        v = d["doc"].get("ss_version", 0)
        print("extra %s: version = binlog %06d:%d, department %s" % (
            d["id"], (v >> 32) & 0x1FFFFF, v & 0xFFFFFFFF, json.dumps(d["doc"].get("department"))))
PY
    fail "seed $SEED: documents differ from the oracle after the switch (dumps and log in $keep)"
fi
log "$(tail -1 "$TEST_TMP/compare.out")"
assert_eq 0 "$(meta_q 'SELECT COUNT(*) FROM dead_letters')" "no dead letter"
pass
