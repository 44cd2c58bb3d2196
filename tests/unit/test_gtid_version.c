/* Unit tests of the versions of [source] versions = gtid: the GTID ordinal
 * of a set (bl_gtid_ordinal, both flavours, several domains / server uuids,
 * a promoted replica going on), set containment (bl_gtid_contains: whether
 * a checkpoint's set can be resumed after) and the version layout
 * (version_make_gtid: epoch on top, ordinal below, the half step). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>

#include "binlog/binlog.h"
#include "deliver/deliver.h"

static uint64_t ord(const char *text) {
    bl_gtid_set *s = bl_gtid_new();
    char err[256];
    assert_int_equal(bl_gtid_parse(s, text, err, sizeof err), BL_OK);
    uint64_t n = bl_gtid_ordinal(s);
    bl_gtid_free(s);
    return n;
}

static bool contains(const char *big, const char *small) {
    bl_gtid_set *a = bl_gtid_new(), *b = bl_gtid_new();
    char err[256];
    assert_int_equal(bl_gtid_parse(a, big, err, sizeof err), BL_OK);
    assert_int_equal(bl_gtid_parse(b, small, err, sizeof err), BL_OK);
    bool r = bl_gtid_contains(a, b);
    bl_gtid_free(a);
    bl_gtid_free(b);
    return r;
}

static void test_ordinal_mariadb(void **state) {
    (void)state;
    assert_int_equal(ord(""), 0);
    assert_int_equal(ord("0-1-100"), 100);
    /* several domains: the sum of their last seq_no */
    assert_int_equal(ord("0-1-100,1-2-7,5-3-1000"), 1107);
    /* the server id does not count: a promoted replica goes on */
    assert_int_equal(ord("0-12-100"), ord("0-11-100"));
    bl_gtid_set *s = bl_gtid_new();
    char err[256];
    assert_int_equal(bl_gtid_parse(s, "0-11-100,1-11-5", err, sizeof err), BL_OK);
    uint64_t before = bl_gtid_ordinal(s);
    bl_gtid_add_mariadb(s, 0, 12, 101); /* the promoted replica's first transaction */
    assert_int_equal(bl_gtid_ordinal(s), before + 1);
    bl_gtid_add_mariadb(s, 1, 12, 6); /* every transaction raises one domain */
    assert_int_equal(bl_gtid_ordinal(s), before + 2);
    bl_gtid_add_mariadb(s, 9, 12, 1); /* a new domain */
    assert_int_equal(bl_gtid_ordinal(s), before + 3);
    bl_gtid_free(s);
}

static void test_ordinal_mysql(void **state) {
    (void)state;
    const char *a = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
    const char *b = "4e11fa47-71ca-11e1-9e33-c80aa9429562";
    char t[512];
    snprintf(t, sizeof t, "%s:1-5", a);
    assert_int_equal(ord(t), 5);
    snprintf(t, sizeof t, "%s:1-5:7-9,%s:1-100", a, b);
    assert_int_equal(ord(t), 108);
    snprintf(t, sizeof t, "%s:1-5:7-9,%s:tag1:1-3", a, a);
    assert_int_equal(ord(t), 11);
    /* each transaction adds one, on whichever server it began */
    bl_gtid_set *s = bl_gtid_new();
    char err[256];
    snprintf(t, sizeof t, "%s:1-5", a);
    assert_int_equal(bl_gtid_parse(s, t, err, sizeof err), BL_OK);
    uint8_t u[16];
    memset(u, 0x4e, sizeof u);
    bl_gtid_add_mysql(s, u, NULL, 1);
    assert_int_equal(bl_gtid_ordinal(s), 6);
    bl_gtid_add_mysql(s, u, NULL, 2);
    assert_int_equal(bl_gtid_ordinal(s), 7);
    bl_gtid_add_mysql(s, u, NULL, 2); /* already in the set */
    assert_int_equal(bl_gtid_ordinal(s), 7);
    bl_gtid_free(s);
}

static void test_contains(void **state) {
    (void)state;
    assert_true(contains("0-11-100", "0-11-100"));
    assert_true(contains("0-12-140", "0-11-100")); /* the promoted replica went on */
    assert_false(contains("0-11-99", "0-11-100")); /* behind */
    assert_false(contains("0-11-100", "0-11-100,1-11-3")); /* a domain it never had */
    assert_true(contains("0-11-100,1-11-3", "0-11-100"));
    assert_true(contains("0-11-1", ""));
    const char *a = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
    char big[256], small[256];
    snprintf(big, sizeof big, "%s:1-10:20-30", a);
    snprintf(small, sizeof small, "%s:2-9:21", a);
    assert_true(contains(big, small));
    snprintf(small, sizeof small, "%s:9-11", a);
    assert_false(contains(big, small));
    snprintf(small, sizeof small, "4e11fa47-71ca-11e1-9e33-c80aa9429562:1");
    assert_false(contains(big, small));
}

static void test_version_layout(void **state) {
    (void)state;
    uint64_t v = version_make_gtid(0, 100, false);
    assert_int_equal(v, 201);
    assert_int_equal(version_epoch(v), 0);
    /* never 0, even for an empty set */
    assert_true(version_make_gtid(0, 0, false) > 0);
    /* the half step: past its transaction, before the next */
    assert_true(version_make_gtid(0, 100, true) > version_make_gtid(0, 100, false));
    assert_true(version_make_gtid(0, 100, true) < version_make_gtid(0, 101, false));
    /* the epoch sits where the position versions have it, and outranks */
    uint64_t e = version_make_gtid(3, 5, false);
    assert_int_equal(version_epoch(e), 3);
    assert_true(e > version_make_gtid(2, (1ull << 51), true));
    assert_true(version_make_gtid(1, 0, false) > version_make(0, 2097151, 0xffffffffull));
    /* 63 bits at most; an ordinal that does not fit gives 0 */
    assert_true(version_make_gtid(1023, (1ull << 52) - 2, true) < (1ull << 63));
    assert_int_equal(version_make_gtid(0, (1ull << 52) - 1, false), 0);
    assert_int_equal(version_make_gtid(1024, 1, false), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ordinal_mariadb),
        cmocka_unit_test(test_ordinal_mysql),
        cmocka_unit_test(test_contains),
        cmocka_unit_test(test_version_layout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
