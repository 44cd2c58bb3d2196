# tests/integration/osc_lib.sh — online schema change tools against a synced
# library, under a writer. Sourced by tests after lib.sh
# (t_run_online_schema_change.sh).
#
# Owns: the library schema and its mapping, the writer's lifetime
# (osc_writer.py piped into the `mariadb` client), the SQL oracle of the
# library's documents, the runs of the real tools (pt-online-schema-change
# from Debian's percona-toolkit, gh-ost built by tests/harness/ghost.sh), and
# the verdict after each swap.
#
# The library (database $OSC_DB):
#   book        root of index $OSC_BOOKS (re-query mode): one document a book
#   publisher   one-to-one object `publisher` (book.publisher_id)
#   copy        nested array `copies` (copy.book_id)
#   loan        nested array `loans` inside each copy (loan.copy_id): depth 2
#   book_genre  link table: nested array `genres` of {genre_id, genre: {...}}
#   genre       one-to-one object inside each link element
# and two row-image indices of the same tables: $OSC_BOOKS_RI (book) and
# $OSC_COPIES_RI (copy).
#
# Functions:
#   osc_setup SEED BOOKS            database, tables, first rows, mapping,
#                                   configuration ($TEST_TMP/osc.ini), daemon
#                                   started, version 1 live
#   osc_writer_start SEED RATE      the writer, RATE transactions a second
#                                   (SEED: the one osc_setup was given)
#   osc_writer_pause / _resume      hold it (every earlier transaction has run
#                                   when pause returns) / let it go on
#   osc_writer_stop                 stop it; its summary line is logged
#   osc_ptosc TABLE ALTER           pt-online-schema-change --execute (rc)
#   osc_ghost TABLE ALTER CUTOVER   gh-ost --execute, cut-over atomic|two-step
#   osc_swap TOOL TABLE ALTER [CUTOVER]
#                                   the tool run under the writer, then
#                                   osc_verdict; prints the swap's line and
#                                   appends it to $OSC_RESULTS
#   osc_verdict LABEL               with the writer paused: the daemon caught
#                                   up (status --json), no index config
#                                   stopped (status, index_configs.
#                                   stopped_reason, the log), no reindex (each
#                                   alias on version 1), every document equal
#                                   to the SQL oracle. Sets OSC_RESULT (ok,
#                                   STOPPED, DIFFERS, BEHIND, REINDEXED) and
#                                   OSC_DETAIL; never fails the test itself
# Knobs: OSC_KEEP_GOING=1: a stopped index is rebuilt (searchsync reindex) and
# the swaps go on, to count how often swaps stop it (the aliases then move
# on from version 1: later verdicts expect the version the rebuild made).
# shellcheck shell=bash

OSC_LIB_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OSC_RESULTS="${OSC_RESULTS:-$TEST_TMP/osc-results.tsv}"

# osc_query SQL — run SQL in the library database, JSON text raw
osc_query() {
    mariadb --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -u root --batch --raw \
        --skip-column-names --default-character-set=utf8mb4 --database="$OSC_DB" -e "$1"
}

osc_schema_sql() {
    cat <<SQL
CREATE TABLE publisher (id INT PRIMARY KEY, name VARCHAR(60) NOT NULL, country CHAR(2));
CREATE TABLE genre (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL);
CREATE TABLE book (id INT PRIMARY KEY, title VARCHAR(120) NOT NULL, isbn VARCHAR(20),
  publisher_id INT, pages INT, price DECIMAL(8,2), updated_at DATETIME(3), KEY (publisher_id));
CREATE TABLE copy (id INT PRIMARY KEY, book_id INT NOT NULL, barcode VARCHAR(30), shelf VARCHAR(20),
  KEY (book_id));
CREATE TABLE loan (id INT PRIMARY KEY, copy_id INT NOT NULL, member VARCHAR(40), due DATE, KEY (copy_id));
CREATE TABLE book_genre (book_id INT NOT NULL, genre_id INT NOT NULL, PRIMARY KEY (book_id, genre_id),
  KEY (genre_id));
SQL
}

osc_mapping() {
    jq -n --arg db "$OSC_DB" --arg b "$OSC_BOOKS" --arg bri "$OSC_BOOKS_RI" --arg cri "$OSC_COPIES_RI" '
      def book_cols: [{name: "id", key: true}, "title", "isbn", {name: "publisher_id", type: "long"},
                      "pages", "price", "updated_at"];
      {version: 1, indices: [
        {alias: $b, shards: 2, replicas: 0, tables: [{table: ($db + ".book"), columns: book_cols,
          relations: [
            {column: "publisher_id", table: ($db + ".publisher"), join_column: "id",
             extend_name: "publisher", nested: false, columns: ["id", "name", "country"]},
            {column: "id", table: ($db + ".copy"), join_column: "book_id", extend_name: "copies",
             nested: true, columns: [{name: "id", key: true}, "book_id", "barcode", "shelf"],
             relations: [{column: "id", table: ($db + ".loan"), join_column: "copy_id",
                          extend_name: "loans", nested: true,
                          columns: [{name: "id", key: true}, "copy_id", "member", "due"]}]},
            {column: "id", table: ($db + ".book_genre"), join_column: "book_id", extend_name: "genres",
             nested: true, columns: ["genre_id"],
             relations: [{column: "genre_id", table: ($db + ".genre"), join_column: "id",
                          extend_name: "genre", nested: false, columns: ["id", "name"]}]}]}]},
        {alias: $bri, shards: 1, replicas: 0, tables: [{table: ($db + ".book"), mode: "row-image",
          columns: book_cols}]},
        {alias: $cri, shards: 1, replicas: 0, tables: [{table: ($db + ".copy"), mode: "row-image",
          columns: [{name: "id", key: true}, "book_id", "barcode", "shelf"]}]}]}'
}

# the oracle: SQL that both MariaDB and MySQL 8 run (JSON_EXTRACT(x, '$')
# makes MariaDB embed a subquery's JSON text as JSON, a no-op on MySQL)
_osc_dt3() { echo "LEFT(DATE_FORMAT($1, '%Y-%m-%dT%H:%i:%s.%f'), 23)"; }
osc_oracle_books() {
    cat <<SQL
SET SESSION group_concat_max_len = 16777216;
SELECT JSON_OBJECT('id', CAST(b.id AS CHAR), 'routing', NULL, 'doc', JSON_OBJECT(
  'id', b.id, 'title', b.title, 'isbn', b.isbn, 'publisher_id', b.publisher_id, 'pages', b.pages,
  'price', CAST(b.price AS CHAR), 'updated_at', $(_osc_dt3 b.updated_at),
  'publisher', JSON_EXTRACT((SELECT JSON_OBJECT('id', p.id, 'name', p.name, 'country', p.country)
                             FROM publisher p WHERE p.id = b.publisher_id), '\$'),
  'copies', COALESCE(JSON_EXTRACT((SELECT JSON_ARRAYAGG(JSON_OBJECT('id', c.id, 'book_id', c.book_id,
      'barcode', c.barcode, 'shelf', c.shelf,
      'loans', COALESCE(JSON_EXTRACT((SELECT JSON_ARRAYAGG(JSON_OBJECT('id', l.id, 'copy_id', l.copy_id,
                 'member', l.member, 'due', DATE_FORMAT(l.due, '%Y-%m-%d')))
               FROM loan l WHERE l.copy_id = c.id), '\$'), JSON_ARRAY())))
      FROM copy c WHERE c.book_id = b.id), '\$'), JSON_ARRAY()),
  'genres', COALESCE(JSON_EXTRACT((SELECT JSON_ARRAYAGG(JSON_OBJECT('genre_id', x.genre_id,
      'genre', JSON_EXTRACT((SELECT JSON_OBJECT('id', g.id, 'name', g.name) FROM genre g
                             WHERE g.id = x.genre_id), '\$')))
      FROM book_genre x WHERE x.book_id = b.id), '\$'), JSON_ARRAY())))
FROM book b ORDER BY b.id
SQL
}
osc_oracle_books_ri() {
    cat <<SQL
SELECT JSON_OBJECT('id', CAST(b.id AS CHAR), 'routing', NULL, 'doc', JSON_OBJECT(
  'id', b.id, 'title', b.title, 'isbn', b.isbn, 'publisher_id', b.publisher_id, 'pages', b.pages,
  'price', CAST(b.price AS CHAR), 'updated_at', $(_osc_dt3 b.updated_at)))
FROM book b ORDER BY b.id
SQL
}
osc_oracle_copies_ri() {
    echo "SELECT JSON_OBJECT('id', CAST(c.id AS CHAR), 'routing', NULL, 'doc', JSON_OBJECT(
  'id', c.id, 'book_id', c.book_id, 'barcode', c.barcode, 'shelf', c.shelf)) FROM copy c ORDER BY c.id"
}

# osc_setup SEED BOOKS — everything up to a running daemon with version 1
# of each index live
osc_setup() {
    local seed="$1" books="$2"
    OSC_BOOKS_N="$books"
    OSC_DB="$(unique_name lib)"
    OSC_META="$(unique_name libmeta)"
    OSC_BOOKS="$(unique_name books)"
    OSC_BOOKS_RI="$(unique_name booksri)"
    OSC_COPIES_RI="$(unique_name copiesri)"
    OSC_SOURCE=lib
    OSC_SETUPS=$((${OSC_SETUPS:-0} + 1))
    OSC_LOG="$TEST_TMP/run.$OSC_SETUPS.log" # (one daemon log per setup)
    OSC_LOG_AT=0
    OSC_VERSION=1
    : >"$OSC_RESULTS"
    on_exit "MYSQL_PORT=$MYSQL_PORT mysql_q 'DROP DATABASE IF EXISTS \`$OSC_DB\`; DROP DATABASE IF EXISTS \`$OSC_META\`' >/dev/null 2>&1; curl -s -m 30 -XDELETE '$SEARCH_URL/${OSC_BOOKS}_v*,${OSC_BOOKS_RI}_v*,${OSC_COPIES_RI}_v*?ignore_unavailable=true' >/dev/null 2>&1"
    mysql_q "CREATE DATABASE \`$OSC_DB\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin" || fail "creating $OSC_DB"
    osc_schema_sql | mysql_file /dev/stdin "$OSC_DB" || fail "creating the library's tables"
    python3 "$OSC_LIB_DIR/osc_writer.py" init "$seed" "$books" | mysql_file /dev/stdin "$OSC_DB" ||
        fail "loading the library's first rows"
    log "library $OSC_DB: $(mysql_q "SELECT CONCAT((SELECT COUNT(*) FROM book), ' books, ',
        (SELECT COUNT(*) FROM copy), ' copies, ', (SELECT COUNT(*) FROM loan), ' loans, ',
        (SELECT COUNT(*) FROM book_genre), ' genre links')" "$OSC_DB")"
    cat >"$TEST_TMP/osc.ini" <<INI
[source]
name = $OSC_SOURCE
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $((7600 + $$ % 300))
start = now
heartbeat_ms = 500
[metadata]
database = $OSC_META
reload_interval_ms = 500
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
[admin]
listen =
[log]
level = info
INI
    osc_mapping >"$TEST_TMP/osc-mapping.json"
    "$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/osc.ini" "$TEST_TMP/osc-mapping.json" --yes \
        >"$TEST_TMP/import.out" 2>&1 || fail "import: $(cat "$TEST_TMP/import.out")"
    daemon_start "$TEST_TMP/osc.ini" "$OSC_LOG"
    [ "$OSC_SETUPS" != 1 ] || on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 40 lines)"; tail -40 "$OSC_LOG"; }'
    local a
    for a in "$OSC_BOOKS" "$OSC_BOOKS_RI" "$OSC_COPIES_RI"; do
        daemon_wait_log "$a: version 1 live" 180
    done
    daemon_wait_ready 60
}

# ---------------------------------------------------------------- the writer
osc_writer_start() {
    OSC_CTL="$TEST_TMP/writer"
    mkdir -p "$OSC_CTL"
    rm -f "$OSC_CTL/stop" "$OSC_CTL/pause"
    OSC_PAUSES=0
    # --unbuffered: the client's output (the pause tokens) is written at once
    ( python3 "$OSC_LIB_DIR/osc_writer.py" run "$1" "$OSC_BOOKS_N" "$2" "$OSC_CTL" 2>"$OSC_CTL/summary" |
        mariadb --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -u root --batch --skip-column-names \
            --force --unbuffered --default-character-set=utf8mb4 --database="$OSC_DB" \
            >"$OSC_CTL/out" 2>"$OSC_CTL/errors" ) &
    OSC_WRITER_PID=$!
    on_exit "touch '$OSC_CTL/stop'; rm -f '$OSC_CTL/pause'; wait $OSC_WRITER_PID 2>/dev/null"
}
_osc_paused() { grep -qx "paused $OSC_PAUSES" "$OSC_CTL/out"; }
osc_writer_pause() {
    OSC_PAUSES=$((OSC_PAUSES + 1))
    echo "$OSC_PAUSES" >"$OSC_CTL/pause.tmp" && mv "$OSC_CTL/pause.tmp" "$OSC_CTL/pause"
    wait_until 120 "the writer paused (every transaction before it has run)" _osc_paused
}
osc_writer_resume() { rm -f "$OSC_CTL/pause"; }
osc_writer_stop() {
    touch "$OSC_CTL/stop"
    rm -f "$OSC_CTL/pause"
    wait "$OSC_WRITER_PID" 2>/dev/null || true
    log "$(cat "$OSC_CTL/summary")"
    log "writer: $(grep -c '^ERROR' "$OSC_CTL/errors" || true) statements refused (e.g. $(grep '^ERROR' "$OSC_CTL/errors" | sed 's/ at line [0-9]*//' | sort | uniq -c | sort -rn | head -3 | tr -s ' ' | tr '\n' ';'))"
}
# the writer's statements refused so far (a table renamed away for a moment)
osc_writer_errors() { grep -c '^ERROR' "$OSC_CTL/errors" 2>/dev/null || true; }

# ---------------------------------------------------------------- the tools
# osc_ptosc TABLE ALTER — Percona's tool: a shadow table _T_new filled in
# chunks and kept in step by triggers, then RENAME TABLE T TO _T_old, _T_new TO T
osc_ptosc() {
    command -v pt-online-schema-change >/dev/null ||
        fail "pt-online-schema-change is missing: run tests/harness/deps.sh (Debian's percona-toolkit)"
    # no replicas to look for or wait on (--recursion-method=none), no call
    # home (--no-version-check), the connection in utf8mb4; a short
    # lock_wait_timeout: a RENAME that waits on the writer gives up and is
    # tried again (--tries) rather than hold every statement behind it
    pt-online-schema-change --execute --alter "$2" "D=$OSC_DB,t=$1,h=127.0.0.1,P=$MYSQL_PORT,u=root" \
        --recursion-method=none --no-check-replication-filters --no-version-check --charset=utf8mb4 \
        --chunk-time=0.2 --set-vars=lock_wait_timeout=5 \
        --tries=create_triggers:10:0.5,drop_triggers:10:0.5,copy_rows:10:0.25,swap_tables:10:0.5,update_foreign_keys:10:0.5 \
        --progress=percentage,50 >>"$TEST_TMP/tool.log" 2>&1
}

# osc_ghost TABLE ALTER CUTOVER — GitHub's tool: a ghost table _T_gho filled
# in chunks and kept in step from the binlog (it connects as a replica), then
# the cut-over: atomic (LOCK, RENAME TABLE T TO _T_del, _T_gho TO T) or
# two-step (RENAME T TO _T_del; RENAME _T_gho TO T: T is missing in between)
osc_ghost() {
    local bin
    bin="$(bash "$HARNESS/ghost.sh" fetch 2>>"$TEST_TMP/tool.log")" || {
        local frc=$?
        tail -5 "$TEST_TMP/tool.log"
        [ "$frc" = 3 ] && skip "gh-ost cannot be built here (tests/harness/ghost.sh fetch)"
        fail "tests/harness/ghost.sh fetch failed"
    }
    # on the primary itself (--allow-on-master: no replica to read from),
    # row-based binlog checked by the test, not by stopping replication
    # (--assume-rbr); leftovers of a failed earlier run dropped first
    "$bin" --host=127.0.0.1 --port="$MYSQL_PORT" --user=root --password= \
        --database="$OSC_DB" --table="$1" --alter="$2" --cut-over="$3" \
        --allow-on-master --assume-rbr --execute --ok-to-drop-table \
        --initially-drop-old-table --initially-drop-ghost-table --initially-drop-socket-file \
        --serve-socket-file="$TEST_TMP/gh-ost.sock" --replica-server-id=$((9100 + $$ % 500)) \
        --chunk-size=500 --default-retries=30 --cut-over-lock-timeout-seconds=5 \
        --max-lag-millis=10000 --heartbeat-interval-millis=200 \
        --verbose >>"$TEST_TMP/tool.log" 2>&1
}

# ---------------------------------------------------------------- verdicts
_osc_status() { "$SEARCHSYNC_BIN" status --config "$TEST_TMP/osc.ini" --json >"$TEST_TMP/st.json" 2>"$TEST_TMP/st.err"; }
_osc_caught_up() {
    _osc_status || true
    [ "$(jq -r '.source.caught_up' "$TEST_TMP/st.json" 2>/dev/null)" = true ] && return 0
    # a stopped index never catches up for the verdict's purpose: say it now
    [ "$(jq -r '[.indices[] | select(.stopped != null)] | length' "$TEST_TMP/st.json" 2>/dev/null)" = 0 ] || return 0
    return 1
}
# osc_verdict LABEL — see the header; the writer must be paused
osc_verdict() {
    local label="$1" i stops reasons a cur o="$TEST_TMP/oracle" bad=""
    OSC_RESULT=ok OSC_DETAIL=""
    for ((i = 0; i < 600; i++)); do
        _osc_caught_up && break
        daemon_alive || fail "$label: the daemon exited: $(tail -20 "$OSC_LOG")"
        sleep 0.5
    done
    if [ "$(jq -r '.source.caught_up' "$TEST_TMP/st.json" 2>/dev/null)" != true ] &&
       [ "$(jq -r '[.indices[] | select(.stopped != null)] | length' "$TEST_TMP/st.json" 2>/dev/null)" = 0 ]; then
        OSC_RESULT=BEHIND OSC_DETAIL="not caught up after 300 s: $(jq -c .source "$TEST_TMP/st.json" 2>/dev/null | head -c 400)"
    fi
    # stops: status, the metadata, the log (since the last verdict)
    stops="$(jq -r '.indices[] | select(.stopped != null) | "\(.alias): \(.stopped)"' "$TEST_TMP/st.json" 2>/dev/null || true)"
    reasons="$(mysql_q "SELECT alias, LEFT(stopped_reason, 300) FROM \`$OSC_META\`.index_configs WHERE stopped_reason IS NOT NULL" 2>&1 || true)"
    local logged
    # (but the daemon's own "stopped after N transactions" at its exit, and
    # its INFO that a table is gone for now, "is stopped unless a table of
    # that name is back within N ms": a two-step cut-over read between its
    # renames; a stop that follows is an ERROR)
    logged="$(tail -c +$((OSC_LOG_AT + 1)) "$OSC_LOG" | grep -E 'stopped' | grep -v ' INFO ' |
        grep -v '\[run\] stopped after [0-9]* transactions' || true)"
    OSC_LOG_AT="$(stat -c %s "$OSC_LOG")"
    if [ -n "$stops$reasons" ] || grep -q ' index .* stopped: ' <<<"$logged"; then
        OSC_RESULT=STOPPED
        OSC_DETAIL="status: ${stops:-none}; index_configs.stopped_reason: ${reasons:-none}"
        printf '%s\n' "$logged" >"$TEST_TMP/stop-lines.$OSC_SWAP_N"
    elif [ -n "$logged" ]; then
        OSC_RESULT=STOPPED OSC_DETAIL="the daemon logged: $(head -3 <<<"$logged")"
        printf '%s\n' "$logged" >"$TEST_TMP/stop-lines.$OSC_SWAP_N"
    fi
    # no reindex: each alias on the version expected
    for a in "$OSC_BOOKS" "$OSC_BOOKS_RI" "$OSC_COPIES_RI"; do
        cur="$(curl -s -m 30 "$SEARCH_URL/_alias/$a" | jq -r 'keys | join(",")')"
        if [ "$cur" != "${a}_v$(_osc_expected_version "$a")" ]; then
            [ "$OSC_RESULT" != ok ] || OSC_RESULT=REINDEXED
            OSC_DETAIL="${OSC_DETAIL:+$OSC_DETAIL; }alias $a on $cur, expected ${a}_v$(_osc_expected_version "$a")"
        fi
    done
    # the documents: every one equal to SQL (also when stopped: how far off)
    mkdir -p "$o"
    osc_query "$(osc_oracle_books)" >"$o/books.oracle" || fail "$label: the books oracle query"
    osc_query "$(osc_oracle_books_ri)" >"$o/books_ri.oracle" || fail "$label: the books row-image oracle query"
    osc_query "$(osc_oracle_copies_ri)" >"$o/copies_ri.oracle" || fail "$label: the copies oracle query"
    for a in books books_ri copies_ri; do
        local alias
        case "$a" in books) alias=$OSC_BOOKS ;; books_ri) alias=$OSC_BOOKS_RI ;; *) alias=$OSC_COPIES_RI ;; esac
        search_refresh "$alias"
        engine_dump "$alias" "$TEST_TMP/$a.engine" 2>"$TEST_TMP/dump.err" || {
            cat "$TEST_TMP/dump.err"; fail "$label: engine dump of $alias"; }
        if ! compare_docs "$TEST_TMP/$a.engine" "$o/$a.oracle" --numbers value --ignore-field ss_version \
                --ignore-field ss_hash --ignore-field ss_key_hash --label "$a" --show 3 >"$TEST_TMP/cmp.$a"; then
            bad="${bad:+$bad; }$(tail -1 "$TEST_TMP/cmp.$a")"
            cp "$TEST_TMP/cmp.$a" "$TEST_TMP/cmp.$a.$OSC_SWAP_N"
        fi
    done
    if [ -n "$bad" ]; then
        [ "$OSC_RESULT" != ok ] || OSC_RESULT=DIFFERS
        OSC_DETAIL="${OSC_DETAIL:+$OSC_DETAIL; }$bad"
    fi
    OSC_DETAIL="$(printf '%s' "$OSC_DETAIL" | tr '\n\t' '  ' | cut -c1-1500)"
}
# the version each alias should be on (1, or what a rebuild under
# OSC_KEEP_GOING made it)
declare -A _OSC_VERSIONS=()
_osc_expected_version() { echo "${_OSC_VERSIONS[$1]:-1}"; }

# osc_recover — OSC_KEEP_GOING: rebuild every stopped index config and wait
# until its new version is live, so that the swaps can go on
osc_recover() {
    local a v
    for a in $(mysql_q "SELECT alias FROM \`$OSC_META\`.index_configs WHERE stopped_reason IS NOT NULL"); do
        v=$(( $(_osc_expected_version "$a") + 1 ))
        while curl -sf -m 10 "$SEARCH_URL/${a}_v$v" >/dev/null 2>&1; do v=$((v + 1)); done
        "$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/osc.ini" "$a" --no-wait >>"$TEST_TMP/recover.out" 2>&1 ||
            fail "reindex of $a: $(tail -3 "$TEST_TMP/recover.out")"
        wait_until 300 "$a rebuilt after its stop" has_output bash -c \
            "curl -s -m 10 '$SEARCH_URL/_alias/$a' | jq -r 'keys[]' | grep -v '^${a}_v$(_osc_expected_version "$a")\$'"
        _OSC_VERSIONS[$a]="$(curl -s -m 10 "$SEARCH_URL/_alias/$a" | jq -r 'keys[0]' | sed 's/.*_v//')"
        log "$a: rebuilt as version ${_OSC_VERSIONS[$a]} after its stop"
    done
    OSC_LOG_AT="$(stat -c %s "$OSC_LOG")"
}

# osc_swap TOOL TABLE ALTER [CUTOVER] — one tool run under the writer, then the verdict
OSC_SWAP_N=0
osc_swap() {
    local tool="$1" table="$2" alter="$3" co="${4:--}" t0 secs trc=0 line err0
    OSC_SWAP_N=$((OSC_SWAP_N + 1))
    err0="$(osc_writer_errors)"
    echo "=== swap $OSC_SWAP_N: $tool $table ($alter) cut-over $co at $(date -u +%T.%N)" >>"$TEST_TMP/tool.log"
    echo "=== swap $OSC_SWAP_N: $tool $table cut-over $co at $(date -u +%T.%N)" >>"$OSC_LOG"
    t0=$(date +%s.%N)
    case "$tool" in
        pt-osc) osc_ptosc "$table" "$alter" || trc=$? ;;
        gh-ost) osc_ghost "$table" "$alter" "$co" || trc=$? ;;
        *) fail "osc_swap: unknown tool $tool" ;;
    esac
    secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
    [ "$trc" = 0 ] || { tail -30 "$TEST_TMP/tool.log"; fail "swap $OSC_SWAP_N: $tool on $table exited $trc (log above)"; }
    osc_writer_pause
    osc_verdict "swap $OSC_SWAP_N"
    line="$(printf 'swap %d\t%s\t%s\tcut-over %s\t%ss\t%s\twriter refused %d\t%s' "$OSC_SWAP_N" "$tool" "$table" \
        "$co" "$secs" "$OSC_RESULT" "$(( $(osc_writer_errors) - err0 ))" "$OSC_DETAIL")"
    printf '%s\n' "$line" >>"$OSC_RESULTS"
    log "$line"
    if [ "$OSC_RESULT" = STOPPED ] && [ -n "${OSC_KEEP_GOING:-}" ]; then
        log "stop lines: $(cat "$TEST_TMP/stop-lines.$OSC_SWAP_N")"
        osc_recover
    fi
    osc_writer_resume
}

# osc_alter N TABLE — the ALTER of swap N, on TABLE: ADD COLUMN + ADD INDEX,
# or a null rebuild, by turns for each table (counted in $OSC_RESULTS, so
# that every table gets both whatever order the tables come in)
osc_alter() {
    local before
    before=$(awk -F'\t' -v t="$2" '$1 ~ /^swap/ && $3 == t' "$OSC_RESULTS" | wc -l)
    if [ $(( (before + OSC_SETUPS) % 2 )) = 1 ]; then
        echo "ADD COLUMN osc_$1 INT NULL, ADD INDEX osc_idx_$1 (osc_$1)"
    else
        echo "ENGINE=InnoDB"
    fi
}
