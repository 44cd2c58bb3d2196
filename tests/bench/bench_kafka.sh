#!/usr/bin/env bash
# tests/bench/bench_kafka.sh — `searchsync run` from Kafka beside the binlog
# source, on the same changes, on the servers run.sh started plus a
# Kafka of its own (tests/harness/kafka.sh, 3 partitions a topic).
#
# The demo shop (BENCH_PRODUCTS, default 2000) and a root-only table `flat`
# (a copy of products, its own index without relations). Three daemons with
# their own metadata schemas and aliases, each first built once:
#   binlog   [source] kind = binlog
#   canal    kind = kafka, topic bench.canal: canal-json, no coordinates
#   debezium kind = kafka, topic bench.debezium: Debezium with source.file/pos
# Per phase the changes are made once with every daemon stopped, read back
# with `searchsync tail` and produced to both topics by the test producer
# (tests/integration/kafka_produce.py); then each daemon in turn is started
# and timed from when it reads (binlog: its "syncing" line; Kafka: its
# partitions assigned, so the broker's 3 s group join delay is left out)
# until its saved checkpoint covers the
# phase (binlog: the position after the last commit; Kafka: every
# partition's end offset), and stopped. changes/s = row changes / that time.
#   root    BENCH_ROOT_CHANGES (60000) UPDATEs of `flat`, 500 rows a
#           transaction (documents rebuilt from MySQL, no relation)
#   nested  BENCH_NESTED_CHANGES (60000) UPDATEs of skus.stock, 500 rows a
#           transaction (the products with nested skus rebuilt)
# The Kafka figures include decoding (JSON) and the column types' lookup;
# canal's messages hold up to 20 rows, Debezium's one.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
SEARCHSYNC_SRCDIR="${SEARCHSYNC_SRCDIR:-$(cd "$here/../.." && pwd)}"
. "$SEARCHSYNC_HARNESS_DIR/env.sh"
BIN="${SEARCHSYNC_BIN:-$PWD/searchsync}"
[ -x "$BIN" ] || { echo "bench_kafka: $BIN not built"; exit 1; }
for c in kcat python3 jq; do command -v $c >/dev/null || { echo "bench_kafka: $c is needed"; exit 1; }; done
NP="${BENCH_PRODUCTS:-2000}"
ROOT="${BENCH_ROOT_CHANGES:-60000}"
NESTED="${BENCH_NESTED_CHANGES:-60000}"

D="benchkafka_$$"
P="bkafka$$"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/bench-kafka.XXXXXX")"
q() { mariadb --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -u root --batch --skip-column-names "$@"; }
DAEMON=""
cleanup() {
    set +e
    if [ -n "$DAEMON" ] && kill -0 "$DAEMON" 2>/dev/null; then kill -TERM "$DAEMON"; wait "$DAEMON"; fi
    for s in binlog canal debezium; do q -e "DROP DATABASE IF EXISTS \`${D}_meta_$s\`" >/dev/null 2>&1; done
    q -e "DROP DATABASE IF EXISTS \`$D\`" >/dev/null 2>&1
    curl -s -XDELETE "$SEARCH_URL/${P}_*" >/dev/null
    SEARCHSYNC_KAFKA_DIR="$tmp/kafka" bash "$SEARCHSYNC_SRCDIR/tests/harness/kafka.sh" stop >/dev/null 2>&1
    rm -rf "$tmp"
}
trap cleanup EXIT

KAFKA_PARTITIONS=3 SEARCHSYNC_KAFKA_DIR="$tmp/kafka" bash "$SEARCHSYNC_SRCDIR/tests/harness/kafka.sh" start \
    >"$tmp/kafka-start.log" 2>&1 || { cat "$tmp/kafka-start.log"; exit 1; }
. "$tmp/kafka/kafka.env"
echo "bench_kafka: $NP demo products in $D, Kafka $KAFKA_BOOTSTRAP, engine $SEARCH_URL"
bash "$SEARCHSYNC_SRCDIR/sql/demo/generate.sh" --products "$NP" --db "$D" \
    --host "$MYSQL_HOST" --port "$MYSQL_PORT" >"$tmp/gen.out" 2>&1 || { cat "$tmp/gen.out"; exit 1; }
q "$D" -e "SET SESSION sql_log_bin = 0; CREATE TABLE flat LIKE products; INSERT INTO flat SELECT * FROM products"
q -e "SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, COLUMN_KEY = 'PRI' FROM information_schema.COLUMNS
  WHERE TABLE_SCHEMA = '$D' ORDER BY TABLE_NAME, ORDINAL_POSITION" >"$tmp/cols.tsv"

flatcols="$(jq -c '.indices[0].tables[0].columns | map(del(.extend_name))' "$SEARCHSYNC_SRCDIR/sql/demo/mapping.json")"
for s in binlog canal debezium; do
    sed "s/\"shop\./\"$D./g" "$SEARCHSYNC_SRCDIR/sql/demo/mapping.json" |
        jq --arg p "${P}_$s" --arg t "$D.flat" --argjson cols "$flatcols" '
          .indices |= map(.alias = ($p + "_" + .alias))
          | .indices[].tables |= map(select(.delay_effect != true))
          | .indices += [{alias: ($p + "_flat"), shards: 3, replicas: 0, tables: [{table: $t, columns: $cols}]}]' \
        >"$tmp/mapping-$s.json"
    {
        printf '[source]\nname = %s\nhost = 127.0.0.1\nport = %s\nuser = root\nserver_id = %s\n' \
            "$s" "$MYSQL_PORT" "$((7600 + $$ % 300))"
        if [ "$s" = binlog ]; then
            echo "start = now"
        else
            printf 'kind = kafka\nstart = beginning\n[kafka]\nbrokers = %s\ntopics = bench.%s\ngroup = bench-%s-%s\n' \
                "$KAFKA_BOOTSTRAP" "$s" "$s" "$$"
        fi
        printf '[metadata]\ndatabase = %s_meta_%s\n[search]\nurls = %s\n' "$D" "$s" "$SEARCH_URL"
        printf '[delivery]\ncheckpoint_interval_ms = 100\nidle_checkpoint_interval_ms = 100\n[admin]\nlisten =\n[log]\nlevel = info\n'
    } >"$tmp/$s.ini"
    "$BIN" mapping import --config "$tmp/$s.ini" "$tmp/mapping-$s.json" --yes >"$tmp/import.out" 2>&1 ||
        { cat "$tmp/import.out"; exit 1; }
done

start() { # NAME: started, reading awaited; T0 = when it began (binlog: its "syncing"
    # line; Kafka: its partitions assigned, after the broker's group join delay)
    local n=$1 i line="index config(s) of source"
    [ "$n" = binlog ] || line="reading bench.$n partition"
    : >"$tmp/run-$n.log"
    "$BIN" run --config "$tmp/$n.ini" >>"$tmp/run-$n.log" 2>&1 &
    DAEMON=$!
    for ((i = 0; i < 1500; i++)); do
        grep -q "$line" "$tmp/run-$n.log" && break
        kill -0 "$DAEMON" 2>/dev/null || { echo "bench_kafka: $n exited:"; cat "$tmp/run-$n.log"; exit 1; }
        sleep 0.02
    done
    T0=$(date +%s.%N)
}
stop() { kill -TERM "$DAEMON"; wait "$DAEMON" || echo "($1 exited $?)"; DAEMON=""; }
# the first builds, one daemon at a time
for s in binlog canal debezium; do
    start $s
    for a in flat products brands; do
        for ((i = 0; i < 1500; i++)); do curl -sf "$SEARCH_URL/_alias/${P}_${s}_$a" >/dev/null && break; sleep 0.2; done
    done
    sleep 1
    stop $s
done

ckpt() { q -e "SELECT position FROM \`${D}_meta_$1\`.offsets" 2>/dev/null; }
ends() { kcat -b "$KAFKA_BOOTSTRAP" -C -t "$1" -o -1 -e -q -f '%t/%p=%o\n' | awk -F= '{print $1 "=" $2 + 1}' | sort; }
covered() { # NAME FILE POS
    local c
    c="$(ckpt "$1")"
    if [ "$1" = binlog ]; then
        local f="${c%:*}" p="${c##*:}"
        [ -n "$c" ] && { [[ "$f" > "$2" ]] || { [ "$f" = "$2" ] && [ "$p" -ge "$3" ]; }; }
    else
        [ "$(tr ' ' '\n' <<<"$c" | grep = | sort)" = "$(ends "bench.$1")" ]
    fi
}
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
phase() { # NAME SQL-FILE
    local name=$1 f0 p0 f1 p1 rows s t0 t1 c0 c1
    read -r f0 p0 <<<"$(q -e 'SHOW MASTER STATUS' | cut -f1,2)"
    q "$D" <"$2"
    read -r f1 p1 <<<"$(q -e 'SHOW MASTER STATUS' | cut -f1,2)"
    "$BIN" tail --source "mysql://root@$MYSQL_HOST:$MYSQL_PORT" --file "$f0" --pos "$p0" --stop-at-end \
        --tables "$D.*" >"$tmp/tail.jsonl" 2>"$tmp/tail.err" || { cat "$tmp/tail.err"; exit 1; }
    rows=$(wc -l <"$tmp/tail.jsonl")
    python3 "$SEARCHSYNC_SRCDIR/tests/integration/kafka_produce.py" "$tmp/cols.tsv" "$D" "$tmp/tail.jsonl" "$tmp" 1 >/dev/null
    for s in canal debezium; do kcat -b "$KAFKA_BOOTSTRAP" -P -K $'\t' -t "bench.$s" <"$tmp/$s.kv"; done
    echo "$name: $rows row changes ($(wc -l <"$tmp/canal.kv") canal messages, $(wc -l <"$tmp/debezium.kv") Debezium messages)"
    for s in binlog canal debezium; do
        start $s
        t0=$T0
        c0=$(cpu "$DAEMON")
        for ((i = 0; i < 30000; i++)); do covered $s "$f1" "$p1" && break; sleep 0.02; done
        t1=$(date +%s.%N)
        c1=$(cpu "$DAEMON")
        covered $s "$f1" "$p1" || { echo "bench_kafka: $s did not catch up in 600 s"; tail "$tmp/run-$s.log"; exit 1; }
        awk -v n="$rows" -v a="$t0" -v b="$t1" -v c="$(( c1 - c0 ))" -v s="$s" -v hz="$(getconf CLK_TCK)" \
            'BEGIN { printf "  %-9s %6.2f s  %8.0f changes/s  daemon CPU %.2f s\n", s, b - a, n / (b - a), c / hz }'
        stop $s
    done
}
# the SQL of each phase: transactions of 500 rows
read -r nskus minsku <<<"$(q "$D" -e 'SELECT COUNT(*), MIN(id) FROM skus')"
python3 - "$NP" "$ROOT" "$NESTED" "$tmp" "$nskus" "$minsku" <<'PY'
import sys
np_, root, nested, out, nskus, minsku = (int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]),
                                         sys.argv[4], int(sys.argv[5]), int(sys.argv[6]))
with open(out + '/root.sql', 'w') as f:
    for i in range(root // 500):
        a = (i * 500) % np_
        print('UPDATE flat SET price = price + 0.01 WHERE id > %d ORDER BY id LIMIT 500;' % a, file=f)
with open(out + '/nested.sql', 'w') as f:
    for i in range(nested // 500):
        a = minsku - 1 + (i * 500) % max(1, nskus - 500)
        print('UPDATE skus SET stock = stock + 1 WHERE id > %d ORDER BY id LIMIT 500;' % a, file=f)
PY
phase root "$tmp/root.sql"
phase nested "$tmp/nested.sql"
for s in binlog canal debezium; do
    grep -E ' (ERROR|WARN) ' "$tmp/run-$s.log" | head -3 | sed "s/^/$s: /" || true
done
