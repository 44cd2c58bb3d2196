#!/usr/bin/env bash
# tests/integration/t_kafka_tail.sh — `searchsync kafka-tail` against a real
# Kafka (tests/harness/kafka.sh, started and stopped here): canal-json,
# Debezium (with schemas) and Maxwell messages for rows this test writes to
# MariaDB print exactly the lines `searchsync tail` prints for the same rows
# from the binlog (the same values in the same text: INT, BIGINT UNSIGNED
# max, DECIMAL(30,10), DATETIME(6), VARCHAR with 4-byte UTF-8, JSON, NULL;
# insert, update, delete; MariaDB's JSON column, a LONGTEXT to Maxwell, is
# text in Maxwell's messages and prints as a string). The messages are written from the rows as MySQL
# returns them (SELECT ... CAST AS CHAR, information_schema's COLUMN_TYPE),
# each in its producer's encoding (Debezium's base64 decimals, epoch
# microseconds and wrapped BIGINT UNSIGNED; Maxwell's typed JSON), and
# produced with kcat. Also: an undecodable message is one error line on
# stderr and the next message still prints; a canal DDL message prints a ddl
# line; a consumer group run commits its offsets (a second run reads
# nothing); without the schema lookup canal's mysqlType alone gives the same
# lines; `run` without [source] user exits 2 and `config check` names a missing key.
# Secured brokers (kafka.sh KAFKA_SECURE=1): the same lines read through a
# SASL_SSL listener with SCRAM-SHA-256 (the password from the environment),
# SCRAM-SHA-512 and PLAIN, and through an SSL listener that requires a
# client certificate, with client_properties; a wrong password, a CA that
# did not sign the broker, or no client certificate each exit 2 within
# seconds naming the key to check, the password never printed; `config
# check` refuses settings that disagree and properties searchsync owns.
. "$(dirname "$0")/lib.sh"
require_bin
command -v kcat >/dev/null || fail "kcat missing: run tests/harness/deps.sh"
command -v python3 >/dev/null || fail "python3 missing: run tests/harness/deps.sh"

# ---------------------------------------------------------------- Kafka
kdir="$TEST_TMP/kafka"
KAFKA_SECURE=1 SEARCHSYNC_KAFKA_DIR="$kdir" bash "$HARNESS/kafka.sh" start >"$TEST_TMP/kafka-start.log" 2>&1 ||
    { cat "$TEST_TMP/kafka-start.log"; fail "the harness's Kafka did not start"; }
on_exit "SEARCHSYNC_KAFKA_DIR='$kdir' bash '$HARNESS/kafka.sh' stop >/dev/null 2>&1"
on_exit '[ "$rc" = 0 ] || { echo "--- kafka log (last 20 lines)"; tail -20 "$KAFKA_LOG"; }'
. "$kdir/kafka.env"
log "kafka on $KAFKA_BOOTSTRAP"

# ---------------------------------------------------------------- rows in MariaDB
db="$(unique_name searchsync_kt)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`' >/dev/null 2>&1"
mysql_q "CREATE DATABASE \`$db\` CHARACTER SET utf8mb4"
mysql_q "CREATE TABLE t (id INT PRIMARY KEY, i INT, bu BIGINT UNSIGNED, d DECIMAL(30,10),
  dt DATETIME(6), v VARCHAR(50), j JSON, n INT NULL)" "$db"
cols="$TEST_TMP/cols.tsv"
mysql_q "SELECT COLUMN_NAME, COLUMN_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = '$db'
  AND TABLE_NAME = 't' ORDER BY ORDINAL_POSITION" >"$cols"
# every column as MySQL's text (NULL as null): what canal writes
sel=""
while IFS=$'\t' read -r c _; do sel="${sel:+$sel, }'$c', CAST(\`$c\` AS CHAR)"; done <"$cols"
snapshot() {
    mariadb --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -u root --batch --raw --skip-column-names \
        --default-character-set=utf8mb4 --database="$db" -e "SELECT JSON_OBJECT($sel) FROM t ORDER BY id"
}

read -r f0 p0 <<<"$(mysql_binlog_pos)"
mysql_q "INSERT INTO t VALUES
  (1, -5, 18446744073709551615, '-12345678901234567890.0123456789', '2024-02-29 12:34:56.123456',
   'a😀é \"q\"', '{\"a\": [1, 2.5, \"x\"], \"b\": null}', NULL),
  (2, 2147483647, 0, '0.0000000001', '1000-01-01 00:00:00.000001', '', '[]', 7),
  (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL)" "$db"
snapshot >"$TEST_TMP/s1.jsonl"
mysql_q "UPDATE t SET v = 'b😀', n = 5, d = d + 1 WHERE id = 1; DELETE FROM t WHERE id = 2" "$db"
snapshot >"$TEST_TMP/s2.jsonl"
assert_eq 3 "$(wc -l <"$TEST_TMP/s1.jsonl")" "three rows inserted"

# the expected lines: searchsync tail over the same statements
SRC="mysql://$MYSQL_USER:$MYSQL_PASSWORD@$MYSQL_HOST:$MYSQL_PORT"
"$SEARCHSYNC_BIN" tail --source "$SRC" --file "$f0" --pos "$p0" --stop-at-end --tables "$db.*" \
    >"$TEST_TMP/tail.jsonl" 2>"$TEST_TMP/tail.err" || { cat "$TEST_TMP/tail.err"; fail "tail failed"; }
assert_eq 5 "$(wc -l <"$TEST_TMP/tail.jsonl")" "tail: 3 inserts, an update, a delete"
# the lines without ts and pos (what the source tells, not the values)
strip() { sed -E 's/"ts":[0-9]+,"pos":(null|\{[^}]*\}),//'; }
expected="$(strip <"$TEST_TMP/tail.jsonl")"

# ---------------------------------------------------------------- the messages
python3 - "$db" "$cols" "$TEST_TMP/s1.jsonl" "$TEST_TMP/s2.jsonl" "$TEST_TMP" <<'PY'
import base64, datetime, json, sys
db, colsf, s1f, s2f, out = sys.argv[1:]
cols = [l.rstrip('\n').split('\t') for l in open(colsf, encoding='utf-8')]
types = dict(cols)
names = [c[0] for c in cols]
load = lambda f: {r['id']: r for r in map(json.loads, open(f, encoding='utf-8'))}
s1, s2 = load(s1f), load(s2f)
changed = [k for k in names if s1['1'][k] != s2['1'][k]]
dumps = lambda o: json.dumps(o, ensure_ascii=False, separators=(',', ':'))

# canal-json: every value a string, mysqlType the column types
sqltype = {'int': 4, 'bigint': -5, 'decimal': 3, 'datetime': 93, 'varchar': 12, 'longtext': 2005}
def canal(typ, rows, old=None, mid=1):
    return dumps({'data': rows, 'database': db, 'table': 't', 'pkNames': ['id'], 'isDdl': False,
                  'type': typ, 'es': 1700000000000, 'ts': 1700000000123, 'sql': '',
                  'sqlType': {n: sqltype[types[n].split('(')[0]] for n in names},
                  'mysqlType': types, 'old': old, 'id': mid})
with open(out + '/canal.txt', 'w', encoding='utf-8') as f:
    print(canal('INSERT', [s1[k] for k in ('1', '2', '3')]), file=f)
    print('{"data":[{"id":"9"', file=f)  # cut short: undecodable
    print(canal('UPDATE', [s2['1']], [{k: s1['1'][k] for k in changed}], 2), file=f)
    print(dumps({'data': None, 'database': db, 'table': 't', 'pkNames': None, 'isDdl': True,
                 'type': 'ALTER', 'es': 1700000000000, 'ts': 1700000000123,
                 'sql': "ALTER TABLE t COMMENT 'kafka'", 'sqlType': None, 'mysqlType': None,
                 'old': None, 'id': 3}), file=f)
    print(canal('DELETE', [s1['2']], None, 4), file=f)

# Debezium, JSON converter with schemas: decimal.handling.mode=precise (base64
# unscaled big-endian), bigint.unsigned.handling.mode=long (wrapped), DATETIME(6)
# as epoch microseconds
def field(n):
    t = types[n]
    f = {'optional': n != 'id', 'field': n}
    if t.startswith('int'): f['type'] = 'int32'
    elif t.startswith('bigint'): f['type'] = 'int64'
    elif t.startswith('decimal'):
        p, s = t[t.index('(') + 1:t.index(')')].split(',')
        f.update(type='bytes', name='org.apache.kafka.connect.data.Decimal', version=1,
                 parameters={'scale': s, 'connect.decimal.precision': p})
    elif t.startswith('datetime'):
        f.update(type='int64', name='io.debezium.time.MicroTimestamp', version=1)
    else: f['type'] = 'string'
    return f
def dval(n, s):
    t = types[n]
    if s is None: return None
    if t.startswith('bigint') and 'unsigned' in t:
        v = int(s)
        return v - (1 << 64) if v >= 1 << 63 else v
    if t.startswith('int'): return int(s)
    if t.startswith('decimal'):
        scale = int(t[t.index(',') + 1:t.index(')')])
        ip, _, fp = s.partition('.')
        u = int(ip.replace('-', '') + fp.ljust(scale, '0')) * (-1 if s.startswith('-') else 1)
        return base64.b64encode(u.to_bytes((u.bit_length() + 8) // 8, 'big', signed=True)).decode()
    if t.startswith('datetime'):
        d = datetime.datetime.strptime(s, '%Y-%m-%d %H:%M:%S.%f') - datetime.datetime(1970, 1, 1)
        return (d.days * 86400 + d.seconds) * 1000000 + d.microseconds
    return s
row_schema = {'type': 'struct', 'fields': [field(n) for n in names], 'optional': True,
              'name': 'srv.%s.t.Value' % db}
source_schema = {'type': 'struct', 'optional': False, 'name': 'io.debezium.connector.mysql.Source',
                 'field': 'source', 'fields': [
    {'type': t, 'optional': o, 'field': n} for n, t, o in (
        ('version', 'string', False), ('connector', 'string', False), ('name', 'string', False),
        ('ts_ms', 'int64', False), ('db', 'string', True), ('table', 'string', True),
        ('server_id', 'int64', False), ('gtid', 'string', True), ('file', 'string', False),
        ('pos', 'int64', False), ('row', 'int32', False))]}
schema = {'type': 'struct', 'optional': False, 'name': 'srv.%s.t.Envelope' % db, 'fields': [
    dict(row_schema, field='before'), dict(row_schema, field='after'), source_schema,
    {'type': 'string', 'optional': False, 'field': 'op'},
    {'type': 'int64', 'optional': True, 'field': 'ts_ms'}]}
def dbz(op, before, after, pos):
    img = lambda r: None if r is None else {n: dval(n, r[n]) for n in names}
    return dumps({'schema': schema, 'payload': {
        'before': img(before), 'after': img(after),
        'source': {'version': '2.7.0.Final', 'connector': 'mysql', 'name': 'srv',
                   'ts_ms': 1700000000000, 'db': db, 'table': 't', 'server_id': 1, 'gtid': None,
                   'file': 'mysql-bin.000042', 'pos': pos, 'row': 0},
        'op': op, 'ts_ms': 1700000000500}})
with open(out + '/debezium.txt', 'w', encoding='utf-8') as f:
    for i, k in enumerate(('1', '2', '3')):
        print(dbz('c', None, s1[k], 1000 + i), file=f)
    print(dbz('u', s1['1'], s2['1'], 2000), file=f)
    print(dbz('d', s1['2'], None, 3000), file=f)

# Maxwell: typed JSON, numbers as MySQL writes them (never through a float)
def mval(n, s):
    if s is None: return 'null'
    if types[n].split('(')[0] in ('int', 'bigint', 'decimal'): return s
    return json.dumps(s, ensure_ascii=False)
mobj = lambda r, keys: '{' + ','.join('%s:%s' % (json.dumps(k), mval(k, r[k])) for k in keys) + '}'
def maxwell(typ, data, old=None):
    return ('{"database":%s,"table":"t","type":"%s","ts":1700000000,"xid":42,"commit":true,'
            '"data":%s%s}' % (json.dumps(db), typ, data, ',"old":' + old if old else ''))
with open(out + '/maxwell.txt', 'w', encoding='utf-8') as f:
    for k in ('1', '2', '3'):
        print(maxwell('insert', mobj(s1[k], names)), file=f)
    print(maxwell('update', mobj(s2['1'], names), mobj(s1['1'], changed)), file=f)
    print(maxwell('delete', mobj(s1['2'], names)), file=f)
PY
for fmt in canal debezium maxwell; do
    kcat -b "$KAFKA_BOOTSTRAP" -P -t "cdc.$fmt" <"$TEST_TMP/$fmt.txt" 2>"$TEST_TMP/kcat.err" ||
        { cat "$TEST_TMP/kcat.err"; fail "kcat could not produce to cdc.$fmt"; }
done
assert_eq 5 "$(kcat -b "$KAFKA_BOOTSTRAP" -C -t cdc.canal -o beginning -e -q | wc -l)" \
    "five canal messages in the topic, one a line"

# ---------------------------------------------------------------- kafka-tail
cfg="$TEST_TMP/kafka.ini"
cat >"$cfg" <<EOF
[source]
kind = kafka
host = $MYSQL_HOST
port = $MYSQL_PORT
user = $MYSQL_USER
password = $MYSQL_PASSWORD
[kafka]
brokers = $KAFKA_BOOTSTRAP
topic_regex = cdc\\.(canal|debezium|maxwell)
EOF
assert_eq "$cfg: ok" "$("$SEARCHSYNC_BIN" config check --config "$cfg" 2>&1)" "config check passes a Kafka source"

t0=$(date +%s%N)
"$SEARCHSYNC_BIN" kafka-tail --config "$cfg" --from-beginning --max 15 --timeout-ms 20000 \
    >"$TEST_TMP/kt.jsonl" 2>"$TEST_TMP/kt.err" || { cat "$TEST_TMP/kt.err"; fail "kafka-tail exited $?"; }
log "kafka-tail: 15 messages in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
assert_eq 0 "$(grep -vc '^{' "$TEST_TMP/kt.jsonl" || true)" "stdout holds JSON lines only"
assert_eq "$expected" "$(grep '"topic":"cdc.canal"' "$TEST_TMP/kt.jsonl" | grep -v '"type":"ddl"' | strip)" \
    "canal-json: the lines tail prints for the same rows"
assert_eq "$expected" "$(grep '"file":"mysql-bin.000042"' "$TEST_TMP/kt.jsonl" | strip)" \
    "Debezium: the lines tail prints for the same rows"
assert_eq 16 "$(wc -l <"$TEST_TMP/kt.jsonl")" "15 row lines and one ddl line"
# positions: Debezium's source coordinates; canal and Maxwell carry none: the Kafka offset
assert_eq '{"file":"mysql-bin.000042","pos":2000,"gtid":null}' \
    "$(grep '"type":"update"' "$TEST_TMP/kt.jsonl" | grep -o '"pos":{"file[^}]*}' | sed 's/^"pos"://')" \
    "Debezium's update carries source.file/pos"
assert_eq '"pos":{"topic":"cdc.canal","partition":0,"offset":2}' \
    "$(grep '"topic":"cdc.canal"' "$TEST_TMP/kt.jsonl" | grep '"type":"update"' | grep -o '"pos":{[^}]*}')" \
    "canal's update is at offset 2 (after the undecodable message)"
ddl="$(grep '"type":"ddl"' "$TEST_TMP/kt.jsonl")"
assert_eq "{\"type\":\"ddl\",\"db\":\"$db\",\"sql\":\"ALTER TABLE t COMMENT 'kafka'\",\"ts\":1700000000,\"pos\":{\"topic\":\"cdc.canal\",\"partition\":0,\"offset\":3}}" \
    "$ddl" "canal's DDL message is one ddl line"
# the undecodable message: one error line on stderr with where it is and its bytes
err="$(grep '^{"error"' "$TEST_TMP/kt.err" || true)"
assert_eq 1 "$(printf '%s\n' "$err" | grep -c .)" "one error line"
assert_eq '{"topic":"cdc.canal","partition":0,"offset":1,"raw":"{\"data\":[{\"id\":\"9\""}' \
    "$(printf '%s' "$err" | jq -c '{topic,partition,offset,raw}')" "the error line names the message"
assert_contains "$(printf '%s' "$err" | jq -r .error)" "not JSON" "the error says what is wrong"

# without the schema lookup ([source] user unset): canal's mysqlType is exact;
# as a consumer group from the beginning ([source] start), offsets committed
cfg2="$TEST_TMP/kafka-group.ini"
printf '[source]\nkind = kafka\nstart = beginning\n[kafka]\nbrokers = %s\ntopics = cdc.canal\ngroup = kt-%s\n' \
    "$KAFKA_BOOTSTRAP" "$$" >"$cfg2"
"$SEARCHSYNC_BIN" kafka-tail --config "$cfg2" --max 5 --timeout-ms 20000 >"$TEST_TMP/kt2.jsonl" \
    2>"$TEST_TMP/kt2.err" || { cat "$TEST_TMP/kt2.err"; fail "kafka-tail (group) exited $?"; }
# MariaDB's JSON is a LONGTEXT with a json_valid() check. Maxwell sees a
# LONGTEXT and writes the text as a string; with the schema lookup (the
# [source] user is set here) the decoder knows the column is MariaDB's JSON
# and prints the value, as tail does (docs/kafka.md, Maxwell). Without the
# lookup that text stays a string, as canal's does below.
expected_text="$(printf '%s\n' "$expected" | python3 -c '
import json, sys
raws = [json.loads(l)["j"] for l in open(sys.argv[1], encoding="utf-8")]
t = sys.stdin.read()
for r in raws:
    if r is not None:
        t = t.replace("\"j\":" + r, "\"j\":" + json.dumps(r, ensure_ascii=False))
sys.stdout.write(t)' "$TEST_TMP/s1.jsonl")"
assert_ne "$expected" "$expected_text" "the JSON column's text differs from its value"
assert_eq "$expected" "$(grep '"topic":"cdc.maxwell"' "$TEST_TMP/kt.jsonl" | strip)" \
    "Maxwell: the lines tail prints for the same rows (MariaDB's JSON column as its value, from the lookup)"
assert_eq "$expected_text" "$(grep -v '"type":"ddl"' "$TEST_TMP/kt2.jsonl" | strip)" \
    "canal-json without the lookup: the same lines, the JSON column as text"
assert_eq 1 "$(grep -c '^{"error"' "$TEST_TMP/kt2.err")" "the undecodable message again"
"$SEARCHSYNC_BIN" kafka-tail --config "$cfg2" --timeout-ms 4000 >"$TEST_TMP/kt3.jsonl" \
    2>"$TEST_TMP/kt3.err" || { cat "$TEST_TMP/kt3.err"; fail "kafka-tail (group, again) exited $?"; }
assert_eq 0 "$(wc -l <"$TEST_TMP/kt3.jsonl")" "the group's offsets were committed: nothing read again"
printf '%s\n' '{"database":"x","table":"t","type":"insert","ts":1,"data":{"id":1}}' |
    kcat -b "$KAFKA_BOOTSTRAP" -P -t cdc.canal
"$SEARCHSYNC_BIN" kafka-tail --config "$cfg2" --max 1 --timeout-ms 20000 >"$TEST_TMP/kt4.jsonl" \
    2>"$TEST_TMP/kt4.err" || { cat "$TEST_TMP/kt4.err"; fail "kafka-tail (group, new message) exited $?"; }
assert_eq '{"type":"insert","db":"x","table":"t","ts":1,"pos":{"topic":"cdc.canal","partition":0,"offset":5},"before":null,"after":{"id":1}}' \
    "$(cat "$TEST_TMP/kt4.jsonl")" "the group goes on at the next message (format detected per message)"

# run needs the source's server (documents are rebuilt from it; t_kafka_sync
# runs it); config check names a missing key
set +e
out="$("$SEARCHSYNC_BIN" run --config "$cfg2" 2>&1)"
rc_run=$?
set -e
assert_eq 2 "$rc_run" "run with kind = kafka and no [source] user exits 2"
assert_contains "$out" "needs [source] user" "run says why"
printf '[source]\nkind = kafka\n[kafka]\ntopics = a\n' >"$TEST_TMP/nobrokers.ini"
set +e
out="$("$SEARCHSYNC_BIN" config check --config "$TEST_TMP/nobrokers.ini" 2>&1)"
rc_chk=$?
set -e
assert_eq 2 "$rc_chk" "config check: a Kafka source without brokers exits 2"
assert_contains "$out" "[kafka] brokers" "the message names the key"

# ---------------------------------------------------------------- secured brokers
# secure_ini FILE BROKERS LINES... — kafka.ini's source, other brokers, more [kafka] lines
secure_ini() {
    local f="$1" b="$2"
    shift 2
    sed "s/^brokers = .*/brokers = $b/" "$cfg" >"$f"
    printf '%s\n' "$@" >>"$f"
}
# secure_tail WHAT FILE — the 16 messages through the listener: the lines
# read in the clear (the topics' messages interleave in any order)
secure_tail() {
    "$SEARCHSYNC_BIN" kafka-tail --config "$2" --from-beginning --max 16 --timeout-ms 20000 \
        >"$TEST_TMP/ks.jsonl" 2>"$TEST_TMP/ks.err" || { cat "$TEST_TMP/ks.err"; fail "$1: kafka-tail exited $?"; }
    assert_eq "$(cat "$TEST_TMP/kt.jsonl" "$TEST_TMP/kt4.jsonl" | sort)" "$(sort "$TEST_TMP/ks.jsonl")" \
        "$1: the lines read in the clear"
}
TLS="$KAFKA_TLS"
sasl=("security_protocol = sasl_ssl" "sasl_username = $KAFKA_SASL_USER" "ssl_ca = $TLS/ca.pem")
secure_ini "$TEST_TMP/s256.ini" "$KAFKA_SASL_SSL_BOOTSTRAP" "${sasl[@]}" "sasl_mechanism = SCRAM-SHA-256"
assert_eq "$TEST_TMP/s256.ini: ok" "$(SEARCHSYNC_KAFKA_PASSWORD="$KAFKA_SASL_PASSWORD" "$SEARCHSYNC_BIN" config check --config "$TEST_TMP/s256.ini" 2>&1)" \
    "config check: SASL_SSL with the password from the environment"
SEARCHSYNC_KAFKA_PASSWORD="$KAFKA_SASL_PASSWORD" secure_tail "SASL_SSL, SCRAM-SHA-256" "$TEST_TMP/s256.ini"
printf '%s\n' "$KAFKA_SASL_PASSWORD" >"$TEST_TMP/kpw"
secure_ini "$TEST_TMP/s512.ini" "$KAFKA_SASL_SSL_BOOTSTRAP" "${sasl[@]}" "sasl_mechanism = SCRAM-SHA-512" \
    "sasl_password_file = $TEST_TMP/kpw"
secure_tail "SASL_SSL, SCRAM-SHA-512" "$TEST_TMP/s512.ini"
secure_ini "$TEST_TMP/plain.ini" "$KAFKA_SASL_SSL_BOOTSTRAP" "${sasl[@]}" "sasl_mechanism = PLAIN" \
    "sasl_password = $KAFKA_SASL_PASSWORD"
secure_tail "SASL_SSL, PLAIN" "$TEST_TMP/plain.ini"
printf '# more of librdkafka\nclient.id = kt-mtls\nfetch.wait.max.ms: 100\n' >"$TEST_TMP/more.properties"
secure_ini "$TEST_TMP/mtls.ini" "$KAFKA_SSL_BOOTSTRAP" "security_protocol = ssl" "ssl_ca = $TLS/ca.pem" \
    "ssl_cert = $TLS/client.pem" "ssl_key = $TLS/client.key" "client_properties = $TEST_TMP/more.properties"
secure_tail "SSL with a client certificate and client_properties" "$TEST_TMP/mtls.ini"

# exits_2 WHAT WANT CMD... — CMD exits 2, its stderr (OUT) saying WANT
exits_2() {
    local what="$1" want="$2" rc_x
    shift 2
    set +e
    OUT="$("$@" 2>&1 >/dev/null)"
    rc_x=$?
    set -e
    assert_eq 2 "$rc_x" "$what: exits 2"
    assert_contains "$OUT" "$want" "$what: the message says what to check"
}
# refused by the brokers: kafka-tail exits 2 at once, no password printed
refused() { # WHAT FILE WANT
    local t0
    t0=$(date +%s)
    exits_2 "kafka-tail, $1" "$3" timeout 60 "$SEARCHSYNC_BIN" kafka-tail --config "$2"
    assert_true "$1: said within 20 s" [ $(( $(date +%s) - t0 )) -le 20 ]
    assert_eq 0 "$(printf '%s' "$OUT" | grep -c "$KAFKA_SASL_PASSWORD\|wrong-pw" || true)" "$1: no password printed"
}
sed 's/^sasl_password = .*/sasl_password = wrong-pw/' "$TEST_TMP/plain.ini" >"$TEST_TMP/badpw.ini"
refused "a wrong password" "$TEST_TMP/badpw.ini" "check [kafka] sasl_mechanism, sasl_username and sasl_password"
sed "s#^ssl_ca = .*#ssl_ca = $TLS/other-ca.pem#" "$TEST_TMP/plain.ini" >"$TEST_TMP/otherca.ini"
refused "a CA that did not sign the broker" "$TEST_TMP/otherca.ini" "check [kafka] ssl_ca"
grep -v '^ssl_cert\|^ssl_key' "$TEST_TMP/mtls.ini" >"$TEST_TMP/nocert.ini"
refused "no client certificate" "$TEST_TMP/nocert.ini" "ssl_cert/ssl_key when the brokers ask"

# config check: settings that disagree, properties searchsync owns
bad_config() { exits_2 "config check: $1" "$3" "$SEARCHSYNC_BIN" config check --config "$2"; }
sed 's/^security_protocol = .*/security_protocol = plaintext/' "$TEST_TMP/plain.ini" >"$TEST_TMP/c1.ini"
bad_config "a mechanism without SASL" "$TEST_TMP/c1.ini" "set security_protocol = sasl_ssl"
grep -v '^sasl_mechanism' "$TEST_TMP/plain.ini" >"$TEST_TMP/c2.ini"
bad_config "credentials without a mechanism" "$TEST_TMP/c2.ini" "without sasl_mechanism"
grep -v '^sasl_password' "$TEST_TMP/plain.ini" >"$TEST_TMP/c3.ini"
bad_config "a mechanism without a password" "$TEST_TMP/c3.ini" "needs sasl_username and sasl_password"
sed 's/^security_protocol = .*/security_protocol = plaintext/' "$TEST_TMP/mtls.ini" >"$TEST_TMP/c4.ini"
bad_config "certificates without TLS" "$TEST_TMP/c4.ini" "uses no TLS"
printf 'group.id = other\n' >"$TEST_TMP/owned.properties"
sed "s#^client_properties = .*#client_properties = $TEST_TMP/owned.properties#" "$TEST_TMP/mtls.ini" >"$TEST_TMP/c5.ini"
bad_config "a property searchsync sets" "$TEST_TMP/c5.ini" "group.id is set by [kafka] group"
printf 'no.such.property = 1\n' >"$TEST_TMP/unknown.properties"
sed "s#^client_properties = .*#client_properties = $TEST_TMP/unknown.properties#" "$TEST_TMP/mtls.ini" >"$TEST_TMP/c6.ini"
bad_config "an unknown property" "$TEST_TMP/c6.ini" "unknown.properties:1: librdkafka setting no.such.property"
pass
