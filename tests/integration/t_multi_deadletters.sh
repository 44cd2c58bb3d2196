#!/usr/bin/env bash
# t_multi_deadletters — dead letters of two sources feeding one alias
# (docs/operations.md, "Dead letters of several sources"). Two MariaDB
# servers, east and west (lib.sh's extra_mariadb, multi_lib.sh's shop with
# the same keys on both), each read by a daemon of its own. A conflict is
# planted in the engine: the live version may hold at most 3 nested items a
# document (index.mapping.nested_objects.limit, a dynamic setting), so an
# order given a 4th item on either server is refused (400) and becomes a
# dead letter of its source, while other changes flow. Then:
#   - each source's list (the command and its daemon's API) holds exactly its
#     own, each naming its source; --source / ?source= show the other's;
#   - east's binlog is ahead of west's, so east's versions are greater than
#     west's for the same key (1001 on both): were versions compared across
#     sources, west's would lose to east's;
#   - the limit is raised (the fix); east's configuration replays: only
#     east's dead letters go, west's stay (a replay of west's from east's
#     configuration is refused, exit 2); west's daemon replays its own
#     through its API;
#   - each replayed document carries the version of its own dead letter, and
#     the alias equals the union of the two servers' SQL oracles;
#   - then a reindex across both sources with west's server down: the
#     command follows each source's part in `status`'s words (east's jobs
#     done, west DOWN, the switch waiting for west's part), and the version
#     goes live once west's server is back, equal to the union again.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
. "$(dirname "$0")/multi_lib.sh"
require_bin

SRC=(east west)
meta="$(unique_name ssmd)"
alias="$(unique_name orders)"
mapping_name="shopdl_$$"
TOKEN="$(openssl rand -hex 16)"
export SEARCHSYNC_ADMIN_TOKEN="$TOKEN"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
on_exit '[ "$rc" = 0 ] || for f in "$TEST_TMP"/*.log; do echo "--- $f (last 30 lines)"; tail -30 "$f"; done'

t0=$(date +%s)
extra_mariadb east west
shop_schema east 1 40
shop_schema west 2 40

declare -A APORT
config() { # SOURCE SERVER_ID
    APORT[$1]="$(free_port)"
    { MULTI_BUCKETS=1 MULTI_POLL_MS=300 source_ini "$1" $2
      cat <<INI
[admin]
listen = 127.0.0.1:${APORT[$1]}
[log]
level = info
INI
    } >"$TEST_TMP/$1.ini"
}
config east 4401
config west 4402
shop_mapping "$TEST_TMP/m.json"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/east.ini" --yes "$TEST_TMP/m.json" \
    >"$TEST_TMP/import.out" 2>&1 || fail "mapping import: $(cat "$TEST_TMP/import.out")"
for s in "${SRC[@]}"; do dstart "$s"; done
wait_until 90 "version 1 of $alias is live" version_is 1
check_oracle "first sync"

api() { # SOURCE METHOD PATH [BODY] — that source's daemon's admin API
    curl -sS -m 60 -X "$2" -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
        ${4:+--data-binary "$4"} "http://127.0.0.1:${APORT[$1]}$3"
}
dl() { # SOURCE [ARGS] — `dead-letters` of that source's configuration
    "$SEARCHSYNC_BIN" dead-letters "${@:2}" --config "$TEST_TMP/$1.ini"
}
rows_of() { mysql_q "SELECT COUNT(*) FROM \`$meta\`.dead_letters WHERE source = '$1'"; }

# ---- east's binlog well ahead of west's: a table no index reads
extra_q east "CREATE TABLE shop.pad (id INT PRIMARY KEY, b LONGTEXT);
  INSERT INTO shop.pad VALUES (1, REPEAT('x', 2000000))"

# ---- the conflict: at most 3 nested items a document in the live version
search_put "/${alias}_v1/_settings" '{"index.mapping.nested_objects.limit": 3}' >/dev/null ||
    fail "setting the nested objects limit"
# refused on each server: a new order 1001 with 4 items (the same key on
# both), an order given 2 more items (5 on east, 5 and 9 on west); accepted
# meanwhile: an order with one item, a status change
plant() { # SOURCE ORDERS_GIVEN_ITEMS...
    local s=$1 k sql="BEGIN; INSERT INTO orders VALUES (1001, '$1-new', 10.50, 'new');
      INSERT INTO order_items VALUES (5001, 1001, 'sku-a', 1), (5002, 1001, 'sku-b', 2),
        (5003, 1001, 'sku-c', 3), (5004, 1001, 'sku-d', 4); COMMIT;
      INSERT INTO orders VALUES (1002, '$1-small', 3.00, 'new');
      INSERT INTO order_items VALUES (5005, 1002, 'sku-e', 1);
      UPDATE orders SET status = 'paid' WHERE id = 7;"
    shift
    for k in "$@"; do
        sql="$sql INSERT INTO order_items VALUES ($((6000 + 2 * k)), $k, 'sku-x', 1), ($((6001 + 2 * k)), $k, 'sku-y', 1);"
    done
    extra_q "$s" "$sql" shop || fail "the planted changes on $s"
}
plant east 5
plant west 5 9
caught_up 60 east west
assert_eq 2 "$(search_count "$alias" '{"query":{"ids":{"values":["east:1002","west:1002"]}}}')" \
    "the accepted changes of both sources are searchable"
assert_eq paid "$(search_doc "$alias" west:7 | jq -r .status)" "west's status change flowed"
assert_eq 0 "$(search_count "$alias" '{"query":{"ids":{"values":["east:1001","west:1001"]}}}')" \
    "the orders with 4 items are refused on both sources"

# ---- each source lists its own, naming it
dl east list --index "$alias" >"$TEST_TMP/east.dl" || fail "east's list"
dl west list --index "$alias" >"$TEST_TMP/west.dl" || fail "west's list"
ids() { jq -r '.doc_id' "$1" | sort -u | tr '\n' ' '; } # (a document may have several)
ne="$(grep -c . "$TEST_TMP/east.dl")"
nw="$(grep -c . "$TEST_TMP/west.dl")"
log "dead letters: east $ne, west $nw"
assert_eq "east:1001 east:5 " "$(ids "$TEST_TMP/east.dl")" "east's list: exactly east's refused documents"
assert_eq "west:1001 west:5 west:9 " "$(ids "$TEST_TMP/west.dl")" "west's list: exactly west's refused documents"
assert_eq "east" "$(jq -r .source "$TEST_TMP/east.dl" | sort -u)" "each of east's dead letters names its source"
assert_contains "$(jq -r .error "$TEST_TMP/west.dl" | head -1)" "nested" "with the engine's error"
assert_eq "$(ids "$TEST_TMP/west.dl")" "$(dl east list --source west | jq -r .doc_id | sort -u | tr '\n' ' ')" \
    "east's configuration lists west's with --source west"
a="$(api east GET /api/v1/dead-letters)"
assert_eq "$ne east" "$(jq -r '"\(.total) \([.dead_letters[].source] | unique | join(","))"' <<<"$a")" \
    "east's daemon's API: its $ne dead letters, of source east"
a="$(api east GET "/api/v1/dead-letters?source=west")"
assert_eq "$nw west" "$(jq -r '"\(.total) \([.dead_letters[].source] | unique | join(","))"' <<<"$a")" \
    "east's daemon's API with ?source=west: west's $nw"
# (of a document's several, the newest: what the engine keeps after a replay)
ve="$(jq -r 'select(.doc_id == "east:1001") | .version' "$TEST_TMP/east.dl" | sort -n | tail -1)"
vw="$(jq -r 'select(.doc_id == "west:1001") | .version' "$TEST_TMP/west.dl" | sort -n | tail -1)"
log "versions of key 1001: east $ve, west $vw"
assert_true "east's version of key 1001 ($ve) is greater than west's ($vw): its binlog is ahead" \
    python3 -c "import sys; sys.exit(0 if $ve > $vw else 1)"

# ---- the fix, then east's configuration replays east's only
search_put "/${alias}_v1/_settings" '{"index.mapping.nested_objects.limit": null}' >/dev/null ||
    fail "restoring the nested objects limit"
st=0; dl east replay --source west >"$TEST_TMP/r.out" 2>&1 || st=$?
assert_eq 2 "$st" "replaying west's dead letters from east's configuration is refused (exit 2)"
assert_contains "$(cat "$TEST_TMP/r.out")" "replay those of source west with its configuration" \
    "and the message says where to replay them"
out="$(dl east replay --index "$alias" 2>&1)" || fail "east's replay: $out"
assert_contains "$out" "replayed $ne dead letter(s) of index $alias; 0 left" "east's replay: its $ne"
assert_eq "0 $nw" "$(rows_of east) $(rows_of west)" "west's dead letters stay after east's replay"
assert_eq "0 2" "$(search_count "$alias" '{"query":{"ids":{"values":["west:1001"]}}}') $(search_doc "$alias" west:9 | jq '.items | length')" \
    "west's changes are still missing (order 1001 absent, order 9 with its 2 items of before)"
assert_eq "$ve" "$(search_get "/$alias/_doc/east:1001" | jq -r ._version)" \
    "east:1001 carries the version of its dead letter"

# ---- west's daemon replays its own through its API
a="$(api west POST /api/v1/dead-letters/replay '{}')"
assert_eq "{\"replayed\":$nw,\"left\":0}" "$(jq -c . <<<"$a")" "west's API replay: its $nw, none left"
assert_eq "0 0" "$(rows_of east) $(rows_of west)" "no dead letter left"
assert_eq "$vw" "$(search_get "/$alias/_doc/west:1001" | jq -r ._version)" \
    "west:1001 carries its own (smaller) version: never compared with east's"
check_oracle "after both sources' replays"

# ---- a reindex across both sources, followed, with west's server down
west_up_is() {
    [ "$("$SEARCHSYNC_BIN" status --config "$TEST_TMP/east.ini" --json 2>/dev/null | jq -r --arg a "$alias" \
        '.indices[] | select(.alias == $a) | .sources[] | select(.name == "west") | .source_up')" = "$1" ]
}
extra_ctl west kill >/dev/null 2>&1 || fail "killing west's server"
wait_until 30 "east's status says west's server is down" west_up_is false
timeout 150 "$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/east.ini" "$alias" >"$TEST_TMP/follow.out" 2>&1 &
fpid=$!
follow_says() { grep -qE -- "$1" "$TEST_TMP/follow.out"; }
wait_until 60 "reindex says the switch waits for west" follow_says \
    "^  the version being built waits for source west: its part is not planned yet \(its server is down for [0-9]+ s"
wait_until 30 "reindex shows east's part done" follow_says "^  east  read by .*; its part of the build: 1/1 job\(s\) done, [0-9]+ rows read"
assert_true "reindex shows west as down, its part not planned ($(cat "$TEST_TMP/follow.out"))" \
    follow_says "^  west  DOWN for [0-9]+ s \(.*\), read by .*; its part of the build: not planned"
assert_eq 1 "$(version)" "the alias stays on version 1 while west's part waits"
extra_ctl west restart >"$TEST_TMP/west.restart.log" 2>&1 || fail "west's server did not restart: $(tail "$TEST_TMP/west.restart.log")"
st=0; wait "$fpid" || st=$?
log "reindex across sources, followed: $(cat "$TEST_TMP/follow.out")"
assert_eq 0 "$st" "the followed reindex ends once west's part is in"
assert_true "reindex says the version is live" follow_says "^$alias v2 is live: "
for s in east west; do
    n="$(extra_q "$s" "SELECT COUNT(*) FROM shop.orders")"
    assert_true "reindex says what $s's part did" follow_says \
        "^  $s  its part: 1 job\(s\), $n rows read, $n documents written, 0 rejected"
done
# a change on each (after its restart west's binlog is a new file, which an
# idle reader's checkpoint reaches only with a transaction in it)
for s in east west; do extra_q "$s" "UPDATE shop.orders SET status = 'sent' WHERE id = 3"; done
caught_up 60 east west
check_oracle "version 2, built across both sources with one down for a while"
for s in "${SRC[@]}"; do dstop "$s"; done
log "$(($(date +%s) - t0)) s"
pass
