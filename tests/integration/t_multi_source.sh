#!/usr/bin/env bash
# t_multi_source — three MariaDB servers and one MySQL 8 (tests/harness/
# mysql8.sh), each a source read by a daemon of its own, feeding ONE alias
# (docs/cluster.md, "Several sources, one index"; docs/mapping.md, "Several
# sources"). The suite's MariaDB keeps the shared metadata; east, west,
# north (MariaDB) and south (MySQL 8) are servers of this test (lib.sh,
# extra_mariadb), each with the same schema and overlapping keys, so every
# document's id must carry its source. Against the union of the four
# servers' SQL oracles, after each phase:
#   1. first sync: the four daemons started together build version 1 once,
#      each source's part run by its own daemon, at most 2 jobs at once
#      (the build slots) and 3 mid-build refreshes in all (dealt out over
#      the parts);
#   2. a writer on every server; west's daemon SIGKILLed and started again;
#   3. north's server SIGKILLed for a while (20 s; 60 s with SEARCHSYNC_LONG)
#      once its daemon has read everything: the others flow (a change on east
#      is searchable, their writers go on), `status` from east names north as
#      down, a reindex queued meanwhile builds the other sources' parts and
#      waits for north's (status says so; the alias stays on the live
#      version); before north comes back the live version equals the union
#      of the others' oracles and north's as it went down, and version 2
#      holds exactly the others' rows; then north's server comes back and
#      the version goes live with every source's rows, writers on all;
#   4. every writer stopped, each daemon's checkpoint at its server's end;
#   5. check with planted differences in two sources' documents (east: some
#      deleted; west: some edited, one added): each source's check finds its
#      own, and only its own; --repair fixes them; a second check finds none.
# Seeded (SEARCHSYNC_SEED): the writers' statements. In the load tier.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
. "$(dirname "$0")/multi_lib.sh"
require_bin

SEED="${SEARCHSYNC_SEED:-$RANDOM}"
log "seed $SEED"
SRC=(east west north south)
OTHERS=(east west south) # the sources that flow while north is down
ORDERS=300
meta="$(unique_name ssms)"
alias="$(unique_name orders)"
mapping_name="shop_$$"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${alias}_v*?ignore_unavailable=true' >/dev/null"
on_exit '[ "$rc" = 0 ] || { for f in "$TEST_TMP"/*.log; do echo "--- $f (last 30 lines)"; tail -30 "$f"; done; echo "--- seed $SEED"; }'

t0=$(date +%s)
extra_mariadb east west north -- south
log "four source servers up in $(($(date +%s) - t0)) s: east :$(extra_port east), west :$(extra_port west), north :$(extra_port north) (MariaDB), south :$(extra_port south) (MySQL $(extra_q south 'SELECT VERSION()'))"

# ---- the same schema on every server, rows of their own under the same keys
n=0
for s in "${SRC[@]}"; do n=$((n + 1)); shop_schema "$s" "$n" "$ORDERS"; done

config() { # SOURCE SERVER_ID
    { source_ini "$1" $2
      cat <<INI
[cluster]
node_id = $1-node
[log]
level = info
INI
    } >"$TEST_TMP/$1.ini"
}
config east 4301
config west 4302
config north 4303
config south 4304

shop_mapping "$TEST_TMP/m.json"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/east.ini" --yes "$TEST_TMP/m.json" \
    >"$TEST_TMP/import.out" 2>&1 || fail "mapping import: $(cat "$TEST_TMP/import.out")"
assert_contains "$(cat "$TEST_TMP/import.out")" "plan for mapping $mapping_name, from source east" \
    "the import names the mapping the sources share"

alias_target() { search_get "/_alias/$alias" | jq -r 'keys[0]'; }
status_json() { # SOURCE — status --json of that source's configuration (its exit status ignored)
    "$SEARCHSYNC_BIN" status --config "$TEST_TMP/$1.ini" --json 2>/dev/null || true
}
north_field() { # JQ over north's entry in east's status
    status_json east | jq -r --arg a "$alias" ".indices[] | select(.alias == \$a) | .sources[] | select(.name == \"north\") | $1"
}

# ---- 1. first sync: four daemons started together, one version 1
for s in "${SRC[@]}"; do dstart "$s"; done
for s in "${SRC[@]}"; do dwait_log "$s" "index config(s) of source $s" 60; done
wait_until 180 "version 1 of $alias is live" version_is 1
queued=0
for s in "${SRC[@]}"; do
    dlog "$s" | grep -q "version 1 queued" && queued=$((queued + 1))
done
assert_eq 1 "$queued" "version 1 is queued once, by one of the four daemons"
run_parts() { # VERSION [WHAT] — "source=WHAT,..." over the jobs of that version's run (WHAT: default the documents they wrote)
    mysql_q "SELECT GROUP_CONCAT(CONCAT(s, '=', n) ORDER BY s) FROM (SELECT j.source s, ${2:-SUM(j.docs_written)} n
        FROM \`$meta\`.reindex_run_jobs j JOIN \`$meta\`.reindex_runs r ON r.id = j.run_id
        WHERE r.alias = '$alias' AND r.version = $1 AND j.status = 'done' GROUP BY j.source) t"
}
assert_eq "east=$ORDERS,north=$ORDERS,south=$ORDERS,west=$ORDERS" "$(run_parts 1)" \
    "version 1: each source's part wrote its server's orders"
# the four daemons' jobs share the index's 2 build slots (index_parallel_jobs
# in multi_lib.sh): at no time did more than 2 of its 8 jobs run at once
# (each job's time from its first acknowledged page to its end)
at_once="$(mysql_q "SELECT MAX(n) FROM (SELECT (SELECT COUNT(*) FROM \`$meta\`.reindex_run_jobs b
    WHERE b.run_id = a.run_id AND b.started_at <= a.started_at AND b.finished_at > a.started_at) n
    FROM \`$meta\`.reindex_run_jobs a JOIN \`$meta\`.reindex_runs r ON r.id = a.run_id
    WHERE r.alias = '$alias' AND r.version = 1) t")"
log "version 1: at most $at_once of its jobs ran at once"
[ "$at_once" -le 2 ] || fail "version 1: $at_once jobs ran at once across the sources, over the index's 2 build slots"
_LIB_ASSERTS=$((_LIB_ASSERTS + 1))
# the mid-build refreshes are dealt out over the sources' parts: the version
# is refreshed at most 3 times before its switch, not 3 times per source
mids="$(for s in "${SRC[@]}"; do dlog "$s"; done | grep -c "$alias v1: refreshed at" || true)"
log "version 1: $mids mid-build refresh(es) across the four parts"
[ "$mids" -le 3 ] || fail "version 1 was refreshed $mids times mid-build across its parts (at most 3)"
_LIB_ASSERTS=$((_LIB_ASSERTS + 1))
assert_eq "$((4 * ORDERS))" "$(search_count "$alias")" "the alias holds every server's orders"
assert_eq "$ORDERS" "$(search_count "$alias" '{"query":{"term":{"ss_source":"west"}}}')" \
    "west's documents carry ss_source"
assert_eq '"east:42"' "$(search_get "/$alias/_doc/east:42" | jq -c ._id)" "ids carry the source"
check_oracle "first sync"

# ---- 2. a writer on every server; west's daemon SIGKILLed mid-stream
# the writers' seeds: SEED*10 + the server's number, + 4 at each restart
wseed() { # SOURCE ROUND
    local i
    for i in 0 1 2 3; do [ "${SRC[$i]}" = "$1" ] && echo $((SEED * 10 + i + 4 * $2)); done
}
for s in "${SRC[@]}"; do wstart "$s" "$(wseed "$s" 0)"; done
sleep 8
dkill west
log "west's daemon SIGKILLed under its writer"
sleep 4
dstart west
dwait_log west "index config(s) of source west" 60
sleep 6

# ---- 3. north's server down for a while: the others flow, status names it,
# a build waits for north's part and only for it
DOWN_S=20
[ -z "${SEARCHSYNC_LONG:-}" ] || DOWN_S=60
wstop north
caught_up 60 north
# north's documents stay as they are while its server is down
oracle_of north >"$TEST_TMP/north.oracle" || fail "the oracle query on north"
extra_ctl north kill >/dev/null 2>&1 || fail "killing north's server"
down_at=$(date +%s)
log "north's server SIGKILLed"
north_up_is() { [ "$(north_field .source_up)" = "$1" ]; }
wait_until 30 "east's status says north's server is down" north_up_is false
st=0; "$SEARCHSYNC_BIN" status --config "$TEST_TMP/east.ini" >"$TEST_TMP/status.txt" 2>&1 || st=$?
assert_eq 3 "$st" "status from east: something waits for an operator (exit 3)"
assert_contains "$(cat "$TEST_TMP/status.txt")" "north  DOWN for" "status from east names north as down"
extra_q east "INSERT INTO shop.orders VALUES (100001, 'marker', 1.00, 'new')"
marker_found() { [ "$(search_count "$alias" '{"query":{"ids":{"values":["east:100001"]}}}')" = 1 ]; }
wait_until 30 "a change on east is searchable while north is down" marker_found
"$SEARCHSYNC_BIN" reindex --config "$TEST_TMP/east.ini" "$alias" --no-wait >"$TEST_TMP/reindex.out" 2>&1 ||
    fail "reindex while north is down: $(cat "$TEST_TMP/reindex.out")"
v2="$(building)"
assert_eq 2 "$v2" "version 2 is being built"
part_done() { # SOURCE — its part planned and every job of it done
    status_json east | jq -e --arg a "$alias" --arg s "$1" '.indices[] | select(.alias == $a) | .sources[]
        | select(.name == $s) | .part.planned and .part.jobs > 0 and .part.jobs == .part.jobs_done' >/dev/null
}
parts_done() { part_done east && part_done west && part_done south; }
wait_until 120 "the parts of version 2 of every source but north are done" parts_done
# the others keep writing (into version 1 and version 2) for the rest of north's outage
while [ $(($(date +%s) - down_at)) -lt "$DOWN_S" ]; do sleep 1; done
assert_eq "${alias}_v1" "$(alias_target)" "the alias stays on version 1 while north's part waits"
assert_eq 2 "$(building)" "version 2 waits"
waits="$(status_json east | jq -r --arg a "$alias" '.indices[] | select(.alias == $a) | .waits_for')"
assert_contains "$waits" "source north: its part is not planned yet (its server is down" \
    "status says the build waits for north, whose server is down"
# a part that ran to its end is not started again while the build waits
# for another source (east's daemon is not restarted in this phase)
starts="$(dlog east | grep -cE "$alias: (building version 2|version 2: no job of source east left)")"
assert_eq 1 "$starts" "east's runner of version 2 started once while the build waits ($starts starts in its log)"
for s in "${OTHERS[@]}"; do wstop "$s"; done
caught_up 90 "${OTHERS[@]}"
for s in "${OTHERS[@]}"; do oracle_of "$s" >"$TEST_TMP/$s.oracle" || fail "the oracle query on $s"; done
check_docs "north down $(($(date +%s) - down_at)) s: the live version" "$alias" "${OTHERS[@]}" north
check_docs "north down: the other sources' parts of version 2 with their live changes" "${alias}_v2" "${OTHERS[@]}"
log "north down $(($(date +%s) - down_at)) s; the build waits: $waits"
extra_ctl north restart >"$TEST_TMP/north.restart.log" 2>&1 || fail "north's server did not restart: $(tail "$TEST_TMP/north.restart.log")"
log "north's server back after $(($(date +%s) - down_at)) s"
for s in "${SRC[@]}"; do wstart "$s" "$(wseed "$s" 1)"; done
wait_until 180 "version 2 goes live once north's part is in" version_is 2
assert_eq "${alias}_v2" "$(alias_target)" "the alias moved to version 2"
dwait_log north "version 2: the part of source north planned" 5
assert_eq "east=2,north=2,south=2,west=2" "$(run_parts 2 'COUNT(*)')" "version 2: each source ran its 2 bucket jobs"
# north's daemon writes its state on its own second-by-second thread: the
# switch can come first, so give the state a bounded while and say how long
north_up() { [ "$(north_field .source_up)" = true ]; }
up_t0=$(date +%s)
wait_until 30 "north is up again in east's status" north_up
log "north shown up in east's status $(($(date +%s) - up_t0)) s after version 2 went live"

# ---- 4. every writer stopped; every checkpoint at its server's end
sleep 6
for s in "${SRC[@]}"; do wstop "$s"; done
for s in "${SRC[@]}"; do log "$s: $(grep '^writer:' "$TEST_TMP/$s.writer.log" | tr '\n' ' ')"; done
caught_up 120 "${SRC[@]}"
check_oracle "after the writers, a daemon killed, a server down and a reindex across sources"

# ---- 5. check per source, with planted differences on two sources' documents
v="${alias}_v$(version)"
mapfile -t gone < <(extra_q east "SELECT id FROM shop.orders WHERE id < 100000 ORDER BY id LIMIT 3")
mapfile -t edit < <(extra_q west "SELECT id FROM shop.orders ORDER BY id DESC LIMIT 2")
for k in "${gone[@]}"; do search_delete "/$v/_doc/east:$k" >/dev/null; done
for k in "${edit[@]}"; do search_post "/$v/_update/west:$k" '{"doc":{"status":"tampered"}}' >/dev/null; done
search_put "/$v/_doc/west:999999" '{"id":999999,"status":"not in MySQL","ss_source":"west"}' >/dev/null
search_refresh "$alias"
check() { # SOURCE [ARGS] — check --json into $TEST_TMP/SOURCE.check.json, its exit status echoed
    local st=0
    "$SEARCHSYNC_BIN" check --config "$TEST_TMP/$1.ini" --json --settle 20 "${@:2}" "$alias" \
        >"$TEST_TMP/$1.check.json" 2>"$TEST_TMP/$1.check.err" || st=$?
    echo "$st"
}
assert_eq 3 "$(check east)" "east's check finds differences (exit 3; $(tail -2 "$TEST_TMP/east.check.err"))"
assert_eq "$(printf 'east:%s\n' "${gone[@]}" | sort)" "$(jq -r '.missing[]' "$TEST_TMP/east.check.json" | sort)" \
    "east's check: exactly its deleted documents are missing"
assert_eq "" "$(jq -r '(.extra + [.different[].id])[]' "$TEST_TMP/east.check.json")" \
    "east's check does not report west's documents"
assert_eq 3 "$(check west)" "west's check finds differences"
assert_eq "$(printf 'west:%s\n' "${edit[@]}" | sort)" "$(jq -r '.different[].id' "$TEST_TMP/west.check.json" | sort)" \
    "west's check: exactly its edited documents differ"
assert_eq "west:999999" "$(jq -r '.extra[]' "$TEST_TMP/west.check.json")" "west's check: the added document is extra"
assert_eq "" "$(jq -r '.missing[]' "$TEST_TMP/west.check.json")" "west's check does not report east's documents"
for s in north south; do
    assert_eq 0 "$(check "$s")" "$s's check finds nothing ($(jq -c '{missing,extra,different}' "$TEST_TMP/$s.check.json" 2>/dev/null))"
done
assert_eq 0 "$(check east --repair)" "east's check --repair repairs its documents"
assert_eq 0 "$(check west --repair)" "west's check --repair repairs its documents"
for s in "${SRC[@]}"; do
    assert_eq 0 "$(check "$s")" "a second check of $s finds nothing ($(jq -c '{missing,extra,different}' "$TEST_TMP/$s.check.json" 2>/dev/null))"
done
check_oracle "after the checks and repairs"

# the daemons stop cleanly
for s in "${SRC[@]}"; do dstop "$s"; done
log "every document equals the union of the four servers' oracles; $(($(date +%s) - t0)) s"
pass
