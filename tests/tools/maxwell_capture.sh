#!/usr/bin/env bash
# tests/tools/maxwell_capture.sh — captures the unit tests' Maxwell fixtures
# (tests/fixtures/mq/maxwell/real/) from the real Maxwell: Kafka 3.9.1
# (tests/harness/kafka.sh), MariaDB (mariadb.sh) and Maxwell 1.17.0
# (maxwell.sh), all in a temporary directory, stopped on exit.
#
# Table fx.t (below) gets a row of values at their limits and one of the
# other limits; the first is updated (YEAR 0000, a DECIMAL of 30 fraction
# digits whose text Maxwell writes as 1E-30, latin1 'é€'), has its key
# changed and is deleted; table fx.k (no TIME: Maxwell 1.17.0's bootstrap
# cannot read a TIME beyond 24 h) is bootstrapped; fx.t is altered. Each
# message is written as Maxwell wrote it (bytes untouched) to KIND.json:
# insert-1, insert-2, update-1, key-1 (the key change), delete-1,
# bootstrap-request (the row inserted into maxwell.bootstrap),
# bootstrap-start, bootstrap-insert, bootstrap-complete, table-alter,
# table-create.
#
# usage: tests/tools/maxwell_capture.sh [OUTDIR]   (default: the fixtures dir)
set -euo pipefail
src="$(cd "$(dirname "$0")/../.." && pwd)"
H="$src/tests/harness"
out="${1:-$src/tests/fixtures/mq/maxwell/real}"
mkdir -p "$out"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/maxwell-capture.XXXXXX")"
cleanup() {
    SEARCHSYNC_MAXWELL_DIR="$tmp/maxwell" bash "$H/maxwell.sh" stop >/dev/null 2>&1 || true
    SEARCHSYNC_KAFKA_DIR="$tmp/kafka" bash "$H/kafka.sh" stop >/dev/null 2>&1 || true
    SEARCHSYNC_HARNESS_DIR="$tmp/server" bash "$H/mariadb.sh" stop >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT

KAFKA_PARTITIONS=1 SEARCHSYNC_KAFKA_DIR="$tmp/kafka" bash "$H/kafka.sh" start
SEARCHSYNC_HARNESS_DIR="$tmp/server" bash "$H/mariadb.sh" start
. "$tmp/kafka/kafka.env"
. "$tmp/server/mariadb.env"
q() { mariadb --no-defaults -h 127.0.0.1 -P "$MYSQL_PORT" -u root --default-character-set=utf8mb4 "$@"; }
q <<'SQL'
CREATE USER 'maxwell'@'%' IDENTIFIED BY 'mx';
GRANT ALL ON maxwell.* TO 'maxwell'@'%';
GRANT SELECT, REPLICATION CLIENT, REPLICATION SLAVE ON *.* TO 'maxwell'@'%';
CREATE DATABASE fx CHARACTER SET utf8mb4;
CREATE TABLE fx.t (id BIGINT UNSIGNED NOT NULL PRIMARY KEY, y YEAR, f FLOAT, dc1 DECIMAL(20,6),
  dc3 DECIMAL(10,0), dc2 DECIMAL(65,30), vb VARBINARY(16), t6 TIME(6), dt6 DATETIME(6), dt3 DATETIME(3),
  ts6 TIMESTAMP(6) NULL, da DATE, biu BIGINT UNSIGNED, b64 BIT(64), b1 BIT(1), j JSON,
  l1 VARCHAR(8) CHARACTER SET latin1, vc VARCHAR(16), e ENUM('a','b'), s SET('x','y','z'));
CREATE TABLE fx.k (id INT NOT NULL PRIMARY KEY, y YEAR, l1 VARCHAR(8) CHARACTER SET latin1, dc2 DECIMAL(65,30));
SET SESSION sql_mode = '', time_zone = '+00:00';
INSERT INTO fx.k VALUES (1, 0, 'é€', '-0.000000000000000000000000000001'), (2, 2155, '', '0.5');
SQL
SEARCHSYNC_MAXWELL_DIR="$tmp/maxwell" KAFKA_BOOTSTRAP="$KAFKA_BOOTSTRAP" MAXWELL_HOST=127.0.0.1 \
    MAXWELL_PORT="$MYSQL_PORT" MAXWELL_USER=maxwell MAXWELL_PASSWORD=mx MAXWELL_INCLUDE=fx \
    MAXWELL_TOPIC='mx.%{database}.%{table}' MAXWELL_DDL_TOPIC=mx.ddl bash "$H/maxwell.sh" start
q <<'SQL'
SET SESSION sql_mode = '', time_zone = '+00:00';
INSERT INTO fx.t VALUES
 (1, 1901, 1024.125, -0.561484, -2929356, '-0.000000000000000000000000000001', X'000000', '-838:59:59',
  '1965-03-04 05:06:07.123456', '1969-12-31 23:59:59.999', '2038-01-19 03:14:07.999999', '0000-00-00',
  18446744073709551615, 18446744073709551615, 1, '{"big": 18446744073709551615}', 'é€', '😀', 'b', 'x,z');
INSERT INTO fx.t VALUES
 (9223372036854775808, 2155, -2.25, '12345678901234.123456', 9999999999,
  '99999999999999999999999999999999999.999999999999999999999999999999', X'D34D34', '838:59:58.999999',
  '9999-12-31 23:59:59.999999', '2024-01-02 03:04:05.120', '1970-01-01 00:00:01.000001', '2024-02-29',
  9223372036854775808, 0, 0, '[]', 'plain', '', 'a', '');
UPDATE fx.t SET y = 0, dc2 = '0.000000000000000000000000000001', l1 = 'ÿ€' WHERE id = 1;
UPDATE fx.t SET id = 7 WHERE id = 1;
DELETE FROM fx.t WHERE id = 7;
INSERT INTO maxwell.bootstrap (database_name, table_name) VALUES ('fx', 'k');
SQL
# the bootstrap's end (its bootstrap-complete message), then the DDL
for ((i = 0; i < 300; i++)); do
    kcat -b "$KAFKA_BOOTSTRAP" -C -t mx.fx.k -e -q -f '%s\n' 2>/dev/null | grep -q '"type":"bootstrap-complete"' && break
    sleep 0.2
done
q -e "ALTER TABLE fx.t ADD COLUMN extra INT; CREATE TABLE fx.n (id INT PRIMARY KEY)"
sleep 3
take() { # TOPIC JQ-FILTER FILE: the first message the filter selects, as Kafka holds it
    local n
    n=$(kcat -b "$KAFKA_BOOTSTRAP" -C -t "$1" -e -q -f '%o\n%s\n' | paste - - |
        while IFS=$'\t' read -r off msg; do
            jq -e "$2" <<<"$msg" >/dev/null 2>&1 && { echo "$off"; break; }
        done)
    [ -n "$n" ] || { echo "no message of $1 matches $2" >&2; exit 1; }
    kcat -b "$KAFKA_BOOTSTRAP" -C -t "$1" -o "$n" -c 1 -e -q -D '' >"$out/$3"
    echo "$3: $1 offset $n"
}
take mx.fx.t '.type == "insert" and .data.id == 1' insert-1.json
take mx.fx.t '.type == "insert" and .data.id == 9223372036854775808' insert-2.json
take mx.fx.t '.type == "update" and .data.id == 1' update-1.json
take mx.fx.t '.type == "update" and .data.id == 7' key-1.json
take mx.fx.t '.type == "delete"' delete-1.json
take mx.maxwell.bootstrap '.type == "insert"' bootstrap-request.json
take mx.fx.k '.type == "bootstrap-start"' bootstrap-start.json
take mx.fx.k '.type == "bootstrap-insert" and .data.id == 1' bootstrap-insert.json
take mx.fx.k '.type == "bootstrap-complete"' bootstrap-complete.json
take mx.ddl '.type == "table-alter"' table-alter.json
take mx.ddl '.type == "table-create"' table-create.json
