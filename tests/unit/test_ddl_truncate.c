/* test_ddl_truncate: recognising TRUNCATE TABLE in the binlog's statements
 * and the index configs that read the emptied table (sync/ddl_truncate.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "sync/ddl_truncate.h"

static void truncated(const char *sql, const char *defdb, const char *want_db,
                      const char *want_table) {
    char db[64], t[64];
    bool got = ddl_truncated_table(sql, strlen(sql), defdb, db, sizeof db, t, sizeof t);
    if (!want_db) {
        if (got) fail_msg("\"%s\" read as a TRUNCATE of %s.%s", sql, db, t);
        return;
    }
    if (!got) fail_msg("\"%s\" not read as a TRUNCATE", sql);
    assert_string_equal(want_db, db);
    assert_string_equal(want_table, t);
}

static void test_statements(void **state) {
    (void)state;
    truncated("TRUNCATE TABLE products", "shop", "shop", "products");
    truncated("truncate products", "shop", "shop", "products");
    truncated("TRUNCATE TABLE `shop`.`products`", "other", "shop", "products");
    truncated("  /* by the app */ TRUNCATE\n TABLE shop . items ;", NULL, "shop", "items");
    truncated("TRUNCATE TABLE `we``ird`", "d", "d", "we`ird");
    truncated("-- cleanup\nTRUNCATE TABLE t", "d", "d", "t");
    /* not a TRUNCATE of one table */
    truncated("TRUNCATE TABLE t", NULL, NULL, NULL);  /* no database known */
    truncated("TRUNCATE TABLE t", "", NULL, NULL);
    truncated("TRUNCATED_LOG_CLEANUP()", "d", NULL, NULL);
    truncated("ALTER TABLE t TRUNCATE PARTITION p0", "d", NULL, NULL);
    truncated("TRUNCATE TABLE t WAIT 5", "d", NULL, NULL);
    truncated("DROP TABLE t", "d", NULL, NULL);
    truncated("TRUNCATE TABLE", "d", NULL, NULL);
    truncated("TRUNCATE TABLE `unterminated", "d", NULL, NULL);
}

static void test_reads(void **state) {
    (void)state;
    struct mp_relation inner = {.db = "shop", .table = "tags"};
    struct mp_relation rel = {.db = "shop", .table = "product_tags", .relations = &inner,
                              .nrelations = 1};
    struct mp_table tables[3] = {
        {.db = "shop", .table = "products", .relations = &rel, .nrelations = 1},
        {.db = "shop", .table = "reviews", .parent_table = "products", .parent_db = "shop"},
        {.db = "shop", .table = "categories", .delay_effect = true}, /* settings only */
    };
    struct mp_index ix = {.alias = "products", .tables = tables, .ntables = 3};
    assert_true(ddl_index_reads(&ix, "shop", "products"));
    assert_true(ddl_index_reads(&ix, "shop", "reviews"));
    assert_true(ddl_index_reads(&ix, "shop", "product_tags"));
    assert_true(ddl_index_reads(&ix, "shop", "tags")); /* at any depth */
    assert_false(ddl_index_reads(&ix, "shop", "categories")); /* no relation reads it */
    assert_false(ddl_index_reads(&ix, "other", "products"));
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_statements),
                                       cmocka_unit_test(test_reads)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
