/* Unit tests of value → JSON (src/binlog/value.c): the known answers of
 * docs/binlog.md "Values", one column at a time
 * from its binlog bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>

#include "binlog/binlog.h"
#include "binlog_fixture.h"

/* render one value: type + metadata bytes (hex) + value bytes (hex) */
static char *render(uint8_t type, const char *meta_hex, const char *val_hex, bool is_unsigned, uint16_t coll) {
    static char out[4096];
    sbuf m = SBUF_INIT, v = SBUF_INIT, o = SBUF_INIT;
    fx_hex(&m, meta_hex);
    fx_hex(&v, val_hex);
    bl_column c;
    memset(&c, 0, sizeof c);
    bl_column_set_type(&c, type, (const uint8_t *)m.data, m.len);
    c.is_unsigned = is_unsigned;
    if (coll) {
        c.collation = coll;
        c.cs = (uint8_t)bl_collation_cs(NULL, coll, &c.cs_name);
        c.kind = c.cs == CS_BINARY ? BK_BINARY : BK_TEXT;
    } else {
        c.kind = BK_TEXT;
        c.cs = CS_UTF8;
    }
    /* the decoder's own length computation must agree with the bytes */
    int64_t l = bl_value_len(&c, (const uint8_t *)v.data, v.len);
    assert_int_equal(l, (int64_t)v.len);
    bl_cell cell = {(const uint8_t *)v.data, (uint32_t)v.len, BL_VALUE};
    bl_valctx vc;
    bl_valctx_init(&vc);
    jsonw w;
    jw_init(&w, &o);
    bl_value_json(&vc, &w, &c, &cell, NULL);
    snprintf(out, sizeof out, "%s", o.data ? o.data : "");
    bl_valctx_free(&vc);
    sbuf_free(&m);
    sbuf_free(&v);
    sbuf_free(&o);
    return out;
}

static void test_integers(void **state) {
    (void)state;
    assert_string_equal(render(BT_TINY, "", "ff", false, 0), "-1");
    assert_string_equal(render(BT_TINY, "", "ff", true, 0), "255");
    assert_string_equal(render(BT_SHORT, "", "0080", false, 0), "-32768");
    assert_string_equal(render(BT_INT24, "", "000080", false, 0), "-8388608");
    assert_string_equal(render(BT_INT24, "", "ffffff", true, 0), "16777215");
    assert_string_equal(render(BT_LONG, "", "ffffffff", true, 0), "4294967295");
    assert_string_equal(render(BT_LONGLONG, "", "ffffffffffffffff", true, 0), "18446744073709551615");
    assert_string_equal(render(BT_LONGLONG, "", "0000000000000080", false, 0), "-9223372036854775808");
    assert_string_equal(render(BT_YEAR, "", "00", false, 0), "0");
    assert_string_equal(render(BT_YEAR, "", "ff", false, 0), "2155");
    assert_string_equal(render(BT_BIT, "0008", "ffffffffffffffff", false, 0), "18446744073709551615");
    assert_string_equal(render(BT_BIT, "0500", "15", false, 0), "21"); /* BIT(5) b'10101' */
}

static void test_floats(void **state) {
    (void)state;
    assert_string_equal(render(BT_FLOAT, "04", "cdcc8c3f", false, 0), "1.1");
    assert_string_equal(render(BT_DOUBLE, "08", "9a9999999999b93f", false, 0), "0.1");
}

static void test_decimals(void **state) {
    (void)state;
    /* DECIMAL(4,2) -10.55 */
    assert_string_equal(render(BT_NEWDECIMAL, "0402", "75c8", false, 0), "\"-10.55\"");
    /* DECIMAL(20,10) -42000.123456 */
    assert_string_equal(render(BT_NEWDECIMAL, "140a", "7fffff5beff8a435ffff", false, 0),
                        "\"-42000.1234560000\"");
    /* DECIMAL(23,0) -1234567891234567891234 */
    assert_string_equal(render(BT_NEWDECIMAL, "1700", "7ffb2dde26aaddde26aadd", false, 0),
                        "\"-1234567891234567891234\"");
    /* DECIMAL(5,0) 0 */
    assert_string_equal(render(BT_NEWDECIMAL, "0500", "800000", false, 0), "\"0\"");
    /* DECIMAL(65,30) 1 followed by 30 decimals of 0 */
    const char *hex = "800000000000000000000000000000010000000000000000000000000000";
    assert_string_equal(render(BT_NEWDECIMAL, "411e", hex, false, 0),
                        "\"1.000000000000000000000000000000\"");
}

static void test_temporal(void **state) {
    (void)state;
    /* DATETIME2(0) 9999-12-31 23:59:59 */
    assert_string_equal(render(BT_DATETIME2, "00", "fef3ff7efb", false, 0), "\"9999-12-31T23:59:59\"");
    /* DATETIME2(6) 2020-01-02 03:04:05.123456 */
    assert_string_equal(render(BT_DATETIME2, "06", "99a5443105" "01e240", false, 0),
                        "\"2020-01-02T03:04:05.123456\"");
    /* DATETIME2(2) .50 and DATETIME2(3) .123 */
    assert_string_equal(render(BT_DATETIME2, "02", "99a5443105" "32", false, 0), "\"2020-01-02T03:04:05.50\"");
    assert_string_equal(render(BT_DATETIME2, "03", "99a5443105" "04ce", false, 0), "\"2020-01-02T03:04:05.123\"");
    /* zero datetime */
    assert_string_equal(render(BT_DATETIME2, "00", "8000000000", false, 0), "null");
    /* partial zero date 2020-00-00 */
    assert_string_equal(render(BT_DATETIME2, "00", "99a5000000", false, 0), "null");
    /* TIMESTAMP2(0) 1 = 1970-01-01T00:00:01Z, TIMESTAMP2(1) with .5 */
    assert_string_equal(render(BT_TIMESTAMP2, "00", "00000001", false, 0), "\"1970-01-01T00:00:01Z\"");
    assert_string_equal(render(BT_TIMESTAMP2, "01", "5e0d5da5" "32", false, 0), "\"2020-01-02T03:04:05.5Z\"");
    assert_string_equal(render(BT_TIMESTAMP2, "06", "7fffffff" "0f423f", false, 0),
                        "\"2038-01-19T03:14:07.999999Z\"");
    assert_string_equal(render(BT_TIMESTAMP2, "00", "00000000", false, 0), "null");
    /* DATE 2020-01-02 and 0000-00-00 */
    assert_string_equal(render(BT_DATE, "", "22c80f", false, 0), "\"2020-01-02\"");
    assert_string_equal(render(BT_DATE, "", "000000", false, 0), "null");
    /* TIME2(0) 838:59:59 and -838:59:59 */
    assert_string_equal(render(BT_TIME2, "00", "b46efb", false, 0), "\"838:59:59\"");
    assert_string_equal(render(BT_TIME2, "00", "4b9105", false, 0), "\"-838:59:59\"");
    /* TIME2(2) bytes 7fffffff -> -00:00:00.01 */
    assert_string_equal(render(BT_TIME2, "02", "7fffffff", false, 0), "\"-00:00:00.01\"");
    /* TIME2(6) -838:59:58.123456 */
    assert_string_equal(render(BT_TIME2, "06", "4b9105fe1dc0", false, 0), "\"-838:59:58.123456\"");
    /* TIME2(0) 01:02:03 */
    assert_string_equal(render(BT_TIME2, "00", "801083", false, 0), "\"01:02:03\"");
    /* legacy TIME -12:34:56 (int24 -123456) and DATETIME */
    assert_string_equal(render(BT_TIME, "", "c01dfe", false, 0), "\"-12:34:56\"");
    assert_string_equal(render(BT_DATETIME, "", "45ece7335f120000", false, 0), "\"2020-01-02T03:04:05\"");
}

static void test_strings(void **state) {
    (void)state;
    /* CHAR(4) utf8mb4 'ab  ' → trailing spaces stripped; VARCHAR keeps them */
    assert_string_equal(render(BT_STRING, "fe10", "0461622020", false, 45), "\"ab\"");
    assert_string_equal(render(BT_VARCHAR, "1000", "0461622020", false, 45), "\"ab  \"");
    /* BINARY(4) 'ab\0\0' stored as 'ab' → padded back: base64 of 61 62 00 00 */
    assert_string_equal(render(BT_STRING, "fe04", "026162", false, 63), "\"YWIAAA==\"");
    /* latin1 é (0xe9) and cp1252 € (0x80) */
    assert_string_equal(render(BT_VARCHAR, "1000", "02e980", false, 8), "\"\xc3\xa9\xe2\x82\xac\"");
    /* utf8mb4 4-byte character */
    assert_string_equal(render(BT_VARCHAR, "5000", "04f09f9880", false, 45), "\"\xf0\x9f\x98\x80\"");
    /* cp1251 via iconv: 0xc0 = А (U+0410) */
    assert_string_equal(render(BT_VARCHAR, "1000", "01c0", false, 51), "\"\xd0\x90\"");
    /* BLOB → base64, TEXT → string, long VARCHAR (2-byte length) */
    assert_string_equal(render(BT_BLOB, "02", "0300010203", false, 63), "\"AQID\"");
    assert_string_equal(render(BT_BLOB, "02", "0200" "6869", false, 45), "\"hi\"");
    assert_string_equal(render(BT_VARCHAR, "fc03", "0300" "616263", false, 45), "\"abc\"");
    /* CHAR(255) utf8mb4 (1020 bytes, 2-byte length): metadata ce fc */
    assert_string_equal(render(BT_STRING, "cefc", "0200" "7879", false, 45), "\"xy\"");
}

static void test_enum_set(void **state) {
    (void)state;
    bl_column c;
    memset(&c, 0, sizeof c);
    uint8_t meta[2] = {BT_SET, 1};
    bl_column_set_type(&c, BT_STRING, meta, 2);
    assert_int_equal(c.type, BT_SET);
    const char *labels[3] = {"x", "y", "z"};
    uint32_t lens[3] = {1, 1, 1};
    c.labels = labels;
    c.label_lens = lens;
    c.n_labels = 3;
    uint8_t v = 5;
    bl_cell cell = {&v, 1, BL_VALUE};
    sbuf o = SBUF_INIT;
    bl_valctx vc;
    bl_valctx_init(&vc);
    jsonw w;
    jw_init(&w, &o);
    bl_value_json(&vc, &w, &c, &cell, NULL);
    assert_string_equal(o.data, "[\"x\",\"z\"]");
    uint8_t em[2] = {BT_ENUM, 1};
    bl_column_set_type(&c, BT_STRING, em, 2);
    assert_int_equal(c.type, BT_ENUM);
    v = 2;
    sbuf_reset(&o);
    jw_init(&w, &o);
    bl_value_json(&vc, &w, &c, &cell, NULL);
    assert_string_equal(o.data, "\"y\"");
    bl_valctx_free(&vc);
    sbuf_free(&o);
}

static void test_geometry(void **state) {
    (void)state;
    /* POINT(1 2) with SRID 0 */
    assert_string_equal(render(BT_GEOMETRY, "04",
                               "19000000" "00000000" "01" "01000000" "000000000000f03f" "0000000000000040",
                               false, 63),
                        "{\"type\":\"Point\",\"coordinates\":[1,2]}");
    /* LINESTRING(0 0, 1.5 -2) */
    assert_string_equal(render(BT_GEOMETRY, "04",
                               "2d000000" "00000000" "01" "02000000" "02000000"
                               "0000000000000000" "0000000000000000" "000000000000f83f" "00000000000000c0",
                               false, 63),
                        "{\"type\":\"LineString\",\"coordinates\":[[0,0],[1.5,-2]]}");
}

static void test_mariadb_json_text(void **state) {
    (void)state;
    bl_column c;
    memset(&c, 0, sizeof c);
    uint8_t m = 4;
    bl_column_set_type(&c, BT_BLOB, &m, 1);
    c.kind = BK_JSON_TEXT;
    c.cs = CS_UTF8;
    sbuf v = SBUF_INIT, o = SBUF_INIT;
    fx_u32(&v, 9);
    sbuf_adds(&v, "{\"a\":[1]}");
    bl_cell cell = {(const uint8_t *)v.data, (uint32_t)v.len, BL_VALUE};
    bl_valctx vc;
    bl_valctx_init(&vc);
    jsonw w;
    jw_init(&w, &o);
    bl_value_json(&vc, &w, &c, &cell, NULL);
    assert_string_equal(o.data, "{\"a\":[1]}");
    bl_valctx_free(&vc);
    sbuf_free(&v);
    sbuf_free(&o);
}

/* the fast shortest-float/double path: reads back exactly, and is never
 * longer than jsonw's printf-based formatter */
static void check_float(bl_valctx *vc, bl_column *c, float f) {
    sbuf o = SBUF_INIT;
    jsonw w;
    jw_init(&w, &o);
    bl_cell cell = {(const uint8_t *)&f, 4, BL_VALUE};
    bl_value_json(vc, &w, c, &cell, NULL);
    if (!isfinite(f)) {
        assert_string_equal(o.data, "null");
    } else {
        assert_true(strtof(o.data, NULL) == f);
        char ref[40];
        int n = fmt_float(ref, f);
        if ((int)o.len > n) fail_msg("float %s longer than %.*s", o.data, n, ref);
    }
    sbuf_free(&o);
}
static void check_double(bl_valctx *vc, bl_column *c, double d) {
    sbuf o = SBUF_INIT;
    jsonw w;
    jw_init(&w, &o);
    bl_cell cell = {(const uint8_t *)&d, 8, BL_VALUE};
    bl_value_json(vc, &w, c, &cell, NULL);
    if (!isfinite(d)) {
        assert_string_equal(o.data, "null");
    } else {
        assert_true(strtod(o.data, NULL) == d);
        char ref[40];
        int n = fmt_double(ref, d);
        if ((int)o.len > n) fail_msg("double %s longer than %.*s", o.data, n, ref);
    }
    sbuf_free(&o);
}

static void test_fast_floats(void **state) {
    (void)state;
    bl_column cf, cd;
    memset(&cf, 0, sizeof cf);
    memset(&cd, 0, sizeof cd);
    uint8_t m4 = 4, m8 = 8;
    bl_column_set_type(&cf, BT_FLOAT, &m4, 1);
    bl_column_set_type(&cd, BT_DOUBLE, &m8, 1);
    bl_valctx vc;
    bl_valctx_init(&vc);
    uint64_t x = 88172645463325252ULL;
    for (int i = 0; i < 100000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint32_t fb = (uint32_t)x;
        float f;
        memcpy(&f, &fb, 4);
        check_float(&vc, &cf, f);
        double d;
        memcpy(&d, &x, 8);
        check_double(&vc, &cd, d);
        /* decimal-looking values, the common case in tables */
        double dec = (double)(int64_t)(x % 20000001) / 100.0 - 100000.0;
        check_double(&vc, &cd, dec);
        check_float(&vc, &cf, (float)dec);
        check_float(&vc, &cf, (float)(x % 100000) / 1000.0f);
    }
    check_float(&vc, &cf, 1.1f);
    check_float(&vc, &cf, -0.0f);
    check_float(&vc, &cf, 3.4028235e38f);
    check_float(&vc, &cf, 1e-45f);
    check_double(&vc, &cd, 0.1);
    check_double(&vc, &cd, 5e-324);
    check_double(&vc, &cd, 1.7976931348623157e308);
    check_double(&vc, &cd, 123456789012345.6);
    bl_valctx_free(&vc);
}

static void test_decimal_sizes(void **state) {
    (void)state;
    assert_int_equal(bl_decimal_size(4, 2), 2);
    assert_int_equal(bl_decimal_size(10, 2), 5);
    assert_int_equal(bl_decimal_size(65, 30), 30);
    assert_int_equal(bl_decimal_size(20, 10), 10);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_integers),  cmocka_unit_test(test_floats),
        cmocka_unit_test(test_decimals),  cmocka_unit_test(test_temporal),
        cmocka_unit_test(test_strings),   cmocka_unit_test(test_enum_set),
        cmocka_unit_test(test_geometry),  cmocka_unit_test(test_mariadb_json_text),
        cmocka_unit_test(test_decimal_sizes), cmocka_unit_test(test_fast_floats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
