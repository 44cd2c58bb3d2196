/* Unit tests of db.c's pure parts: which statement reads the binlog's end
 * on which server (SHOW MASTER STATUS is gone from MySQL 8.4), and when a
 * failed one is retried with the other name. The statements themselves run
 * against real servers in the integration tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "db.h"

static void test_binlog_status_mysql(void **state) {
    (void)state;
    /* 8.4 dropped SHOW MASTER STATUS: the new name first, the old as fallback */
    assert_string_equal(db_binlog_status_sql(false, 80400, 0), "SHOW BINARY LOG STATUS");
    assert_string_equal(db_binlog_status_sql(false, 80400, 1), "SHOW MASTER STATUS");
    assert_null(db_binlog_status_sql(false, 80400, 2));
    assert_string_equal(db_binlog_status_sql(false, 90100, 0), "SHOW BINARY LOG STATUS");
    assert_string_equal(db_binlog_status_sql(false, 80200, 0), "SHOW BINARY LOG STATUS");
    /* before 8.2 the new name does not exist */
    assert_string_equal(db_binlog_status_sql(false, 80036, 0), "SHOW MASTER STATUS");
    assert_string_equal(db_binlog_status_sql(false, 80036, 1), "SHOW BINARY LOG STATUS");
    assert_string_equal(db_binlog_status_sql(false, 50744, 0), "SHOW MASTER STATUS");
    /* version unknown: the old name, then the new */
    assert_string_equal(db_binlog_status_sql(false, 0, 0), "SHOW MASTER STATUS");
    assert_string_equal(db_binlog_status_sql(false, 0, 1), "SHOW BINARY LOG STATUS");
}

static void test_binlog_status_mariadb(void **state) {
    (void)state;
    assert_string_equal(db_binlog_status_sql(true, 101119, 0), "SHOW BINLOG STATUS");
    assert_string_equal(db_binlog_status_sql(true, 101119, 1), "SHOW MASTER STATUS");
    assert_null(db_binlog_status_sql(true, 101119, 2));
    assert_string_equal(db_binlog_status_sql(true, 100502, 0), "SHOW BINLOG STATUS");
    assert_string_equal(db_binlog_status_sql(true, 100501, 0), "SHOW MASTER STATUS");
    assert_string_equal(db_binlog_status_sql(true, 100406, 1), "SHOW BINLOG STATUS");
}

static void test_binlog_status_retry(void **state) {
    (void)state;
    assert_true(db_binlog_status_retry(1064));  /* ER_PARSE_ERROR: unknown statement */
    assert_true(db_binlog_status_retry(1235));  /* ER_NOT_SUPPORTED_YET */
    assert_false(db_binlog_status_retry(1227)); /* a missing privilege: not the name */
    assert_false(db_binlog_status_retry(2013)); /* connection lost */
    assert_false(db_binlog_status_retry(0));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_binlog_status_mysql),
        cmocka_unit_test(test_binlog_status_mariadb),
        cmocka_unit_test(test_binlog_status_retry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
