#!/usr/bin/env bash
# t_check_repair_versions — `searchsync check --repair` over documents edited
# in the engine by hand when their last change is the source binlog's last
# transaction, on MariaDB and on MySQL 8 (no snapshot position: the
# repair's snapshots wait for owned GTIDs instead). A hand-made DELETE, _update or PUT raises the engine's version
# of a document by one, past the version of any read snapshot of a source
# that has written nothing since (the source here is a server of its own,
# the metadata on the suite's MariaDB, so nothing else moves its binlog):
# the repair's first writes are refused as older, and must not be reported
# done. For each server, [source] versions = position and = gtid:
#   - one transaction changes rows 1-4 and deletes row 6; its documents
#     carry the binlog end's version (asserted, positions);
#   - by hand: 1 deleted, 2 _updated (twice with positions, once with GTIDs:
#     a GTID version leaves no room for two), 3 PUT without a version,
#     6 PUT back, 99 PUT new;
#   - check: exactly those differences (exit 3); --repair: exit 0, done,
#     the raised ones written again over the engine's version (forced),
#     none left; a second check is clean; every document equals its row (SQL)
#   - changes written after the repair land on every repaired document: the
#     repair raised no version further than the hand-made writes had;
#   - `resync` over documents edited so: its stale writes compared and the
#     edited ones written again (4, unedited, stays stale and untouched);
#   - a document deleted by hand back to back during a repair: exit 3, not
#     done and named in repair.left, or (should a comparison fall between
#     two deletes) exit 0 and done, never a mix; repaired once the deletes
#     stop (last: its tombstone's version is then far past the source's).
. "$(dirname "$0")/lib.sh"
require_bin
extra_mariadb src -- src8

ss() { "$SEARCHSYNC_BIN" "$@"; }
rows_sql() { extra_q "$src" "SELECT JSON_OBJECT('id', id, 'name', name, 'qty', qty) FROM \`$db\`.items ORDER BY id" | jq -cS .; }
docs() { search_refresh "$alias" && search_post "/$alias/_search" '{"size":100,"sort":[{"id":"asc"}]}' | jq -cS '.hits.hits[]._source | {id, name, qty}'; }
docs_equal_rows() { [ "$(docs)" = "$(rows_sql)" ]; }
check() { # ARGS... — the check's --json output in $OUT, its exit status in $RC
    RC=0
    OUT="$(ss check --config "$TEST_TMP/$src-$mode.ini" --json --settle 20 "$@" "$alias" 2>"$TEST_TMP/check.err")" || RC=$?
}

run_case() { # SERVER MODE (position | gtid) — one index config and daemon of its own
    src="$1" mode="$2"
    label="$src $mode"
    db="$(unique_name rv)" meta="$(unique_name meta)" alias="$(unique_name items)"
    on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
    extra_q "$src" "CREATE DATABASE \`$db\`; CREATE TABLE \`$db\`.items (id BIGINT PRIMARY KEY, name VARCHAR(32) NOT NULL, qty INT NOT NULL);
      INSERT INTO \`$db\`.items VALUES (1,'a',1),(2,'b',2),(3,'c',3),(4,'d',4),(5,'e',5),(6,'f',6)"
    cat >"$TEST_TMP/$src-$mode.ini" <<INI
[source]
name = rv
host = 127.0.0.1
port = $(extra_port "$src")
user = searchsync
password = searchsync
server_id = $((7900 + $$ % 90))
start = now
heartbeat_ms = 500
versions = $mode
[metadata]
host = 127.0.0.1
port = $MYSQL_PORT
user = root
database = $meta
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
[log]
level = info
INI
    import_one_table "$alias" "$db.items" "$TEST_TMP/$src-$mode.ini"
    daemon_start "$TEST_TMP/$src-$mode.ini" "$TEST_TMP/$src-$mode.log"
    daemon_wait_log "$alias: live changes no longer written to ${alias}_v1" 90
    daemon_wait_ready

    # the binlog's last transaction: nothing is written on this server after it
    extra_q "$src" "BEGIN; UPDATE \`$db\`.items SET qty = qty + 10 WHERE id <= 4; DELETE FROM \`$db\`.items WHERE id = 6; COMMIT"
    wait_until 30 "$label: the last transaction is in the engine" docs_equal_rows
    local v4 end file
    v4="$(search_get "/$alias/_doc/4" | jq -r ._version)"
    if [ "$mode" = position ]; then
        end="$(extra_binlog_pos "$src")"
        file="${end%%$'\t'*}"
        assert_eq "$((10#${file##*.} * 4294967296 + ${end##*$'\t'}))" "$v4" \
            "$label: the documents of the last transaction carry the binlog end's version"
    fi

    # by hand, in the engine
    local v="${alias}_v1" updates=2
    [ "$mode" = position ] || updates=1
    search_delete "/$v/_doc/1" >/dev/null
    for k in $(seq "$updates"); do search_post "/$v/_update/2" "{\"doc\":{\"name\":\"by hand $k\"}}" >/dev/null; done
    search_put "/$v/_doc/3" '{"id":3,"name":"put by hand","qty":0}' >/dev/null
    search_put "/$v/_doc/6" '{"id":6,"name":"f","qty":6}' >/dev/null
    search_put "/$v/_doc/99" '{"id":99,"name":"new by hand","qty":0}' >/dev/null
    log "$label: engine versions after the hand-made writes: 2 $(search_get "/$v/_doc/2" | jq ._version), 3 $(search_get "/$v/_doc/3" | jq ._version), 6 $(search_get "/$v/_doc/6" | jq ._version); the last transaction's $v4"

    check
    assert_eq 3 "$RC" "$label: the check finds the differences ($(cat "$TEST_TMP/check.err"))"
    assert_eq '["1"] ["6","99"] ["2","3"]' \
        "$(jq -c '.missing, (.extra | sort), ([.different[].id] | sort)' <<<"$OUT" | tr '\n' ' ' | sed 's/ $//')" \
        "$label: missing, extra and different are exactly the hand-made ones"

    check --repair
    assert_eq 0 "$RC" "$label: check --repair repairs them ($OUT $(cat "$TEST_TMP/check.err"))"
    assert_eq true "$(jq -r .repair.done <<<"$OUT")" "$label: the repair says done"
    assert_eq '[]' "$(jq -c .repair.left <<<"$OUT")" "$label: no document left differing"
    local forced
    forced="$(jq -r .repair.forced <<<"$OUT")"
    log "$label: repair $(jq -c .repair <<<"$OUT")"
    [ "$forced" -ge 3 ] || fail "$label: documents 1, 2 and 3 hold versions above any snapshot's: written again over them (forced $forced)"
    _LIB_ASSERTS=$((_LIB_ASSERTS + 1))

    check
    assert_eq 0 "$RC" "$label: a second check is clean ($(jq -c '{missing,extra,different}' <<<"$OUT"))"
    assert_eq "$(rows_sql)" "$(docs)" "$label: every document equals its row"

    # later changes land: no version was raised past them
    extra_q "$src" "BEGIN; UPDATE \`$db\`.items SET qty = qty + 100, name = CONCAT(name, '+');
      INSERT INTO \`$db\`.items VALUES (6, 'f again', 7); COMMIT"
    wait_until 30 "$label: changes after the repair are in the engine" docs_equal_rows
    check
    assert_eq 0 "$RC" "$label: a check after those changes is clean"

    # resync over the same kind of hand-made writes: its writes are refused
    # as stale, compared, and written again
    search_delete "/$v/_doc/1" >/dev/null
    search_post "/$v/_update/2" '{"doc":{"name":"by hand again"}}' >/dev/null
    local out st=0
    out="$(ss resync --config "$TEST_TMP/$src-$mode.ini" "$alias" --ids 1,2,4 2>&1)" || st=$?
    log "$label: resync: $out"
    assert_eq 0 "$st" "$label: resync exits 0 ($out)"
    assert_contains "$out" "2 of the stale ones differed from MySQL" "$label: resync wrote the two edited by hand again"
    assert_eq "$(rows_sql)" "$(docs)" "$label: after the resync every document equals its row"

    # a document deleted by hand again and again while the check repairs it
    # (one kept-alive connection, deletes back to back): whether the repair's
    # last comparisons catch it deleted is a race (on a quiet box they do),
    # but what the repair reports must agree with itself: exit 3, not done
    # and the document named, or exit 0, done and nothing left
    local hp="${SEARCH_URL#http://}"
    python3 -c 'import http.client, sys
c = http.client.HTTPConnection(sys.argv[1], int(sys.argv[2]))
while True:
    c.request("DELETE", sys.argv[3]); c.getresponse().read()' "${hp%:*}" "${hp##*:}" "/$v/_doc/5" &
    local deleter=$!
    on_exit "kill $deleter 2>/dev/null"
    doc5_gone() { [ "$(search_count "$alias" '{"query":{"ids":{"values":["5"]}}}')" = 0 ]; }
    wait_until 10 "$label: the deleter has deleted document 5" doc5_gone
    check --repair
    kill "$deleter" 2>/dev/null; wait "$deleter" 2>/dev/null || true
    log "$label: the repair under the deleter: exit $RC, $(jq -c "{seconds, rounds, repair}" <<<"$OUT")"
    # ([clean, done, left]; clean: the check itself fell between two deletes)
    case "$RC $(jq -c '[.clean, .repair.done, .repair.left]' <<<"$OUT")" in
        '3 [false,false,["5"]]' | '0 [false,true,[]]' | '0 [true,false,[]]') _LIB_ASSERTS=$((_LIB_ASSERTS + 1)) ;;
        *) fail "$label: the repair under the deleter reports exit $RC with $(jq -c .repair <<<"$OUT")" ;;
    esac
    check --repair
    assert_eq 0 "$RC" "$label: once the deletes stop, the repair keeps it ($(jq -c .repair <<<"$OUT"))"
    assert_eq "$(rows_sql)" "$(docs)" "$label: and every document equals its row"
    daemon_stop
}

run_case src position
run_case src gtid
run_case src8 position
run_case src8 gtid
pass
