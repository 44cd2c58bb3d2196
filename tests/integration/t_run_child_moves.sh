#!/usr/bin/env bash
# tests/integration/t_run_child_moves.sh — child documents whose parent's key
# moves to a routing of the SAME shard (t_run_random seed 617866099 once
# lost reply-478 and review-443 that way), against real MariaDB +
# OpenSearch (3 primary shards).
#
# A product's key changes and its review moves along: the daemon writes
# review-R under the new routing and copies_fix (sync/pipeline/child_copies.c) deletes
# the copy it finds under the old one, both with the transaction's version.
# When both routings hash to one shard they are ONE document there, so the
# delete must reach the engine after the write (then it is refused as not
# newer, 409); reaching it first leaves a tombstone of that version, the
# write is refused as not newer, and the review is gone. The daemon talks to
# the engine through tests/tools/fault_proxy.py in hold mode: the bulk
# request carrying review-R's write is held for a few seconds, so the copy
# lookup runs and its delete is sent meanwhile. Phase 1 then lets the write
# through; phase 2 SIGKILLs the daemon while it is held (the write never
# reaches the engine) and restarts it, which replays the transaction. After
# each phase every document of the index equals the SQL oracle
# (oracle_lib.sh).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
require_bin
command -v python3 >/dev/null || skip "python3 needed for the fault proxy and the oracle comparison"

D=$(unique_name cmoves)
meta=$(unique_name cmeta)
PIDX=$(unique_name cmprod)
flag="$TEST_TMP/hold"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$D\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${PIDX}_*?expand_wildcards=all' >/dev/null"

# ---- the demo schema, a few rows: products 1..3, a review each (11, 21,
# 31), a reply to reviews 11 and 21
sed "s/\bshop\b/$D/g" "$SEARCHSYNC_SRCDIR/sql/demo/schema.sql" | mysql_file /dev/stdin || fail "creating $D"
mysql_q "INSERT INTO products (id, name, price, created_at) VALUES
           (1, 'one', 1.00, '2024-01-01'), (2, 'two', 2.00, '2024-01-02'), (3, 'three', 3.00, '2024-01-03');
         INSERT INTO reviews (id, product_id, rating, title, author, created_at) VALUES
           (11, 1, 5, 'r11', 'anna', '2024-02-01'), (21, 2, 4, 'r21', 'bo', '2024-02-02'),
           (31, 3, 3, 'r31', 'chen', '2024-02-03');
         INSERT INTO review_replies (id, review_id, author, body, created_at) VALUES
           (111, 11, 'shop-support', 'thanks', '2024-03-01'), (211, 21, 'shop-support', 'thanks', '2024-03-02')" "$D"

# the demo mapping on $D (as t_run_random adapts it): 3 primary shards
sed "s/\"shop\./\"$D./g" "$SEARCHSYNC_SRCDIR/sql/demo/mapping.json" |
    jq --arg p "$PIDX" '
        .indices |= map(select(.alias == "products") | .alias = $p | .shards = 3)
        | .indices[].tables |= map(select(.delay_effect != true))
        | walk(if type == "object" and (.table // "" | endswith(".categories")) then del(.refresh_parent) else . end)' \
    >"$TEST_TMP/mapping.json"

# ---- the proxy: holds bulk requests that write review-11 or review-21 to
# the alias while $flag exists
python3 "$SEARCHSYNC_SRCDIR/tests/tools/fault_proxy.py" "$TEST_TMP/proxy.port" "$SEARCH_URL" \
    POST '/_bulk' "$flag" hold "\"index\":\\{\"_index\":\"$PIDX\",\"_id\":\"review-(11|21)\"" \
    2>"$TEST_TMP/proxy.err" &
proxy=$!
on_exit "kill $proxy 2>/dev/null"
wait_until 10 "the fault proxy listens" test -s "$TEST_TMP/proxy.port"

cat >"$TEST_TMP/c.ini" <<INI
[source]
name = cmoves
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $((7900 + $$ % 50))
start = now
[metadata]
database = $meta
[search]
urls = http://127.0.0.1:$(cat "$TEST_TMP/proxy.port")
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
[admin]
listen =
[log]
level = info
INI
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/mapping.json" --yes \
    >"$TEST_TMP/import.out" 2>&1 || fail "import: $(cat "$TEST_TMP/import.out")"

start_daemon() {
    echo "=== start at $(date -u +%T.%N)" >>"$TEST_TMP/run.log"
    daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
}
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 30 lines)"; tail -30 "$TEST_TMP/run.log"; }'

start_daemon
wait_until 60 "the first version of $PIDX is live" grep -q "live changes no longer written to ${PIDX}_v1" "$TEST_TMP/run.log"
sleep 1
# the rows go through the binlog: touch them all
mysql_q "UPDATE products SET status = 'active'; UPDATE reviews SET rating = rating;
         UPDATE reviews SET body = 'hello'; UPDATE review_replies SET body = 'thanks!'" "$D"
wait_checkpoint "$meta" cmoves 60
oracle_check_products "$D" "$PIDX" "initial sync"

# a product key with the same shard as product P's: from START up
shard_of() { search_get "/$PIDX/_search_shards?routing=$1" | jq -r '.shards[0][0].shard'; }
same_shard_key() {
    local want k
    want=$(shard_of "$1")
    for ((k = $2; k < $2 + 50; k++)); do
        [ "$(shard_of "$k")" = "$want" ] && { echo "$k"; return 0; }
    done
    return 1
}
B1=$(same_shard_key 1 1000) || fail "no key 1000..1049 on the shard of routing 1"
B2=$(same_shard_key 2 2000) || fail "no key 2000..2049 on the shard of routing 2"
log "routing 1 and $B1 on shard $(shard_of 1); 2 and $B2 on shard $(shard_of 2)"

move() { # P NEW: the product's key changes, its reviews move along (one transaction)
    mysql_q "START TRANSACTION; UPDATE products SET id = $2 WHERE id = $1;
             UPDATE reviews SET product_id = $2 WHERE product_id = $1; COMMIT" "$D"
}

# ---- phase 1: review-11's write held 3 s, the copy lookup runs meanwhile
touch "$flag"
move 1 "$B1"
wait_until 30 "the write of review-11 is held" test -s "$flag.held"
sleep 3
rm -f "$flag"
wait_checkpoint "$meta" cmoves 60
assert_eq 1 "$(search_count "$PIDX" '{"query":{"ids":{"values":["review-11"]}}}')" "review-11 once in the index after its product's key moved"
oracle_check_products "$D" "$PIDX" "after a move whose write was held"

# ---- phase 2: review-21's write held, the daemon SIGKILLed meanwhile (the
# write never reaches the engine), restarted: the transaction is read again
: >"$flag.held"
touch "$flag.drop" "$flag"
move 2 "$B2"
wait_until 30 "the write of review-21 is held" test -s "$flag.held"
sleep 3
daemon_kill
rm -f "$flag"
sleep 0.3
rm -f "$flag.drop"
start_daemon
wait_until 30 "the restart resumes" grep -q "resuming source cmoves" "$TEST_TMP/run.log"
wait_checkpoint "$meta" cmoves 60
assert_eq 1 "$(search_count "$PIDX" '{"query":{"ids":{"values":["review-21"]}}}')" "review-21 once in the index after a SIGKILL and the replay"
oracle_check_products "$D" "$PIDX" "after a SIGKILL while the write was held"

errs=$(grep -E ' ERROR \[|dead letter' "$TEST_TMP/run.log" | head -5 || true)
assert_eq "" "$errs" "no ERROR and no dead letter in the daemon log"
pass
