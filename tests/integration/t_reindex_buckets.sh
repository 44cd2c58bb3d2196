#!/usr/bin/env bash
# tests/integration/t_reindex_buckets.sh — a reindex's key-range buckets hold
# about equal rows, whatever the key's spread. 2,000 small ids and three far
# beyond them (10,000,001 and up): equal-width ranges of the key used to put
# every small id into the first bucket and leave the others with 0-3 rows;
# the buckets now split at the key's quantiles. Each bucket's condition (the
# jobs' params) is counted with SQL.
. "$(dirname "$0")/lib.sh"
require_bin
db="$(unique_name bk)"
meta="$(unique_name meta)"
alias="$(unique_name bk)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
mysql_q "CREATE DATABASE \`$db\`; CREATE TABLE \`$db\`.t (id BIGINT PRIMARY KEY, v INT);
  INSERT INTO \`$db\`.t SELECT seq, seq FROM \`$db\`.seq_1_to_2000;
  INSERT INTO \`$db\`.t VALUES (10000001, 1), (10000002, 2), (10000003, 3)"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = bk
host = 127.0.0.1
port = $MYSQL_PORT
user = root
[metadata]
database = $meta
[search]
urls = $SEARCH_URL
[reindex]
buckets = 4
INI
import_one_table "$alias" "$db.t"
"$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/c.ini" "$alias" --no-wait >"$TEST_TMP/rx.out" 2>&1 ||
    fail "reindex: $(cat "$TEST_TMP/rx.out")"
total=0
for b in 0 1 2 3; do
    # params: "<table>\t<condition>\n" per document table (one here)
    cond="$(mysql_q "SELECT SUBSTRING_INDEX(SUBSTRING_INDEX(params, '\\n', 1), '\\t', -1)
                     FROM \`$meta\`.jobs WHERE bucket = $b AND type = 'index'")"
    n="$(mysql_q "SELECT COUNT(*) FROM \`$db\`.t${cond:+ WHERE $cond}")"
    log "bucket $b: $n rows (${cond:-every row})"
    assert_true "bucket $b holds about a quarter of the rows ($n of 2003)" test "$n" -ge 450 -a "$n" -le 550
    total=$((total + n))
done
assert_eq 2003 "$total" "the buckets cover every row once"
pass
