# tests/integration/takeover_lib.sh — shared by the tests where the mapping
# names an alias that is an index in the engine, another tool's (sourced
# after lib.sh): the table, and searchsync's takeover of that index checked
# end to end (sync/reindex/reindex_version.c, switch_alias).
#
# takeover_db — creates $db.items (id, name, price DECIMAL(12,2), note) with
#   TAKEOVER_ROWS rows (2000)
# takeover_config — $TEST_TMP/c.ini (source `takeover`, server id
#   TAKEOVER_SERVER_ID, metadata database $meta, engine $SEARCH_URL, pages of
#   50 rows in 2 buckets) and the mapping of $db.items as $alias, imported
# takeover_follow — searchsync with the alias $alias over $db.items on
#   $SEARCH_URL (metadata database $meta, server id TAKEOVER_SERVER_ID):
#   it builds <alias>_v1 slowly (pages of 50 rows, each read snapshot held
#   100 ms by SEARCHSYNC_TEST_READ_VIEW_PAUSE_MS) while a poller asks the
#   name for its count every 50 ms. Then:
#   - the daemon said both steps (the index found at start, replaced at the
#     switch);
#   - no count answered 404 (the name is never missing between the index's
#     deletion and the alias), and at most one answered otherwise than 200:
#     a search in flight on the old index's shards as it is deleted fails
#     (503, all shards failed), as at any index's deletion;
#   - the name is an alias of <alias>_v1 alone;
#   - every document equals the SQL oracle, and a later change is followed.

takeover_db() {
    mysql_q "CREATE DATABASE \`$db\`;
      CREATE TABLE \`$db\`.items (id INT PRIMARY KEY, name VARCHAR(50), price DECIMAL(12,2), note TEXT);
      INSERT INTO \`$db\`.items SELECT seq, CONCAT('item ', seq), seq * 1.25, IF(seq % 3 = 0, NULL, 'n')
        FROM \`$db\`.seq_1_to_${TAKEOVER_ROWS:-2000}"
}

takeover_oracle() {
    mysql_q "SELECT JSON_OBJECT('id', id, 'name', name, 'price', CAST(price AS CHAR), 'note', note)
             FROM \`$db\`.items ORDER BY id" | jq -S -c . | sort
}
takeover_engine() {
    search_refresh "$alias"
    search_post "/$alias/_search?size=10000" '{"query":{"match_all":{}},"sort":["_doc"]}' |
        jq -S -c '.hits.hits[]._source | del(.ss_version, .ss_hash, .ss_key_hash)' | sort
}
takeover_same_as_sql() { [ "$(takeover_oracle | md5sum)" = "$(takeover_engine | md5sum)" ]; }

takeover_config() {
    cat >"$TEST_TMP/c.ini" <<INI
[source]
name = takeover
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = ${TAKEOVER_SERVER_ID:-7901}
start = now
heartbeat_ms = 500
[metadata]
database = $meta
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 50
[reindex]
poll_interval_ms = 100
page_size = 50
buckets = 2
INI
    jq -n --arg db "$db" --arg alias "$alias" '{version: 1, indices: [{alias: $alias, shards: 1, replicas: 0,
        tables: [{table: ($db + ".items"), columns: [{name: "id", key: true}, {name: "name"}, {name: "price"},
                  {name: "note"}]}]}]}' >"$TEST_TMP/map.json"
    "$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/map.json" --yes >"$TEST_TMP/import.out" 2>&1 ||
        fail "import: $(cat "$TEST_TMP/import.out")"
}

takeover_follow() {
    takeover_config
    touch "$TEST_TMP/slow"
    export SEARCHSYNC_TEST_READ_VIEW_PAUSE_MS=100 SEARCHSYNC_TEST_READ_VIEW_PAUSE_IF="$TEST_TMP/slow"

    # the poller: the name's count every 50 ms, each HTTP status on a line
    (while [ ! -e "$TEST_TMP/stop-poll" ]; do
        curl -s -o "$TEST_TMP/poll.body" -w '%{http_code}\n' "$SEARCH_URL/$alias/_count"
        grep -q '"count"' "$TEST_TMP/poll.body" || cat "$TEST_TMP/poll.body" >>"$TEST_TMP/poll.errors"
        sleep 0.05
    done) >"$TEST_TMP/poll" 2>/dev/null &
    local poller=$!
    on_exit "touch '$TEST_TMP/stop-poll'; kill $poller 2>/dev/null || true"
    daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
    on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 40 lines)"; tail -40 "$TEST_TMP/run.log"; }'
    daemon_wait_log "$alias: live changes no longer written to ${alias}_v1" 120
    rm -f "$TEST_TMP/slow"
    sleep 0.5
    touch "$TEST_TMP/stop-poll"
    wait "$poller" 2>/dev/null || true

    local log polls others counts
    log="$(cat "$TEST_TMP/run.log")"
    assert_contains "$log" "$alias is an index in the engine, not an alias" "the index of the alias's name is said at start"
    assert_contains "$log" "$alias: the index of this name (not an alias) is deleted and the name made an alias of ${alias}_v1, in one step" \
        "its replacement is said at the switch"
    polls="$(wc -l <"$TEST_TMP/poll")"
    [ "$polls" -ge 5 ] || fail "the poller asked only $polls times"
    others="$(grep -c -v '^200$' "$TEST_TMP/poll" || true)"
    counts="$(sort "$TEST_TMP/poll" | uniq -c | tr -s ' \n' ' ')"
    assert_eq 0 "$(grep -c '^404$' "$TEST_TMP/poll" || true)" "of $polls counts during the build and switch, none answered 404 ($counts)"
    [ "$others" -le 1 ] || fail "$others of $polls counts answered other than 200 ($counts): at most the switch's instant may"
    if [ "$others" = 1 ]; then
        assert_eq 503 "$(grep -v '^200$' "$TEST_TMP/poll")" "the one count other than 200 is the switch's instant: 503"
        assert_contains "$(cat "$TEST_TMP/poll.errors")" '"all shards failed"' "the 503 is a search whose shards went away"
    fi
    assert_eq "${alias}_v1" "$(search_req GET "/_alias/$alias" | jq -r 'keys | join(",")')" "the name is an alias of v1 alone"
    assert_true "every document equals SQL" takeover_same_as_sql
    mysql_q "UPDATE \`$db\`.items SET name = 'live after', price = 12345678.91 WHERE id = 7; DELETE FROM \`$db\`.items WHERE id = 8"
    wait_until 20 "a later change is followed through the alias" takeover_same_as_sql
    daemon_stop
    [ "$DAEMON_RC" = 0 ] || fail "the daemon exited $DAEMON_RC"
    assert_eq "" "$(grep -E 'ERROR' "$TEST_TMP/run.log" || true)" "no error"
}
