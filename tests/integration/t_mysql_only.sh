#!/usr/bin/env bash
# tests/integration/t_mysql_only.sh — a MySQL shop with nothing else: Oracle's
# MySQL 8.0 (tests/harness/mysql8.sh) is both the source and the metadata
# server, searchsync connects as the README's own user (created by the
# README's own SQL, so with MySQL 8's default caching_sha2_password, and
# exactly its grants; `config check` first names the one MySQL needs beyond
# MariaDB's, XA_RECOVER_ADMIN, until the README's MySQL line grants it) and
# the suite's OpenSearch is the engine.
#   1. the metadata schema: `migrate` from an empty database, and as an
#      upgrade from each earlier schema version (the migrations up to it
#      applied as they were, then `migrate`): every result has the tables,
#      columns and keys of the schema migrated from empty (each earlier
#      version under make check-long, three of them otherwise); then
#      `searchsync tail` of partial JSON updates (PARTIAL_UPDATE_ROWS)
#      against the server's SELECT
#   2. `config check`, `mapping import`, `run`: items with a store object
#      (stores: a delay-effect table), nested parts kept by area updates,
#      notes as child documents; a second index with an expiry column and a
#      column the engine refuses for some rows (dead letters). The first
#      build and changes against an SQL oracle computed by MySQL; `status`
#   3. the delayed run: store renames are change snapshots until
#      `delayed-run`, then every document embeds the new names
#   4. dead letters: a refused row lands in dead_letters (listed), a later
#      good write of it supersedes it; TTL: a document goes at its expiry
#   5. `check` finds documents changed behind searchsync's back (exit 3),
#      `--repair` puts them back; the scheduled check runs inside the daemon
#   6. `reindex` while three writers change items, parts and notes, each
#      commit held 100 ms between its binlog write and its commit in InnoDB
#      (binlog_group_commit_sync_delay) and each live transaction built on
#      its own (group_transactions = 1: its own version): after the switch
#      every document equals the oracle (pages versioned by a binlog end
#      read while such commits were pending missed them and won over their
#      live writes: 1 to 2 documents wrong in 5 runs of 6). MySQL reports no
#      snapshot position: said once per build, not once per worker
#   7. SIGTERM, changes while down, a restart over plain TCP (TLS until
#      then) with the password out of MySQL's cache: the oracle again
# Exit 77 (skip; a failure under CI=true) when this machine cannot run the
# MySQL jar (tests/harness/mysql8.sh exits 3). Knobs: MYSQL_ONLY_ITEMS (1500),
# MYSQL_ONLY_SYNC_DELAY_US (100000: the commits held in 6), SEARCHSYNC_SEED
# (the writers' seeds and the upgrade picked, printed).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
require_bin

use_mysql8 # lib.sh's mysql_q & co. now talk to MySQL 8
assert_eq "$MYSQL_VERSION" "$(mysql_q 'SELECT VERSION()')" "the server is MySQL $MYSQL_VERSION"
t_start=$(date +%s)
ss() { "$SEARCHSYNC_BIN" "$@"; }

# ------------------------------------------------------------ 1. migrations
newest=$(ls "$SEARCHSYNC_SRCDIR"/sql/migrations/*.sql | sed 's|.*/||; s|_.*||' | sort -n | tail -1 | sed 's/^0*//')
mig_ini() { # DB — a configuration whose metadata schema is DB (root: the test's own)
    printf '[source]\nhost = 127.0.0.1\nport = %s\nuser = root\n[metadata]\ndatabase = %s\n' "$MYSQL_PORT" "$1"
}
schema_of() { # DB — its tables, columns and keys, as MySQL describes them
    mysql_q "SELECT table_name, column_name, ordinal_position, column_type, is_nullable,
               COALESCE(column_default, 'NULL'), extra, collation_name
             FROM information_schema.columns WHERE table_schema = '$1' ORDER BY 1, 3;
             SELECT table_name, index_name, seq_in_index, column_name, non_unique
             FROM information_schema.statistics WHERE table_schema = '$1' ORDER BY 1, 2, 3"
}
mig_ini ss_mig_empty >"$TEST_TMP/mig.ini"
ss migrate --config "$TEST_TMP/mig.ini" >"$TEST_TMP/mig.out" 2>&1 || fail "migrate from empty: $(cat "$TEST_TMP/mig.out")"
assert_eq "$newest" "$(mysql_q 'SELECT COUNT(*) FROM ss_mig_empty.schema_migrations')" "every migration applied from empty"
schema_of ss_mig_empty >"$TEST_TMP/schema.empty"
# from each earlier version under make check-long (SEARCHSYNC_LONG), else
# from 1, from the last and from one other picked by the seed (printed)
if [ -n "${SEARCHSYNC_LONG:-}" ]; then from="$(seq 1 $((newest - 1)))"
else from="$(printf '%s\n' 1 $((2 + ${SEARCHSYNC_SEED:-$RANDOM} % (newest - 3))) $((newest - 1)) | sort -un)"; fi
for k in $from; do
    d="ss_mig_from_$k"
    mysql_q "CREATE DATABASE $d CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
CREATE TABLE $d.schema_migrations (version INT NOT NULL PRIMARY KEY, name VARCHAR(200) NOT NULL,
  applied_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)) ENGINE=InnoDB"
    for f in "$SEARCHSYNC_SRCDIR"/sql/migrations/*.sql; do
        v=$(basename "$f" | sed 's/_.*//; s/^0*//')
        [ "$v" -le "$k" ] || break
        mysql_file "$f" "$d" || fail "migration $(basename "$f") as SQL on MySQL"
        n=$(basename "${f%.sql}"); n=${n#*_}
        mysql_q "INSERT INTO schema_migrations (version, name) VALUES ($v, '$n')" "$d"
    done
    mig_ini "$d" >"$TEST_TMP/mig.ini"
    ss migrate --config "$TEST_TMP/mig.ini" >"$TEST_TMP/mig.out" 2>&1 ||
        fail "migrate from schema version $k: $(cat "$TEST_TMP/mig.out")"
    assert_eq "$(cat "$TEST_TMP/schema.empty")" "$(schema_of "$d")" "schema upgraded from version $k = schema migrated from empty"
    mysql_q "DROP DATABASE $d"
done
log "migrations: from empty and from version(s) $(echo $from) ($(($(date +%s) - t_start)) s)"

# partial JSON updates: MySQL 8.0.3+ writes PARTIAL_UPDATE_ROWS events under
# binlog_row_value_options = PARTIAL_JSON (the change as JSON diffs, not the
# whole value); `searchsync tail` applies them to the before image
mysql_q "CREATE DATABASE pj; CREATE TABLE pj.j (id INT PRIMARY KEY, doc JSON, note VARCHAR(10));
INSERT INTO pj.j VALUES (1, '{\"a\": 1, \"b\": \"xyz\", \"c\": [1, 2]}', 'n')"
read -r pf pp <<<"$(mysql_binlog_pos)"
mysql_q "SET SESSION binlog_row_value_options = 'PARTIAL_JSON';
UPDATE pj.j SET doc = JSON_SET(doc, '\$.a', 2, '\$.d', 'new'), note = 'm' WHERE id = 1;
UPDATE pj.j SET doc = JSON_REMOVE(doc, '\$.b') WHERE id = 1;
UPDATE pj.j SET doc = JSON_REPLACE(doc, '\$.c[1]', 'a longer string than before') WHERE id = 1"
assert_eq 3 "$(mysql_q "SHOW BINLOG EVENTS IN '$pf' FROM $pp" | cut -f3 | grep -c '^Update_rows_partial$' || true)" \
    "the server wrote three partial JSON updates"
timeout 30 "$SEARCHSYNC_BIN" tail --source "mysql://root:@127.0.0.1:$MYSQL_PORT" --file "$pf" --pos "$pp" \
    --stop-at-end --tables pj.j >"$TEST_TMP/pj.out" 2>"$TEST_TMP/pj.err" || fail "tail: $(cat "$TEST_TMP/pj.err")"
assert_eq 3 "$(grep -c '"type":"update"' "$TEST_TMP/pj.out" || true)" "tail: three updates"
assert_json_eq "$(mysql_q 'SELECT doc FROM pj.j')" "$(tail -1 "$TEST_TMP/pj.out" | jq -c .after.doc)" \
    "tail: the partial updates applied equal the server's SELECT"
assert_eq m "$(tail -1 "$TEST_TMP/pj.out" | jq -r .after.note)" "tail: the other columns of a partial update's row"
mysql_q "DROP DATABASE pj"

# ------------------------------------------------------------ 2. the README's user, run
db=shop
meta=searchsync
user=ssreadme
pw="Pw-$RANDOM-$$"
readme_sql sql "$user" "$pw" # the user and the grants of both servers; MySQL's own after config check
grep -q "CREATE USER '$user'" "$TEST_TMP/sql.sql" || fail "README.md: no CREATE USER in its own-db:sql block"
assert_eq caching_sha2_password "$(mysql_q "SELECT plugin FROM mysql.user WHERE user = '$user'")" \
    "the README's user has MySQL 8's default authentication"

rows=${MYSQL_ONLY_ITEMS:-1500}
mysql_q "CREATE DATABASE $db"
mysql_q "SET SESSION cte_max_recursion_depth = 1000000;
CREATE TABLE stores (id INT PRIMARY KEY, name VARCHAR(50) NOT NULL, city VARCHAR(50) NULL);
CREATE TABLE items (id BIGINT PRIMARY KEY, store_id INT NULL, name VARCHAR(100) NOT NULL,
  qty INT NULL, price DECIMAL(10,2) NULL, created_at DATETIME(3) NOT NULL);
CREATE TABLE item_parts (id BIGINT PRIMARY KEY, item_id BIGINT NOT NULL, label VARCHAR(50) NOT NULL, n INT NOT NULL,
  KEY (item_id));
CREATE TABLE notes (id BIGINT PRIMARY KEY, item_id BIGINT NOT NULL, body VARCHAR(200) NOT NULL, KEY (item_id));
CREATE TABLE misc (id INT PRIMARY KEY, n TEXT NOT NULL, expires_at DATETIME(3) NULL, KEY (expires_at));
INSERT INTO stores VALUES (1, 'north', 'Oslo'), (2, 'south', NULL), (3, 'east', 'Riga'), (4, 'west', 'Lima');
INSERT INTO items WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < $rows)
  SELECT n, IF(n % 9 = 0, NULL, 1 + n % 4), CONCAT('item ', n, ' é'), IF(n % 5 = 0, NULL, n * 3),
  IF(n % 7 = 0, NULL, n * 1.25), TIMESTAMP('2024-01-31 12:00:00.125') + INTERVAL n MINUTE FROM s;
INSERT INTO item_parts WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < $((rows * 2)))
  SELECT n, 1 + n % $rows, CONCAT('part-', n), n FROM s;
INSERT INTO notes WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < $((rows / 2)))
  SELECT n, 1 + (n * 7) % $rows, CONCAT('note ', n) FROM s;
INSERT INTO misc VALUES (1, '12', NULL), (2, '40', NULL);" "$db"

cat >"$TEST_TMP/mapping.json" <<JSON
{"version": 1, "indices": [
 {"alias": "items", "shards": 1, "replicas": 0, "history_retention": 1, "tables": [
  {"table": "$db.items", "join_name": "item", "bucket_column": "id",
   "columns": [{"name": "id", "type": "long", "key": true}, {"name": "store_id", "type": "long", "extend_name": "store"},
               {"name": "name", "type": "text", "keyword": true}, {"name": "qty", "type": "integer"},
               {"name": "price", "type": "keyword"}, {"name": "created_at", "type": "date"}],
   "relations": [
     {"column": "store_id", "table": "$db.stores", "join_column": "id",
      "columns": [{"name": "id", "type": "long"}, {"name": "name", "type": "keyword"}, {"name": "city", "type": "text"}]},
     {"column": "id", "table": "$db.item_parts", "join_column": "item_id", "extend_name": "parts", "nested": true,
      "area_update": true,
      "columns": [{"name": "id", "type": "long", "key": true}, {"name": "label", "type": "keyword"},
                  {"name": "n", "type": "integer"}]}]},
  {"table": "$db.notes", "join_name": "note", "parent": "$db.items", "parent_column": "item_id",
   "columns": [{"name": "id", "type": "long", "key": true}, {"name": "item_id", "type": "long"},
               {"name": "body", "type": "text"}]},
  {"table": "$db.stores", "delay_effect": true}]},
 {"alias": "misc", "shards": 1, "replicas": 0, "history_retention": 1, "tables": [
  {"table": "$db.misc", "expiry_column": "expires_at",
   "columns": [{"name": "id", "type": "long", "key": true}, {"name": "n", "type": "keyword"},
               {"name": "expires_at", "type": "date"}]}]}]}
JSON
on_exit "curl -s -X DELETE '$SEARCH_URL/items_v*,misc_v*?ignore_unavailable=true' >/dev/null 2>&1"
# the README's configuration, with this server's address and the user's password
readme_block ini | sed "s/^host = .*/host = 127.0.0.1/; s/^port = 3306\$/port = $MYSQL_PORT/;
    s/^user = searchsync\$/user = $user/; s/^password = change-me\$/password = $pw/;
    s#^urls = .*#urls = $SEARCH_URL#" >"$TEST_TMP/c.ini"
grep -q "^database = $meta\$" "$TEST_TMP/c.ini" || fail "README config: no 'database = searchsync'"
# the test's own speeds and schedules, in the README's sections
sed -i "/^\[source\]\$/a server_id = $((7700 + $$ % 200))\nstart = now\nheartbeat_ms = 300\ngroup_transactions = 1
/^\[metadata\]\$/a reload_interval_ms = 300" "$TEST_TMP/c.ini"
cat >>"$TEST_TMP/c.ini" <<INI
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
[reindex]
buckets = 3
page_size = 100
[check]
schedule = every 3s
since = all
repair = false
INI
# config check names the grant MySQL needs beyond MariaDB's, and the GRANT
set +e
out="$(ss config check --config "$TEST_TMP/c.ini" 2>&1)"; crc=$?
set -e
assert_eq 2 "$crc" "config check: a user without XA_RECOVER_ADMIN on MySQL exits 2 ($out)"
assert_contains "$out" "GRANT XA_RECOVER_ADMIN ON *.* TO '$user'@'%'" "config check names the missing grant"
readme_sql sql-mysql "$user" "$pw"
out="$(ss config check --config "$TEST_TMP/c.ini" 2>&1)" || fail "config check with the README's grants: $out"
assert_eq "$TEST_TMP/c.ini: ok" "$out" "config check: the README's grants are all MySQL needs"
ss mapping import --config "$TEST_TMP/c.ini" --yes "$TEST_TMP/mapping.json" >"$TEST_TMP/import.out" 2>&1 ||
    fail "mapping import as the README's user: $(cat "$TEST_TMP/import.out")"
assert_eq "$newest" "$(mysql_q "SELECT COUNT(*) FROM $meta.schema_migrations")" "mapping import applied every migration"

check_docs() { oracle_check_items "$db" items "$1"; } # WHAT — the alias items equals the oracle
caught_up() { wait_checkpoint "$meta" mydb "${1:-60}"; }

daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 40 lines)"; tail -40 "$TEST_TMP/run.log"; }'
daemon_wait_log "items: live changes no longer written to items_v1" 90
daemon_wait_log "misc: live changes no longer written to misc_v1" 30
daemon_wait_ready 30
caught_up
check_docs "first build"
log "first build checked ($(($(date +%s) - t_start)) s)"

mysql_q "
INSERT INTO items VALUES ($((rows + 1)), 4, 'new item', 7, 9.99, '2024-02-29 23:59:59.999'),
  ($((rows + 2)), NULL, 'no store', NULL, NULL, '2024-03-01 00:00:00');
UPDATE items SET qty = qty + 100, price = price * 2, name = CONCAT(name, ' (changed)') WHERE id IN (1, 2, 3);
UPDATE items SET store_id = 3 WHERE id = 4;
DELETE FROM items WHERE id IN (5, 6);
INSERT INTO item_parts VALUES ($((rows * 2 + 1)), $((rows + 1)), 'part-new', 1), ($((rows * 2 + 2)), 1, 'part-1b', 2);
UPDATE item_parts SET n = n * 10, label = 'relabelled' WHERE item_id = 2;
DELETE FROM item_parts WHERE item_id = 3;
INSERT INTO notes VALUES ($((rows + 1)), $((rows + 1)), 'note on a new item'), ($((rows + 2)), 1, 'second note');
UPDATE notes SET body = 'edited' WHERE id = 2;
DELETE FROM notes WHERE id IN (3, 4);" "$db"
caught_up
check_docs "after inserts, updates, deletes"
# (status exits 3 while not caught up: the scheduled check's own saves
# move the binlog now and then)
set +e
st="$(ss status --config "$TEST_TMP/c.ini" --json 2>"$TEST_TMP/status.err")"; strc=$?
set -e
[ "$strc" = 0 ] || [ "$strc" = 3 ] || fail "status --json: exit $strc: $(cat "$TEST_TMP/status.err")"
assert_eq available "$(jq -r '.indices[] | select(.alias == "items") | .state' <<<"$st")" "status: items available"
assert_eq true "$(jq -r .source.reachable <<<"$st")" "status: the source reached as the README's user"
ss status --config "$TEST_TMP/c.ini" >"$TEST_TMP/status.out" 2>&1 || [ $? = 3 ] || fail "status: $(cat "$TEST_TMP/status.out")"
assert_contains "$(cat "$TEST_TMP/status.out")" "items" "status names the index"

# ------------------------------------------------------------ 3. delayed run
store_name() { curl -s "$SEARCH_URL/items/_doc/$1" | jq -r ._source.store.name; }
item1_store="$(mysql_q "SELECT store_id FROM items WHERE id = 1" "$db")"
mysql_q "UPDATE stores SET name = CONCAT(name, ' renamed'), city = 'Quito' WHERE id IN (1, 2)" "$db"
caught_up
assert_eq 2 "$(mysql_q "SELECT COUNT(*) FROM $meta.change_snapshots WHERE status = 'init'")" \
    "the renames are two change snapshots"
assert_ne "$(mysql_q "SELECT name FROM stores WHERE id = $item1_store" "$db")" "$(store_name 1)" \
    "no document changed before the delayed run"
out="$(ss delayed-run --config "$TEST_TMP/c.ini" 2>&1)" || fail "delayed-run: $out"
log "delayed-run: $(tail -1 <<<"$out")"
assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM $meta.change_snapshots WHERE status <> 'done'")" "every snapshot done"
assert_eq done "$(mysql_q "SELECT status FROM $meta.delayed_runs ORDER BY id DESC LIMIT 1")" "the delayed run is done"
caught_up
check_docs "after the delayed run"

# ------------------------------------------------------------ 4. dead letters, TTL
mysql_q "INSERT INTO misc VALUES (3, REPEAT('x', 40000), NULL)" "$db" # a term the engine refuses
caught_up
assert_eq 1 "$(mysql_q "SELECT COUNT(*) FROM $meta.dead_letters WHERE index_name LIKE 'misc%' AND doc_id = '3'")" \
    "the refused row is a dead letter"
list="$(ss dead-letters list --config "$TEST_TMP/c.ini" --index misc 2>&1)" || fail "dead-letters list: $list"
assert_contains "$list" "immense term" "dead-letters list shows the engine's error"
mysql_q "UPDATE misc SET n = '33' WHERE id = 3" "$db"
caught_up
wait_until 20 "the good write of misc 3 supersedes its dead letter" bash -c \
    "[ \"\$(mariadb --no-defaults -h 127.0.0.1 -P $MYSQL_PORT -u root -N -B -e \"SELECT COUNT(*) FROM $meta.dead_letters\")\" = 0 ]"
assert_eq 33 "$(curl -s "$SEARCH_URL/misc/_doc/3" | jq -r ._source.n)" "misc 3 indexed after its fix"
mysql_q "INSERT INTO misc VALUES (4, '4', UTC_TIMESTAMP(3) + INTERVAL 2 SECOND)" "$db"
wait_until 10 "misc 4 indexed" bash -c "[ \"\$(curl -s '$SEARCH_URL/misc/_doc/4' | jq -r .found)\" = true ]"
wait_until 10 "misc 4 gone at its expiry" bash -c "[ \"\$(curl -s '$SEARCH_URL/misc/_doc/4' | jq -r .found)\" = false ]"
assert_eq true "$(curl -s "$SEARCH_URL/misc/_doc/1" | jq -r .found)" "a row without expiry keeps its document"

# ------------------------------------------------------------ 5. check, repair
wait_until 30 "the scheduled check ran" bash -c \
    "[ \"\$(mariadb --no-defaults -h 127.0.0.1 -P $MYSQL_PORT -u root -N -B -e \"SELECT COUNT(*) FROM $meta.check_runs\")\" -gt 0 ]"
out="$(ss check --config "$TEST_TMP/c.ini" items 2>&1)" || fail "check of a clean index: $out"
phys="$(curl -s "$SEARCH_URL/_alias/items" | jq -r 'keys[0]')"
search_delete "/$phys/_doc/10?refresh=true" >/dev/null
search_post "/$phys/_update/11?refresh=true" '{"doc": {"name": "changed behind its back"}}' >/dev/null
set +e # (--deep: a partial update keeps the document's ss_hash)
out="$(ss check --config "$TEST_TMP/c.ini" items --deep --json 2>"$TEST_TMP/check.err")"; crc=$?
set -e
assert_eq 3 "$crc" "check finds the drift: exit 3 ($(cat "$TEST_TMP/check.err"))"
assert_eq 10 "$(jq -r '.missing | join(",")' <<<"$out")" "check: document 10 missing"
assert_eq 11:name "$(jq -r '[.different[] | "\(.id):\(.path)"] | join(",")' <<<"$out")" "check: document 11's name differs"
out="$(ss check --config "$TEST_TMP/c.ini" items --deep --repair 2>&1)" || fail "check --repair: $out"
out="$(ss check --config "$TEST_TMP/c.ini" items --deep 2>&1)" || fail "check after the repair: $out"
caught_up
check_docs "after check --repair"

# ------------------------------------------------------------ 6. reindex under writes
writer() { # SEED N BASE — up to N transactions on items, parts and notes, a
    # few ms apart (new part and note ids from BASE), until $TEST_TMP/stop is there
    awk -v seed="$1" -v n="$2" -v rows="$rows" -v base="$3" -v stop="$TEST_TMP/stop" 'BEGIN { srand(seed)
        for (i = 0; i < n; i++) {
            if ((getline line < stop) >= 0) exit
            close(stop)
            id = 1 + int(rand() * rows); k = int(rand() * 8)
            if (k == 0) printf "UPDATE items SET qty = COALESCE(qty, 0) + 1, name = CONCAT(\"w%d \", id) WHERE id = %d;\n", i, id
            else if (k == 1) printf "DELETE FROM items WHERE id = %d;\n", id
            else if (k == 2) printf "REPLACE INTO items VALUES (%d, %d, \"back %d\", %d, 1.5, NOW(3));\n", id, 1 + i % 4, i, i
            else if (k == 3) printf "UPDATE items SET store_id = %d WHERE id = %d;\n", 1 + i % 4, id
            else if (k == 4) printf "INSERT INTO item_parts VALUES (%d, %d, \"w-%d\", %d);\n", base + i, id, i, i
            else if (k == 5) printf "UPDATE item_parts SET n = n + 1, label = \"w%d\" WHERE item_id = %d;\n", i, id
            else if (k == 6) printf "DELETE FROM item_parts WHERE item_id = %d;\n", id
            else printf "BEGIN; UPDATE notes SET body = \"w%d\" WHERE item_id = %d; INSERT INTO notes VALUES (%d, %d, \"wn\"); COMMIT;\n", i, id, base + i, id
            fflush(); system("sleep 0.02") # (paced here: nothing waits in the pipe at the stop)
        } }' | mariadb --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -u root --default-character-set=utf8mb4 \
            --force "$db" 2>"$TEST_TMP/writer-$1.err" || true
    # three writers on the same rows: InnoDB may pick one as a deadlock's
    # victim (1213) and roll its transaction back, which only changes what
    # the oracle reads at the end; any other error is the test's own
    ! grep -v 'ERROR 1213 (40001)\|^--------------$\|^$' "$TEST_TMP/writer-$1.err" | grep -q 'ERROR' ||
        { cat "$TEST_TMP/writer-$1.err" >&2; return 1; }
}
seed="${SEARCHSYNC_SEED:-$RANDOM}"
log "reindex under writes: writer seeds $((seed + 1))..$((seed + 3))"
# each commit held 100 ms between its binlog write and its commit in InnoDB
# (MySQL's group commit sync delay): the binlog's end then counts
# transactions a snapshot taken at once cannot see yet
mysql_q "SET GLOBAL binlog_group_commit_sync_delay = ${MYSQL_ONLY_SYNC_DELAY_US:-100000}"
on_exit "mysql_q 'SET GLOBAL binlog_group_commit_sync_delay = 0' >/dev/null 2>&1"
wpids=()
for k in 1 2 3; do
    writer "$((seed + k))" 5000 $((100000 * k)) &
    wpids+=($!)
done
on_exit "touch '$TEST_TMP/stop'"
sleep 1
out="$(ss reindex --config "$TEST_TMP/c.ini" items 2>&1)" || fail "reindex: $out"
touch "$TEST_TMP/stop" # (the writes after the switch would mend what a page missed)
log "reindex done: $(tail -1 <<<"$out")"
for p in "${wpids[@]}"; do wait "$p" || fail "a writer failed"; done
mysql_q "SET GLOBAL binlog_group_commit_sync_delay = 0"
assert_eq items_v2 "$(curl -s "$SEARCH_URL/_alias/items" | jq -r 'keys[0]')" "the alias moved to items_v2"
caught_up
check_docs "after a reindex under writes"
for b in "items v1" "misc v1" "items v2"; do # 3 buckets, 3 workers each
    assert_eq 1 "$(grep -c "\[reindex\] $b: the source does not report the binlog position" "$TEST_TMP/run.log" || true)" \
        "$b: the missing snapshot position is said once in the build (not once per worker or page)"
done

# ------------------------------------------------------------ 7. SIGTERM, changes while down, restart
tls_threads() { # WANT MSG — the README user's connections (some), WANT of them over TLS
    local n tls
    # both counts from one statement: the daemon opens and closes
    # connections as it works, and two reads could see different sets
    read -r n tls <<<"$(mysql_q "SELECT COUNT(*), COALESCE(SUM(s.variable_value <> ''), 0)
        FROM performance_schema.threads t LEFT JOIN performance_schema.status_by_thread s
        ON s.thread_id = t.thread_id AND s.variable_name = 'Ssl_cipher'
        WHERE t.processlist_user = '$user'")"
    assert_true "$2: the daemon has connections ($n)" test "$n" -gt 0
    [ "$1" = all ] && set -- "$n" "$2"
    assert_eq "$1" "$tls" "$2 ($tls of $n over TLS)"
}
tls_threads all "the daemon's connections use TLS (ssl_mode = preferred)"
daemon_stop
assert_eq 0 "$DAEMON_RC" "the daemon stopped cleanly on SIGTERM"
mysql_q "UPDATE items SET name = 'while down' WHERE id = 20; DELETE FROM item_parts WHERE item_id = 21;
DELETE FROM items WHERE id = 22; INSERT INTO notes VALUES (900001, 23, 'while down');
UPDATE stores SET city = 'Lagos' WHERE id = 3" "$db"
# the restart over plain TCP (so far TLS: [source] ssl_mode = preferred, and
# MySQL 8 offers it), its password no longer in caching_sha2_password's cache
sed -i "/^\[source\]\$/a ssl_mode = disabled" "$TEST_TMP/c.ini"
mysql_q "FLUSH PRIVILEGES"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
daemon_wait_ready 30
caught_up
tls_threads 0 "the daemon's connections are plain TCP now"
out="$(ss delayed-run --config "$TEST_TMP/c.ini" 2>&1)" || fail "delayed-run: $out"
caught_up
check_docs "after changes while down and a restart"
daemon_stop
assert_eq 0 "$DAEMON_RC" "the daemon stopped cleanly again"
log "done in $(($(date +%s) - t_start)) s"
pass
