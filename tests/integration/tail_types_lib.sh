# tests/integration/tail_types_lib.sh — `searchsync tail` of a table per
# type family (numbers, temporal, strings/bytes/JSON/geometry, NULL bitmaps,
# MariaDB's UUID/INET6/INET4) with edge values, checked against the server's
# own SELECT of the same rows. Sourced after lib.sh by t_tail_types.sh (the
# suite's MariaDB) and t_source_versions.sh (other MariaDB versions, MySQL 8).
#
# Owns: the schema, its rows and the oracle: per column an SQL expression
# that renders the value as docs/binlog.md "Values" says (JSON_OBJECT over CAST,
# DATE_FORMAT, TO_BASE64, ST_AsGeoJSON), never values copied from tail's
# output. Compared with jq after key sorting; floats to 6 significant digits
# (FLOAT is 24-bit), and the 64-bit extremes also as raw text (jq 1.6 reads
# numbers as doubles).
#
#   tail_types_check DB [LABEL [FLAVOUR]]
#       create database DB on the server of $MYSQL_HOST:$MYSQL_PORT, fill it,
#       tail the binlog of that and compare (lib.sh assertions, LABEL in front
#       of their names). FLAVOUR mariadb (default) or mysql: MySQL has no
#       UUID/INET6/INET4 table (MariaDB-only types) and 8.0.15 no CAST AS DOUBLE
# shellcheck shell=bash

tail_types_check() {
    local db="$1" tt="${2:+$2: }" flavour="${3:-mariadb}" f0 p0 f1 p1 out SRC cols n v c ymd norm
    local rows=16 fexpr='CAST(f AS DOUBLE)'
    # (CAST AS DOUBLE is MySQL 8.0.17+; FLOAT + 0E0 is the same double)
    [ "$flavour" = mysql ] && fexpr='f + 0E0'
    SRC="mysql://$MYSQL_USER:$MYSQL_PASSWORD@$MYSQL_HOST:$MYSQL_PORT"
    mysql_q "CREATE DATABASE \`$db\` CHARACTER SET utf8mb4"
    read -r f0 p0 <<<"$(mysql_binlog_pos)"

    mysql_q "
    SET SESSION sql_mode='';
    SET SESSION time_zone='+00:00';
    CREATE TABLE num (
      id INT PRIMARY KEY, ti TINYINT, tiu TINYINT UNSIGNED, si SMALLINT, siu SMALLINT UNSIGNED,
      mi MEDIUMINT, miu MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED, bi BIGINT, biu BIGINT UNSIGNED,
      f FLOAT, fd DOUBLE, d1 DECIMAL(65,30), d2 DECIMAL(20,10), d3 DECIMAL(4,2), d4 DECIMAL(23,0),
      d5 DECIMAL(10,0) UNSIGNED, d6 DECIMAL(5,5), b1 BIT(1), b5 BIT(5), b64 BIT(64), y YEAR);
    INSERT INTO num VALUES
     (1,-128,0,-32768,0,-8388608,0,-2147483648,0,-9223372036854775808,0,
      -3.40282e38,-1.7976931348623157e308,'-99999999999999999999999999999999999.999999999999999999999999999999',
      '-42000.123456','-10.55','-1234567891234567891234',0,'-0.99999',0,0,0,1901),
     (2,127,255,32767,65535,8388607,16777215,2147483647,4294967295,9223372036854775807,18446744073709551615,
      1.1,0.1,'99999999999999999999999999999999999.999999999999999999999999999999',
      '9999999999.9999999999','99.99','12345678901234567890123',9999999999,'0.00001',1,31,18446744073709551615,2155),
     (3,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0),
     (4,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL),
     (5,-1,1,-1,1,-1,1,-1,1,-1,1,1.17549e-38,2.2250738585072014e-308,'0.000000000000000000000000000001',
      '-0.0000000001','-0.01','1',1,'0.5',1,21,9223372036854775808,2000);
    CREATE TABLE tim (
      id INT PRIMARY KEY, da DATE, dt0 DATETIME, dt1 DATETIME(1), dt2 DATETIME(2), dt3 DATETIME(3),
      dt4 DATETIME(4), dt5 DATETIME(5), dt6 DATETIME(6),
      ts0 TIMESTAMP NULL, ts1 TIMESTAMP(1) NULL, ts2 TIMESTAMP(2) NULL, ts3 TIMESTAMP(3) NULL,
      ts4 TIMESTAMP(4) NULL, ts5 TIMESTAMP(5) NULL, ts6 TIMESTAMP(6) NULL,
      t0 TIME, t1 TIME(1), t2 TIME(2), t3 TIME(3), t4 TIME(4), t5 TIME(5), t6 TIME(6), y YEAR);
    INSERT INTO tim VALUES
     (1,'0000-00-00','0000-00-00 00:00:00','0000-00-00 00:00:00.0','2020-00-15 00:00:00','2020-05-00 01:02:03',
      NULL,NULL,NULL, '0000-00-00 00:00:00',NULL,NULL,NULL,NULL,NULL,NULL,
      '-838:59:59','-838:59:58.9','-00:00:00.01','-00:00:01.001','-12:34:56.0001','-00:00:00.00001','-838:59:58.123456',0),
     (2,'9999-12-31','9999-12-31 23:59:59','9999-12-31 23:59:59.9','9999-12-31 23:59:59.99','9999-12-31 23:59:59.999',
      '9999-12-31 23:59:59.9999','9999-12-31 23:59:59.99999','9999-12-31 23:59:59.999999',
      '2038-01-19 03:14:07','2038-01-19 03:14:07.9','2038-01-19 03:14:07.99','2038-01-19 03:14:07.999',
      '2038-01-19 03:14:07.9999','2038-01-19 03:14:07.99999','2038-01-19 03:14:07.999999',
      '838:59:59','838:59:59.9','838:59:59.99','838:59:59.999','838:59:59.9999','838:59:59.99999','838:59:59.999999',2155),
     (3,'1000-01-01','1000-01-01 00:00:00','1000-01-01 00:00:00.1','1000-01-01 00:00:00.01','1000-01-01 00:00:00.001',
      '1000-01-01 00:00:00.0001','1000-01-01 00:00:00.00001','1000-01-01 00:00:00.000001',
      '1970-01-01 00:00:01','1970-01-01 00:00:01.5','2020-02-29 12:00:00.05','2000-01-01 00:00:00.123',
      '2000-01-01 00:00:00.1234','2000-01-01 00:00:00.12345','2000-01-01 00:00:00.123456',
      '00:00:00','00:00:00.1','01:02:03.04','-01:02:03.004','100:00:00.0004','-100:00:00.00005','00:00:00.000001',1901),
     (4,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
    CREATE TABLE str (
      id INT PRIMARY KEY, c CHAR(4), c255 CHAR(255), v VARCHAR(300), l1 VARCHAR(10) CHARACTER SET latin1,
      a VARCHAR(10) CHARACTER SET ascii, u3 VARCHAR(10) CHARACTER SET utf8mb3, cy VARCHAR(10) CHARACTER SET cp1251,
      bn BINARY(4), vb VARBINARY(10), bl BLOB, tb TINYBLOB, tx TEXT, mt MEDIUMTEXT CHARACTER SET latin1,
      e ENUM('a','b','c'), s SET('x','y','z'), j JSON, g GEOMETRY, p POINT, ls LINESTRING, pg POLYGON,
      el ENUM('é','ü') CHARACTER SET latin1, sl SET('ä','ö') CHARACTER SET latin1);
    INSERT INTO str VALUES
     (1,'ab  ','x  ','ab  ','é€','abc','ü','Привет',
      'ab\0\0','\0a\0',X'00FF10','',REPEAT('é',1000),'Grüße','b','x,z',
      '{\"a\": [1, 2.5, \"x\"], \"b\": {\"c\": null, \"d\": true}, \"e\": \"\\\\u00e9\\\\ud83d\\\\ude00\"}',
      ST_GeomFromText('POINT(1 2)'),ST_GeomFromText('POINT(-1.5 1e10)'),ST_GeomFromText('LINESTRING(0 0,1 1,2 0)'),
      ST_GeomFromText('POLYGON((0 0,4 0,4 4,0 4,0 0),(1 1,2 1,2 2,1 1))'),'ü','ä,ö'),
     (2,'','',REPEAT('😀',75),'','','','',
      '','',REPEAT(X'AB',300),X'00','','','','','[]',
      ST_GeomFromText('GEOMETRYCOLLECTION(POINT(1 1),LINESTRING(0 0,1 1))'),NULL,NULL,NULL,'é',''),
     (3,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
    INSERT INTO str (id, c, v, e, s, j, g) VALUES
     (4,'x','tab\there \"quoted\" \\\\ back','c','x,y,z','\"just a string\"',ST_GeomFromText('MULTIPOLYGON(((0 0,1 0,1 1,0 0)),((5 5,6 5,6 6,5 5)))')),
     (5,'😀','line\nbreak','a','','12345678901234567890',ST_GeomFromText('MULTIPOINT(1 1,2 2)'));
    CREATE TABLE nul (id INT PRIMARY KEY,
      c1 INT,c2 INT,c3 INT,c4 INT,c5 INT,c6 INT,c7 INT,c8 INT,c9 INT,c10 INT,c11 INT,
      c12 INT,c13 INT,c14 INT,c15 INT,c16 INT,c17 INT,c18 INT,c19 INT,c20 INT,c21 INT,c22 INT);
    INSERT INTO nul (id,c2,c7,c13,c19,c22) VALUES (1,2,7,13,19,22);
    INSERT INTO nul (id) VALUES (2);
    " "$db"
    if [ "$flavour" = mariadb ]; then
        mysql_q "
    CREATE TABLE typ (id INT PRIMARY KEY, u UUID, i6 INET6, i4 INET4);
    INSERT INTO typ VALUES (1,'01234567-89ab-4def-8123-456789abcdef','2001:db8::ff00:42:8329','192.168.1.10'),
     (2,'6ba7b810-9dad-11d1-80b4-00c04fd430c8','::ffff:1.2.3.4','0.0.0.0'),
     (3,'00000000-0000-0000-0000-000000000000','::','255.255.255.255'),(4,NULL,NULL,NULL);
    " "$db"
        rows=20
    fi
    read -r f1 p1 <<<"$(mysql_binlog_pos)"

    out="$TEST_TMP/tail.jsonl"
    "$SEARCHSYNC_BIN" tail --source "$SRC" --file "$f0" --pos "$p0" --stop-at-end --tables "$db.*" \
        >"$out" 2>"$TEST_TMP/tail.err" || { cat "$TEST_TMP/tail.err"; fail "${tt}tail exited $?"; }
    assert_eq 0 "$(grep -vc '^{' "$out" || true)" "${tt}stdout holds JSON lines only"
    assert_eq "$rows" "$(wc -l <"$out")" "${tt}one line per inserted row"
    assert_eq "$rows" "$(jq -c 'select(.type=="insert" and .before==null and .db=="'"$db"'")' "$out" | wc -l)" \
        "${tt}inserts with before=null in the test database"

    # the oracle: the server's own rendering of each column, in SQL
    ymd='%Y-%m-%dT%H:%i:%s'
    _tt_dtx() { # column fsp zulu → SQL producing the documented text (null for zero dates)
        local c="$1" fsp="$2" z="${3:-}"
        local frac="''"
        [ "$fsp" -gt 0 ] && frac="CONCAT('.', LEFT(DATE_FORMAT($c,'%f'), $fsp))"
        printf "IF(%s IS NULL OR MONTH(%s)=0 OR DAYOFMONTH(%s)=0 OR YEAR(%s)=0, NULL, CONCAT(DATE_FORMAT(%s,'%s'), %s, '%s'))" \
            "$c" "$c" "$c" "$c" "$c" "$ymd" "$frac" "$z"
    }
    _tt_b64() { printf "REPLACE(TO_BASE64(%s), '\\\\n', '')" "$1"; }
    _tt_oracle() { # table, json_object arguments (--raw: no batch-mode escaping of backslashes)
        mariadb --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -u root --batch --raw --skip-column-names \
            --default-character-set=utf8mb4 --database="$db" \
            -e "SET SESSION time_zone='+00:00'; SELECT JSON_OBJECT($2) FROM \`$1\` ORDER BY id"
    }
    _tt_actual() { jq -c "select(.table==\"$1\") | .after" "$out"; }
    norm='def sig6: if type == "number" and . != 0 then (. as $x | ($x|fabs|log10|floor) as $e
            | ($x / pow(10; $e - 5) | round) * pow(10; $e - 5)) else . end;
          map(with_entries(if (.key == "f" or .key == "fd") then .value |= sig6 else . end)) | sort_by(.id)'
    _tt_compare() { # table, oracle lines, actual lines
        local e a
        e="$(printf '%s\n' "$2" | jq -s -S "$norm")"
        a="$(printf '%s\n' "$3" | jq -s -S "$norm")"
        assert_eq "$e" "$a" "${tt}table $1: tail output equals the server's SELECT"
    }

    # numbers: integers and BIT as numbers, DECIMAL as text with exactly s decimals
    cols="'id',id"
    for c in ti tiu si siu mi miu i iu bi biu; do cols="$cols,'$c',$c"; done
    cols="$cols,'f',$fexpr,'fd',fd"
    for c in d1 d2 d3 d4 d5 d6; do cols="$cols,'$c',CAST($c AS CHAR)"; done
    cols="$cols,'b1',CAST(b1 AS UNSIGNED),'b5',CAST(b5 AS UNSIGNED),'b64',CAST(b64 AS UNSIGNED),'y',CAST(y AS UNSIGNED)"
    _tt_compare num "$(_tt_oracle num "$cols")" "$(_tt_actual num)"
    # exactness beyond doubles
    for v in '"biu":18446744073709551615' '"bi":-9223372036854775808' '"bi":9223372036854775807' \
             '"b64":18446744073709551615' '"b64":9223372036854775808' '"d1":"-99999999999999999999999999999999999.999999999999999999999999999999"' \
             '"d4":"-1234567891234567891234"' '"d2":"-42000.1234560000"' '"d6":"-0.99999"' '"y":0' ; do
        assert_contains "$(cat "$out")" "$v" "${tt}exact value $v"
    done

    # temporal: DATETIME/DATE text, TIMESTAMP in UTC with Z, TIME as CAST prints it, YEAR int
    cols="'id',id,'da',IF(da IS NULL OR MONTH(da)=0 OR DAYOFMONTH(da)=0, NULL, DATE_FORMAT(da,'%Y-%m-%d'))"
    cols="$cols,'dt0',$(_tt_dtx dt0 0)"
    for n in 1 2 3 4 5 6; do cols="$cols,'dt$n',$(_tt_dtx dt$n $n)"; done
    cols="$cols,'ts0',$(_tt_dtx ts0 0 Z)"
    for n in 1 2 3 4 5 6; do cols="$cols,'ts$n',$(_tt_dtx ts$n $n Z)"; done
    for n in 0 1 2 3 4 5 6; do cols="$cols,'t$n',CAST(t$n AS CHAR)"; done
    cols="$cols,'y',CAST(y AS UNSIGNED)"
    _tt_compare tim "$(_tt_oracle tim "$cols")" "$(_tt_actual tim)"

    # strings: text converted to UTF-8, CHAR without trailing spaces, bytes as
    # base64 (BINARY(n) padded), ENUM label, SET array, JSON value, GeoJSON
    _tt_setarr() { printf "IF(%s IS NULL, NULL, IF(%s='', JSON_ARRAY(), JSON_EXTRACT(CONCAT('[\"', REPLACE(%s, ',', '\",\"'), '\"]'), '\$')))" "$1" "$1" "$1"; }
    _tt_geo() { printf "JSON_EXTRACT(ST_AsGeoJSON(%s), '\$')" "$1"; }
    cols="'id',id,'c',c,'c255',c255,'v',v,'l1',l1,'a',a,'u3',u3,'cy',cy"
    cols="$cols,'bn',$(_tt_b64 bn),'vb',$(_tt_b64 vb),'bl',$(_tt_b64 bl),'tb',$(_tt_b64 tb),'tx',tx,'mt',mt,'e',CAST(e AS CHAR)"
    cols="$cols,'s',$(_tt_setarr s),'j',JSON_EXTRACT(j,'\$'),'g',$(_tt_geo g),'p',$(_tt_geo p),'ls',$(_tt_geo ls),'pg',$(_tt_geo pg)"
    cols="$cols,'el',CAST(el AS CHAR),'sl',$(_tt_setarr sl)"
    _tt_compare str "$(_tt_oracle str "$cols")" "$(_tt_actual str)"
    assert_contains "$(cat "$out")" '"bn":"YWIAAA=="' "${tt}BINARY(4) 'ab' padded back to 4 bytes"
    assert_contains "$(cat "$out")" '"c":"ab","c255":"x","v":"ab  "' "${tt}CHAR strips trailing spaces, VARCHAR keeps them"

    # 22 nullable columns, 5 set: a 3-byte NULL bitmap
    cols="'id',id"
    for n in $(seq 1 22); do cols="$cols,'c$n',c$n"; done
    _tt_compare nul "$(_tt_oracle nul "$cols")" "$(_tt_actual nul)"

    # MariaDB's UUID / INET6 / INET4 (BINARY in the binlog) as the server prints them
    [ "$flavour" = mariadb ] || return 0
    _tt_compare typ "$(_tt_oracle typ "'id',id,'u',CAST(u AS CHAR),'i6',CAST(i6 AS CHAR),'i4',CAST(i4 AS CHAR)")" "$(_tt_actual typ)"
}
