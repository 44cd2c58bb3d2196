# tests/integration/cluster_lib.sh — sourced by the tests of reindex jobs
# spread over ZooKeeper nodes (t_cluster_rebalance.sh, long_cluster.sh; and
# t_cluster_delayed.sh, which uses cluster_config only): one
# flat table `$db.items (id, name, n)` of $rows rows behind alias $alias,
# reindexed by several daemons of one source ($source) in cluster $cluster,
# with metadata schema $meta, writing to the engine at $engine_url (a delay
# proxy in front of the suite's engine). The caller sets those variables.
# The server is the suite's MariaDB or, after lib.sh's use_mysql8, MySQL 8.

# cluster_items — the table and its rows
cluster_items() {
    local from="\`$db\`.seq_1_to_$rows" pre="" # (MariaDB's sequence engine; MySQL has none)
    case "$(mysql_q 'SELECT VERSION()')" in
        *MariaDB*) ;;
        *) pre="SET SESSION cte_max_recursion_depth = $((rows + 1));"
           from="(WITH RECURSIVE s (seq) AS (SELECT 1 UNION ALL SELECT seq + 1 FROM s WHERE seq < $rows) SELECT seq FROM s) s" ;;
    esac
    mysql_q "CREATE DATABASE \`$db\`; CREATE TABLE \`$db\`.items (id INT PRIMARY KEY, name VARCHAR(40), n INT);
      $pre INSERT INTO \`$db\`.items SELECT seq, CONCAT('row ', seq), seq * 7 FROM $from"
}

# cluster_proxy FLAG [NAME] — the engine behind a proxy that holds each bulk
# request to a version of $alias $CLUSTER_DELAY_MS ms (default 250) while FLAG
# exists; sets engine_url. NAME (default proxy): another proxy beside the
# first, for nodes given another delay.
cluster_proxy() {
    local p="$TEST_TMP/${2:-proxy}"
    python3 "$SEARCHSYNC_SRCDIR/tests/tools/fault_proxy.py" "$p.port" "$SEARCH_URL" \
        POST '/_bulk' "$1" delay "${CLUSTER_DELAY_MS:-250}" "\"_index\":\"${alias}_v[0-9]+\"" \
        2>"$p.err" &
    on_exit "kill $! 2>/dev/null"
    wait_until 10 "the fault proxy listens" test -s "$p.port"
    engine_url="http://127.0.0.1:$(cat "$p.port")"
}

# cluster_config FILE NODE_ID SERVER_ID BUCKETS PAGE_SIZE SESSION_MS — a node's configuration
cluster_config() {
    cat >"$1" <<INI
[source]
name = $source
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $3
start = now
heartbeat_ms = 300
[metadata]
database = $meta
[search]
urls = $engine_url
[delivery]
flush_interval_ms = 20
checkpoint_interval_ms = 100
[reindex]
buckets = $4
parallel_jobs = 2
page_size = $5
[cluster]
zookeeper = $ZK_HOSTS
name = $cluster
node_id = $2
session_timeout_ms = $6
[log]
level = info
INI
}

# cluster_import CONFIG — the mapping of $alias
cluster_import() {
    cat >"$TEST_TMP/m.json" <<JSON
{"version": 1, "indices": [{"alias": "$alias", "shards": 2, "replicas": 0, "tables": [{
  "table": "$db.items", "columns": [{"name": "id", "type": "long", "key": true},
  {"name": "name", "type": "keyword"}, {"name": "n", "type": "long"}]}]}]}
JSON
    "$SEARCHSYNC_BIN" mapping import --config "$1" "$TEST_TMP/m.json" --yes >"$TEST_TMP/import.out" 2>&1 ||
        fail "import: $(cat "$TEST_TMP/import.out")"
}

current() { mysql_q "SELECT current_version FROM \`$meta\`.index_configs WHERE alias = '$alias'"; }
is_current() { [ "$(current)" = "$1" ]; }

# run_jobs VERSION — bucket, owner, rows read, broken by a rebalance, status
# of each job of that run (reindex_run_jobs)
run_jobs() {
    mysql_q "SELECT j.bucket, j.owner_node, j.rows_read, j.broken_by_rebalance, j.status
       FROM \`$meta\`.reindex_run_jobs j JOIN \`$meta\`.reindex_runs r ON r.id = j.run_id
       JOIN \`$meta\`.index_configs c ON c.id = r.index_id
       WHERE c.alias = '$alias' AND r.version = $1 ORDER BY j.bucket"
}

# oracle_equal WHAT — every document behind $alias equals its row (a scroll
# of the whole index against SQL)
oracle_equal() {
    search_refresh "$alias"
    local want have
    want="$(mysql_q "SELECT id, name, n FROM \`$db\`.items ORDER BY id" | md5sum)"
    have="$(python3 - "$SEARCH_URL" "$alias" <<'PY' | md5sum
import json, sys, urllib.request
url, alias = sys.argv[1], sys.argv[2]
def post(path, body):
    req = urllib.request.Request(url + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req))
r = post(f"/{alias}/_search?scroll=1m", {"size": 5000, "sort": [{"id": "asc"}]})
while r["hits"]["hits"]:
    for h in r["hits"]["hits"]:
        s = h["_source"]
        print(f"{s['id']}\t{s['name']}\t{s['n']}")
    r = post("/_search/scroll", {"scroll": "1m", "scroll_id": r["_scroll_id"]})
PY
)"
    assert_eq "$want" "$have" "$1: every document equals SQL"
}
