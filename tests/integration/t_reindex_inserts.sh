#!/usr/bin/env bash
# t_reindex_inserts.sh — a build under steady inserts finishes while they go
# on, with the engine slow to acknowledge its pages, and then equals SQL.
#
# The last key range of a build is open upwards, so the rows inserted while
# it runs fall into it. A job used to read its bucket until a page found no
# row; under steady inserts each page found the few rows inserted since the
# one before, and only a page read in the same snapshot as the one before
# (reused for 500 ms) could find none. With pages acknowledged slower than
# that, the job chased the inserts for as long as they lasted, and the build
# never went live. A job now reads up to the largest key its bucket held at
# its first page: the rows committed after that reach the version as dual
# writes (sync/reindex/reindex_runner.c, table_end).
#
# 3000 rows in 2 buckets; a seeded writer inserting about 40 rows a second
# (and updating and deleting some) from before the build to after its
# switch; the daemon through tests/tools/fault_proxy.py, which holds every
# bulk request naming the version 700-1000 ms. The build must go live within
# 120 s while the writer runs; then every document against the rows.
# Knobs: INSERTS_SEED (default SEARCHSYNC_SEED, then random; printed).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
require_bin
command -v python3 >/dev/null || skip "python3 needed for the writer and the proxy"
SEED="${INSERTS_SEED:-${SEARCHSYNC_SEED:-$(( (RANDOM << 15 | RANDOM) % 1000000 ))}}"
log "seed $SEED"
db="$(unique_name ins)"
meta="$(unique_name meta)"
alias="${db}_rows"
on_exit "curl -s -XDELETE '$SEARCH_URL/${alias}_v*?expand_wildcards=all' >/dev/null"

mysql_q "CREATE DATABASE \`$db\`"
mysql_q "CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(50) NOT NULL, n INT);
         INSERT INTO t (name, n) SELECT CONCAT('row ', seq), seq FROM seq_1_to_3000" "$db"
SLOW="$TEST_TMP/slow"
touch "$SLOW"
python3 "$SEARCHSYNC_SRCDIR/tests/tools/fault_proxy.py" "$TEST_TMP/proxy.port" "$SEARCH_URL" \
    POST '_bulk' "$SLOW" delay 700-1000 "\"_index\":\"${alias}_v[0-9]" 2>"$TEST_TMP/proxy.err" &
proxy=$!
on_exit "kill $proxy 2>/dev/null"
wait_until 10 "the fault proxy listens" test -s "$TEST_TMP/proxy.port"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = ins
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = 7342
start = now
[metadata]
database = $meta
[search]
urls = http://127.0.0.1:$(cat "$TEST_TMP/proxy.port")
[reindex]
buckets = 2
page_size = 500
[log]
level = info
INI
cat >"$TEST_TMP/mapping.json" <<JSON
{"version": 1, "indices": [{"alias": "$alias", "shards": 1, "replicas": 0, "tables": [
  {"table": "$db.t", "columns": [{"name": "id", "type": "long", "key": true},
                                 {"name": "name", "type": "keyword"}, {"name": "n", "type": "long"}]}]}]}
JSON
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/mapping.json" --yes \
    >"$TEST_TMP/import.out" 2>&1 || fail "import: $(cat "$TEST_TMP/import.out")"
meta_q() { mysql_q "$1" "$meta"; }
current_is() { [ "$(meta_q "SELECT current_version FROM index_configs WHERE alias = '$alias'")" = "$1" ]; }
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 30 lines)"; tail -30 "$TEST_TMP/run.log"; }'
wait_until 120 "the first build (v1) is live" current_is 1

# the writer: inserts mostly, a few updates and deletes of rows it inserted or
# of the first ones, 40 transactions a second until the stop file exists
python3 - "$SEED" "$TEST_TMP/stop" <<'PY' 2>"$TEST_TMP/writer.stats" |
import os, random, sys, time
rnd = random.Random(int(sys.argv[1]))
stop = sys.argv[2]
ids = list(range(1, 3001))
nxt = 3001
n = 0
due = time.monotonic()
while not os.path.exists(stop):
    r = rnd.random()
    if r < 0.8:
        sys.stdout.write("INSERT INTO t (id, name, n) VALUES (%d, 'new %d', %d);\n" % (nxt, nxt, n))
        ids.append(nxt)
        nxt += 1
    elif r < 0.9 and ids:
        sys.stdout.write("UPDATE t SET name = 'upd %d' WHERE id = %d;\n" % (n, rnd.choice(ids)))
    elif ids:
        sys.stdout.write("DELETE FROM t WHERE id = %d;\n" % ids.pop(rnd.randrange(len(ids))))
    sys.stdout.flush()
    n += 1
    due += 0.025
    rest = due - time.monotonic()
    if rest > 0:
        time.sleep(rest)
sys.stderr.write("writer: %d statements, %d inserts up to id %d\n" % (n, nxt - 3001, nxt - 1))
PY
    mariadb --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -u root "$db" 2>"$TEST_TMP/writer.err" &
writer=$!
on_exit "touch '$TEST_TMP/stop'"
sleep 2
"$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/c.ini" "$alias" --no-wait >"$TEST_TMP/r.out" 2>&1 ||
    fail "reindex: $(cat "$TEST_TMP/r.out")"
wait_until 120 "version 2 is live while the inserts go on" current_is 2
sleep 2
touch "$TEST_TMP/stop"
wait "$writer" || true
log "$(cat "$TEST_TMP/writer.stats")"
[ ! -s "$TEST_TMP/writer.err" ] || fail "the writer's SQL failed: $(head -3 "$TEST_TMP/writer.err")"
rm -f "$SLOW"
wait_checkpoint "$meta" ins 120

oracle_query "$db" "SELECT JSON_OBJECT('id', CAST(id AS CHAR), 'routing', NULL,
  'doc', JSON_OBJECT('id', id, 'name', name, 'n', n)) FROM t" >"$TEST_TMP/t.oracle"
search_refresh "$alias"
engine_dump "$alias" "$TEST_TMP/t.engine"
_LIB_ASSERTS=$((_LIB_ASSERTS + 1))
compare_docs "$TEST_TMP/t.engine" "$TEST_TMP/t.oracle" --numbers value \
    --ignore-field ss_version --ignore-field ss_hash --ignore-field ss_key_hash \
    --label "$alias" --show 5 >"$TEST_TMP/cmp.out" ||
    { cat "$TEST_TMP/cmp.out"; fail "seed $SEED: the index differs from the rows"; }
log "$(cat "$TEST_TMP/cmp.out")"
pass
