# tests/integration/producer_lib.sh — what the tests of real CDC producers
# (t_kafka_debezium.sh, t_kafka_canal.sh, t_kafka_maxwell.sh) share: their
# tables and seeded DML (producer_ops.sql), the SQL oracle of their two
# indices, the document and dead-letter checks that fail softly (every
# failing check of a run is said before the test fails), whether a topic
# holds a message, and the Kafka offsets the daemon saved against the
# topics' ends.
#
# Sourced after lib.sh and oracle_lib.sh. The test sets D (its database, by
# producer_tables), SEED, and meta_q (a query on the daemon's metadata
# server); OPS and CHUNK size the DML; OPS_FLAVOUR=maxwell picks the values
# Maxwell misreads (producer_ops.sql).

# producer_tables PREFIX — D: a new database with the tables and routines
producer_tables() {
    D=$(unique_name "$1")
    on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$D\`' >/dev/null 2>&1"
    mysql_q "CREATE DATABASE \`$D\` CHARACTER SET utf8mb4" || fail "creating $D"
    { echo "SET SESSION sql_mode = ''; SET SESSION time_zone = '+00:00';"
      cat "$(dirname "${BASH_SOURCE[0]}")/producer_ops.sql"; } |
        mysql_file /dev/stdin "$D" || fail "loading producer_ops.sql"
}
sqlrun() { # SQL — in D, as the DML's session: zero dates allowed, UTC, the flavour
    mysql_q "SET SESSION sql_mode = ''; SET SESSION time_zone = '+00:00';
             SET @ops_flavour = '${OPS_FLAVOUR:-}'; $1" "$D"
}
# producer_fill ROOTS PARTS STATE-FILE — the edge rows and random rows; the
# generator's state after them in STATE-FILE (its last line)
producer_fill() {
    sqlrun "SET @ops_state = $SEED; CALL ops_fill($1, $2); SELECT @ops_state" >"$3" || fail "ops_fill"
}
# producer_dml STATE-FILE — OPS operations in chunks of CHUNK from the state
# in STATE-FILE (run in the background while daemons and producers are killed)
producer_dml() {
    local done=0 st
    st=$(tail -1 "$1")
    while [ "$done" -lt "$OPS" ]; do
        st=$(sqlrun "SET @ops_state = $st; CALL ops_ops($CHUNK); SELECT @ops_state" | tail -1) || return 1
        done=$((done + CHUNK))
    done
}

# ---------------------------------------------------------------- soft checks
# a document or dead-letter check that fails is said and the test goes on,
# so one run shows every check that fails; it fails at the end
FAILS=()
soft_fail() { printf 'FAILED CHECK: %s\n' "$1"; FAILS+=("$1"); }
on_exit '[ ${#FAILS[@]} = 0 ] || printf "checks that failed before: %s\n" "${FAILS[*]}"'

# ---------------------------------------------------------------- the oracle
dtx() { # COLUMN FSP [Z]: DATETIME/TIMESTAMP text with FSP digits (null for zero dates)
    local f="''"
    [ "$2" -gt 0 ] && f="CONCAT('.', LEFT(DATE_FORMAT($1, '%f'), $2))"
    echo "IF($1 IS NULL OR MONTH($1) = 0 OR DAYOFMONTH($1) = 0 OR YEAR($1) = 0, NULL, CONCAT(DATE_FORMAT($1, '%Y-%m-%dT%H:%i:%s'), $f, '${3:-}'))"
}
b64() { echo "REPLACE(TO_BASE64($1), '\\n', '')"; }
setarr() { echo "IF($1 IS NULL, NULL, IF($1 = '', JSON_ARRAY(), JSON_EXTRACT(CONCAT('[\"', REPLACE($1, ',', '\",\"'), '\"]'), '\$')))"; }
wide_cols() { # EXCLUDED...: JSON_OBJECT's arguments for wide's columns but those
    local c v out="" x=" $* "
    while read -r c v; do
        case "$x" in *" $c "*) continue ;; esac
        out+="${out:+, }'$c', $v"
    done <<EOF
id w.id
ti w.ti
tiu w.tiu
si w.si
mi w.mi
i w.i
iu w.iu
bi w.bi
biu w.biu
f w.f+0E0
d w.d
dc1 CAST(w.dc1 AS CHAR)
dc2 CAST(w.dc2 AS CHAR)
dc3 CAST(w.dc3 AS CHAR)
dc4 CAST(w.dc4 AS CHAR)
da IF(w.da IS NULL OR MONTH(w.da) = 0 OR DAYOFMONTH(w.da) = 0, NULL, DATE_FORMAT(w.da, '%Y-%m-%d'))
dt0 $(dtx w.dt0 0)
dt3 $(dtx w.dt3 3)
dt6 $(dtx w.dt6 6)
ts0 $(dtx w.ts0 0 Z)
ts6 $(dtx w.ts6 6 Z)
t0 CAST(w.t0 AS CHAR)
t6 CAST(w.t6 AS CHAR)
y CAST(w.y AS UNSIGNED)
vc w.vc
l1 w.l1
c w.c
tx w.tx
bn $(b64 w.bn)
vb $(b64 w.vb)
bl $(b64 w.bl)
e CAST(w.e AS CHAR)
s $(setarr w.s)
b1 CAST(w.b1 AS UNSIGNED)
b10 CAST(w.b10 AS UNSIGNED)
b64 CAST(w.b64 AS UNSIGNED)
j JSON_EXTRACT(w.j, '\$')
EOF
    echo "$out"
}
cols_json() { # EXCLUDED...: wide's columns as a mapping's list (BIGINT UNSIGNED as unsigned_long)
    mysql_q "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = '$D'
        AND TABLE_NAME = 'wide' ORDER BY ORDINAL_POSITION" | jq -R . |
        jq -s --arg x " $* " 'map(select(. as $c | $x | contains(" " + $c + " ") | not)) |
            map(if . == "id" then {name: ., type: "unsigned_long", key: true}
                elif . == "biu" then {name: ., type: "unsigned_long"} else . end)'
}
# producer_oracle OUT-RQ OUT-RI RI-EXCLUDED... — the re-query index's
# documents (wide with its parts nested; a column added later is not in
# its mapping) and the row-image index's (wide's columns but RI-EXCLUDED)
producer_oracle() {
    local rq="$1" ri="$2"
    shift 2
    oracle_query "$D" "SET SESSION time_zone = '+00:00';
SELECT JSON_OBJECT('id', CAST(w.id AS CHAR), 'routing', NULL, 'doc', JSON_OBJECT($(wide_cols extra),
  'parts', COALESCE(JSON_EXTRACT((SELECT JSON_ARRAYAGG(JSON_OBJECT('id', p.id, 'wide_id', p.wide_id,
      'label', p.label, 'amount', CAST(p.amount AS CHAR), 'at', $(dtx p.at 6)))
      FROM part p WHERE p.wide_id = w.id), '\$'), JSON_ARRAY())))
FROM wide w ORDER BY w.id" >"$rq" || fail "the re-query index's oracle query"
    oracle_query "$D" "SET SESSION time_zone = '+00:00';
SELECT JSON_OBJECT('id', CAST(w.id AS CHAR), 'routing', NULL, 'doc', JSON_OBJECT($(wide_cols extra "$@")))
FROM wide w ORDER BY w.id" >"$ri" || fail "the row-image index's oracle query"
}
# producer_compare WHAT ALIAS ORACLE-FILE LABEL — ALIAS's documents against
# the oracle's; PRODUCER_BAD gets ALIAS when they differ
PRODUCER_BAD=""
producer_compare() {
    search_refresh "$2"
    engine_dump "$2" "$TEST_TMP/$2.ndjson" 2>"$TEST_TMP/dump.err" || { cat "$TEST_TMP/dump.err"; fail "dump $2"; }
    _LIB_ASSERTS=$((_LIB_ASSERTS + 1))
    if compare_docs "$TEST_TMP/$2.ndjson" "$3" --numbers value --ignore-field ss_version \
            --ignore-field ss_hash --ignore-field ss_key_hash --label "$4" --show "${PRODUCER_SHOW:-3}" \
            >"$TEST_TMP/cmp.out"; then
        log "$1: $(cat "$TEST_TMP/cmp.out")"
    else
        cat "$TEST_TMP/cmp.out"
        PRODUCER_BAD+=" $2"
    fi
}
# producer_dead_letters WHAT META [WHOSE] — no dead letter in META's table
producer_dead_letters() {
    local n
    n=$(meta_q "SELECT COUNT(*) FROM \`$2\`.dead_letters")
    _LIB_ASSERTS=$((_LIB_ASSERTS + 1))
    [ "$n" = 0 ] && return 0
    meta_q "SELECT index_name, doc_id, LEFT(REPLACE(error, '\n', ' '), 300) FROM \`$2\`.dead_letters
            GROUP BY LEFT(error, 60) LIMIT 6"
    soft_fail "$1: $n dead letter(s)${3:+ in $3}"
}
# producer_rebuilt LOG ALIAS WHAT — the daemon whose log is LOG took WHAT
# (e.g. "TRUNCATE TABLE db.part") read from Kafka as a rebuild of ALIAS, and
# the version it built is live (until then searches see the one before)
producer_rebuilt() {
    local i v=""
    for ((i = 0; i < 600; i++)); do
        v=$(grep -a "index $2: $3 read from Kafka" "$1" | tail -1 | sed -n 's/.*rebuilt from MySQL as version \([0-9]*\).*/\1/p')
        [ -n "$v" ] && grep -aq "\] $2: version $v live" "$1" && break
        sleep 0.2
    done
    _LIB_ASSERTS=$((_LIB_ASSERTS + 1))
    [ -n "$v" ] || { soft_fail "$3: the daemon did not rebuild $2 for it in 120 s"; return; }
    grep -aq "\] $2: version $v live" "$1" || soft_fail "$3: version $v of $2 was not live in 120 s"
}
# producer_repair CONFIG ALIAS — after a change the producer sent nowhere (a
# TRUNCATE: Maxwell ignores it, Debezium skips it by default), caught up:
# `check` finds the index's documents differ (exit 3) without waiting out
# its settle time (the saved offsets are at the topics' ends), and
# `check --repair` mends them (exit 0)
producer_repair() {
    local rc=0 out="$TEST_TMP/check-$2"
    "$SEARCHSYNC_BIN" check --config "$1" "$2" --json >"$out.json" 2>"$out.err" || rc=$?
    assert_eq 3 "$rc" "check of $2 finds the documents of the change the producer did not send: $(head -c 300 "$out.json"; head -3 "$out.err")"
    assert_eq "true" "$(jq -r '.settled' "$out.json" 2>/dev/null)" \
        "check of $2 waited for the daemon's offsets to reach the topics' ends: $(jq -r '.settle_note // empty' "$out.json" 2>/dev/null)"
    rc=0
    "$SEARCHSYNC_BIN" check --config "$1" "$2" --repair >"$out.repair" 2>&1 || rc=$?
    assert_eq 0 "$rc" "check --repair of $2: $(head -3 "$out.repair")"
}

# ---------------------------------------------------------------- caught up
# topic_has TOPIC JQ-ARGS... — some message of TOPIC (any partition) passes
# the jq filter. Not `jq -e`: jq 1.6 exits 4, "no result", whenever the last
# message read yields nothing, and kcat reads the partitions in no fixed order
topic_has() {
    local t="$1"
    shift
    kcat -b "$KAFKA_BOOTSTRAP" -C -t "$t" -e -q -f '%s\n' 2>/dev/null | jq -c "$@" 2>/dev/null | grep -q .
}
# every partition's next offset (topic/partition=next), as the daemon's token writes it
ends() { kcat -b "$KAFKA_BOOTSTRAP" -C -t "$1" -o -1 -e -q -f '%t/%p=%o\n' 2>/dev/null | awk -F= '{print $1 "=" $2 + 1}' | sort; }
saved() { meta_q "SELECT position FROM \`$1\`.offsets" 2>/dev/null | tr ' ' '\n' | grep '=' | sort; }
# reached META ENDS-FILE — the offsets saved in META reach every line of
# ENDS-FILE (not empty). The saved ones are a variable, not awk's first file:
# with nothing saved yet, NR == FNR would hold for ENDS-FILE's lines too, and
# the check passed before the daemon had read a message
reached() {
    [ -s "$2" ] || return 1
    awk -F= -v saved="$(saved "$1")" '
        BEGIN { n = split(saved, l, "\n"); for (i = 1; i <= n; i++) if (split(l[i], kv, "=") == 2) s[kv[1]] = kv[2] }
        !($1 in s) || s[$1] + 0 < $2 + 0 { bad = 1 }
        END { exit bad }' "$2"
}

# maxwell_caught_up WHAT — every message Maxwell sent so far is read by the
# daemon: a sentinel row inserted into D's `fence` (sqlrun) is in Maxwell's
# topic PRE.D.fence, the topics PRE.* stop growing, and the offsets saved in
# META reach their ends. Bounded by the clock, not by tries (a try reads the
# whole topic, and 1,500 of them outlasted the test's own timeout). Maxwell
# 1.17 drops a message its producer gets NotLeaderForPartition for (logged
# as an ERROR; seen on the fence topic's first message, just auto-created):
# a sentinel not seen in 30 s is written again, as a new row. Needs PRE, D,
# META, MXDIR (its maxwell.log, quoted on a failure).
FENCE=0
maxwell_caught_up() {
    local e="$TEST_TMP/ends" t0=$(date +%s) t1 t topics
    local sent=$t0
    FENCE=$((FENCE + 1))
    sqlrun "INSERT INTO fence VALUES ($FENCE, '$1')" || fail "the sentinel row"
    until topic_has "$PRE.$D.fence" --argjson n "$FENCE" 'select(.type == "insert" and .data.id == $n)'; do
        [ $(($(date +%s) - t0)) -lt 300 ] || fail "$1: Maxwell did not send the sentinel row in 300 s; it logged last: $(grep -av 'Unhandled QueryEvent' "$MXDIR/maxwell.log" | grep -a ' [A-Z]* ' | tail -3 | cut -c1-300)"
        if [ $(($(date +%s) - sent)) -ge 30 ]; then
            log "$1: sentinel $FENCE not in its topic after 30 s, written again"
            FENCE=$((FENCE + 1)) sent=$(date +%s)
            sqlrun "INSERT INTO fence VALUES ($FENCE, '$1')" || fail "the sentinel row"
        fi
        sleep 0.2
    done
    t1=$(date +%s)
    topics=$(kcat -b "$KAFKA_BOOTSTRAP" -L 2>/dev/null | sed -n "s/^ *topic \"\\($PRE\\.[^\"]*\\)\".*/\\1/p")
    : >"$e.prev"
    while :; do
        for t in $topics; do ends "$t"; done | sort >"$e"
        cmp -s "$e" "$e.prev" && break
        cp "$e" "$e.prev"
        sleep 1
    done
    until reached "$META" "$e"; do
        [ $(($(date +%s) - t1)) -lt 300 ] || fail "$1: the daemon's saved offsets did not reach the topics' ends in 300 s: saved $(saved "$META" | tr '\n' ' '), ends $(tr '\n' ' ' <"$e")"
        sleep 0.2
    done
    log "$1: caught up (sentinel sent after $((t1 - t0)) s, offsets saved after $(($(date +%s) - t1)) s)"
}

# maxwell_ini FILE GROUP — the daemon's configuration of a test of the real
# Maxwell: a Kafka source over its topics (PRE.*, consumer group GROUP),
# column types and re-reads from the test's server, the metadata (META)
# there too, delivery flushing and saving offsets within 100 ms. With a
# secured Kafka (kafka.sh's KAFKA_SECURE=1) the daemon reads through its
# SASL_SSL listener: SCRAM-SHA-512, the password from a file, the test CA.
maxwell_ini() {
    local brokers="$KAFKA_BOOTSTRAP" secure=""
    if [ -n "${KAFKA_SASL_SSL_BOOTSTRAP:-}" ]; then
        brokers="$KAFKA_SASL_SSL_BOOTSTRAP"
        printf '%s\n' "$KAFKA_SASL_PASSWORD" >"$1.kafka-password"
        secure="security_protocol = sasl_ssl
sasl_mechanism = SCRAM-SHA-512
sasl_username = $KAFKA_SASL_USER
sasl_password_file = $1.kafka-password
ssl_ca = $KAFKA_TLS/ca.pem"
    fi
    cat >"$1" <<INI
[source]
kind = kafka
name = maxwell
host = $MYSQL_HOST
port = $MYSQL_PORT
user = root
start = beginning
[kafka]
brokers = $brokers
topic_regex = $PRE\\..*
group = $2
$secure
[metadata]
host = $MYSQL_HOST
port = $MYSQL_PORT
database = $META
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
idle_checkpoint_interval_ms = 500
INI
}

# maxwell_servers — the harness's Kafka (3 partitions a topic; KAFKA_SECURE
# passed on) started for
# the test (KAFKA_BOOTSTRAP set, stopped at its end) and Maxwell's jars
# resolved (the test skips when Maven Central cannot be reached)
maxwell_servers() {
    local kdir="$TEST_TMP/kafka" frc=0
    KAFKA_PARTITIONS=3 SEARCHSYNC_KAFKA_DIR="$kdir" bash "$HARNESS/kafka.sh" start >"$TEST_TMP/kafka-start.log" 2>&1 ||
        { cat "$TEST_TMP/kafka-start.log"; fail "the harness's Kafka did not start"; }
    on_exit "SEARCHSYNC_KAFKA_DIR='$kdir' bash '$HARNESS/kafka.sh' stop >/dev/null 2>&1"
    . "$kdir/kafka.env"
    bash "$HARNESS/maxwell.sh" fetch >"$TEST_TMP/maxwell-fetch.log" 2>&1 || frc=$?
    if [ "$frc" != 0 ]; then
        cat "$TEST_TMP/maxwell-fetch.log"
        [ "$frc" = 3 ] && skip "Maven Central is not reachable: Maxwell cannot be had"
        fail "resolving Maxwell from Maven Central"
    fi
}
