#!/usr/bin/env bash
# tests/integration/t_tail_images.sh — updates and deletes with FULL, MINIMAL
# and NOBLOB row images (absent columns omitted, NULL kept), multi-row and
# multi-statement transactions (one position and GTID per transaction, taken
# from the server's SHOW BINLOG EVENTS and @@last_gtid), --gtid and
# --file/--pos starts, --tables filtering, MariaDB compressed events
# (log_bin_compress). Oracle: the server's SELECT / SHOW output.
. "$(dirname "$0")/lib.sh"
require_bin

db="$(unique_name searchsync_ti)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`' >/dev/null 2>&1"
SRC="mysql://$MYSQL_USER:$MYSQL_PASSWORD@$MYSQL_HOST:$MYSQL_PORT"
q() { mariadb --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -u root --batch --raw --skip-column-names \
        --default-character-set=utf8mb4 --database="$db" -e "$1"; }
tail_range() { # FILE POS [extra args] → stdout lines
    local f="$1" p="$2"
    shift 2
    "$SEARCHSYNC_BIN" tail --source "$SRC" --file "$f" --pos "$p" --stop-at-end --tables "$db.*" "$@" \
        2>"$TEST_TMP/tail.err" || { cat "$TEST_TMP/tail.err" >&2; fail "tail exited $?"; }
}

mysql_q "CREATE DATABASE \`$db\`"
q "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20), qty INT, note TEXT, b BLOB);
   CREATE TABLE other (k VARCHAR(10) PRIMARY KEY, v INT);
   CREATE TABLE skipme (id INT PRIMARY KEY);"

# ---- one multi-statement transaction
read -r f0 p0 <<<"$(mysql_binlog_pos)"
gtid="$(q "BEGIN;
  INSERT INTO t VALUES (1,'a',1,'n1',X'01'),(2,'b',2,NULL,X'02'),(3,'c',3,'n3',NULL);
  UPDATE t SET qty = qty * 10 WHERE id IN (1,2);
  DELETE FROM t WHERE id = 3;
  INSERT INTO other VALUES ('k', 5);
  INSERT INTO skipme VALUES (1);
  COMMIT; SELECT @@last_gtid;")"
out="$(tail_range "$f0" "$p0" --tables "$db.t,$db.oth*")"
assert_eq 7 "$(printf '%s\n' "$out" | wc -l)" "3 inserts + 2 updates + 1 delete + 1 insert (skipme filtered)"
assert_eq "insert insert insert update update delete insert" \
    "$(printf '%s\n' "$out" | jq -r .type | tr '\n' ' ' | sed 's/ $//')" "binlog order"
gpos="$(q "SHOW BINLOG EVENTS IN '$f0' FROM $p0" | awk -F'\t' '$3=="Gtid" {print $2; exit}')"
assert_eq "{\"file\":\"$f0\",\"pos\":$gpos,\"gtid\":\"$gtid\"}" \
    "$(printf '%s\n' "$out" | jq -c .pos | sort -u)" "every row carries its transaction's start position and GTID"
expect_after="$(q "SELECT JSON_OBJECT('id',id,'name',name,'qty',qty,'note',note,'b',REPLACE(TO_BASE64(b),'\n','')) FROM t ORDER BY id")"
assert_json_eq "$(printf '%s\n' "$expect_after" | jq -s -c .)" \
    "$(printf '%s\n' "$out" | jq -s -c '[.[] | select(.type=="update") | .after]')" "FULL update after-images = SELECT"
assert_json_eq '[{"id":1,"name":"a","qty":1,"note":"n1","b":"AQ=="},{"id":2,"name":"b","qty":2,"note":null,"b":"Ag=="}]' \
    "$(printf '%s\n' "$out" | jq -s -c '[.[] | select(.type=="update") | .before]')" "FULL update before-images = the inserted values"
assert_json_eq '{"id":3,"name":"c","qty":3,"note":"n3","b":null}' \
    "$(printf '%s\n' "$out" | jq -c 'select(.type=="delete") | .before')" "delete before-image"
assert_json_eq "$(q "SELECT JSON_OBJECT('k',k,'v',v) FROM other")" \
    "$(printf '%s\n' "$out" | jq -c 'select(.table=="other") | .after')" "second table in the same transaction"

# ---- MINIMAL and NOBLOB images: absent columns are omitted, not null
read -r f1 p1 <<<"$(mysql_binlog_pos)"
q "SET SESSION binlog_row_image=MINIMAL; UPDATE t SET name='min', note=NULL WHERE id=1; DELETE FROM t WHERE id=2;"
q "SET SESSION binlog_row_image=NOBLOB; UPDATE t SET qty=99 WHERE id=1;"
out="$(tail_range "$f1" "$p1")"
assert_eq 3 "$(printf '%s\n' "$out" | wc -l)" "three changes"
l1="$(printf '%s\n' "$out" | sed -n 1p)"
assert_json_eq '{"id":1}' "$(jq -c .before <<<"$l1")" "MINIMAL update: before image = primary key only"
assert_json_eq "$(q "SELECT JSON_OBJECT('name',name,'note',note) FROM t WHERE id=1")" \
    "$(jq -c .after <<<"$l1")" "MINIMAL update: after image = changed columns only (note is NULL, not absent)"
assert_json_eq '{"id":2}' "$(printf '%s\n' "$out" | sed -n 2p | jq -c .before)" "MINIMAL delete: primary key only"
l3="$(printf '%s\n' "$out" | sed -n 3p)"
assert_json_eq "$(q "SELECT JSON_OBJECT('id',id,'name',name,'qty',qty) FROM t WHERE id=1")" \
    "$(jq -c .after <<<"$l3")" "NOBLOB: every column but the unchanged BLOB and TEXT"
assert_eq '["id","name","qty"]' "$(jq -c '.before|keys_unsorted' <<<"$l3")" \
    "NOBLOB before-image: PK and non-blob columns (TEXT/BLOB absent)"

# ---- start from a GTID: only later transactions
gstart="$(q "SELECT @@gtid_binlog_pos")"
q "INSERT INTO t VALUES (10,'g',1,NULL,NULL); INSERT INTO t VALUES (11,'h',2,NULL,NULL);"
out="$("$SEARCHSYNC_BIN" tail --source "$SRC" --gtid "$gstart" --stop-at-end --tables "$db.t" 2>"$TEST_TMP/g.err")" \
    || { cat "$TEST_TMP/g.err"; fail "tail --gtid"; }
assert_eq "10 11" "$(printf '%s\n' "$out" | jq -r .after.id | tr '\n' ' ' | sed 's/ $//')" "--gtid starts after that set"

# ---- an event over 16 MB (split packets)
oldmap="$(mysql_q 'SELECT @@global.max_allowed_packet')"
on_exit "mysql_q 'SET GLOBAL max_allowed_packet=$oldmap'"
mysql_q "SET GLOBAL max_allowed_packet=67108864"
q "CREATE TABLE big (id INT PRIMARY KEY, x LONGBLOB)"
read -r f3 p3 <<<"$(mysql_binlog_pos)"
mariadb --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -u root --max-allowed-packet=64M --database="$db" \
    -e "INSERT INTO big VALUES (1, REPEAT('abcdefghij', 2000000))"
assert_eq "$(q "SELECT MD5(x) FROM big")" \
    "$(tail_range "$f3" "$p3" | jq -r .after.x | base64 -d | md5sum | cut -d' ' -f1)" "a 20 MB row arrives whole"

# ---- MariaDB compressed binlog events (QUERY/ROWS_COMPRESSED)
read -r f2 p2 <<<"$(mysql_binlog_pos)"
old="$(mysql_q 'SELECT @@global.log_bin_compress, @@global.log_bin_compress_min_len')"
on_exit "mysql_q 'SET GLOBAL log_bin_compress=$(cut -f1 <<<"$old"), GLOBAL log_bin_compress_min_len=$(cut -f2 <<<"$old")'"
mysql_q "SET GLOBAL log_bin_compress=ON, GLOBAL log_bin_compress_min_len=10"
q "INSERT INTO t VALUES (20,REPEAT('z',20),7,REPEAT('compressible ',50),REPEAT(X'00',100)); UPDATE t SET qty=8 WHERE id=20; ALTER TABLE t ADD COLUMN extra INT DEFAULT 42"
mysql_q "SET GLOBAL log_bin_compress=OFF"
assert_contains "$(q "SHOW BINLOG EVENTS IN '$f2' FROM $p2" | cut -f3 | sort -u | tr '\n' ' ')" "_compressed" \
    "the server wrote compressed events"
out="$(tail_range "$f2" "$p2")"
assert_json_eq "$(q "SELECT JSON_OBJECT('id',id,'name',name,'qty',qty,'note',note,'b',REPLACE(TO_BASE64(b),'\n','')) FROM t WHERE id=20")" \
    "$(printf '%s\n' "$out" | jq -c 'select(.type=="update") | .after')" "compressed rows decoded"
q "INSERT INTO t (id) VALUES (21)"
out="$("$SEARCHSYNC_BIN" tail --source "$SRC" --file "$f2" --pos "$p2" --stop-at-end --tables "$db.t" 2>/dev/null | tail -1)"
assert_eq 42 "$(jq .after.extra <<<"$out")" "rows after the (compressed) ALTER carry the new column"

pass
