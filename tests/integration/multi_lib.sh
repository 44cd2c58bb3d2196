# tests/integration/multi_lib.sh — one shop sharded over several source
# servers (lib.sh's extra_mariadb), for the tests of several sources feeding
# one index (t_multi_source.sh, t_cluster_sources.sh). Sourced after lib.sh
# and oracle_lib.sh; the test sets $meta (the metadata schema), $alias and
# the array SRC (the source names, each an extra server of that name).
#
#   shop_schema SOURCE NUMBER ORDERS   database shop on that server: ORDERS
#                          orders and 2 items each, keys 1.. as on every
#                          other server, values its own (NUMBER: its place)
#   shop_mapping FILE      the mapping of $alias over shop.orders with its
#                          items nested, fed by every source of SRC
#   source_ini SOURCE SERVER_ID  the [source] ... [delivery] sections of a
#                          daemon of that source on stdout (the test adds
#                          its own [cluster], [admin], [log]); MULTI_BUCKETS
#                          (2), MULTI_POLL_MS (500), MULTI_HEARTBEAT_MS
#                          (500) and MULTI_SEARCH_URL ($SEARCH_URL) vary it
#   wstart SOURCE SEED / wstop SOURCE   a seeded writer on that server
#                          (multi_writer.py, MULTI_RATE transactions a second)
#   oracle_of SOURCE       that server's documents as the daemon must make
#                          them, computed by SQL, one JSON line each (a test
#                          whose mapping adds fields gives their JSON_OBJECT
#                          pairs over `o`, the order row, in MULTI_ORACLE_FIELDS)
#   check_docs LABEL INDEX SOURCE...  INDEX equal to the union of those
#                          sources' $TEST_TMP/SOURCE.oracle files
#   check_oracle LABEL     the alias against every source's oracle as it is now
#   caught_up SECS SOURCE...  each source's checkpoint at or past its
#                          server's binlog end as it is now
#   admin_daemon SOURCE SERVER_ID SOURCES_DIR  that source's daemon with its
#                          admin API (TOKEN, PORT, URL set) and `sources_dir`,
#                          the shop mapping imported, started and listening
#   dstart NAME            `searchsync run` of $TEST_TMP/NAME.ini, its output
#                          appended to NAME.log (killed on exit)
#   dlog NAME              that log since the last dstart
#   dwait_log NAME TEXT [SECS]  until the daemon logs TEXT (fails if it exits)
#   dkill NAME / dstop NAME     SIGKILL / SIGTERM it and wait
#   version / building     the alias's current / building version
MULTI_RATE="${MULTI_RATE:-12}"
MULTI_ORDERS=300

shop_schema() {
    MULTI_ORDERS="$3"
    extra_q "$1" "CREATE DATABASE shop" || fail "database on $1"
    extra_q "$1" "CREATE TABLE shop.orders (id BIGINT PRIMARY KEY, customer VARCHAR(64) NOT NULL,
        total DECIMAL(10,2) NOT NULL, status VARCHAR(16) NOT NULL);
      CREATE TABLE shop.order_items (id BIGINT PRIMARY KEY, order_id BIGINT NOT NULL,
        sku VARCHAR(32) NOT NULL, qty INT NOT NULL, KEY (order_id));
      $(python3 -c "
o, n, s = $3, $2, '$1'
print('INSERT INTO shop.orders VALUES ' + ','.join(\"(%d, '%s-%d', %d.25, 'new')\" % (k, s, k % 60, k * n) for k in range(1, o + 1)) + ';')
print('INSERT INTO shop.order_items VALUES ' + ','.join(\"(%d, %d, 'sku-%d', %d)\" % (k, k % o + 1, k % 500, k % 7 + 1) for k in range(1, 2 * o + 1)) + ';')
")" shop || fail "schema on $1"
}

shop_mapping() {
    local srcs
    srcs="$(printf '"%s",' "${SRC[@]}")"
    cat >"$1" <<JSON
{"version": 1, "indices": [{"alias": "$alias", "sources": [${srcs%,}],
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
}

declare -A WPID
source_ini() {
    cat <<INI
[source]
name = $1
mapping = $mapping_name
host = 127.0.0.1
port = $(extra_port "$1")
user = searchsync
password = searchsync
server_id = $2
start = now
heartbeat_ms = ${MULTI_HEARTBEAT_MS:-500}
[metadata]
host = $MYSQL_HOST
port = $MYSQL_PORT
user = root
database = $meta
reload_interval_ms = 500
[search]
urls = ${MULTI_SEARCH_URL:-$SEARCH_URL}
[reindex]
buckets = ${MULTI_BUCKETS:-2}
index_parallel_jobs = ${MULTI_INDEX_JOBS:-2}
poll_interval_ms = ${MULTI_POLL_MS:-500}
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
INI
}

admin_daemon() {
    TOKEN="$(openssl rand -hex 16)"
    PORT="$(free_port)"
    { source_ini "$1" "$2"
      cat <<INI
[admin]
listen = 127.0.0.1:$PORT
token = $TOKEN
sources_dir = $3
[log]
level = info
INI
    } >"$TEST_TMP/$1.ini"
    shop_mapping "$TEST_TMP/m.json"
    "$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/$1.ini" --yes "$TEST_TMP/m.json" \
        >"$TEST_TMP/import.out" 2>&1 || fail "mapping import: $(cat "$TEST_TMP/import.out")"
    dstart "$1"
    dwait_log "$1" "index config(s) of source $1" 60
    URL="http://127.0.0.1:$PORT"
    wait_until 30 "$1's admin server" curl -s -o /dev/null "$URL/login"
}

_multi_stop_writers() {
    local s
    for s in "${SRC[@]}"; do touch "$TEST_TMP/$s.stop"; done
    return 0
}
on_exit _multi_stop_writers
wstart() {
    rm -f "$TEST_TMP/$1.stop"
    python3 "$SEARCHSYNC_SRCDIR/tests/integration/multi_writer.py" "$2" "$MULTI_RATE" "$TEST_TMP/$1.stop" \
        "$MULTI_ORDERS" 2>>"$TEST_TMP/$1.writer.log" |
        mariadb --no-defaults -h 127.0.0.1 -P "$(extra_port "$1")" -u root shop \
            >>"$TEST_TMP/$1.writer.log" 2>&1 &
    WPID[$1]=$!
}
wstop() { touch "$TEST_TMP/$1.stop"; wait "${WPID[$1]}" 2>/dev/null || true; }

# (JSON_ARRAYAGG without ORDER BY, which MySQL 8 lacks: arrays compare by id)
oracle_of() {
    mariadb --no-defaults -h 127.0.0.1 -P "$(extra_port "$1")" -u root --batch --raw \
        --skip-column-names --default-character-set=utf8mb4 --database=shop -e "
SELECT JSON_OBJECT('id', CONCAT('$1:', o.id), 'routing', NULL, 'doc', JSON_OBJECT(
  'id', o.id, 'customer', o.customer, 'total', CAST(o.total AS CHAR), 'status', o.status,
  'items', COALESCE(JSON_EXTRACT((SELECT JSON_ARRAYAGG(JSON_OBJECT('id', i.id, 'order_id', i.order_id,
      'sku', i.sku, 'qty', i.qty)) FROM order_items i WHERE i.order_id = o.id), '\$'),
      JSON_ARRAY()),${MULTI_ORACLE_FIELDS:+
  $MULTI_ORACLE_FIELDS,}
  'ss_source', '$1'))
FROM orders o ORDER BY o.id"
}
check_docs() {
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
check_oracle() {
    local s
    for s in "${SRC[@]}"; do oracle_of "$s" >"$TEST_TMP/$s.oracle" || fail "$1: the oracle query on $s"; done
    check_docs "$1" "$alias" "${SRC[@]}"
}
caught_up() {
    local s f p secs="$1"
    shift
    for s in "$@"; do
        read -r f p <<<"$(extra_binlog_pos "$s")"
        wait_until "$secs" "the checkpoint of $s at or past $f:$p" checkpoint_reached "$meta" "$s" "$f" "$p"
    done
}

declare -A DPID LOGAT
_multi_kill_daemons() {
    local s
    for s in "${!DPID[@]}"; do
        [ -n "${DPID[$s]}" ] && kill -9 "${DPID[$s]}" 2>/dev/null
    done
    return 0
}
on_exit _multi_kill_daemons
dstart() {
    LOGAT[$1]="$(stat -c %s "$TEST_TMP/$1.log" 2>/dev/null || echo 0)"
    "$SEARCHSYNC_BIN" run --config "$TEST_TMP/$1.ini" >>"$TEST_TMP/$1.log" 2>&1 &
    DPID[$1]=$!
}
dlog() { tail -c +$((${LOGAT[$1]} + 1)) "$TEST_TMP/$1.log"; }
dwait_log() {
    local i
    for ((i = 0; i < ${3:-60} * 5; i++)); do
        dlog "$1" | grep -qF -- "$2" && return 0
        kill -0 "${DPID[$1]}" 2>/dev/null || fail "the daemon $1 exited before it logged \"$2\": $(tail -15 "$TEST_TMP/$1.log")"
        sleep 0.2
    done
    fail "timed out waiting for the daemon $1 to log \"$2\": $(tail -15 "$TEST_TMP/$1.log")"
}
dkill() { kill -9 "${DPID[$1]}"; wait "${DPID[$1]}" 2>/dev/null || true; DPID[$1]=""; }
dstop() { kill -TERM "${DPID[$1]}"; wait "${DPID[$1]}" 2>/dev/null || true; DPID[$1]=""; }
version() { mysql_q "SELECT current_version FROM \`$meta\`.index_configs WHERE alias = '$alias'"; }
version_is() { [ "$(version)" = "$1" ]; }
building() { mysql_q "SELECT building_version FROM \`$meta\`.index_configs WHERE alias = '$alias'"; }
