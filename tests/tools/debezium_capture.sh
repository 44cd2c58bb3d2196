#!/usr/bin/env bash
# tests/tools/debezium_capture.sh — captures the unit tests' Debezium
# fixtures (tests/fixtures/mq/debezium/real/) from the real connector:
# Kafka 3.9.1 (tests/harness/kafka.sh), MySQL 8.0.15 (mysql8.sh) and Kafka
# Connect 4.3.0 with debezium-connector-mysql 3.6.1.Final (connect.sh), all
# in a temporary directory, stopped on exit.
#
# Table fx.t (below) gets two rows, which four workers snapshot:
#   on      JSON converter with schemas, Debezium's default modes
#   off     without schemas, default modes
#   conn    with schemas; time.precision.mode=connect,
#           decimal.handling.mode=double, binary.handling.mode=hex
#   str     without schemas; decimal.handling.mode=string
# then an UPDATE (YEAR 0000 streamed), an INSERT, a DELETE and a TRUNCATE
# TABLE are streamed. Every worker has transaction metadata, heartbeats and
# notifications on, and sends truncate events (skipped.operations=none; the
# connector's default skips them).
# Each message is written as the connector wrote it (bytes untouched) to
# WORKER-KIND.json: r-1 and r-2 (the snapshot's rows), u-1, c-3, d-3,
# tombstone (an empty file: a null value), truncate (op "t"), heartbeat,
# begin, end, ddl (the CREATE TABLE of the snapshot) and notification — all
# of them for on and off, the rows for conn and str.
#
# usage: tests/tools/debezium_capture.sh [OUTDIR]   (default: the fixtures dir)
set -euo pipefail
src="$(cd "$(dirname "$0")/../.." && pwd)"
H="$src/tests/harness"
out="${1:-$src/tests/fixtures/mq/debezium/real}"
mkdir -p "$out"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/debezium-capture.XXXXXX")"
workers="on off conn str"
cleanup() {
    for w in $workers; do SEARCHSYNC_CONNECT_DIR="$tmp/$w" bash "$H/connect.sh" stop >/dev/null 2>&1 || true; done
    SEARCHSYNC_KAFKA_DIR="$tmp/kafka" bash "$H/kafka.sh" stop >/dev/null 2>&1 || true
    SEARCHSYNC_HARNESS_DIR="$tmp/server" bash "$H/mysql8.sh" stop >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT

KAFKA_PARTITIONS=1 SEARCHSYNC_KAFKA_DIR="$tmp/kafka" bash "$H/kafka.sh" start
SEARCHSYNC_HARNESS_DIR="$tmp/server" bash "$H/mysql8.sh" start
. "$tmp/kafka/kafka.env"
. "$tmp/server/mysql8.env"
q() { mariadb --no-defaults -h 127.0.0.1 -P "$MYSQL_PORT" -u root --default-character-set=utf8mb4 "$@"; }
q <<'SQL'
CREATE USER 'debezium'@'%' IDENTIFIED BY 'dbz';
GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO 'debezium'@'%';
CREATE DATABASE fx CHARACTER SET utf8mb4;
SET SESSION sql_mode = '', time_zone = '+00:00';
CREATE TABLE fx.t (id BIGINT UNSIGNED NOT NULL PRIMARY KEY, y YEAR, f FLOAT, dc1 DECIMAL(20,6),
  dc3 DECIMAL(10,0), dc2 DECIMAL(65,30), vb VARBINARY(16), t6 TIME(6), dt6 DATETIME(6), dt3 DATETIME(3),
  ts6 TIMESTAMP(6) NULL, da DATE, biu BIGINT UNSIGNED, b64 BIT(64), b1 BIT(1), j JSON,
  l1 VARCHAR(8) CHARACTER SET latin1, vc VARCHAR(16), e ENUM('a','b'), s SET('x','y','z'));
INSERT INTO fx.t VALUES
 (1, 0, 1024.125, -0.561484, -2929356, '-0.000000000000000000000000000001', X'000000', '-838:59:59',
  '1965-03-04 05:06:07.123456', '1969-12-31 23:59:59.999', '2038-01-19 03:14:07.999999', '0000-00-00',
  18446744073709551615, 18446744073709551615, 1, '{"big": 18446744073709551615}', 'é€', '😀', 'b', 'x,z'),
 (9223372036854775808, 2155, -2.25, '12345678901234.123456', 9999999999,
  '99999999999999999999999999999999999.999999999999999999999999999999', X'D34D34', '838:59:58.999999',
  '9999-12-31 23:59:59.999999', '2024-01-02 03:04:05.120', '1970-01-01 00:00:01.000001', '2024-02-29',
  9223372036854775808, 0, 0, '[]', 'plain', '', 'a', '');
SQL

start() { # WORKER SCHEMAS SERVER-ID [PROPS]
    SEARCHSYNC_CONNECT_DIR="$tmp/$1" KAFKA_BOOTSTRAP="$KAFKA_BOOTSTRAP" DBZ_HOST=127.0.0.1 \
        DBZ_PORT="$MYSQL_PORT" DBZ_USER=debezium DBZ_PASSWORD=dbz DBZ_DATABASES=fx DBZ_PREFIX="$1" \
        DBZ_SCHEMAS="$2" DBZ_SERVER_ID="$3" CONNECT_HEAP=256m DBZ_PROPS="notification.enabled.channels=sink
notification.sink.topic.name=$1.notifications
skipped.operations=none
${4:-}" bash "$H/connect.sh" start
    SEARCHSYNC_CONNECT_DIR="$tmp/$1" bash "$H/connect.sh" wait-snapshot
}
start on on 6101
start off off 6102
start conn on 6103 "time.precision.mode=connect
decimal.handling.mode=double
binary.handling.mode=hex"
start str off 6104 "decimal.handling.mode=string"
q -e "SET SESSION sql_mode = '', time_zone = '+00:00';
      UPDATE fx.t SET f = -2.25 WHERE id = 1;
      INSERT INTO fx.t (id, y, dc1, t6, vb) VALUES (3, 0, -0.561484, '100:00:00.5', X'000000');
      DELETE FROM fx.t WHERE id = 3;
      TRUNCATE TABLE fx.t;"
sleep 5

# TOPIC: every message as "OFFSET<TAB>value" (tombstones: an empty value)
dump() { kcat -b "$KAFKA_BOOTSTRAP" -C -t "$1" -e -q -f '%o\t%s\n' 2>/dev/null || true; }
for w in $workers; do
    dump "$w.fx.t" >"$tmp/$w.data"
    dump "$w.transaction" >"$tmp/$w.txn"
    dump "__debezium-heartbeat.$w" >"$tmp/$w.hb"
    dump "$w" >"$tmp/$w.ddl"
    dump "$w.notifications" >"$tmp/$w.note"
    python3 - "$tmp" "$w" "$out" <<'PY'
import json, sys
tmp, w, out = sys.argv[1:4]
def lines(name):
    for l in open(f"{tmp}/{w}.{name}", encoding="utf-8"):
        off, _, v = l.rstrip("\n").partition("\t")
        yield v
def payload(v):
    o = json.loads(v)
    return o.get("payload", o) if "schema" in o else o
def put(kind, v):
    with open(f"{out}/{w}-{kind}.json", "w", encoding="utf-8") as f:
        f.write(v)
rows = {}
for v in lines("data"):
    if v == "":
        rows.setdefault("tombstone", v)
        continue
    p = payload(v)
    if p["op"] == "t":
        rows.setdefault("truncate", v)
        continue
    img = p["after"] or p["before"]
    rows.setdefault(f"{p['op']}-{img['id'] % 2**64}", v)  # (long mode: above 2^63 negative)
want = ["r-1", "r-9223372036854775808", "u-1", "c-3", "d-3", "tombstone", "truncate"]
if w in ("conn", "str"):
    want = ["r-1", "c-3"]
for k in want:
    put(k.replace("9223372036854775808", "2"), rows[k])
if w in ("on", "off"):
    put("heartbeat", next(lines("hb")))
    txn = [v for v in lines("txn")]
    put("begin", next(v for v in txn if payload(v)["status"] == "BEGIN"))
    put("end", next(v for v in txn if payload(v)["status"] == "END"))
    put("ddl", next(v for v in lines("ddl") if payload(v)["ddl"].startswith("CREATE TABLE")))
    put("notification", next(lines("note")))
PY
done
ls -la "$out"
