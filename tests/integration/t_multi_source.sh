#!/usr/bin/env bash
# t_multi_source — three MariaDB servers and one MySQL 8 (tests/harness/
# mysql8.sh), each a source read by a daemon of its own, feeding ONE alias
# (docs/cluster.md, "Several sources, one index"; docs/mapping.md, "Several
# sources"). The suite's MariaDB keeps the shared metadata; east, west,
# north (MariaDB) and south (MySQL 8) are servers of this test (lib.sh,
# extra_mariadb), each with the same schema and overlapping keys, so every
# document's id must carry its source. Against the union of the four
# servers' SQL oracles, after each phase:
#   1. first sync: the four daemons started together build version 1 once,
#      each source's part run by its own daemon;
#   2. a writer on every server; west's daemon SIGKILLed and started again;
#   3. north's server SIGKILLed for a while (20 s; 60 s with SEARCHSYNC_LONG)
#      once its daemon has read everything: the others flow (a change on east
#      is searchable, their writers go on), `status` from east names north as
#      down, a reindex queued meanwhile builds the other sources' parts and
#      waits for north's (status says so; the alias stays on the live
#      version); before north comes back the live version equals the union
#      of the others' oracles and north's as it went down, and version 2
#      holds exactly the others' rows; then north's server comes back and
#      the version goes live with every source's rows, writers on all;
#   4. every writer stopped, each daemon's checkpoint at its server's end;
#   5. check with planted differences in two sources' documents (east: some
#      deleted; west: some edited, one added): each source's check finds its
#      own, and only its own; --repair fixes them; a second check finds none.
# Seeded (SEARCHSYNC_SEED): the writers' statements. In the load tier.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
require_bin

SEED="${SEARCHSYNC_SEED:-$RANDOM}"
log "seed $SEED"
SRC=(east west north south)
OTHERS=(east west south) # the sources that flow while north is down
ORDERS=300
RATE="${MULTI_RATE:-12}"
meta="$(unique_name ssms)"
alias="$(unique_name orders)"
mapping_name="shop_$$"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
on_exit '[ "$rc" = 0 ] || { for f in "$TEST_TMP"/*.log; do echo "--- $f (last 30 lines)"; tail -30 "$f"; done; echo "--- seed $SEED"; }'

t0=$(date +%s)
extra_mariadb east west north -- south
log "four source servers up in $(($(date +%s) - t0)) s: east :$(extra_port east), west :$(extra_port west), north :$(extra_port north) (MariaDB), south :$(extra_port south) (MySQL $(extra_q south 'SELECT VERSION()'))"

# ---- the same schema on every server, rows of their own under the same keys
n=0
for s in "${SRC[@]}"; do
    n=$((n + 1))
    extra_q "$s" "CREATE DATABASE shop" || fail "database on $s"
    extra_q "$s" "CREATE TABLE shop.orders (id BIGINT PRIMARY KEY, customer VARCHAR(64) NOT NULL,
        total DECIMAL(10,2) NOT NULL, status VARCHAR(16) NOT NULL);
      CREATE TABLE shop.order_items (id BIGINT PRIMARY KEY, order_id BIGINT NOT NULL,
        sku VARCHAR(32) NOT NULL, qty INT NOT NULL, KEY (order_id));
      $(python3 -c "
o, n, s = $ORDERS, $n, '$s'
print('INSERT INTO shop.orders VALUES ' + ','.join(\"(%d, '%s-%d', %d.25, 'new')\" % (k, s, k % 60, k * n) for k in range(1, o + 1)) + ';')
print('INSERT INTO shop.order_items VALUES ' + ','.join(\"(%d, %d, 'sku-%d', %d)\" % (k, k % o + 1, k % 500, k % 7 + 1) for k in range(1, 2 * o + 1)) + ';')
")" shop || fail "schema on $s"
done

config() { # SOURCE SERVER_ID
    cat >"$TEST_TMP/$1.ini" <<INI
[source]
name = $1
mapping = $mapping_name
host = 127.0.0.1
port = $(extra_port "$1")
user = searchsync
password = searchsync
server_id = $2
start = now
heartbeat_ms = 500
[metadata]
host = $MYSQL_HOST
port = $MYSQL_PORT
user = root
database = $meta
reload_interval_ms = 500
[search]
urls = $SEARCH_URL
[reindex]
buckets = 2
poll_interval_ms = 500
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
[cluster]
node_id = $1-node
[log]
level = info
INI
}
config east 4301
config west 4302
config north 4303
config south 4304

cat >"$TEST_TMP/m.json" <<JSON
{"version": 1, "indices": [{"alias": "$alias", "sources": ["east", "west", "north", "south"],
  "shards": 1, "replicas": 0, "history_retention": 1,
  "tables": [{"table": "shop.orders",
    "columns": [{"name": "id", "type": "long", "key": true}, {"name": "customer", "type": "keyword"},
                {"name": "total", "type": "keyword"}, {"name": "status", "type": "keyword"}],
    "relations": [{"column": "id", "table": "shop.order_items", "join_column": "order_id",
                   "nested": true, "extend_name": "items",
                   "columns": [{"name": "id", "type": "long", "key": true},
                               {"name": "order_id", "type": "long"},
                               {"name": "sku", "type": "keyword"}, {"name": "qty", "type": "integer"}]}]}]}]}
JSON
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/east.ini" --yes "$TEST_TMP/m.json" \
    >"$TEST_TMP/import.out" 2>&1 || fail "mapping import: $(cat "$TEST_TMP/import.out")"
assert_contains "$(cat "$TEST_TMP/import.out")" "plan for mapping $mapping_name, from source east" \
    "the import names the mapping the sources share"

# ---- daemons, one per source
declare -A DPID LOGAT WPID
_kill_daemons() {
    local s
    for s in "${!DPID[@]}"; do
        [ -n "${DPID[$s]}" ] && kill -9 "${DPID[$s]}" 2>/dev/null
    done
    return 0
}
on_exit _kill_daemons
dstart() { # SOURCE
    LOGAT[$1]="$(stat -c %s "$TEST_TMP/$1.log" 2>/dev/null || echo 0)"
    "$SEARCHSYNC_BIN" run --config "$TEST_TMP/$1.ini" >>"$TEST_TMP/$1.log" 2>&1 &
    DPID[$1]=$!
}
dlog() { tail -c +$((${LOGAT[$1]} + 1)) "$TEST_TMP/$1.log"; }
dwait_log() { # SOURCE TEXT [SECS]
    local i
    for ((i = 0; i < ${3:-60} * 5; i++)); do
        dlog "$1" | grep -qF -- "$2" && return 0
        kill -0 "${DPID[$1]}" 2>/dev/null || fail "the daemon of $1 exited before it logged \"$2\": $(tail -15 "$TEST_TMP/$1.log")"
        sleep 0.2
    done
    fail "timed out waiting for the daemon of $1 to log \"$2\": $(tail -15 "$TEST_TMP/$1.log")"
}
dkill() { kill -9 "${DPID[$1]}"; wait "${DPID[$1]}" 2>/dev/null || true; DPID[$1]=""; }
dstop() { kill -TERM "${DPID[$1]}"; wait "${DPID[$1]}" 2>/dev/null || true; DPID[$1]=""; }

# ---- writers, one per server
on_exit 'for s in east west north south; do touch "$TEST_TMP/$s.stop"; done'
wstart() { # SOURCE SEED
    rm -f "$TEST_TMP/$1.stop"
    python3 "$SEARCHSYNC_SRCDIR/tests/integration/multi_writer.py" "$2" "$RATE" "$TEST_TMP/$1.stop" \
        "$ORDERS" 2>>"$TEST_TMP/$1.writer.log" |
        mariadb --no-defaults -h 127.0.0.1 -P "$(extra_port "$1")" -u root shop \
            >>"$TEST_TMP/$1.writer.log" 2>&1 &
    WPID[$1]=$!
}
wstop() { touch "$TEST_TMP/$1.stop"; wait "${WPID[$1]}" 2>/dev/null || true; }

# ---- the oracle: the union of the servers' documents, computed by SQL
oracle_of() { # SOURCE
    mariadb --no-defaults -h 127.0.0.1 -P "$(extra_port "$1")" -u root --batch --raw \
        --skip-column-names --default-character-set=utf8mb4 --database=shop -e "
SELECT JSON_OBJECT('id', CONCAT('$1:', o.id), 'routing', NULL, 'doc', JSON_OBJECT(
  'id', o.id, 'customer', o.customer, 'total', CAST(o.total AS CHAR), 'status', o.status,
  'items', COALESCE(JSON_EXTRACT((SELECT JSON_ARRAYAGG(JSON_OBJECT('id', i.id, 'order_id', i.order_id,
      'sku', i.sku, 'qty', i.qty)) FROM order_items i WHERE i.order_id = o.id), '\$'),
      JSON_ARRAY()),
  'ss_source', '$1'))
FROM orders o ORDER BY o.id"
}
check_docs() { # LABEL INDEX SOURCE... — INDEX equal to the union of those sources' oracle files
    local s files="" label="$1" index="$2"
    shift 2
    for s in "$@"; do files="$files${files:+,}$TEST_TMP/$s.oracle"; done
    search_refresh "$index"
    engine_dump "$index" "$TEST_TMP/engine.ndjson" 2>"$TEST_TMP/dump.err" || {
        cat "$TEST_TMP/dump.err"; fail "$label: engine dump"; }
    _LIB_ASSERTS=$((_LIB_ASSERTS + 1))
    compare_docs "$TEST_TMP/engine.ndjson" "$files" --numbers value --ignore-field ss_version \
        --ignore-field ss_hash --ignore-field ss_key_hash --label "$index ($label)" --show 5 \
        >"$TEST_TMP/cmp.out" || { cat "$TEST_TMP/cmp.out"; fail "$label: $index differs from the union of the SQL oracles of $*"; }
    log "$(cat "$TEST_TMP/cmp.out")"
}
check_oracle() { # LABEL — the alias against the union of every server's oracle as it is now
    local s
    for s in "${SRC[@]}"; do oracle_of "$s" >"$TEST_TMP/$s.oracle" || fail "$1: the oracle query on $s"; done
    check_docs "$1" "$alias" "${SRC[@]}"
}
# caught_up SECS SOURCE... — each daemon's checkpoint at or past its server's binlog end as it is now
caught_up() {
    local s f p secs="$1"
    shift
    for s in "$@"; do
        read -r f p <<<"$(extra_binlog_pos "$s")"
        wait_until "$secs" "the checkpoint of $s at or past $f:$p" checkpoint_reached "$meta" "$s" "$f" "$p"
    done
}
version() { mysql_q "SELECT current_version FROM \`$meta\`.index_configs WHERE alias = '$alias'"; }
building() { mysql_q "SELECT building_version FROM \`$meta\`.index_configs WHERE alias = '$alias'"; }
alias_target() { search_get "/_alias/$alias" | jq -r 'keys[0]'; }
status_json() { # SOURCE — status --json of that source's configuration (its exit status ignored)
    "$SEARCHSYNC_BIN" status --config "$TEST_TMP/$1.ini" --json 2>/dev/null || true
}
north_field() { # JQ over north's entry in east's status
    status_json east | jq -r --arg a "$alias" ".indices[] | select(.alias == \$a) | .sources[] | select(.name == \"north\") | $1"
}

# ---- 1. first sync: four daemons started together, one version 1
for s in "${SRC[@]}"; do dstart "$s"; done
for s in "${SRC[@]}"; do dwait_log "$s" "index config(s) of source $s" 60; done
version_is() { [ "$(version)" = "$1" ]; }
wait_until 180 "version 1 of $alias is live" version_is 1
queued=0
for s in "${SRC[@]}"; do
    dlog "$s" | grep -q "version 1 queued" && queued=$((queued + 1))
done
assert_eq 1 "$queued" "version 1 is queued once, by one of the four daemons"
run_parts() { # VERSION [WHAT] — "source=WHAT,..." over the jobs of that version's run (WHAT: default the documents they wrote)
    mysql_q "SELECT GROUP_CONCAT(CONCAT(s, '=', n) ORDER BY s) FROM (SELECT j.source s, ${2:-SUM(j.docs_written)} n
        FROM \`$meta\`.reindex_run_jobs j JOIN \`$meta\`.reindex_runs r ON r.id = j.run_id
        WHERE r.alias = '$alias' AND r.version = $1 AND j.status = 'done' GROUP BY j.source) t"
}
assert_eq "east=$ORDERS,north=$ORDERS,south=$ORDERS,west=$ORDERS" "$(run_parts 1)" \
    "version 1: each source's part wrote its server's orders"
assert_eq "$((4 * ORDERS))" "$(search_count "$alias")" "the alias holds every server's orders"
assert_eq "$ORDERS" "$(search_count "$alias" '{"query":{"term":{"ss_source":"west"}}}')" \
    "west's documents carry ss_source"
assert_eq '"east:42"' "$(search_get "/$alias/_doc/east:42" | jq -c ._id)" "ids carry the source"
check_oracle "first sync"

# ---- 2. a writer on every server; west's daemon SIGKILLed mid-stream
# the writers' seeds: SEED*10 + the server's number, + 4 at each restart
wseed() { # SOURCE ROUND
    local i
    for i in 0 1 2 3; do [ "${SRC[$i]}" = "$1" ] && echo $((SEED * 10 + i + 4 * $2)); done
}
for s in "${SRC[@]}"; do wstart "$s" "$(wseed "$s" 0)"; done
sleep 8
dkill west
log "west's daemon SIGKILLed under its writer"
sleep 4
dstart west
dwait_log west "index config(s) of source west" 60
sleep 6

# ---- 3. north's server down for a while: the others flow, status names it,
# a build waits for north's part and only for it
DOWN_S=20
[ -z "${SEARCHSYNC_LONG:-}" ] || DOWN_S=60
wstop north
caught_up 60 north
# north's documents stay as they are while its server is down
oracle_of north >"$TEST_TMP/north.oracle" || fail "the oracle query on north"
extra_ctl north kill >/dev/null 2>&1 || fail "killing north's server"
down_at=$(date +%s)
log "north's server SIGKILLed"
north_up_is() { [ "$(north_field .source_up)" = "$1" ]; }
wait_until 30 "east's status says north's server is down" north_up_is false
st=0; "$SEARCHSYNC_BIN" status --config "$TEST_TMP/east.ini" >"$TEST_TMP/status.txt" 2>&1 || st=$?
assert_eq 3 "$st" "status from east: something waits for an operator (exit 3)"
assert_contains "$(cat "$TEST_TMP/status.txt")" "north  DOWN for" "status from east names north as down"
extra_q east "INSERT INTO shop.orders VALUES (100001, 'marker', 1.00, 'new')"
marker_found() { [ "$(search_count "$alias" '{"query":{"ids":{"values":["east:100001"]}}}')" = 1 ]; }
wait_until 30 "a change on east is searchable while north is down" marker_found
"$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/east.ini" "$alias" --no-wait >"$TEST_TMP/reindex.out" 2>&1 ||
    fail "reindex while north is down: $(cat "$TEST_TMP/reindex.out")"
v2="$(building)"
assert_eq 2 "$v2" "version 2 is being built"
part_done() { # SOURCE — its part planned and every job of it done
    status_json east | jq -e --arg a "$alias" --arg s "$1" '.indices[] | select(.alias == $a) | .sources[]
        | select(.name == $s) | .part.planned and .part.jobs > 0 and .part.jobs == .part.jobs_done' >/dev/null
}
parts_done() { part_done east && part_done west && part_done south; }
wait_until 120 "the parts of version 2 of every source but north are done" parts_done
# the others keep writing (into version 1 and version 2) for the rest of north's outage
while [ $(($(date +%s) - down_at)) -lt "$DOWN_S" ]; do sleep 1; done
assert_eq "${alias}_v1" "$(alias_target)" "the alias stays on version 1 while north's part waits"
assert_eq 2 "$(building)" "version 2 waits"
waits="$(status_json east | jq -r --arg a "$alias" '.indices[] | select(.alias == $a) | .waits_for')"
assert_contains "$waits" "source north: its part is not planned yet (its server is down" \
    "status says the build waits for north, whose server is down"
# a part that ran to its end is not started again while the build waits
# for another source (east's daemon is not restarted in this phase)
starts="$(dlog east | grep -cE "$alias: (building version 2|version 2: no job of source east left)")"
assert_eq 1 "$starts" "east's runner of version 2 started once while the build waits ($starts starts in its log)"
for s in "${OTHERS[@]}"; do wstop "$s"; done
caught_up 90 "${OTHERS[@]}"
for s in "${OTHERS[@]}"; do oracle_of "$s" >"$TEST_TMP/$s.oracle" || fail "the oracle query on $s"; done
check_docs "north down $(($(date +%s) - down_at)) s: the live version" "$alias" "${OTHERS[@]}" north
check_docs "north down: the other sources' parts of version 2 with their live changes" "${alias}_v2" "${OTHERS[@]}"
log "north down $(($(date +%s) - down_at)) s; the build waits: $waits"
extra_ctl north restart >"$TEST_TMP/north.restart.log" 2>&1 || fail "north's server did not restart: $(tail "$TEST_TMP/north.restart.log")"
log "north's server back after $(($(date +%s) - down_at)) s"
for s in "${SRC[@]}"; do wstart "$s" "$(wseed "$s" 1)"; done
wait_until 180 "version 2 goes live once north's part is in" version_is 2
assert_eq "${alias}_v2" "$(alias_target)" "the alias moved to version 2"
dwait_log north "version 2: the part of source north planned" 5
assert_eq "east=2,north=2,south=2,west=2" "$(run_parts 2 'COUNT(*)')" "version 2: each source ran its 2 bucket jobs"
assert_eq true "$(north_field .source_up)" "north is up again in east's status"

# ---- 4. every writer stopped; every checkpoint at its server's end
sleep 6
for s in "${SRC[@]}"; do wstop "$s"; done
for s in "${SRC[@]}"; do log "$s: $(grep '^writer:' "$TEST_TMP/$s.writer.log" | tr '\n' ' ')"; done
caught_up 120 "${SRC[@]}"
check_oracle "after the writers, a daemon killed, a server down and a reindex across sources"

# ---- 5. check per source, with planted differences on two sources' documents
v="${alias}_v$(version)"
mapfile -t gone < <(extra_q east "SELECT id FROM shop.orders WHERE id < 100000 ORDER BY id LIMIT 3")
mapfile -t edit < <(extra_q west "SELECT id FROM shop.orders ORDER BY id DESC LIMIT 2")
for k in "${gone[@]}"; do search_delete "/$v/_doc/east:$k" >/dev/null; done
for k in "${edit[@]}"; do search_post "/$v/_update/west:$k" '{"doc":{"status":"tampered"}}' >/dev/null; done
search_put "/$v/_doc/west:999999" '{"id":999999,"status":"not in MySQL","ss_source":"west"}' >/dev/null
search_refresh "$alias"
check() { # SOURCE [ARGS] — check --json into $TEST_TMP/SOURCE.check.json, its exit status echoed
    local st=0
    "$SEARCHSYNC_BIN" check --config "$TEST_TMP/$1.ini" --json --settle 20 "${@:2}" "$alias" \
        >"$TEST_TMP/$1.check.json" 2>"$TEST_TMP/$1.check.err" || st=$?
    echo "$st"
}
assert_eq 3 "$(check east)" "east's check finds differences (exit 3; $(tail -2 "$TEST_TMP/east.check.err"))"
assert_eq "$(printf 'east:%s\n' "${gone[@]}" | sort)" "$(jq -r '.missing[]' "$TEST_TMP/east.check.json" | sort)" \
    "east's check: exactly its deleted documents are missing"
assert_eq "" "$(jq -r '(.extra + [.different[].id])[]' "$TEST_TMP/east.check.json")" \
    "east's check does not report west's documents"
assert_eq 3 "$(check west)" "west's check finds differences"
assert_eq "$(printf 'west:%s\n' "${edit[@]}" | sort)" "$(jq -r '.different[].id' "$TEST_TMP/west.check.json" | sort)" \
    "west's check: exactly its edited documents differ"
assert_eq "west:999999" "$(jq -r '.extra[]' "$TEST_TMP/west.check.json")" "west's check: the added document is extra"
assert_eq "" "$(jq -r '.missing[]' "$TEST_TMP/west.check.json")" "west's check does not report east's documents"
for s in north south; do
    assert_eq 0 "$(check "$s")" "$s's check finds nothing ($(jq -c '{missing,extra,different}' "$TEST_TMP/$s.check.json" 2>/dev/null))"
done
assert_eq 0 "$(check east --repair)" "east's check --repair repairs its documents"
assert_eq 0 "$(check west --repair)" "west's check --repair repairs its documents"
for s in "${SRC[@]}"; do
    assert_eq 0 "$(check "$s")" "a second check of $s finds nothing ($(jq -c '{missing,extra,different}' "$TEST_TMP/$s.check.json" 2>/dev/null))"
done
check_oracle "after the checks and repairs"

# the daemons stop cleanly
for s in "${SRC[@]}"; do dstop "$s"; done
log "every document equals the union of the four servers' oracles; $(($(date +%s) - t0)) s"
pass
