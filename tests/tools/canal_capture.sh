#!/usr/bin/env bash
# tests/tools/canal_capture.sh — captures the unit tests' canal fixtures
# (tests/fixtures/mq/canal/real/) from the real canal: Kafka 3.9.1
# (tests/harness/kafka.sh), MySQL 8.0.15 with binlog_row_metadata=MINIMAL
# (mysql8.sh; why MINIMAL: canal.sh's header) and canal 1.1.4 (canal.sh,
# flat messages, its JVM at UTC+08:00), all in a temporary directory,
# stopped on exit.
#
# Table fx.c (below) gets a row of values at their limits — binary values
# with 0x00 bytes, which canal writes as \u0000 characters — and a row of
# the other limits in one statement (one message of two rows); the first is
# updated, has its key changed and is deleted; fx.c is altered. Each message
# is written as canal wrote it (bytes untouched) to KIND.json: insert-2rows,
# update-1, key-1 (the key change), delete-1, alter.
#
# usage: tests/tools/canal_capture.sh [OUTDIR]   (default: the fixtures dir)
set -euo pipefail
src="$(cd "$(dirname "$0")/../.." && pwd)"
H="$src/tests/harness"
out="${1:-$src/tests/fixtures/mq/canal/real}"
mkdir -p "$out"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/canal-capture.XXXXXX")"
cleanup() {
    SEARCHSYNC_CANAL_DIR="$tmp/canal" bash "$H/canal.sh" stop >/dev/null 2>&1 || true
    SEARCHSYNC_KAFKA_DIR="$tmp/kafka" bash "$H/kafka.sh" stop >/dev/null 2>&1 || true
    SEARCHSYNC_HARNESS_DIR="$tmp/server" bash "$H/mysql8.sh" stop >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT

KAFKA_PARTITIONS=1 SEARCHSYNC_KAFKA_DIR="$tmp/kafka" bash "$H/kafka.sh" start
MYSQL8_EXTRA_ARGS=--binlog-row-metadata=MINIMAL SEARCHSYNC_HARNESS_DIR="$tmp/server" bash "$H/mysql8.sh" start
. "$tmp/kafka/kafka.env"
. "$tmp/server/mysql8.env"
q() { mysql --no-defaults -h 127.0.0.1 -P "$MYSQL_PORT" -u root --default-character-set=utf8mb4 "$@"; }
q <<'SQL'
CREATE USER 'canal'@'%' IDENTIFIED WITH mysql_native_password BY 'cn';
GRANT SELECT, REPLICATION CLIENT, REPLICATION SLAVE ON *.* TO 'canal'@'%';
CREATE DATABASE fx CHARACTER SET utf8mb4;
CREATE TABLE fx.c (id BIGINT UNSIGNED NOT NULL PRIMARY KEY, y YEAR, f FLOAT, d DOUBLE,
  dc1 DECIMAL(20,6), dc2 DECIMAL(65,30), bn BINARY(4), vb VARBINARY(16), bl BLOB, t0 TIME, t6 TIME(6),
  dt6 DATETIME(6), ts0 TIMESTAMP NULL, ts6 TIMESTAMP(6) NULL, da DATE, b1 BIT(1), b64 BIT(64), j JSON,
  vc VARCHAR(16), e ENUM('a','b','c'), s SET('x','y','z'));
SQL
SEARCHSYNC_CANAL_DIR="$tmp/canal" KAFKA_BOOTSTRAP="$KAFKA_BOOTSTRAP" CANAL_HOST=127.0.0.1 \
    CANAL_PORT="$MYSQL_PORT" CANAL_USER=canal CANAL_PASSWORD=cn CANAL_INCLUDE=fx CANAL_TOPIC=cn \
    CANAL_TZ=Asia/Shanghai bash "$H/canal.sh" start
q <<'SQL'
SET SESSION sql_mode = '', time_zone = '+00:00';
INSERT INTO fx.c VALUES
 (1, 0, 1024.125, 1e300, -0.561484, '-0.000000000000000000000000000001', X'00FF', X'000000', X'000102',
  '-838:59:59', '838:59:58.999999', '1965-03-04 05:06:07.123456', '1970-01-01 00:00:01',
  '2038-01-19 03:14:07.999999', '0000-00-00', 1, 18446744073709551615, '{"big": 18446744073709551615}',
  'héllo 😀', 'b', 'x,z'),
 (18446744073709551615, 2155, -2.25, -1.7976931348623157e308, '12345678901234.123456',
  '99999999999999999999999999999999999.999999999999999999999999999999', 'ab', X'D34D34', X'',
  '100:00:00', '-00:00:00.000001', '0000-00-00 00:00:00', '0000-00-00 00:00:00', NULL, '2024-02-29', 0, 0,
  '[]', '', 'c', '');
UPDATE fx.c SET y = 1901, dc2 = '0.000000000000000000000000000001', vb = X'00' WHERE id = 1;
UPDATE fx.c SET id = 7 WHERE id = 1;
DELETE FROM fx.c WHERE id = 7;
ALTER TABLE fx.c ADD COLUMN extra INT;
SQL
sleep 3
take() { # JQ-FILTER FILE: the first message the filter selects, as Kafka holds it
    local n
    n=$(kcat -b "$KAFKA_BOOTSTRAP" -C -t cn -e -q -f '%o\n%s\n' | paste - - |
        while IFS=$'\t' read -r off msg; do
            jq -e "$1" <<<"$msg" >/dev/null 2>&1 && { echo "$off"; break; }
        done)
    [ -n "$n" ] || { echo "no message matches $1" >&2; exit 1; }
    kcat -b "$KAFKA_BOOTSTRAP" -C -t cn -o "$n" -c 1 -e -q -D '' >"$out/$2"
    echo "$2: offset $n"
}
take '.type == "INSERT" and (.data | length) == 2' insert-2rows.json
take '.type == "UPDATE" and .data[0].id == "1"' update-1.json
take '.type == "UPDATE" and .data[0].id == "7"' key-1.json
take '.type == "DELETE"' delete-1.json
take '.isDdl and .type == "ALTER"' alter.json
