/* test_read_view: the tables a read snapshot opens first, the statements
 * that open them, and which binlog events between a snapshot's start and
 * those locks make it be taken again (sync/pipeline/read_view.h). The
 * snapshot itself against a real server, with a table swapped in between:
 * tests/integration/t_run_online_schema_change.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "sbuf.h"
#include "sync/mapping/mapping.h"
#include "sync/pipeline/read_view.h"

static void parse(const char *json, struct mapping *m) {
    char err[512] = "";
    int rc = mapping_parse("test", json, strlen(json), m, err, sizeof err);
    if (rc != 0) fail_msg("mapping: %s", err);
}

/* every table an index config reads, nested relations and parent/child
 * tables included, each once; a delay-effect settings entry only through a
 * relation that reads it */
static void test_index_tables(void **state) {
    (void)state;
    struct mapping m = {0};
    parse("{\"version\":1,\"indices\":[{\"alias\":\"books\",\"tables\":["
          "{\"table\":\"lib.book\",\"columns\":[{\"name\":\"id\",\"key\":true}],"
          " \"relations\":["
          "  {\"column\":\"id\",\"table\":\"lib.book_genre\",\"join_column\":\"book_id\","
          "   \"nested\":true,\"extend_name\":\"genres\",\"columns\":[\"genre_id\"],"
          "   \"relations\":[{\"column\":\"genre_id\",\"table\":\"lib.genre\","
          "     \"join_column\":\"id\",\"extend_name\":\"genre\",\"columns\":[\"name\"]}]},"
          "  {\"column\":\"publisher_id\",\"table\":\"other db.publisher\",\"join_column\":\"id\","
          "   \"extend_name\":\"publisher\",\"columns\":[\"name\"]},"
          "  {\"column\":\"id\",\"table\":\"lib.book_genre\",\"join_column\":\"book_id\","
          "   \"nested\":true,\"extend_name\":\"again\",\"columns\":[\"genre_id\"]}]},"
          "{\"table\":\"lib.genre\",\"delay_effect\":true},"
          "{\"table\":\"lib.unread\",\"delay_effect\":true}]}]}",
          &m);
    struct rv_tables t = {0};
    rv_tables_add_index(&t, &m.indices[0]);
    assert_int_equal(t.n, 4);
    sbuf q = SBUF_INIT;
    rv_touch_sql(&t, &q);
    assert_string_equal(q.data,
                        "(SELECT 1 FROM `lib`.`book` LIMIT 0) UNION ALL "
                        "(SELECT 1 FROM `lib`.`book_genre` LIMIT 0) UNION ALL "
                        "(SELECT 1 FROM `lib`.`genre` LIMIT 0) UNION ALL "
                        "(SELECT 1 FROM `other db`.`publisher` LIMIT 0)");
    sbuf_free(&q);
    rv_tables_clear(&t);
    assert_int_equal(t.n, 0);
    mapping_free(&m);
}

/* more tables than one statement takes: one statement per chunk, a line each */
static void test_touch_chunks(void **state) {
    (void)state;
    struct rv_tables t = {0};
    char name[32];
    for (int i = 0; i < RV_TOUCH_CHUNK + 3; i++) {
        snprintf(name, sizeof name, "t%03d", i);
        rv_tables_add(&t, "d", name);
        rv_tables_add(&t, "d", name); /* once only */
    }
    assert_int_equal(t.n, RV_TOUCH_CHUNK + 3);
    sbuf q = SBUF_INIT;
    rv_touch_sql(&t, &q);
    size_t lines = 1, unions = 0;
    for (const char *p = q.data; (p = strchr(p, '\n')); p++) lines++;
    for (const char *p = q.data; (p = strstr(p, "UNION ALL")); p++) unions++;
    assert_int_equal(lines, 2);
    assert_int_equal(unions, RV_TOUCH_CHUNK - 1 + 2);
    assert_non_null(strstr(q.data, "LIMIT 0)\n(SELECT 1 FROM `d`.`t100` LIMIT 0)"));
    sbuf_free(&q);
    rv_tables_clear(&t);
}

/* the events SHOW BINLOG EVENTS lists, as MariaDB and MySQL write them */
static void test_events(void **state) {
    (void)state;
    struct rv_tables t = {0};
    rv_tables_add(&t, "lib", "book");
    rv_tables_add(&t, "lib", "book_genre");
    rv_tables_add(&t, "we`ird", "x");
    /* pt-online-schema-change's swap (MariaDB), gh-ost's (MySQL, its xid) */
    assert_true(rv_event_touches(&t, "Query", "use `lib`; RENAME TABLE `lib`.`book_genre` TO "
                                              "`lib`.`_book_genre_old`, `lib`.`_book_genre_new` "
                                              "TO `lib`.`book_genre`"));
    assert_true(rv_event_touches(&t, "Query", "use `lib`; rename /* gh-ost */ table `lib`.`book` "
                                              "to `lib`.`_book_del`, `lib`.`_book_gho` to "
                                              "`lib`.`book` /* xid=91 */"));
    /* gh-ost's two-step cut-over: each step names the table */
    assert_true(rv_event_touches(&t, "Query", "use `lib`; rename table `_book_gho` to `book`"));
    /* without a default database, the names say it */
    assert_true(rv_event_touches(&t, "Query", "TRUNCATE TABLE lib.book"));
    assert_true(rv_event_touches(&t, "Query", "use `x`; DROP DATABASE lib"));
    assert_true(rv_event_touches(&t, "Query", "use `we``ird`; ALTER TABLE x ADD c INT"));
    /* a statement the parser does not read, in a database read */
    assert_true(rv_event_touches(&t, "Query", "use `lib`; EXCHANGE SOMETHING NEW"));
    /* not a table read */
    assert_false(rv_event_touches(&t, "Query", "use `lib`; RENAME TABLE `_book_genre_new` TO "
                                               "`_book_genre_x`"));
    assert_false(rv_event_touches(&t, "Query", "use `lib`; DROP TABLE IF EXISTS "
                                               "`lib`.`_book_genre_old`"));
    assert_false(rv_event_touches(&t, "Query", "use `lib`; CREATE TRIGGER `pt_osc_lib_book_ins` "
                                               "AFTER INSERT ON `lib`.`book` FOR EACH ROW "
                                               "REPLACE INTO `lib`.`_book_new` (id) VALUES "
                                               "(NEW.id)"));
    assert_false(rv_event_touches(&t, "Query", "use `other`; ALTER TABLE book ADD c INT"));
    assert_false(rv_event_touches(&t, "Query", "BEGIN"));
    assert_false(rv_event_touches(&t, "Query", "COMMIT"));
    assert_false(rv_event_touches(&t, "Query", "use `lib`; XA END X'31',X'',1"));
    /* events that are not statements: the text of a row event's statement,
     * a GTID, a commit */
    assert_false(rv_event_touches(&t, "Annotate_rows", "RENAME TABLE lib.book TO lib.b2"));
    assert_false(rv_event_touches(&t, "Gtid", "BEGIN GTID 0-1-5"));
    assert_false(rv_event_touches(&t, "Xid", "COMMIT /* xid=5 */"));
    assert_false(rv_event_touches(&t, "Query", NULL));
    rv_tables_clear(&t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_index_tables),
        cmocka_unit_test(test_touch_chunks),
        cmocka_unit_test(test_events),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
