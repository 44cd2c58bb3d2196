#!/usr/bin/env bash
# tests/integration/t_metrics.sh — /metrics of `searchsync run`,
# against real MariaDB + OpenSearch.
#
#   format   the page parses with Prometheus' own text parser (Debian's
#            python3-prometheus-client), and every name docs/metrics.md
#            lists is on it, with HELP and TYPE lines, every sample
#            labelled source="[source] name"
#   values   after rows are synced: the reader reads, transactions and rows
#            counted, the engine's acknowledgements counted, nothing behind
#            (lag bytes and seconds 0, checkpoint age 0); while bulk
#            requests are held by a proxy in front of the engine and the
#            reader is blocked at a tiny high-water mark: lag bytes > 0, lag
#            seconds >= 2, the reader blocked, the checkpoint age >= 2 s;
#            after the proxy lets go, everything back to 0
#   parts    the metadata's figures: change snapshots by every status, the
#            dead letters of an index, the reindex history
. "$(dirname "$0")/lib.sh"
require_bin
PY=""
for p in /usr/bin/python3 python3; do
    if "$p" -c 'import prometheus_client' 2>/dev/null; then PY="$p"; break; fi
done
[ -n "$PY" ] || fail "python3's prometheus_client is needed (apt-get install python3-prometheus-client)"
db="$(unique_name mt)"
meta="$(unique_name meta)"
alias="$(unique_name mt)"
flag="$TEST_TMP/hold"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
mysql_q "CREATE DATABASE \`$db\`; CREATE TABLE \`$db\`.t (id INT PRIMARY KEY, v VARCHAR(20));
  INSERT INTO \`$db\`.t VALUES (1, 'a'), (2, 'b')"

# the proxy holds bulk requests to the alias's version while $flag exists
"$PY" "$SEARCHSYNC_SRCDIR/tests/tools/fault_proxy.py" "$TEST_TMP/proxy.port" "$SEARCH_URL" \
    POST '/_bulk' "$flag" hold "\"_index\":\"${alias}" 2>"$TEST_TMP/proxy.err" &
proxy=$!
on_exit "kill $proxy 2>/dev/null"
wait_until 10 "the fault proxy listens" test -s "$TEST_TMP/proxy.port"

PORT="$(free_port)"
TOKEN=0123456789abcdef0123456789abcdef
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = mt
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $((7400 + $$ % 50))
start = now
[metadata]
database = $meta
[search]
urls = http://127.0.0.1:$(cat "$TEST_TMP/proxy.port")
[delivery]
checkpoint_interval_ms = 100
idle_checkpoint_interval_ms = 200
flush_interval_ms = 20
batch_max = 2
high_watermark = 2
[admin]
listen = 127.0.0.1:$PORT
token = $TOKEN
INI
import_one_table "$alias" "$db.t"

scrape() { # -> $TEST_TMP/m.txt
    curl -s -f -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/metrics" >"$TEST_TMP/m.txt"
}
# the value of one sample: NAME [LABEL=VALUE ...]; parsed by prometheus_client
value() {
    "$PY" - "$TEST_TMP/m.txt" "$@" <<'PY'
import sys
from prometheus_client.parser import text_string_to_metric_families
want, labels = sys.argv[2], dict(a.split("=", 1) for a in sys.argv[3:])
for fam in text_string_to_metric_families(open(sys.argv[1]).read()):
    for s in fam.samples:
        if s.name == want and all(s.labels.get(k) == v for k, v in labels.items()):
            print(repr(s.value) if s.value != int(s.value) else int(s.value))
            sys.exit(0)
print("absent")
PY
}
at_least() { # NAME MIN [LABELS...] : scrape and compare
    _LIB_ASSERTS=$((_LIB_ASSERTS + 1))
    local name=$1 min=$2
    shift 2
    scrape || return 1
    local v
    v="$(value "$name" "$@")"
    [ "$v" != absent ] && "$PY" -c "import sys; sys.exit(0 if float('$v') >= $min else 1)"
}
equals() { # NAME WANT [LABELS...]
    local name=$1 want=$2
    shift 2
    scrape || return 1
    [ "$(value "$name" "$@")" = "$want" ]
}

daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
daemon_wait_log "$alias: live changes no longer written to ${alias}_v1" 60
mysql_q "INSERT INTO \`$db\`.t VALUES (3, 'c'); UPDATE \`$db\`.t SET v = 'bb' WHERE id = 2"
wait_checkpoint "$meta" mt 30

# a consistency check leaves its figures
"$SEARCHSYNC_BIN" check --config "$TEST_TMP/c.ini" "$alias" >"$TEST_TMP/check.out" 2>&1 ||
    fail "check: $(cat "$TEST_TMP/check.out")"
# (a delayed run that finds nothing to claim keeps no row: one is written
# as a finished run would leave it)
mysql_q "INSERT INTO \`$meta\`.delayed_runs (source, status, snapshots, ids, docs_written, docs_deleted,
  errors, finished_at) VALUES ('mt', 'done', 3, 5, 4, 1, 0, NOW(3))"

# ---- format: every sample parses, every documented name is there
wait_until 20 "the reader is at the binlog's end" equals searchsync_binlog_lag_bytes 0 source=mt ||
    fail "lag bytes: $(grep '^searchsync_binlog_lag' "$TEST_TMP/m.txt")"
"$PY" - "$TEST_TMP/m.txt" "$SEARCHSYNC_SRCDIR/docs/metrics.md" >"$TEST_TMP/names.out" 2>&1 <<'PY' ||
import re, sys
from prometheus_client.parser import text_string_to_metric_families
text = open(sys.argv[1]).read()
fams = list(text_string_to_metric_families(text))   # raises on anything malformed
names = set()
for f in fams:
    names.add(f.name)
    for s in f.samples:
        names.add(s.name)
# every family has HELP and TYPE lines
helped = set(re.findall(r"^# HELP (\S+) ", text, re.M))
typed = set(re.findall(r"^# TYPE (\S+) ", text, re.M))
bad = sorted(f.name for f in fams if f.name not in helped and f.name + "_total" not in helped)
bad += sorted(f.name for f in fams if f.name not in typed and f.name + "_total" not in typed)
doc = set(re.findall(r"^\| `(searchsync_[a-z_]+)` \|", open(sys.argv[2]).read(), re.M))
later = set()
# families of counters are named without _total by the parser
missing = sorted(n for n in doc - later
                 if n not in names and n.removesuffix("_total") not in names)
undocumented = sorted(n for n in {f.name for f in fams}
                      if n not in doc and n + "_total" not in doc
                      and not re.sub(r"_(window|min|max|mean)$", "", n) in doc
                      and re.sub(r"_window$", "_total", n) not in doc)
# every sample names its source (several sources are several processes)
unlabelled = sorted({s.name for f in fams for s in f.samples if s.labels.get("source") != "mt"})
print("families", len(fams), "documented", len(doc))
if bad: print("no HELP/TYPE:", bad)
if unlabelled: print("samples without source=\"mt\":", unlabelled)
if missing: print("documented but absent:", missing)
if undocumented: print("served but not in docs/metrics.md:", undocumented)
sys.exit(1 if bad or missing or undocumented or unlabelled else 0)
PY
    fail "metrics page vs docs/metrics.md: $(cat "$TEST_TMP/names.out")"
log "$(cat "$TEST_TMP/names.out")"
log "the page parses with prometheus_client; every documented name is served, with HELP and TYPE, every sample labelled with its source"

# ---- values while in step
assert_eq "$(value searchsync_reader_reading source=mt)" 1 "the reader reads"
at_least searchsync_binlog_transactions_total 1 source=mt || fail "no transaction counted"
at_least searchsync_binlog_rows_total 2 source=mt || fail "rows: $(value searchsync_binlog_rows_total source=mt)"
at_least searchsync_delivery_index_docs_total 2 || fail "acknowledged: $(value searchsync_delivery_index_docs_total)"
assert_eq "$(value searchsync_binlog_lag_seconds source=mt)" 0 "lag seconds 0 at the end"
wait_until 10 "the checkpoint age is 0" equals searchsync_delivery_checkpoint_age_seconds 0 ||
    fail "checkpoint age: $(value searchsync_delivery_checkpoint_age_seconds)"
# the metadata lives on the source here: the checkpoint's own last save
# (one small transaction) lies between it and the binlog's end
at_most() { # NAME MAX [LABELS...]
    _LIB_ASSERTS=$((_LIB_ASSERTS + 1))
    local name=$1 max=$2
    shift 2
    scrape || return 1
    local v
    v="$(value "$name" "$@")"
    [ "$v" != absent ] && "$PY" -c "import sys; sys.exit(0 if 0 <= float('$v') <= $max else 1)"
}
wait_until 10 "the checkpoint lag is at most one save" at_most searchsync_checkpoint_lag_bytes 1000 source=mt ||
    fail "checkpoint lag: $(value searchsync_checkpoint_lag_bytes source=mt)"
log "checkpoint lag when caught up: $(value searchsync_checkpoint_lag_bytes source=mt) bytes"
for s in init running error done; do
    assert_eq "$(value searchsync_change_snapshots status=$s)" 0 "change snapshots ($s): 0"
done
assert_eq "$(value searchsync_reindex_runs index="$alias" status=done)" 1 "one reindex in the history"
assert_eq "$(value searchsync_reindex_runs_documents_written index="$alias" status=done)" 2 "the first build wrote the 2 rows"
assert_eq "$(value searchsync_check_differences index="$alias")" 0 "the check found no difference"
at_least searchsync_check_last_time_seconds 1000000000 index="$alias" || fail "no check time"
assert_eq 1 "$(value searchsync_delayed_run_last source=mt status=done)" "the last delayed run is done"
assert_eq 4 "$(value searchsync_delayed_run_documents_written source=mt)" "the last delayed run's documents"
assert_eq 1 "$(value searchsync_delayed_run_documents_deleted source=mt)" "the last delayed run's deletes"
at_least searchsync_delayed_run_end_time_seconds 1000000000 source=mt || fail "no delayed run end"
assert_eq "$(value searchsync_delivery_engine_up)" 1 "the engine is up"
assert_eq "$(value searchsync_scrape_part_up part=metadata)" 1 "the metadata was read"
assert_eq "$(value searchsync_scrape_part_up part=source)" 1 "the source was read"

# ---- behind: bulk requests held, the reader blocked at high_watermark = 2
touch "$flag"
for i in $(seq 10 29); do echo "INSERT INTO \`$db\`.t VALUES ($i, 'x$i');"; done | mysql_file /dev/stdin
wait_until 20 "the reader is blocked at the high-water mark" at_least searchsync_delivery_producer_blocked_now 1 ||
    fail "not blocked: $(grep -E '^searchsync_delivery_(queue|inflight|producer)' "$TEST_TMP/m.txt")"
sleep 2.5 # the lag and the checkpoint's age grow while nothing moves
scrape
at_least searchsync_binlog_lag_bytes 1 source=mt || fail "lag bytes while blocked: $(value searchsync_binlog_lag_bytes source=mt)"
at_least searchsync_binlog_lag_seconds 2 source=mt || fail "lag seconds while blocked: $(value searchsync_binlog_lag_seconds source=mt)"
at_least searchsync_delivery_checkpoint_age_seconds 2 || fail "checkpoint age while blocked: $(value searchsync_delivery_checkpoint_age_seconds)"
at_least searchsync_checkpoint_lag_bytes 1001 source=mt || fail "checkpoint lag while blocked: $(value searchsync_checkpoint_lag_bytes source=mt)"
at_least searchsync_delivery_producer_blocked_seconds_total 2 || fail "blocked time: $(value searchsync_delivery_producer_blocked_seconds_total)"
log "held: lag bytes $(value searchsync_binlog_lag_bytes source=mt), lag $(value searchsync_binlog_lag_seconds source=mt) s, checkpoint age $(value searchsync_delivery_checkpoint_age_seconds) s"
rm -f "$flag"
wait_until 30 "caught up again: lag bytes 0" equals searchsync_binlog_lag_bytes 0 source=mt ||
    fail "lag bytes after: $(value searchsync_binlog_lag_bytes source=mt)"
wait_until 10 "caught up again: lag seconds 0" equals searchsync_binlog_lag_seconds 0 source=mt ||
    fail "lag seconds after: $(value searchsync_binlog_lag_seconds source=mt)"
wait_until 10 "caught up again: checkpoint age 0" equals searchsync_delivery_checkpoint_age_seconds 0 ||
    fail "checkpoint age after: $(value searchsync_delivery_checkpoint_age_seconds)"
assert_eq "$(value searchsync_delivery_producer_blocked_now)" 0 "nobody blocked"
search_refresh "$alias"
assert_eq "$(search_count "$alias")" "$(mysql_q "SELECT COUNT(*) FROM \`$db\`.t")" "every row is a document"

# ---- metadata figures: dead letters, snapshots by status
mysql_q "INSERT INTO \`$meta\`.dead_letters (source, index_name, doc_id, version, op, error)
  VALUES ('mt', '$alias', '1', 1, 'index', 'test'), ('mt', '$alias', '2', 1, 'index', 'test');
  INSERT INTO \`$meta\`.change_snapshots (source, db_name, table_name, operation, business_id, status, attach_date)
  VALUES ('mt', 'd', 't', 'update', '1', 'init', CURDATE()), ('mt', 'd', 't', 'update', '2', 'error', CURDATE())"
scrape
assert_eq "$(value searchsync_dead_letters index="$alias")" 2 "dead letters of the index"
assert_eq "$(value searchsync_change_snapshots status=init)" 1 "an init snapshot"
assert_eq "$(value searchsync_change_snapshots status=error)" 1 "an error snapshot"
daemon_stop
pass "t_metrics"
