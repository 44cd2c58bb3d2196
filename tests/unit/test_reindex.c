/* Unit tests of the pure parts of sync/reindex/reindex.c: the key-range conditions
 * of the buckets a table is split into, the primary terms read from the
 * engine's cluster state, and the version an alias is on; and of
 * sync/reindex/reindex_read_from.c: a version's read_from list, and the order
 * of two binlog positions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "sbuf.h"
#include "search/index_version.h"
#include "sync/reindex/reindex.h"

static void expect(char *const *bounds, int b, int n, const char *want) {
    sbuf s = SBUF_INIT;
    assert_int_equal(reindex_bucket_cond("id", bounds, b, n, &s), 0);
    assert_string_equal(s.data ? s.data : "", want);
    sbuf_free(&s);
}

static void test_buckets(void **state) {
    (void)state;
    /* quantiles of 1..1000 in 4: open at both ends, so later rows outside still land */
    char *q4[] = {"251", "501", "751", NULL};
    expect(q4, 0, 4, "`id` < 251");
    expect(q4, 1, 4, "`id` >= 251 AND `id` < 501");
    expect(q4, 2, 4, "`id` >= 501 AND `id` < 751");
    expect(q4, 3, 4, "`id` >= 751");
    expect(NULL, 0, 1, "");
    /* an outlying key does not take the buckets' width: it is one row */
    char *out[] = {"501", "10000001", NULL};
    expect(out, 1, 3, "`id` >= 501 AND `id` < 10000001");
    /* negative keys and the BIGINT UNSIGNED extremes as they are */
    char *neg[] = {"-9223372036854775808", "18446744073709551615", NULL};
    expect(neg, 1, 3, "`id` >= -9223372036854775808 AND `id` < 18446744073709551615");
    /* fewer rows than buckets: the buckets past the last boundary are empty */
    char *few[] = {"2", NULL, NULL};
    expect(few, 1, 4, "`id` >= 2");
    expect(few, 2, 4, "0=1");
    expect(few, 3, 4, "0=1");
}

static void test_refused(void **state) {
    (void)state;
    sbuf s = SBUF_INIT;
    char *bad[] = {"a", NULL};
    assert_int_equal(reindex_bucket_cond("id", bad, 1, 2, &s), -1); /* not an integer */
    char *q[] = {"5", NULL};
    assert_int_equal(reindex_bucket_cond("id", q, 2, 2, &s), -1); /* no bucket 2 of 2 */
    assert_null(s.data);
    sbuf_free(&s);
}

static void terms(const char *json, const char *index, int want_n, const char *want) {
    sbuf s = SBUF_INIT;
    assert_int_equal(reindex_parse_primary_terms(json, json ? strlen(json) : 0, index, &s), want_n);
    assert_string_equal(s.data ? s.data : "", want);
    sbuf_free(&s);
}

static void test_primary_terms(void **state) {
    (void)state;
    /* in shard order, whatever order the engine writes the shards in */
    terms("{\"metadata\":{\"indices\":{\"p_v2\":{\"primary_terms\":{\"1\":3,\"0\":1,\"2\":2}}}}}",
          "p_v2", 3, "1,3,2");
    terms("{\"metadata\":{\"indices\":{\"p_v2\":{\"primary_terms\":{\"0\":1}}}}}", "p_v2", 1, "1");
    /* terms beyond 2^53 stay exact */
    terms("{\"metadata\":{\"indices\":{\"x\":{\"primary_terms\":{\"0\":9007199254740993}}}}}", "x",
          1, "9007199254740993");
    /* not there, or not what it should be */
    terms("{\"metadata\":{\"indices\":{\"other\":{\"primary_terms\":{\"0\":1}}}}}", "p_v2", -1, "");
    terms("{}", "p_v2", -1, ""); /* filter_path answers {} for an unknown index */
    terms("{\"error\":{\"type\":\"security_exception\"},\"status\":403}", "p_v2", -1, "");
    terms("{\"metadata\":{\"indices\":{\"p\":{\"primary_terms\":{\"0\":1,\"2\":1}}}}}", "p", -1, "");
    terms("{\"metadata\":{\"indices\":{\"p\":{\"primary_terms\":{\"0\":\"1\"}}}}}", "p", -1, "");
    terms("{\"metadata\":{\"indices\":{\"p\":{\"primary_terms\":{}}}}}", "p", -1, "");
    terms("not json", "p", -1, "");
    terms(NULL, "p", -1, "");
}

/* "<alias>_v<N>" exactly: another alias's versions, or a name that only
 * ends like one, are not versions of alias */
static void test_alias_version(void **state) {
    (void)state;
    assert_int_equal(3, index_version_of("p", "p_v3"));
    assert_int_equal(12, index_version_of("p_v1", "p_v1_v12"));
    assert_int_equal(0, index_version_of("p", "p_v1_v12")); /* p_v1's, not p's */
    assert_int_equal(0, index_version_of("p", "q_v3"));
    assert_int_equal(0, index_version_of("p", "pp_v3"));
    assert_int_equal(0, index_version_of("p", "p_v"));
    assert_int_equal(0, index_version_of("p", "p_v0"));
    assert_int_equal(0, index_version_of("p", "p_v03"));
    assert_int_equal(0, index_version_of("p", "p_v3x"));
    assert_int_equal(0, index_version_of("p", "p_v-3"));
    assert_int_equal(0, index_version_of("p", "p_v12345678901")); /* beyond a version */
    assert_int_equal(0, index_version_of("p", "p"));
    sbuf names = SBUF_INIT;
    const char *a = "{\"p_v2\":{\"aliases\":{\"p\":{}}},\"p_v11\":{\"aliases\":{\"p\":{}}},"
                    "\"legacy\":{\"aliases\":{\"p\":{}}}}";
    assert_int_equal(11, reindex_alias_version("p", a, strlen(a), &names));
    assert_string_equal("p_v2, p_v11, legacy", names.data);
    sbuf_free(&names);
    const char *b = "{\"legacy\":{\"aliases\":{\"p\":{}}}}";
    assert_int_equal(0, reindex_alias_version("p", b, strlen(b), NULL));
    const char *e = "{\"error\":\"alias [p] missing\",\"status\":404}";
    assert_int_equal(0, reindex_alias_version("p", e, strlen(e), NULL));
    assert_int_equal(0, reindex_alias_version("p", "not json", 8, NULL));
    assert_int_equal(0, reindex_alias_version("p", NULL, 0, NULL));
}

static void test_read_from(void **state) {
    (void)state;
    char f[64];
    unsigned long long p = 0;
    const char *l = "ab=mysql-bin.000003:900 a=mysql-bin.000002:77 b=x:1:2";
    assert_true(reindex_read_from_entry(l, "a", f, sizeof f, &p));
    assert_string_equal(f, "mysql-bin.000002"); /* a's, not ab's */
    assert_int_equal(p, 77);
    assert_true(reindex_read_from_entry(l, "ab", f, sizeof f, &p));
    assert_string_equal(f, "mysql-bin.000003");
    assert_int_equal(p, 900);
    assert_true(reindex_read_from_entry(l, "b", f, sizeof f, &p)); /* the last colon */
    assert_string_equal(f, "x:1");
    assert_int_equal(p, 2);
    assert_false(reindex_read_from_entry(l, "c", f, sizeof f, &p));
    /* a reader restarted during the build appended a later one: the first holds */
    assert_true(reindex_read_from_entry("a=b.000001:5 a=b.000002:9", "a", f, sizeof f, &p));
    assert_string_equal(f, "b.000001");
    assert_int_equal(p, 5);
    assert_false(reindex_read_from_entry(NULL, "a", f, sizeof f, &p));
    assert_false(reindex_read_from_entry("", "a", f, sizeof f, &p));
    assert_false(reindex_read_from_entry("a=f", "a", f, sizeof f, &p));     /* no position */
    assert_false(reindex_read_from_entry("a=f:1x", "a", f, sizeof f, &p));  /* not a number */
    assert_false(reindex_read_from_entry("a=:5", "a", f, sizeof f, &p));    /* no file */
    assert_false(reindex_read_from_entry("a=f:", "a", f, sizeof f, &p));
    char small[4];
    assert_false(reindex_read_from_entry(l, "a", small, sizeof small, &p)); /* cut: none */
    int o = 9;
    assert_int_equal(reindex_binlog_cmp("mysql-bin.000002", 77, "mysql-bin.000002", 77, &o), 0);
    assert_int_equal(o, 0);
    assert_int_equal(reindex_binlog_cmp("mysql-bin.000002", 78, "mysql-bin.000002", 77, &o), 0);
    assert_int_equal(o, 1);
    /* a later file at a smaller offset; 999999 then 1000000 (one more digit) */
    assert_int_equal(reindex_binlog_cmp("mysql-bin.000002", 4, "mysql-bin.000001", 9000, &o), 0);
    assert_int_equal(o, 1);
    assert_int_equal(reindex_binlog_cmp("b.999999", 9000, "b.1000000", 4, &o), 0);
    assert_int_equal(o, -1);
    /* two servers' binlogs do not compare */
    assert_int_equal(reindex_binlog_cmp("mysql-bin.000002", 4, "mariadb-bin.000001", 9, &o), -1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buckets),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_primary_terms),
        cmocka_unit_test(test_alias_version),
        cmocka_unit_test(test_read_from),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
