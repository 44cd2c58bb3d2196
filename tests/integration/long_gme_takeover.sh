#!/usr/bin/env bash
# tests/integration/long_gme_takeover.sh (make check-long) — moving from
# go-mysql-elasticsearch: the real tool (tests/harness/gme.sh, built from the
# Go module proxy at its repository's last commit) keeps an index of a table
# in step on Elasticsearch 7.10.2 (tests/harness/engine.sh; it speaks to 7
# and older only), with its shipped river.toml settings: its own dump of the
# table (mysqldump), then the binlog. It is stopped; rows change while
# nothing follows them; then searchsync is given a mapping whose alias is
# that index's name. What is checked (takeover_lib.sh, takeover_follow): the
# index found and said, v1 built from the source while searches of the name
# still answer, the index replaced by the alias in one step (never a 404),
# every document equal to the SQL oracle (the changes made while nothing ran
# included), and a later change followed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/takeover_lib.sh"
require_bin

# the engine: Elasticsearch 7.10.2, stopped on exit
es7_start
SEARCH_URL="$ES7_URL"

# the tool
set +e
gme="$(bash "$HARNESS/gme.sh" fetch 2>"$TEST_TMP/gme-build.log")"
grc=$?
set -e
[ "$grc" = 0 ] || { cat "$TEST_TMP/gme-build.log"; [ "$grc" = 3 ] && skip "go-mysql-elasticsearch cannot be built here (tests/harness/gme.sh fetch)"; fail "tests/harness/gme.sh fetch failed"; }

db="$(unique_name gmeto)"
meta="$(unique_name gmetometa)"
alias="$(unique_name gmeitems)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1"
TAKEOVER_ROWS=3000 takeover_db

# go-mysql-elasticsearch follows the table into the index $alias (created as
# a user would, one shard and no replica on this one-node engine)
search_req PUT "/$alias" '{"settings":{"number_of_shards":1,"number_of_replicas":0}}' >/dev/null
mkdir -p "$TEST_TMP/gme-data"
cat >"$TEST_TMP/river.toml" <<TOML
my_addr = "127.0.0.1:$MYSQL_PORT"
my_user = "root"
my_pass = ""
my_charset = "utf8"
es_addr = "${SEARCH_URL#http://}"
es_user = ""
es_pass = ""
data_dir = "$TEST_TMP/gme-data"
stat_addr = "127.0.0.1:$(free_port)"
stat_path = "/metrics"
server_id = $((7600 + $$ % 90))
flavor = "mariadb"
mysqldump = "mysqldump"
bulk_size = 128
flush_bulk_time = "200ms"
skip_no_pk_table = false

[[source]]
schema = "$db"
tables = ["items"]

[[rule]]
schema = "$db"
table = "items"
index = "$alias"
type = "_doc"
TOML
"$gme" -config "$TEST_TMP/river.toml" >"$TEST_TMP/gme.log" 2>&1 &
gmepid=$!
on_exit "kill $gmepid 2>/dev/null || true"
gme_count() { search_refresh "$alias"; search_req GET "/$alias/_count" | jq .count; }
wait_until 120 "go-mysql-elasticsearch dumped the 3,000 rows into $alias" bash -c "[ \"\$(curl -s -XPOST '$SEARCH_URL/$alias/_refresh' >/dev/null; curl -s '$SEARCH_URL/$alias/_count' | jq .count)\" = 3000 ]"
mysql_q "UPDATE \`$db\`.items SET name = 'seen by gme' WHERE id = 1"
wait_until 30 "go-mysql-elasticsearch followed an update from the binlog" bash -c "curl -s '$SEARCH_URL/$alias/_doc/1' | jq -e '._source.name == \"seen by gme\"' >/dev/null"
kill "$gmepid"
wait "$gmepid" 2>/dev/null || true

# while nothing follows the table
mysql_q "UPDATE \`$db\`.items SET name = 'changed while away', price = 99999999.99 WHERE id = 2;
  DELETE FROM \`$db\`.items WHERE id = 3;
  INSERT INTO \`$db\`.items VALUES (3001, 'new while away', 0.01, 'x')"
assert_eq 3000 "$(gme_count)" "the tool's index as it left it"
takeover_same_as_sql && fail "the tool's index already equals SQL: the takeover would prove nothing"
search_req GET "/$alias/_doc/1" | jq -c ._source >"$TEST_TMP/gme-doc1.json"
log "go-mysql-elasticsearch's document 1: $(cat "$TEST_TMP/gme-doc1.json")"

TAKEOVER_SERVER_ID=$((7700 + $$ % 90)) takeover_follow
pass
