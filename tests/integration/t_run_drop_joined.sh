#!/usr/bin/env bash
# tests/integration/t_run_drop_joined.sh — DROP TABLE + CREATE TABLE + refill
# of a table joined into an index, under a steady writer,
# against real MariaDB + OpenSearch.
#
# lib.book is the root; its genres come from lib.genre through the link table
# lib.book_genre (many-to-many, flattened). A writer changes titles, links and
# genre names, and inserts books, one transaction after another, the whole
# time. Each round drops lib.genre, creates it again and refills it (after a
# random pause: the reader and the supervisor see the DROP, the CREATE and the
# table's absence in every order), like a migration would. The index must be
# rebuilt from the new table (a DROP is taken like a TRUNCATE: the documents
# that embed the table are rebuilt once it is back), and no live change written
# meanwhile may be lost: after the writer stops and the daemon caught up, every
# document equals the SQL oracle. The first round waits while the table is
# gone: the index is stopped with a reason that says it is rebuilt once the
# table exists again (not "fix the mapping"), and `status` says so (exit 3).
#
# Knobs: DROP_ROUNDS (default 4), DROP_SEED (default: random; printed),
# DROP_WRITERS (default 3).
. "$(dirname "$0")/lib.sh"
require_bin
db="$(unique_name lib)"
meta="$(unique_name meta)"
alias="$(unique_name books)"
rounds="${DROP_ROUNDS:-4}"
seed="${DROP_SEED:-$((RANDOM * 32768 + RANDOM))}"
RANDOM=$((seed % 32768))
log "seed $seed ($rounds rounds)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
mysql_q "CREATE DATABASE \`$db\`"
mysql_q "CREATE TABLE book (id INT PRIMARY KEY, title VARCHAR(40));
  CREATE TABLE genre (id INT PRIMARY KEY, name VARCHAR(40));
  CREATE TABLE book_genre (book_id INT NOT NULL, genre_id INT NOT NULL, PRIMARY KEY (book_id, genre_id));
  CREATE TABLE genre_seed (id INT PRIMARY KEY, name VARCHAR(40));
  INSERT INTO book SELECT seq, CONCAT('book ', seq) FROM seq_1_to_300;
  INSERT INTO genre_seed SELECT seq, CONCAT('genre ', seq) FROM seq_1_to_30;
  INSERT INTO genre SELECT * FROM genre_seed;
  INSERT IGNORE INTO book_genre SELECT 1 + seq % 300, 1 + seq % 29 FROM seq_1_to_700;" "$db"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = dj
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $((7800 + $$ % 90))
start = now
heartbeat_ms = 500
[metadata]
database = $meta
reload_interval_ms = 1000
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
[reindex]
poll_interval_ms = 100
[log]
level = info
INI
jq -n --arg db "$db" --arg alias "$alias" '{version: 1, indices: [{alias: $alias, shards: 1, replicas: 0,
    tables: [{table: ($db + ".book"), columns: [{name: "id", key: true}, {name: "title"}],
      relations: [{column: "id", table: ($db + ".book_genre"), join_column: "book_id", extend_name: "genres",
                   nested: true, flatten: true, columns: [{name: "genre_id"}],
                   relations: [{column: "genre_id", table: ($db + ".genre"), join_column: "id", nested: false,
                                columns: [{name: "id"}, {name: "name"}]}]}]}]}]}' >"$TEST_TMP/map.json"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/map.json" --yes >"$TEST_TMP/import.out" 2>&1 ||
    fail "import: $(cat "$TEST_TMP/import.out")"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 60 lines)"; tail -60 "$TEST_TMP/run.log"; }'
daemon_wait_log "$alias: live changes no longer written to ${alias}_v1" 90

# the oracle: every book as SQL has it, its genres the genre rows it links to
oracle() {
    mysql_q "SELECT JSON_OBJECT('id', b.id, 'title', b.title, 'genres', COALESCE((SELECT
               JSON_ARRAYAGG(JSON_OBJECT('id', g.id, 'name', g.name)) FROM book_genre x JOIN genre g
               ON g.id = x.genre_id WHERE x.book_id = b.id), JSON_ARRAY())) FROM book b ORDER BY b.id" "$db" |
        jq -S -c '.genres |= sort_by(.id)' | sort
}
engine() {
    search_refresh "$alias"
    search_post "/$alias/_search?size=10000" '{"query":{"match_all":{}},"sort":["_doc"]}' |
        jq -S -c '.hits.hits[]._source | del(.ss_version, .ss_hash, .ss_key_hash) | .genres |= ((. // []) | sort_by(.id))' | sort
}
same_as_sql() { [ "$(oracle | md5sum)" = "$(engine | md5sum)" ]; }
wait_until 30 "the first sync equals SQL" same_as_sql

# the steady writers (DROP_WRITERS, default 3): one transaction after another
# on book, book_genre and genre until $TEST_TMP/stop exists (a statement on genre while it is gone
# fails: ignored); each one that went through is counted in writes
writer() { # W: the writer's number (its ids apart from the others')
    local i=$(($(date +%s%3N) % 100000000 * 10 + $1 * 100000000))
    while [ ! -e "$TEST_TMP/stop" ]; do
        i=$((i + 1))
        mysql_q "UPDATE book SET title = CONCAT('w', $i) WHERE id = $((i % 300 + 1))" "$db" 2>/dev/null &&
            echo b >>"$TEST_TMP/writes"
        mysql_q "INSERT IGNORE INTO book_genre VALUES ($((i % 300 + 1)), $((i % 30 + 1)));
          DELETE FROM book_genre WHERE book_id = $(((i * 7) % 300 + 1)) AND genre_id = $(((i * 3) % 30 + 1))" "$db" 2>/dev/null &&
            echo l >>"$TEST_TMP/writes"
        mysql_q "UPDATE genre SET name = CONCAT('g', $i) WHERE id = $((i % 30 + 1))" "$db" 2>/dev/null &&
            echo g >>"$TEST_TMP/writes"
        if [ $((i % 5)) = 0 ]; then
            mysql_q "INSERT INTO book VALUES ($i, 'new'); INSERT INTO book_genre VALUES ($i, $((i % 30 + 1)))" "$db" 2>/dev/null &&
                echo n >>"$TEST_TMP/writes"
        fi
    done
}
: >"$TEST_TMP/writes"
version() { mysql_q "SELECT current_version FROM \`$meta\`.index_configs WHERE alias = '$alias'"; }
rebuilt_past() { # VERSION: a newer version live, no stop, no build under way
    [ "$(mysql_q "SELECT current_version > $1 AND state = 'available' AND stopped_reason IS NULL
                    FROM \`$meta\`.index_configs WHERE alias = '$alias'")" = 1 ]
}
wpids=""
on_exit 'touch "$TEST_TMP/stop"; [ -z "$wpids" ] || kill $wpids 2>/dev/null'
for round in $(seq 1 "$rounds"); do
    rm -f "$TEST_TMP/stop"
    mark=$(wc -l <"$TEST_TMP/writes")
    wpids=""
    for w in $(seq 1 "${DROP_WRITERS:-3}"); do
        writer "$w" &
        wpids="$wpids $!"
    done
    v0="$(version)"
    sleep "0.$((RANDOM % 10))"
    mysql_q "DROP TABLE genre" "$db"
    if [ "$round" = 1 ]; then
        # the table gone: the index stopped, said as what happens next
        daemon_wait_log "index $alias stopped" 30
        st=0; "$SEARCHSYNC_BIN" status --config "$TEST_TMP/c.ini" --json >"$TEST_TMP/st.json" 2>&1 || st=$?
        assert_eq 3 "$st" "status: the index waiting for its dropped table is a problem found (exit 3)"
        why="$(jq -r ".indices[] | select(.alias == \"$alias\") | .stopped" "$TEST_TMP/st.json")"
        assert_contains "$why" "$db.genre" "status names the dropped table"
        assert_contains "$why" "rebuilt from the table once it exists again" "status says the index is rebuilt when the table is back"
        assert_true "the stop does not ask to fix a mapping that fits (a DROP is taken like a TRUNCATE)" \
            bash -c "! grep -F 'index $alias stopped' '$TEST_TMP/run.log' | grep -qF 'fix the mapping'"
    else
        sleep "$((RANDOM % 2)).$((RANDOM % 10))"
    fi
    mysql_q "CREATE TABLE genre (id INT PRIMARY KEY, name VARCHAR(40));
      INSERT INTO genre SELECT id, CONCAT(name, ' r$round') FROM genre_seed" "$db"
    wait_until 180 "round $round: the index rebuilt from the new table (past version $v0)" rebuilt_past "$v0"
    sleep 1 # (the writer goes on a moment after the switch too)
    touch "$TEST_TMP/stop"
    wait $wpids 2>/dev/null || true
    wpids=""
    for k in b l g; do
        [ "$(tail -n +"$((mark + 1))" "$TEST_TMP/writes" | grep -c "^$k\$" || true)" -gt 0 ] ||
            fail "round $round: the writer wrote no $k during the round"
    done
    wait_checkpoint "$meta" dj 60
    for _ in $(seq 1 50); do same_as_sql && break; sleep 0.4; done # (the verdict follows)
    oracle >"$TEST_TMP/oracle.$round"
    engine >"$TEST_TMP/engine.$round"
    if ! cmp -s "$TEST_TMP/oracle.$round" "$TEST_TMP/engine.$round"; then
        extra=$(comm -13 <(jq -r .id "$TEST_TMP/oracle.$round" | sort) <(jq -r .id "$TEST_TMP/engine.$round" | sort) | wc -l)
        missing=$(comm -23 <(jq -r .id "$TEST_TMP/oracle.$round" | sort) <(jq -r .id "$TEST_TMP/engine.$round" | sort) | wc -l)
        differ=$(comm -3 "$TEST_TMP/oracle.$round" "$TEST_TMP/engine.$round" | wc -l)
        { diff "$TEST_TMP/oracle.$round" "$TEST_TMP/engine.$round" || true; } | head -10 >&2
        fail "round $round (seed $seed): after catching up the index differs from SQL: $missing missing, $extra extra, $differ lines differ"
    fi
    _LIB_ASSERTS=$((_LIB_ASSERTS + 1))
    log "round $round: version $(version) equals SQL ($(search_count "$alias") documents)"
done
kill -0 "$DAEMON" || fail "the daemon stopped"
pass
