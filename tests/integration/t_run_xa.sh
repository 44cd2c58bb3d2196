#!/usr/bin/env bash
# tests/integration/t_run_xa.sh — two-phase XA transactions (XA PREPARE, later
# XA COMMIT or XA ROLLBACK from another session) followed by `searchsync run`
# against real MariaDB + OpenSearch (sync/pipeline/xa_prepared.h). The prepared part is
# in the binlog before its rows are visible; its XA COMMIT is a later binlog
# transaction with no rows. On the demo shop (nested SKUs kept by area updates,
# reviews and replies as child documents, the row-image brands index):
#   1. prepared, then transactions of other sessions touching the same
#      documents through other rows, then committed: while it is open the
#      documents keep their content from before it (the row-image brand
#      too) and the saved checkpoint stays before the PREPARE; after the
#      commit every document equals the SQL oracle;
#   2. prepared, then rolled back: nothing of it shows;
#   3. prepared, the daemon SIGKILLed, committed while it is down: the
#      restart reads the PREPARE again (the held checkpoint) and rebuilds at
#      the commit;
#   4. prepared, the daemon stopped (SIGTERM, its drain saves the held
#      checkpoint) and started again while still prepared, then committed;
#   5. one transaction prepared before two others, committed after them, in
#      the other order; one-phase XA (XA COMMIT ... ONE PHASE); one on a
#      table no index reads, which does not hold the checkpoint back;
#   6. thirty prepared, each committed on its own while the daemon is idle:
#      it reads each XA COMMIT at once, before the server has committed it
#      in the engine (it logs it first), and waits for XA RECOVER to drop it
#      before reading its documents.
# After each step the products and brands indices equal the SQL oracle
# (tests/integration/oracle_lib.sh). The daemon warns of no XA COMMIT without
# its PREPARE and logs no error. XA_VERSIONS=gtid runs it all with [source]
# versions = gtid (the held checkpoint is then a GTID set:
# t_run_xa_gtid.sh).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
require_bin

D=$(unique_name xshop)
meta=$(unique_name xmeta)
PIDX=$(unique_name xproducts)
BIDX=$(unique_name xbrands)
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$D\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1"
# (hooks run last added first: a transaction left prepared holds its locks)
on_exit "mysql_q 'XA RECOVER' 2>/dev/null | awk -F'\t' '\$4 ~ /^$D/ {print \$4}' | while read -r x; do mysql_q \"XA ROLLBACK '\$x'\" >/dev/null 2>&1; done"
on_exit "curl -s -m 30 -XDELETE '$SEARCH_URL/${PIDX}_v*,${BIDX}_v*' >/dev/null 2>&1"

log "generating the demo shop into $D"
bash "$SEARCHSYNC_SRCDIR/sql/demo/generate.sh" --products 40 --db "$D" \
    --host "$MYSQL_HOST" --port "$MYSQL_PORT" >"$TEST_TMP/gen.out" 2>&1 || {
    cat "$TEST_TMP/gen.out" >&2; fail "generate.sh failed"; }
oracle_demo_mapping "$D" "$PIDX" "$BIDX" >"$TEST_TMP/mapping.json"
assert_eq 1 "$(jq '[.. | objects | select(.area_update == true)] | length' "$TEST_TMP/mapping.json")" "mapping: SKUs kept by area updates"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = xa
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $((7900 + $$ % 90))
start = now
heartbeat_ms = 300
versions = ${XA_VERSIONS:-position}
[metadata]
database = $meta
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
[admin]
listen =
[log]
level = debug
INI
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$TEST_TMP/mapping.json" --yes \
    >"$TEST_TMP/import.out" 2>&1 || fail "import: $(cat "$TEST_TMP/import.out")"
RUNLOG="$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 40 lines)"; tail -40 "$RUNLOG"; }'
daemon_start "$TEST_TMP/c.ini" "$RUNLOG"
wait_until 90 "the first sync of $PIDX and $BIDX" bash -c \
    "curl -sf '$SEARCH_URL/_alias/$PIDX' >/dev/null && curl -sf '$SEARCH_URL/_alias/$BIDX' >/dev/null"
daemon_wait_ready
log "first sync done"
mysql_q "UPDATE products SET name = CONCAT(name, '') WHERE id = 1" "$D"
wait_checkpoint "$meta" xa 60

check_all() { # LABEL: both indices equal the SQL oracle
    local o="$TEST_TMP/oracle"
    wait_checkpoint "$meta" xa 60
    oracle_check_products "$D" "$PIDX" "$1"
    engine_dump "$BIDX" "$TEST_TMP/brands.engine" 2>/dev/null || fail "$1: engine dump of $BIDX"
    _LIB_ASSERTS=$((_LIB_ASSERTS + 1))
    compare_docs "$TEST_TMP/brands.engine" "$o/brands.oracle" --numbers value --ignore-field ss_version \
        --ignore-field ss_hash --ignore-field ss_key_hash --label "$BIDX ($1)" >"$TEST_TMP/cmp.brands" ||
        { cat "$TEST_TMP/cmp.brands"; fail "$1: the brands index differs from the SQL oracle"; }
}
# an XA transaction prepared by a session that then goes away (the prepared
# transaction stays, to be ended by another session)
xa_prepare() { mysql_q "XA START '$1'; $2; XA END '$1'; XA PREPARE '$1'" "$D" || fail "XA PREPARE $1"; }
xa_end() { mysql_q "XA $1 '$2'" "$D" || fail "XA $1 $2"; }
doc_field() { # ALIAS ID JQ
    curl -s "$SEARCH_URL/$1/_doc/$2" | jq -r "$3"
}
q() { mysql_q "$1" "$D"; }
held_before() { # FILE POS: the saved checkpoint is before FILE:POS (a PREPARE's end)
    ! checkpoint_reached "$meta" xa "$1" "$2"
}

# the rows each step changes: products with SKUs, a review, a brand
p1=$(q "SELECT product_id FROM skus GROUP BY product_id HAVING COUNT(*) >= 2 ORDER BY product_id LIMIT 1")
p2=$(q "SELECT product_id FROM skus WHERE product_id > $p1 GROUP BY product_id HAVING COUNT(*) >= 2 ORDER BY product_id LIMIT 1")
p3=$(q "SELECT id FROM products WHERE id NOT IN ($p1, $p2) ORDER BY id LIMIT 1")
s1=$(q "SELECT MIN(id) FROM skus WHERE product_id = $p1")
s2=$(q "SELECT MAX(id) FROM skus WHERE product_id = $p1")
r1=$(q "SELECT MIN(id) FROM reviews")
b1=$(q "SELECT MIN(id) FROM brands")
[ -n "$p1" ] && [ -n "$p2" ] && [ -n "$p3" ] && [ -n "$r1" ] && [ -n "$b1" ] || fail "the demo lacks the rows the steps change"
rp1=$(q "SELECT product_id FROM reviews WHERE id = $r1")
brand_name0=$(doc_field "$BIDX" "$b1" ._source.name)

# ---- 1. prepared; others change the same documents; committed
log "1. prepared, others beside, committed"
xa_prepare "${D}_a1" "UPDATE products SET name = 'xa one', price = price + 1 WHERE id = $p1;
    UPDATE skus SET stock = stock + 100 WHERE id = $s1;
    UPDATE reviews SET title = 'xa one' WHERE id = $r1;
    UPDATE brands SET name = CONCAT(name, ' xa') WHERE id = $b1;
    INSERT IGNORE INTO product_tags (product_id, tag_id) SELECT $p1, MAX(id) FROM tags"
read -r f0 pos0 <<<"$(mysql_binlog_pos)" # the PREPARE's end
q "UPDATE skus SET color = 'beside xa' WHERE id = $s2; UPDATE products SET name = 'beside one' WHERE id = $p3"
wait_until 30 "the transaction after the PREPARE synced" bash -c \
    "[ \"\$(curl -s '$SEARCH_URL/$PIDX/_doc/$p3' | jq -r ._source.name)\" = 'beside one' ]"
sleep 1 # checkpoint saves every 100 ms
assert_true "the checkpoint stays before the open PREPARE" held_before "$f0" "$pos0"
assert_eq "beside xa" "$(doc_field "$PIDX" "$p1" "._source.skus[] | select(.id == $s2) | .color")" "the other session's SKU change shows"
assert_ne "xa one" "$(doc_field "$PIDX" "$p1" ._source.name)" "the prepared change does not show before its commit"
assert_eq "$brand_name0" "$(doc_field "$BIDX" "$b1" ._source.name)" "nor its row-image brand"
xa_end COMMIT "${D}_a1"
check_all "prepared, others beside, committed"
assert_eq "xa one" "$(doc_field "$PIDX" "$p1" ._source.name)" "the committed change shows"
assert_eq "xa one" "$(doc_field "$PIDX" "review-$r1?routing=$rp1" ._source.title)" "on the child document too"

# ---- 2. prepared, rolled back
log "2. prepared, rolled back"
xa_prepare "${D}_r1" "UPDATE products SET name = 'rolled back' WHERE id = $p2;
    UPDATE brands SET name = 'rolled back' WHERE id = $b1; DELETE FROM skus WHERE id = $s2"
q "UPDATE products SET price = price + 2 WHERE id = $p3"
xa_end ROLLBACK "${D}_r1"
check_all "prepared, rolled back"

# ---- 3. prepared, SIGKILL, committed while the daemon is down
log "3. prepared, SIGKILL, committed while the daemon is down"
xa_prepare "${D}_k1" "UPDATE products SET name = 'xa killed' WHERE id = $p2;
    UPDATE skus SET price = price + 3 WHERE id = $s1; UPDATE brands SET country = 'XK' WHERE id = $b1"
read -r f0 pos0 <<<"$(mysql_binlog_pos)"
q "UPDATE products SET name = 'beside three' WHERE id = $p3"
wait_until 30 "the transaction after the PREPARE synced" bash -c \
    "[ \"\$(curl -s '$SEARCH_URL/$PIDX/_doc/$p3' | jq -r ._source.name)\" = 'beside three' ]"
sleep 1
assert_true "the checkpoint stays before the open PREPARE" held_before "$f0" "$pos0"
daemon_kill
xa_end COMMIT "${D}_k1"
daemon_start "$TEST_TMP/c.ini" "$RUNLOG"
check_all "prepared, SIGKILL, committed while down"
assert_eq "XK" "$(doc_field "$BIDX" "$b1" ._source.country)" "the row-image brand of the killed one"

# ---- 4. prepared, stopped and started while prepared, committed
log "4. prepared, stopped and started while prepared, committed"
xa_prepare "${D}_k2" "UPDATE products SET description = 'xa restarted' WHERE id = $p1;
    UPDATE reviews SET rating = 1 WHERE id = $r1"
read -r f0 pos0 <<<"$(mysql_binlog_pos)"
q "UPDATE products SET name = 'beside four' WHERE id = $p3"
wait_until 30 "the transaction after the PREPARE synced" bash -c \
    "[ \"\$(curl -s '$SEARCH_URL/$PIDX/_doc/$p3' | jq -r ._source.name)\" = 'beside four' ]"
daemon_stop
assert_true "the drain saved the checkpoint before the open PREPARE" held_before "$f0" "$pos0"
daemon_start "$TEST_TMP/c.ini" "$RUNLOG"
q "UPDATE products SET name = 'beside four again' WHERE id = $p3"
wait_until 30 "the restarted daemon reads on" bash -c \
    "[ \"\$(curl -s '$SEARCH_URL/$PIDX/_doc/$p3' | jq -r ._source.name)\" = 'beside four again' ]"
xa_end COMMIT "${D}_k2"
check_all "prepared, restarted, committed"

# ---- 5. two prepared, ended in the other order; one phase
log "5. two prepared, ended in the other order; one phase"
xa_prepare "${D}_o1" "UPDATE products SET name = 'first prepared' WHERE id = $p1"
xa_prepare "${D}_o2" "UPDATE products SET name = 'second prepared' WHERE id = $p2; UPDATE brands SET country = 'O2' WHERE id = $b1"
xa_end COMMIT "${D}_o2"
q "UPDATE skus SET stock = 7 WHERE id = $s2"
xa_end COMMIT "${D}_o1"
q "XA START '${D}_one'; UPDATE products SET name = 'one phase' WHERE id = $p3; XA END '${D}_one'; XA COMMIT '${D}_one' ONE PHASE"
# one prepared on a table no index reads holds nothing back
q "CREATE TABLE audit_log (id INT PRIMARY KEY, note VARCHAR(40))"
xa_prepare "${D}_u1" "INSERT INTO audit_log VALUES (1, 'unmapped')"
q "UPDATE products SET price = price + 5 WHERE id = $p2"
wait_checkpoint "$meta" xa 30 # past the open PREPARE
xa_end COMMIT "${D}_u1"
check_all "two prepared, other order; one phase; unmapped"
assert_eq "first prepared|second prepared|one phase" \
    "$(doc_field "$PIDX" "$p1" ._source.name)|$(doc_field "$PIDX" "$p2" ._source.name)|$(doc_field "$PIDX" "$p3" ._source.name)" \
    "each committed name shows"

# ---- 6. many prepared, each committed on its own, read at once: an XA
# COMMIT is in the binlog before the engine commits it (a read right after
# could miss its rows: the daemon waits for XA RECOVER to drop it)
log "6. thirty prepared, each committed on its own"
many=$(q "SELECT id FROM products ORDER BY id DESC LIMIT 30")
for id in $many; do
    xa_prepare "${D}_m$id" "UPDATE products SET name = 'xa many $id' WHERE id = $id;
        UPDATE skus SET stock = stock + 1 WHERE product_id = $id"
done
for id in $many; do xa_end COMMIT "${D}_m$id"; sleep 0.1; done
check_all "thirty prepared, each committed on its own"
log "XA COMMITs the daemon waited for: $(grep -c "look(s) at XA RECOVER" "$RUNLOG")"

daemon_stop
assert_eq 0 "$DAEMON_RC" "the daemon stopped cleanly"
assert_eq "" "$(grep -E 'without its XA PREPARE|and its XA PREPARE was not|refuses XA RECOVER|still listed as prepared| ERROR ' "$RUNLOG" | head -3)" \
    "no XA commit went unpaired or unwaited for, no error"
assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM \`$meta\`.dead_letters")" "no dead letters"
pass
