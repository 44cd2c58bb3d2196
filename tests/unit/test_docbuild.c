/* Unit tests of the document builder's pure parts (sync/pipeline/docbuild.c): value
 * formatting from binary-protocol buffers (MYSQL_BIND, MYSQL_TIME) to the
 * JSON of docs/binlog.md "Values", and the generated SQL. The database side is tested
 * by tests/integration/t_docbuild.sh against an SQL oracle. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "sync/pipeline/docbuild.h"
#include "sync/pipeline/docbuild_int.h"

/* format one value: field type/flags/charset/decimals, bind buffer */
static char *fmt(enum enum_field_types ftype, unsigned flags, unsigned cs, unsigned decimals,
                 const void *buf, unsigned long len, bool json_text) {
    MYSQL_FIELD f;
    memset(&f, 0, sizeof f);
    f.type = ftype;
    f.flags = flags;
    f.charsetnr = cs;
    f.decimals = decimals;
    MYSQL_BIND b;
    memset(&b, 0, sizeof b);
    my_bool isnull = buf == NULL;
    unsigned long l = len;
    b.buffer_type = docbuild_bind_type(&f);
    b.buffer = (void *)buf;
    b.buffer_length = len;
    b.length = &l;
    b.is_null = &isnull;
    sbuf s = SBUF_INIT;
    jsonw w;
    jw_init(&w, &s);
    docbuild_value_json(&w, &f, &b, json_text);
    if (!s.data) sbuf_grow(&s, 1);
    return sbuf_detach(&s);
}

#define CHECK(expect, call)                                                                        \
    do {                                                                                           \
        char *got_ = (call);                                                                       \
        assert_string_equal(got_, expect);                                                         \
        free(got_);                                                                                \
    } while (0)

static void test_integers(void **state) {
    (void)state;
    int64_t v = -42;
    CHECK("-42", fmt(MYSQL_TYPE_LONG, 0, 63, 0, &v, 8, false));
    uint64_t u = UINT64_MAX;
    CHECK("18446744073709551615", fmt(MYSQL_TYPE_LONGLONG, UNSIGNED_FLAG, 63, 0, &u, 8, false));
    v = INT64_MIN;
    CHECK("-9223372036854775808", fmt(MYSQL_TYPE_LONGLONG, 0, 63, 0, &v, 8, false));
    v = 0;
    CHECK("0", fmt(MYSQL_TYPE_YEAR, UNSIGNED_FLAG, 63, 0, &v, 8, false));
    v = 1990;
    CHECK("1990", fmt(MYSQL_TYPE_YEAR, UNSIGNED_FLAG, 63, 0, &v, 8, false));
    CHECK("null", fmt(MYSQL_TYPE_LONGLONG, 0, 63, 0, NULL, 0, false));
}

static void test_floats(void **state) {
    (void)state;
    float f = 1.1f;
    CHECK("1.1", fmt(MYSQL_TYPE_FLOAT, 0, 63, 31, &f, 4, false));
    f = 0.1f + 0.2f;
    CHECK("0.3", fmt(MYSQL_TYPE_FLOAT, 0, 63, 31, &f, 4, false));
    double d = 0.1 + 0.2;
    CHECK("0.30000000000000004", fmt(MYSQL_TYPE_DOUBLE, 0, 63, 31, &d, 8, false));
}

static void test_decimal_bit_strings(void **state) {
    (void)state;
    CHECK("\"-42000.1234560000\"",
          fmt(MYSQL_TYPE_NEWDECIMAL, 0, 63, 10, "-42000.1234560000", 17, false));
    CHECK("\"0.50\"", fmt(MYSQL_TYPE_NEWDECIMAL, 0, 63, 2, "0.50", 4, false));
    CHECK("5", fmt(MYSQL_TYPE_BIT, UNSIGNED_FLAG, 63, 0, "\x00\x05", 2, false));
    CHECK("\"a\\\"b 😀\"", fmt(MYSQL_TYPE_VAR_STRING, 0, 45, 0, "a\"b 😀", 8, false));
    CHECK("\"AAEC\"", fmt(MYSQL_TYPE_STRING, BINARY_FLAG, 63, 0, "\x00\x01\x02", 3, false));
    CHECK("\"red\"", fmt(MYSQL_TYPE_STRING, ENUM_FLAG, 45, 0, "red", 3, false));
    CHECK("[\"a\",\"c\"]", fmt(MYSQL_TYPE_STRING, SET_FLAG, 45, 0, "a,c", 3, false));
    CHECK("[]", fmt(MYSQL_TYPE_STRING, SET_FLAG, 45, 0, "", 0, false));
    CHECK("{\"a\":[1,2]}", fmt(MYSQL_TYPE_BLOB, BLOB_FLAG, 45, 0, "{\"a\":[1,2]}", 11, true));
    CHECK("\"{bad\"", fmt(MYSQL_TYPE_BLOB, BLOB_FLAG, 45, 0, "{bad", 4, true));
    CHECK("\"{\\\"a\\\":1}\"", fmt(MYSQL_TYPE_BLOB, BLOB_FLAG, 45, 0, "{\"a\":1}", 7, false));
    CHECK("\"eA==\"", fmt(MYSQL_TYPE_BLOB, BLOB_FLAG | BINARY_FLAG, 63, 0, "x", 1, false));
}

static char *tm(enum enum_field_types type, MYSQL_TIME t, unsigned fsp) {
    sbuf s = SBUF_INIT;
    docbuild_time_json(&s, type, &t, fsp);
    return sbuf_detach(&s);
}

static void test_times(void **state) {
    (void)state;
    MYSQL_TIME t = {.year = 2024, .month = 1, .day = 2, .hour = 3, .minute = 4, .second = 5,
                    .second_part = 678901};
    CHECK("\"2024-01-02T03:04:05.678\"", tm(MYSQL_TYPE_DATETIME, t, 3));
    CHECK("\"2024-01-02T03:04:05\"", tm(MYSQL_TYPE_DATETIME, t, 0));
    CHECK("\"2024-01-02T03:04:05.678901Z\"", tm(MYSQL_TYPE_TIMESTAMP, t, 6));
    CHECK("\"2024-01-02\"", tm(MYSQL_TYPE_DATE, t, 0));
    t.second_part = 5000;
    CHECK("\"2024-01-02T03:04:05.005000Z\"", tm(MYSQL_TYPE_TIMESTAMP, t, 6));
    MYSQL_TIME z = {0};
    CHECK("null", tm(MYSQL_TYPE_DATETIME, z, 3));
    CHECK("null", tm(MYSQL_TYPE_TIMESTAMP, z, 0));
    z.year = 2024;
    z.month = 1; /* partial-zero date */
    CHECK("null", tm(MYSQL_TYPE_DATE, z, 0));
    MYSQL_TIME tt = {.neg = 1, .hour = 838, .minute = 59, .second = 59};
    CHECK("\"-838:59:59\"", tm(MYSQL_TYPE_TIME, tt, 0));
    MYSQL_TIME t2 = {.day = 1, .hour = 2, .minute = 3, .second = 4, .second_part = 500000};
    CHECK("\"26:03:04.50\"", tm(MYSQL_TYPE_TIME, t2, 2));
    MYSQL_TIME t2f = {.day = 34, .hour = 838, .minute = 59, .second = 59}; /* Connector/C */
    CHECK("\"838:59:59\"", tm(MYSQL_TYPE_TIME, t2f, 0));
    MYSQL_TIME t3 = {.hour = 5};
    CHECK("\"05:00:00\"", tm(MYSQL_TYPE_TIME, t3, 0));
    /* through a bind */
    CHECK("\"2024-01-02T03:04:05.005Z\"",
          fmt(MYSQL_TYPE_TIMESTAMP, 0, 63, 3, &t, sizeof t, false));
}

/* integer lists dense in their span become one BETWEEN range */
static void test_sql_ranges(void **state) {
    (void)state;
    sbuf s = SBUF_INIT;
    const char *cols[] = {"id"};
    /* 6 values over a span of 12 (-2..9): a range */
    const char *lits[] = {"-2", "0", "1", "9", "5", "7"};
    bool num[] = {true, true, true, true, true, true};
    docbuild_sql_select(&s, NULL, NULL, "t", cols, 1, false, "k", lits, num, 6, "a=1", NULL);
    assert_string_equal(s.data, "SELECT `id` FROM `t` WHERE `k` BETWEEN -2 AND 9 AND (a=1)");
    sbuf_reset(&s);
    /* 6 values over a span of 13: the list */
    lits[3] = "10";
    docbuild_sql_select(&s, NULL, NULL, "t", cols, 1, false, "k", lits, num, 6, NULL, NULL);
    assert_string_equal(s.data, "SELECT `id` FROM `t` WHERE `k` IN (-2,0,1,10,5,7)");
    sbuf_reset(&s);
    /* past 2^64 stays exact */
    const char *big[] = {"18446744073709551616", "18446744073709551614"};
    bool bnum[] = {true, true};
    docbuild_sql_select(&s, NULL, NULL, "t", cols, 1, false, "k", big, bnum, 2, NULL, NULL);
    assert_string_equal(s.data, "SELECT `id` FROM `t` WHERE `k` BETWEEN 18446744073709551614 "
                                "AND 18446744073709551616");
    sbuf_reset(&s);
    /* a non-canonical integer, a string or a single value: the list */
    const char *odd[] = {"3", "4", "007"};
    bool onum[] = {true, true, true};
    docbuild_sql_select(&s, NULL, NULL, "t", cols, 1, false, "k", odd, onum, 3, NULL, NULL);
    assert_string_equal(s.data, "SELECT `id` FROM `t` WHERE `k` IN (3,4,007)");
    sbuf_reset(&s);
    docbuild_sql_select(&s, NULL, NULL, "t", cols, 1, false, "k", odd, onum, 1, NULL, NULL);
    assert_string_equal(s.data, "SELECT `id` FROM `t` WHERE `k` IN (3)");
    sbuf_free(&s);
}

static void test_sql(void **state) {
    (void)state;
    sbuf s = SBUF_INIT;
    const char *cols[] = {"product_id", "id", "we`ird"};
    const char *lits[] = {"1", "18446744073709551615", "a'b\\c"};
    bool num[] = {true, true, false};
    const char *order[] = {"product_id", "id", NULL};
    docbuild_sql_select(&s, NULL, "shop", "skus", cols, 3, true, "product_id", lits, num, 3,
                        "kind <> 'INTERNAL'", order);
    assert_string_equal(s.data, "SELECT DISTINCT `product_id`,`id`,`we``ird` FROM `shop`.`skus` "
                                "WHERE `product_id` IN (1,18446744073709551615,'a\\'b\\\\c') "
                                "AND (kind <> 'INTERNAL') ORDER BY `product_id`,`id`");
    sbuf_reset(&s);
    docbuild_sql_select(&s, NULL, NULL, "t", cols, 1, false, "id", lits, num, 1, NULL, NULL);
    assert_string_equal(s.data, "SELECT `product_id` FROM `t` WHERE `id` IN (1)");
    sbuf_reset(&s);
    db_quote(NULL, &s, "x\0\n\r\032\"", 6);
    assert_string_equal(s.data, "'x\\0\\n\\r\\Z\\\"'");
    sbuf_free(&s);
    assert_true(docbuild_is_integer("0"));
    assert_true(docbuild_is_integer("-5"));
    assert_true(docbuild_is_integer("18446744073709551615"));
    assert_false(docbuild_is_integer("007"));
    assert_false(docbuild_is_integer("1e5"));
    assert_false(docbuild_is_integer(""));
    assert_false(docbuild_is_integer("-"));
    assert_false(docbuild_is_integer("1 OR 1=1"));
}

/* join + key columns; without a key, columns up to where the primary key
 * (from the schema) is complete; without the schema, every column */
static void test_relation_order(void **state) {
    (void)state;
    struct mp_column cols[3] = {{.name = "sku_id"}, {.name = "id"}, {.name = "barcode"}};
    struct mp_relation r = {.join_column = "sku_id", .columns = cols, .ncolumns = 3};
    const char *o[5];
    docbuild_relation_order(&r, o); /* schema not loaded: all columns */
    assert_string_equal(o[0], "sku_id");
    assert_string_equal(o[1], "id");
    assert_string_equal(o[2], "barcode");
    assert_null(o[3]);
    cols[1].primary = true; /* PRIMARY KEY (id): barcode cannot matter */
    r.nprimary = 1;
    docbuild_relation_order(&r, o);
    assert_string_equal(o[1], "id");
    assert_null(o[2]);
    r.join_column = "id"; /* joined on the whole key: nothing else */
    r.join_primary = true;
    docbuild_relation_order(&r, o);
    assert_string_equal(o[0], "id");
    assert_null(o[1]);
    cols[0].primary = true; /* PRIMARY KEY (sku_id, id), joined on id */
    r.nprimary = 2;
    docbuild_relation_order(&r, o);
    assert_string_equal(o[1], "sku_id");
    assert_null(o[2]);
    r.nprimary = 3; /* a key column that is not mapped: every column */
    docbuild_relation_order(&r, o);
    assert_string_equal(o[1], "sku_id");
    assert_string_equal(o[2], "barcode");
    assert_null(o[3]);
    cols[2].is_key = true; /* a marked key wins */
    docbuild_relation_order(&r, o);
    assert_string_equal(o[1], "barcode");
    assert_null(o[2]);
}

/* one shard unit's part of a level read for several units at once */
static void test_union_part(void **state) {
    (void)state;
    struct mp_column cols[2] = {{.name = "id", .mysql_type = "int(11)"},
                                {.name = "note", .mysql_type = "varchar(40)"}};
    struct level l;
    dbl_level_init(&l, "shop_1", "orders_07", cols, 2, NULL, 0, "order_id");
    sbuf s = SBUF_INIT;
    const char *lits[] = {"3", "x'y"};
    bool num[] = {true, false};
    dbl_union_part(&s, NULL, 5, &l, false, lits, num, 2, NULL, NULL, "note <> ''");
    assert_string_equal(s.data, "SELECT 5,`id`,`note`,`order_id` FROM `shop_1`.`orders_07` "
                                "WHERE `order_id` IN (3,'x\\'y') AND (note <> '')");
    sbuf_reset(&s);
    dbl_union_part(&s, NULL, 0, &l, true, NULL, NULL, 0, "10", "42", NULL);
    assert_string_equal(s.data, "SELECT DISTINCT 0,`id`,`note`,`order_id` FROM "
                                "`shop_1`.`orders_07` WHERE `order_id` BETWEEN 10 AND 42");
    sbuf_free(&s);
    dbl_level_free(&l);
}

/* units are read together only when a UNION gives each what its own query
 * would: the same selection, the same known types, no ENUM or SET (a UNION
 * turns them into VARCHAR without their flags) */
static void test_union_ok(void **state) {
    (void)state;
    struct mp_column a[2] = {{.name = "id", .mysql_type = "int(11)"},
                             {.name = "total", .mysql_type = "decimal(10,2)"}};
    struct mp_column b[2] = {{.name = "id", .mysql_type = "int(11)"},
                             {.name = "total", .mysql_type = "DECIMAL(10,2)"}};
    struct level la, lb;
    dbl_level_init(&la, "s", "orders_01", a, 2, NULL, 0, "order_id");
    dbl_level_init(&lb, "s", "orders_02", b, 2, NULL, 0, "order_id");
    struct level *ls[] = {&la, &lb};
    size_t pos[3];
    const char *order[] = {"order_id", "id", NULL};
    assert_true(dbl_units_union_ok(ls, 2, order, pos));
    assert_int_equal(pos[0], 4); /* the part number, id, total, order_id */
    assert_int_equal(pos[1], 2);
    const char *unselected[] = {"order_id", "created", NULL};
    assert_false(dbl_units_union_ok(ls, 2, unselected, pos));
    b[1].mysql_type = "decimal(12,4)"; /* a UNION would widen the other shard's */
    assert_false(dbl_units_union_ok(ls, 2, NULL, pos));
    b[1].mysql_type = NULL; /* not known */
    assert_false(dbl_units_union_ok(ls, 2, NULL, pos));
    b[1].mysql_type = a[1].mysql_type = "set('x','y')";
    assert_false(dbl_units_union_ok(ls, 2, NULL, pos));
    b[1].mysql_type = a[1].mysql_type = "enum('x','y')";
    assert_false(dbl_units_union_ok(ls, 2, NULL, pos));
    dbl_level_free(&la);
    dbl_level_free(&lb);
}

/* keys a transaction touched come in no order: sorted, integers by value
 * (so neighbours share a chunk and read as one range), then other text */
static void test_sort_keys(void **state) {
    (void)state;
    char k[][24] = {"b", "100", "18446744073709551615", "-5", "9", "a", "10", "007"};
    char *keys[8];
    for (size_t i = 0; i < 8; i++) keys[i] = k[i];
    docbuild_sort_keys(keys, 8);
    const char *want[8] = {"-5", "9", "10", "100", "18446744073709551615", "007", "a", "b"};
    for (size_t i = 0; i < 8; i++) assert_string_equal(want[i], keys[i]);
    docbuild_sort_keys(keys, 0); /* nothing to do */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sort_keys),
        cmocka_unit_test(test_integers), cmocka_unit_test(test_floats),
        cmocka_unit_test(test_decimal_bit_strings), cmocka_unit_test(test_times),
        cmocka_unit_test(test_sql), cmocka_unit_test(test_sql_ranges),
        cmocka_unit_test(test_relation_order), cmocka_unit_test(test_union_part),
        cmocka_unit_test(test_union_ok),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
