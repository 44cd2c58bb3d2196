/* Unit tests of value → text (bl_value_text, src/binlog/value.c): the text of
 * a key or join value as MySQL gives it, which the router's IN lists and the
 * document ids compare with. The values here are the ones the JSON round
 * trip it replaced got wrong (a NUL made the text "", bytes became base64 or
 * U+FFFD, dates took a 'T' and a 'Z', zero dates "null"); the rest pin the
 * common key types. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>

#include "binlog/binlog.h"
#include "binlog_fixture.h"

/* one value's text: type + metadata bytes (hex) + value bytes (hex);
 * coll 0 = utf8mb4 text. *len = its length (it may hold NUL bytes) */
static const char *text(uint8_t type, const char *meta_hex, const char *val_hex, bool is_unsigned,
                        uint16_t coll, size_t *len) {
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
    assert_int_equal(bl_value_len(&c, (const uint8_t *)v.data, v.len), (int64_t)v.len);
    bl_cell cell = {(const uint8_t *)v.data, (uint32_t)v.len, BL_VALUE};
    bl_valctx vc;
    bl_valctx_init(&vc);
    assert_true(bl_value_text(&vc, &o, &c, &cell));
    assert_true(o.len < sizeof out);
    memcpy(out, o.data ? o.data : "", o.len);
    out[o.len] = '\0';
    if (len) *len = o.len;
    bl_valctx_free(&vc);
    sbuf_free(&m);
    sbuf_free(&v);
    sbuf_free(&o);
    return out;
}
#define T(type, meta, val, uns, coll) text(type, meta, val, uns, coll, NULL)

static void test_strings_that_broke(void **state) {
    (void)state;
    size_t n = 0;
    /* VARCHAR 'a\0b' (utf8mb4): the JSON round trip refused \u0000 and gave "" */
    const char *s = text(BT_VARCHAR, "1000", "03610062", false, 45, &n);
    assert_int_equal(n, 3);
    assert_memory_equal(s, "a\0b", 3);
    /* control characters and quotes stay bytes */
    assert_string_equal(T(BT_VARCHAR, "1000", "0561010a225c", false, 45), "a\x01\n\"\\");
    /* bytes that are not UTF-8 in a utf8 column: kept, not U+FFFD */
    assert_string_equal(T(BT_VARCHAR, "1000", "0361ff62", false, 45), "a\xff" "b");
    /* VARBINARY: its bytes, not base64 */
    assert_string_equal(T(BT_VARCHAR, "1000", "03ff0162", false, 63), "\xff\x01" "b");
    /* BINARY(4) 'ab' stored without its zero padding: padded back */
    s = text(BT_STRING, "fe04", "026162", false, 63, &n);
    assert_int_equal(n, 4);
    assert_memory_equal(s, "ab\0\0", 4);
    /* CHAR(4) strips the pad, VARCHAR keeps it */
    assert_string_equal(T(BT_STRING, "fe10", "0461622020", false, 45), "ab");
    assert_string_equal(T(BT_VARCHAR, "1000", "0461622020", false, 45), "ab  ");
    /* latin1 é and cp1252 € converted to UTF-8 (the connection's charset) */
    assert_string_equal(T(BT_VARCHAR, "1000", "02e980", false, 8), "\xc3\xa9\xe2\x82\xac");
    /* cp1251 through iconv */
    assert_string_equal(T(BT_VARCHAR, "1000", "01c0", false, 51), "\xd0\x90");
}

static void test_numbers(void **state) {
    (void)state;
    assert_string_equal(T(BT_LONGLONG, "", "ffffffffffffffff", true, 0), "18446744073709551615");
    assert_string_equal(T(BT_LONGLONG, "", "0000000000000080", false, 0), "-9223372036854775808");
    assert_string_equal(T(BT_LONG, "", "ffffffff", false, 0), "-1");
    assert_string_equal(T(BT_TINY, "", "ff", true, 0), "255");
    assert_string_equal(T(BT_INT24, "", "000080", false, 0), "-8388608");
    /* DECIMAL(4,2) -10.55, DECIMAL(20,10), DECIMAL(65,30) */
    assert_string_equal(T(BT_NEWDECIMAL, "0402", "75c8", false, 0), "-10.55");
    assert_string_equal(T(BT_NEWDECIMAL, "140a", "7fffff5beff8a435ffff", false, 0),
                        "-42000.1234560000");
    /* DECIMAL(23,0) and DECIMAL(65,30) keys: every digit */
    assert_string_equal(T(BT_NEWDECIMAL, "1700", "7ffb2dde26aaddde26aadd", false, 0),
                        "-1234567891234567891234");
    assert_string_equal(T(BT_NEWDECIMAL, "411e",
                          "800000000000000000000000000000010000000000000000000000000000", false, 0),
                        "1.000000000000000000000000000000");
    assert_string_equal(T(BT_YEAR, "", "7c", false, 0), "2024");
    assert_string_equal(T(BT_YEAR, "", "00", false, 0), "0000");
}

static void test_dates(void **state) {
    (void)state;
    assert_string_equal(T(BT_DATE, "", "22c80f", false, 0), "2020-01-02");
    assert_string_equal(T(BT_DATE, "", "000000", false, 0), "0000-00-00");
    assert_string_equal(T(BT_DATETIME2, "00", "fef3ff7efb", false, 0), "9999-12-31 23:59:59");
    assert_string_equal(T(BT_DATETIME2, "03", "99a5443105" "04ce", false, 0),
                        "2020-01-02 03:04:05.123");
    assert_string_equal(T(BT_DATETIME2, "00", "8000000000", false, 0), "0000-00-00 00:00:00");
    assert_string_equal(T(BT_DATETIME, "", "45ece7335f120000", false, 0), "2020-01-02 03:04:05");
    /* TIMESTAMP in UTC (the connections' time zone), no 'Z' */
    assert_string_equal(T(BT_TIMESTAMP2, "01", "5e0d5da5" "32", false, 0),
                        "2020-01-02 03:04:05.5");
    assert_string_equal(T(BT_TIMESTAMP2, "00", "00000000", false, 0), "0000-00-00 00:00:00");
    assert_string_equal(T(BT_TIME2, "00", "4b9105", false, 0), "-838:59:59");
    assert_string_equal(T(BT_TIME, "", "c01dfe", false, 0), "-12:34:56");
}

static void test_null_and_absent(void **state) {
    (void)state;
    bl_column c;
    memset(&c, 0, sizeof c);
    bl_column_set_type(&c, BT_LONG, NULL, 0);
    bl_valctx vc;
    bl_valctx_init(&vc);
    sbuf o = SBUF_INIT;
    bl_cell null = {NULL, 0, BL_NULL}, absent = {NULL, 0, BL_ABSENT};
    assert_false(bl_value_text(&vc, &o, &c, &null));
    assert_false(bl_value_text(&vc, &o, &c, &absent));
    assert_int_equal(o.len, 0);
    sbuf_free(&o);
    bl_valctx_free(&vc);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strings_that_broke),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_dates),
        cmocka_unit_test(test_null_and_absent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
