-- tests/integration/producer_ops.sql — the tables and the seeded DML of the
-- tests of real CDC producers (t_kafka_debezium.sh, t_kafka_canal.sh,
-- t_kafka_maxwell.sh, through producer_lib.sh), loaded into their database
-- on MySQL 8 or MariaDB with sql_mode '' (zero dates, YEAR 0000) and
-- time_zone '+00:00':
--
--   wide   the root: the types at their limits — integers to BIGINT
--          UNSIGNED above 2^63 (its key too), FLOAT/DOUBLE, DECIMALs whose
--          unscaled bytes' base64 is all digits (-0.561484 → "9260",
--          -2929356 → "0000"), DECIMAL(65,30) (1e-30 is text Maxwell writes
--          as 1E-30), every temporal type with fractions, zero dates,
--          DATETIME(6) before 1970, TIME ±838 h, YEAR 0000/1901/2000/2155
--          (Maxwell sends 0000 as 1900), utf8mb4 (emoji), latin1 (€ is 0x80,
--          which Maxwell reads as U+0080), BINARY/VARBINARY/BLOB (X'000000'
--          is base64 "AAAA", also hex digits), ENUM, SET, BIT(1/10/64), JSON
--          with integers beyond 2^63 (MariaDB's JSON: Maxwell sends its text)
--   part   its nested child (wide_id), moved between parents; Maxwell's
--          bootstrap reads it
--   fence  a table no index reads: the test's sentinel rows
--
--   SET @ops_state = SEED, @ops_flavour = 'maxwell' (or NULL);
--   CALL ops_fill(ROOTS, PARTS);  CALL ops_ops(N);
--
-- ops_fill inserts ROOTS random rows (and the edge rows 1..4) and PARTS
-- children; ops_ops runs N random operations: column updates, inserts,
-- deletes, primary-key changes, deleted-and-inserted-again rows,
-- transactions of several changes of one row (deleted and re-inserted in
-- it too), child inserts/moves/deletes, and the values a producer once got
-- wrong set on purpose: with @ops_flavour 'maxwell' the ones Maxwell
-- misreads (YEAR 0000, latin1 €, 1e-30, and more latin1 text), else the
-- ones Debezium did (YEAR 0000, the all-digit base64 DECIMALs). The same
-- SEED and flavour on the same rows give the same statements (a MINSTD
-- generator in @ops_state, as tests/fixtures/random_ops.sql).

DELIMITER //

CREATE FUNCTION ops_r(n BIGINT) RETURNS BIGINT NO SQL
BEGIN
    SET @ops_state = (@ops_state * 48271) % 2147483647;
    RETURN IF(n <= 0, 0, @ops_state % n);
END//

-- a key of wide: small, above 2^63, or near 2^64
CREATE FUNCTION ops_wid() RETURNS BIGINT UNSIGNED NO SQL
BEGIN
    DECLARE k BIGINT DEFAULT ops_r(10);
    RETURN IF(k < 6, 1 + ops_r(60),
              IF(k < 8, 9223372036854775808 + ops_r(20), 18446744073709551615 - ops_r(10)));
END//

CREATE FUNCTION v_int(lo VARCHAR(30), hi VARCHAR(30)) RETURNS VARCHAR(30) NO SQL
    RETURN ELT(1 + ops_r(6), lo, hi, '0', '1', NULL, lo)//
CREATE FUNCTION v_f() RETURNS VARCHAR(30) NO SQL
    RETURN ELT(1 + ops_r(6), '1.5', '-2.25', '0', '1024.125', '-0.0078125', NULL)//
CREATE FUNCTION v_d() RETURNS VARCHAR(40) NO SQL
    RETURN ELT(1 + ops_r(7), '0.1', '-2.25', '1e300', '-1.7976931348623157e308', '3.141592653589793',
               '5e-324', NULL)//
CREATE FUNCTION v_dc1() RETURNS VARCHAR(40) NO SQL
    RETURN ELT(1 + ops_r(9), '-0.561484', '-2.929356', '-2.929349', '12345678901234.123456', '0.000001',
               '-99999999999999.999999', '0', '1.5', NULL)//
CREATE FUNCTION v_dc2() RETURNS VARCHAR(80) NO SQL
    RETURN ELT(1 + ops_r(6), '99999999999999999999999999999999999.999999999999999999999999999999',
               '-0.000000000000000000000000000001', '0', '12345.678',
               '-99999999999999999999999999999999999.999999999999999999999999999999', NULL)//
CREATE FUNCTION v_dc3() RETURNS VARCHAR(20) NO SQL
    RETURN ELT(1 + ops_r(7), '-2929356', '-561484', '-2929286', '9999999999', '-9999999999', '0', NULL)//
CREATE FUNCTION v_dc4() RETURNS VARCHAR(20) NO SQL
    RETURN ELT(1 + ops_r(5), '0.00001', '-0.99999', '0.5', '0', NULL)//
CREATE FUNCTION v_da() RETURNS VARCHAR(20) NO SQL
    RETURN ELT(1 + ops_r(7), '0000-00-00', '2024-02-29', '1000-01-01', '9999-12-31', '1969-07-20',
               '2020-00-15', NULL)//
CREATE FUNCTION v_dt0() RETURNS VARCHAR(30) NO SQL
    RETURN ELT(1 + ops_r(6), '0000-00-00 00:00:00', '2020-00-15 00:00:00', '1000-01-01 00:00:00',
               '9999-12-31 23:59:59', '1969-12-31 23:59:59', NULL)//
CREATE FUNCTION v_dt3() RETURNS VARCHAR(30) NO SQL
    RETURN ELT(1 + ops_r(5), '1969-12-31 23:59:59.999', '2024-01-02 03:04:05.120', '1000-01-01 00:00:00.001',
               '9999-12-31 23:59:59.999', NULL)//
CREATE FUNCTION v_dt6() RETURNS VARCHAR(30) NO SQL
    RETURN ELT(1 + ops_r(7), '1965-03-04 05:06:07.123456', '1969-12-31 23:59:59.999999',
               '9999-12-31 23:59:59.999999', '1970-01-01 00:00:00.000001', '0000-00-00 00:00:00.000000',
               '1000-01-01 00:00:00.000000', NULL)//
CREATE FUNCTION v_ts0() RETURNS VARCHAR(30) NO SQL
    RETURN ELT(1 + ops_r(5), '1970-01-01 00:00:01', '2038-01-19 03:14:07', '0000-00-00 00:00:00',
               '2000-02-29 12:00:00', NULL)//
CREATE FUNCTION v_ts6() RETURNS VARCHAR(30) NO SQL
    RETURN ELT(1 + ops_r(5), '2038-01-19 03:14:07.999999', '1970-01-01 00:00:01.000001',
               '2000-01-01 00:00:00.500000', '0000-00-00 00:00:00', NULL)//
CREATE FUNCTION v_t0() RETURNS VARCHAR(20) NO SQL
    RETURN ELT(1 + ops_r(6), '-838:59:59', '838:59:59', '00:00:00', '-00:00:01', '100:00:00', NULL)//
CREATE FUNCTION v_t6() RETURNS VARCHAR(30) NO SQL
    RETURN ELT(1 + ops_r(6), '-838:59:58.999999', '838:59:58.999999', '-00:00:00.000001',
               '12:34:56.500000', '24:00:00.000001', NULL)//
CREATE FUNCTION v_y() RETURNS VARCHAR(10) NO SQL
    RETURN ELT(1 + ops_r(6), '0000', '1901', '2155', '2000', '1999', NULL)//
CREATE FUNCTION v_vc() RETURNS VARCHAR(64) CHARSET utf8mb4 NO SQL
    RETURN ELT(1 + ops_r(6), 'héllo 😀', '', CONCAT('tab', CHAR(9 USING utf8mb4), '"quoted" \\'), '😀😀😀 𝄞',
               CONCAT('line', CHAR(10 USING utf8mb4), 'break'), NULL)//
CREATE FUNCTION v_l1() RETURNS VARCHAR(16) CHARSET latin1 NO SQL
    RETURN IF(@ops_flavour = 'maxwell',
              ELT(1 + ops_r(5), 'é€', 'plain', 'ÿ Grüße', '‚ƒ„…†‡ˆ‰Š‹ŒŽ', NULL),
              ELT(1 + ops_r(4), 'é€', 'plain', 'ÿ Grüße', NULL))//
CREATE FUNCTION v_c() RETURNS VARCHAR(4) CHARSET utf8mb4 NO SQL
    RETURN ELT(1 + ops_r(4), 'ab', '', 'abcd', NULL)//
CREATE FUNCTION v_tx() RETURNS TEXT CHARSET utf8mb4 NO SQL
    RETURN ELT(1 + ops_r(3), 'x', REPEAT('é', 300), NULL)//
CREATE FUNCTION v_bn() RETURNS VARBINARY(4) NO SQL
    RETURN ELT(1 + ops_r(4), X'00FF', X'00000000', 'ab', NULL)//
CREATE FUNCTION v_vb() RETURNS VARBINARY(16) NO SQL
    RETURN ELT(1 + ops_r(6), X'00', X'FFFF', '', X'000000', X'D34D34', NULL)//
CREATE FUNCTION v_bl() RETURNS VARBINARY(64) NO SQL
    RETURN ELT(1 + ops_r(4), X'', X'000102', 'blob', NULL)//
CREATE FUNCTION v_e() RETURNS VARCHAR(4) NO SQL
    RETURN ELT(1 + ops_r(4), 'a', 'b', 'c', NULL)//
CREATE FUNCTION v_s() RETURNS VARCHAR(8) NO SQL
    RETURN ELT(1 + ops_r(5), '', 'x,z', 'x,y,z', 'y', NULL)//
CREATE FUNCTION v_bits(hi VARCHAR(30)) RETURNS BIGINT UNSIGNED NO SQL
    RETURN CAST(ELT(1 + ops_r(4), '0', '1', hi, NULL) AS UNSIGNED)//
CREATE FUNCTION v_j() RETURNS VARCHAR(200) CHARSET utf8mb4 NO SQL
    RETURN ELT(1 + ops_r(5),
               '{"big": 18446744073709551615, "neg": -9223372036854775808, "f": 2.5, "a": [1, "x", null, true]}',
               '[]', '"str"', '{"n": {"deep": [12345678901234567890]}}', NULL)//
CREATE FUNCTION v_label() RETURNS VARCHAR(32) CHARSET utf8mb4 NO SQL
    RETURN CONCAT(ELT(1 + ops_r(4), 'part', 'Teil ü', '部品', '😀'), ' ', ops_r(1000))//

-- a row of wide with random values (nothing if the key is taken)
CREATE PROCEDURE ops_ins(w BIGINT UNSIGNED)
    INSERT IGNORE INTO wide VALUES (w, v_int('-128', '127'), v_int('255', '0'), v_int('-32768', '32767'),
        v_int('16777215', '0'), v_int('-2147483648', '2147483647'), v_int('4294967295', '0'),
        v_int('-9223372036854775808', '9223372036854775807'),
        v_int('18446744073709551615', '9223372036854775808'), v_f(), v_d(), v_dc1(), v_dc2(), v_dc3(),
        v_dc4(), v_da(), v_dt0(), v_dt3(), v_dt6(), v_ts0(), v_ts6(), v_t0(), v_t6(), v_y(), v_vc(),
        v_l1(), v_c(), v_tx(), v_bn(), v_vb(), v_bl(), v_e(), v_s(), v_bits('1'), v_bits('1023'),
        v_bits('18446744073709551615'), v_j())//

-- about a third of its columns changed
CREATE PROCEDURE ops_upd(w BIGINT UNSIGNED)
    UPDATE wide SET ti = IF(ops_r(3) = 0, v_int('-128', '127'), ti),
        biu = IF(ops_r(3) = 0, v_int('18446744073709551615', '9223372036854775808'), biu),
        bi = IF(ops_r(3) = 0, v_int('-9223372036854775808', '9223372036854775807'), bi),
        f = IF(ops_r(3) = 0, v_f() + 0E0, f), d = IF(ops_r(3) = 0, v_d() + 0E0, d),
        dc1 = IF(ops_r(3) = 0, v_dc1(), dc1), dc2 = IF(ops_r(3) = 0, v_dc2(), dc2),
        dc3 = IF(ops_r(3) = 0, v_dc3(), dc3), dc4 = IF(ops_r(3) = 0, v_dc4(), dc4),
        da = IF(ops_r(3) = 0, v_da(), da), dt0 = IF(ops_r(3) = 0, v_dt0(), dt0),
        dt3 = IF(ops_r(3) = 0, v_dt3(), dt3), dt6 = IF(ops_r(3) = 0, v_dt6(), dt6),
        ts0 = IF(ops_r(3) = 0, v_ts0(), ts0), ts6 = IF(ops_r(3) = 0, v_ts6(), ts6),
        t0 = IF(ops_r(3) = 0, v_t0(), t0), t6 = IF(ops_r(3) = 0, v_t6(), t6),
        y = IF(ops_r(3) = 0, v_y(), y), vc = IF(ops_r(3) = 0, v_vc(), vc), l1 = IF(ops_r(3) = 0, v_l1(), l1),
        c = IF(ops_r(3) = 0, v_c(), c), tx = IF(ops_r(3) = 0, v_tx(), tx),
        bn = IF(ops_r(3) = 0, v_bn(), bn), vb = IF(ops_r(3) = 0, v_vb(), vb),
        bl = IF(ops_r(3) = 0, v_bl(), bl), e = IF(ops_r(3) = 0, v_e(), e), s = IF(ops_r(3) = 0, v_s(), s),
        b1 = IF(ops_r(3) = 0, v_bits('1'), b1), b10 = IF(ops_r(3) = 0, v_bits('1023'), b10),
        b64 = IF(ops_r(3) = 0, v_bits('18446744073709551615'), b64), j = IF(ops_r(3) = 0, v_j(), j)
    WHERE id = w//

CREATE PROCEDURE ops_fill(roots INT, parts INT)
BEGIN
    DECLARE k INT DEFAULT 0;
    -- the edge rows: every limit, the values that once went wrong
    INSERT INTO wide VALUES
     (1, -128, 255, -32768, 16777215, -2147483648, 4294967295, -9223372036854775808, 18446744073709551615,
      1.5, -1.7976931348623157e308, '-0.561484',
      '99999999999999999999999999999999999.999999999999999999999999999999', '-2929356', '0.00001',
      '0000-00-00', '0000-00-00 00:00:00', '1969-12-31 23:59:59.999', '1965-03-04 05:06:07.123456',
      '1970-01-01 00:00:01', '2038-01-19 03:14:07.999999', '-838:59:59', '838:59:58.999999', '0000',
      'héllo 😀', 'é€', 'ab', 'x', X'00FF', X'000000', X'', 'b', 'x,z', 1, 513, 18446744073709551615,
      '{"big": 18446744073709551615, "neg": -9223372036854775808}'),
     (9223372036854775808, 127, 0, 32767, 0, 2147483647, 0, 9223372036854775807, 9223372036854775808,
      -2.25, 5e-324, '-2.929356', '-0.000000000000000000000000000001', '-561484', '-0.99999',
      '2024-02-29', '2020-00-15 00:00:00', '2024-01-02 03:04:05.120', '1969-12-31 23:59:59.999999',
      NULL, '0000-00-00 00:00:00', '838:59:59', '-00:00:00.000001', '2155',
      '', '', '', '', NULL, NULL, NULL, 'a', '', 0, 0, 0, '[]'),
     (18446744073709551615, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, '0', '0', '0', '0', '1000-01-01',
      '9999-12-31 23:59:59', '1000-01-01 00:00:00.001', '9999-12-31 23:59:59.999999', '2000-02-29 12:00:00',
      '1970-01-01 00:00:01.000001', '00:00:00', '24:00:00.000001', '2000', NULL, NULL, NULL, NULL,
      X'00000000', X'D34D34', X'000102', 'c', 'x,y,z', 0, 1023, 9223372036854775808, '"str"'),
     (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
      NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
      NULL, NULL, NULL, NULL);
    WHILE k < roots DO
        CALL ops_ins(ops_wid());
        SET k = k + 1;
    END WHILE;
    SET k = 1;
    WHILE k <= parts DO
        INSERT INTO part VALUES (k, (SELECT id FROM wide ORDER BY ops_r(1000) LIMIT 1), v_label(),
                                 v_dc1(), v_dt6());
        SET k = k + 1;
    END WHILE;
END//

CREATE PROCEDURE ops_ops(n INT)
BEGIN
    DECLARE k INT DEFAULT 0;
    DECLARE r INT;
    DECLARE w BIGINT UNSIGNED;
    WHILE k < n DO
        SET r = ops_r(100), w = ops_wid();
        IF r < 24 THEN
            CALL ops_upd(w);
        ELSEIF r < 34 THEN
            CALL ops_ins(w);
        ELSEIF r < 41 THEN
            DELETE FROM wide WHERE id = w;
        ELSEIF r < 48 THEN -- a primary-key change (its children stay with the old key)
            UPDATE IGNORE wide SET id = ops_wid() WHERE id = w;
        ELSEIF r < 55 THEN -- one row changed several times in one transaction
            START TRANSACTION;
            CALL ops_upd(w);
            CALL ops_upd(w);
            UPDATE part SET wide_id = w WHERE id = 1 + ops_r(150);
            IF ops_r(2) = 0 THEN
                DELETE FROM wide WHERE id = w;
                CALL ops_ins(w);
            END IF;
            COMMIT;
        ELSEIF r < 67 THEN
            INSERT IGNORE INTO part VALUES (1 + ops_r(150), w, v_label(), v_dc1(), v_dt6());
        ELSEIF r < 79 THEN -- a child moved to another parent
            UPDATE part SET wide_id = w, label = v_label() WHERE id = 1 + ops_r(150);
        ELSEIF r < 85 THEN
            DELETE FROM part WHERE id = 1 + ops_r(150);
        ELSEIF r < 91 THEN -- deleted and inserted again
            DELETE FROM wide WHERE id = w;
            CALL ops_ins(w);
        ELSEIF @ops_flavour = 'maxwell' THEN -- the values Maxwell misreads
            UPDATE wide SET y = '0000', dc2 = ELT(1 + ops_r(2), '-0.000000000000000000000000000001', '0.000000000000000000000000000001'),
                l1 = ELT(1 + ops_r(2), 'é€', '€ ÿ'), vb = X'000000' WHERE id = w;
        ELSE -- the values Debezium once got wrong
            UPDATE wide SET y = '0000', dc1 = ELT(1 + ops_r(2), '-0.561484', '-2.929356'),
                dc3 = ELT(1 + ops_r(2), '-2929356', '-561484'), vb = X'000000' WHERE id = w;
        END IF;
        SET k = k + 1;
    END WHILE;
END//

DELIMITER ;

CREATE TABLE wide (
  id BIGINT UNSIGNED NOT NULL PRIMARY KEY,
  ti TINYINT, tiu TINYINT UNSIGNED, si SMALLINT, mi MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED,
  bi BIGINT, biu BIGINT UNSIGNED, f FLOAT, d DOUBLE,
  dc1 DECIMAL(20,6), dc2 DECIMAL(65,30), dc3 DECIMAL(10,0), dc4 DECIMAL(5,5),
  da DATE, dt0 DATETIME, dt3 DATETIME(3), dt6 DATETIME(6), ts0 TIMESTAMP NULL, ts6 TIMESTAMP(6) NULL,
  t0 TIME, t6 TIME(6), y YEAR,
  vc VARCHAR(64), l1 VARCHAR(16) CHARACTER SET latin1, c CHAR(4), tx TEXT,
  bn BINARY(4), vb VARBINARY(16), bl BLOB,
  e ENUM('a','b','c'), s SET('x','y','z'), b1 BIT(1), b10 BIT(10), b64 BIT(64), j JSON
) CHARACTER SET utf8mb4;
CREATE TABLE part (id INT NOT NULL PRIMARY KEY, wide_id BIGINT UNSIGNED, label VARCHAR(32),
  amount DECIMAL(20,6), at DATETIME(6), KEY (wide_id)) CHARACTER SET utf8mb4;
CREATE TABLE fence (id INT NOT NULL PRIMARY KEY, note VARCHAR(32));
