#!/usr/bin/env bash
# tests/integration/t_run_swap_in_snapshot.sh — a table swapped in by RENAME
# between a read snapshot's start and its first read of that table is never
# read as it was when the snapshot began (sync/pipeline/read_view.h).
#
# An online schema change fills a shadow table created beforehand and swaps
# it in with one RENAME (pt-online-schema-change's, gh-ost's atomic
# cut-over). InnoDB raises no error when a snapshot begun after the shadow's
# creation reads it once it is swapped in: it reads the shadow as it was,
# here empty. The test makes that moment happen at will: the daemon runs
# with a pause between a read snapshot's start and the locks on its tables
# (SEARCHSYNC_TEST_READ_VIEW_PAUSE_MS, while a file exists), and the test,
# once the pause is said,
#   fills the shadow of book_genre (created before the snapshot), swaps it in
#   with one RENAME and drops the old table,
# while the snapshot is building the document of a book just updated. Cases:
#   1. MariaDB, `run`: a book's update read from the binlog (its genres
#      nested, read from book_genre): the document keeps its genres
#   2. MariaDB, `resync` of one book: the same
#   3. MariaDB, `reindex`: a page of the new version read in such a snapshot
#   4. MySQL 8 (tests/harness/mysql8.sh), `resync`: the same
# Each against the SQL oracle: every book's genre ids, the book's title.
# SWAP_CASES picks some (default "mariadb-run mariadb-resync mariadb-reindex
# mysql8-resync").
# Before the fix the updated book's document had genres [] in cases 1, 2
# and 4 (on MySQL 8.0.15 too): silently, for good.
. "$(dirname "$0")/lib.sh"
require_bin

PAUSE_MS=3000
pause_file="$TEST_TMP/pause"
export SEARCHSYNC_TEST_READ_VIEW_PAUSE_MS=$PAUSE_MS SEARCHSYNC_TEST_READ_VIEW_PAUSE_IF="$pause_file"

setup() { # DB META ALIAS SERVER_ID CONFIG
    local db=$1 meta=$2 alias=$3
    mysql_q "CREATE DATABASE \`$db\`;
      CREATE TABLE \`$db\`.book (id INT PRIMARY KEY, title VARCHAR(40));
      CREATE TABLE \`$db\`.genre (id INT PRIMARY KEY, name VARCHAR(20));
      CREATE TABLE \`$db\`.book_genre (book_id INT, genre_id INT, PRIMARY KEY (book_id, genre_id));
      INSERT INTO \`$db\`.genre VALUES (1, 'poetry'), (2, 'drama'), (3, 'essays');
      INSERT INTO \`$db\`.book VALUES (1, 'one'), (2, 'two'), (3, 'three'), (4, 'four');
      INSERT INTO \`$db\`.book_genre VALUES (1, 1), (1, 2), (2, 3), (3, 1), (3, 3), (4, 2)"
    cat >"$5" <<INI
[source]
name = swap$4
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $4
start = now
heartbeat_ms = 200
[metadata]
database = $meta
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 20
INI
    cat >"$TEST_TMP/m-$4.json" <<JSON
{"version": 1, "indices": [{"alias": "$alias", "shards": 1, "replicas": 0, "tables": [{
  "table": "$db.book", "columns": [{"name": "id", "type": "long", "key": true}, {"name": "title", "type": "keyword"}],
  "relations": [{"column": "id", "table": "$db.book_genre", "join_column": "book_id", "nested": true,
                 "extend_name": "genres", "columns": [{"name": "genre_id", "type": "long"}]}]}]}]}
JSON
    "$SEARCHSYNC_BIN" mapping import --config "$5" "$TEST_TMP/m-$4.json" --yes >"$TEST_TMP/import-$4.out" 2>&1 ||
        fail "import: $(cat "$TEST_TMP/import-$4.out")"
}

# every book: "id title genre,genre" from SQL and from the index
oracle() {
    mysql_q "SELECT b.id, b.title, IFNULL(GROUP_CONCAT(g.genre_id ORDER BY g.genre_id), '')
             FROM \`$1\`.book b LEFT JOIN \`$1\`.book_genre g ON g.book_id = b.id GROUP BY b.id ORDER BY b.id" |
        tr '\t' ' '
}
engine() {
    search_refresh "$1"
    curl -s "$SEARCH_URL/$1/_search?size=100&sort=id" |
        jq -r '.hits.hits[]._source | "\(.id) \(.title) \([.genres[]?.genre_id] | sort | map(tostring) | join(","))"'
}
same_as_oracle() { [ "$(oracle "$1")" = "$(engine "$2")" ]; }

# the swap, once the daemon (or resync) said its pause: the shadow was
# created before the snapshot began, filled and swapped in during the pause
swap_during_pause() { # DB LOG
    local db=$1
    wait_until 20 "a read snapshot paused" grep -q "test pause of $PAUSE_MS ms" "$2"
    mysql_q "INSERT INTO \`$db\`._book_genre_new SELECT * FROM \`$db\`.book_genre;
      RENAME TABLE \`$db\`.book_genre TO \`$db\`._book_genre_old, \`$db\`._book_genre_new TO \`$db\`.book_genre;
      DROP TABLE \`$db\`._book_genre_old"
    rm -f "$pause_file"
}

run_case() { # LABEL SERVER_ID HOW: run, resync or reindex
    local label=$1 sid=$2 how=$3
    local db meta alias
    db="$(unique_name swapdb)" meta="$(unique_name swapmeta)" alias="$(unique_name swap)"
    on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
    setup "$db" "$meta" "$alias" "$sid" "$TEST_TMP/c-$sid.ini"
    rm -f "$pause_file"
    daemon_start "$TEST_TMP/c-$sid.ini" "$TEST_TMP/run-$sid.log"
    daemon_wait_log "$alias: live changes no longer written to ${alias}_v1" 60
    wait_until 20 "$label: the first build equals the oracle" same_as_oracle "$db" "$alias"
    mysql_q "CREATE TABLE \`$db\`._book_genre_new LIKE \`$db\`.book_genre"
    if [ "$how" = run ]; then touch "$pause_file"; fi
    if [ "$how" = run ]; then
        mysql_q "UPDATE \`$db\`.book SET title = 'three!' WHERE id = 3"
        swap_during_pause "$db" "$TEST_TMP/run-$sid.log"
    elif [ "$how" = reindex ]; then
        mysql_q "UPDATE \`$db\`.book SET title = 'three!' WHERE id = 3"
        wait_until 20 "$label: the update is in the index" bash -c "curl -s '$SEARCH_URL/$alias/_doc/3' | jq -e '._source.title == \"three!\"' >/dev/null"
        touch "$pause_file"
        "$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/c-$sid.ini" "$alias" >"$TEST_TMP/reindex-$sid.log" 2>&1 &
        local xpid=$!
        swap_during_pause "$db" "$TEST_TMP/run-$sid.log"
        wait "$xpid" || fail "$label: reindex failed: $(cat "$TEST_TMP/reindex-$sid.log")"
        assert_eq 2 "$(mysql_q "SELECT current_version FROM \`$meta\`.index_configs WHERE alias = '$alias'")" "$label: version 2 is live"
    else
        mysql_q "UPDATE \`$db\`.book SET title = 'three!' WHERE id = 3"
        wait_until 20 "$label: the update is in the index" bash -c "curl -s '$SEARCH_URL/$alias/_doc/3' | jq -e '._source.title == \"three!\"' >/dev/null"
        daemon_stop
        touch "$pause_file"
        "$SEARCHSYNC_BIN" resync --config "$TEST_TMP/c-$sid.ini" "$alias" --ids 3 >"$TEST_TMP/resync-$sid.log" 2>&1 &
        local rpid=$!
        swap_during_pause "$db" "$TEST_TMP/resync-$sid.log"
        wait "$rpid" || fail "$label: resync failed: $(cat "$TEST_TMP/resync-$sid.log")"
        daemon_start "$TEST_TMP/c-$sid.ini" "$TEST_TMP/run-$sid.log"
        daemon_wait_ready 60
    fi
    # the daemon reads the RENAME too: nothing stops, nothing is rebuilt
    mysql_q "UPDATE \`$db\`.book SET title = 'one!' WHERE id = 1"
    wait_until 20 "$label: a later change is in the index" bash -c "curl -s '$SEARCH_URL/$alias/_doc/1' | jq -e '._source.title == \"one!\"' >/dev/null"
    local want got
    want="$(oracle "$db")" got="$(engine "$alias")"
    assert_eq "$want" "$got" "$label: every book equals the oracle (book 3 keeps its genres 1,3)"
    if [ "$how" = run ]; then
        assert_contains "$(cat "$TEST_TMP/run-$sid.log")" "test pause of $PAUSE_MS ms" "$label: the snapshot paused"
    fi
    daemon_stop
    [ "$DAEMON_RC" = 0 ] || fail "$label: the daemon exited $DAEMON_RC: $(tail -5 "$TEST_TMP/run-$sid.log")"
    assert_eq "" "$(grep -E 'stopped|ERROR' "$TEST_TMP/run-$sid.log" | grep -v 'stopped after' || true)" "$label: no index config stopped, no error"
}

CASES=" ${SWAP_CASES:-mariadb-run mariadb-resync mariadb-reindex mysql8-resync} "
[[ "$CASES" == *" mariadb-run "* ]] && run_case "MariaDB run" 7381 run
[[ "$CASES" == *" mariadb-resync "* ]] && run_case "MariaDB resync" 7382 resync
[[ "$CASES" == *" mariadb-reindex "* ]] && run_case "MariaDB reindex" 7384 reindex
if [[ "$CASES" == *" mysql8-resync "* ]]; then
    use_mysql8
    run_case "MySQL 8 resync" 7383 resync
fi
pass
