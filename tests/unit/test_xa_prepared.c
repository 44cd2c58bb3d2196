/* test_xa_prepared: what a prepared two-phase XA transaction keeps for its
 * XA COMMIT (sync/pipeline/xa_prepared.h): row-image documents and change snapshots
 * move out of the PREPARE's change set, the documents its build reached are
 * noted by alias and table name and put back by the mapping in force at the
 * commit; the checkpoint hold is the oldest open one's until it expires. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "sync/pipeline/xa_prepared.h"

static struct mp_table tables_a[2] = {{.db = "d", .table = "products"},
                                      {.db = "d", .table = "reviews"}};
static struct mp_table tables_a_swapped[2] = {{.db = "d", .table = "reviews"},
                                              {.db = "d", .table = "products"}};
static struct mp_table tables_b[1] = {{.db = "d", .table = "users"}};

static const bl_pos at = {.file = "mysql-bin.000003", .pos = 900};

static void test_prepare_and_restore(void **state) {
    (void)state;
    struct mp_index ix[2] = {{.alias = "a", .tables = tables_a, .ntables = 2},
                             {.alias = "b", .tables = tables_b, .ntables = 1}};
    struct mapping m = {ix, 2};
    struct xa_set s = {0};
    struct changeset cs = {0};
    /* the PREPARE's change set, as routed */
    changeset_add_rowdoc(&cs, 1, "u1", 2, "{\"n\":1}", 7);
    changeset_add_rowdoc(&cs, 1, "u2", 2, NULL, 0);
    sbuf_adds(&cs.snaps, "('s1')");
    cs.nsnaps = 1;
    struct xa_txn *t = xa_prepare(&s, "X'7831',X'',1", "mysql-bin.000003:400", &at, 1000, &cs, &m);
    assert_non_null(t);
    assert_int_equal(cs.nrdocs, 0); /* held back: they go at the commit */
    assert_int_equal(cs.snaps.len, 0);
    assert_int_equal(t->nrdocs, 2);
    assert_string_equal(xa_hold(&s), "mysql-bin.000003:400");
    /* ... and as its build left it */
    changeset_add_doc(&cs, 0, 0, "p1", 2);
    changeset_add_doc(&cs, 0, 1, "r9", 2);
    changeset_add_element(&cs, 0, NULL, "p2", "e7");
    cs.copies_may_move = true;
    xa_note_docs(t, &cs, &m);
    assert_int_equal(t->ndocs, 3);
    changeset_reset(&cs);
    /* prepared again (a replay of the same PREPARE): the same one, the same hold */
    changeset_add_rowdoc(&cs, 1, "u3", 2, "{}", 2);
    changeset_add_rowdoc_requery(&cs, 1, "u4", 2); /* its where the server's to decide */
    assert_ptr_equal(xa_prepare(&s, "X'7831',X'',1", "mysql-bin.000003:800", &at, 2000, &cs, &m),
                     xa_find(&s, "X'7831',X'',1"));
    assert_int_equal(s.n, 1);
    assert_string_equal(xa_hold(&s), "mysql-bin.000003:400");
    t = xa_find(&s, "X'7831',X'',1");
    assert_int_equal(t->nrdocs, 4);
    assert_int_equal(cs.nrequery, 0); /* held back with the rest */

    /* the commit, after a reload that reordered the index configs and the
     * tables and dropped none */
    struct mp_index ix2[2] = {{.alias = "b", .tables = tables_b, .ntables = 1},
                              {.alias = "a", .tables = tables_a_swapped, .ntables = 2}};
    struct mapping m2 = {ix2, 2};
    struct changeset c2 = {0};
    sbuf_adds(&c2.snaps, "('other')");
    c2.nsnaps = 1;
    assert_int_equal(xa_restore(t, &c2, &m2), 0);
    assert_int_equal(c2.npend, 2);
    assert_int_equal(c2.pend[0].index, 1); /* a, now second */
    assert_int_equal(c2.pend[0].table, 1); /* products, now second */
    assert_int_equal(c2.pend[0].n, 2);
    assert_string_equal(c2.pend[0].keys[0], "p1");
    assert_string_equal(c2.pend[0].keys[1], "p2"); /* the element's document, whole */
    assert_int_equal(c2.pend[1].table, 0);          /* reviews, now first */
    assert_string_equal(c2.pend[1].keys[0], "r9");
    assert_int_equal(c2.nrdocs, 4);
    assert_int_equal(c2.rdocs[0].index, 0);
    assert_string_equal(c2.rdocs[0].body, "{\"n\":1}");
    assert_null(c2.rdocs[1].body);
    assert_false(c2.rdocs[2].requery);
    assert_true(c2.rdocs[3].requery); /* still read from MySQL at the commit */
    assert_int_equal(c2.nrequery, 1);
    assert_true(changeset_reads(&c2));
    assert_string_equal(c2.snaps.data, "('other'),('s1')");
    assert_int_equal(c2.nsnaps, 2);
    assert_true(c2.copies_may_move);
    changeset_free(&c2);

    /* a mapping without index config b: its documents are dropped, counted */
    struct mapping m3 = {ix, 1};
    assert_int_equal(xa_restore(t, &c2, &m3), 4);
    assert_int_equal(c2.nrdocs, 0);
    assert_int_equal(c2.npend, 2);
    changeset_free(&c2);

    xa_forget(&s, t);
    assert_int_equal(s.n, 0);
    assert_null(xa_hold(&s));
    changeset_free(&cs);
    xa_set_free(&s);
}

static void test_hold_order_and_expiry(void **state) {
    (void)state;
    struct mp_index ix[1] = {{.alias = "a", .tables = tables_a, .ntables = 2}};
    struct mapping m = {ix, 1};
    struct xa_set s = {0};
    struct changeset cs = {0};
    xa_prepare(&s, "X'01',X'',1", "f:100", &at, 1000, &cs, &m);
    xa_prepare(&s, "X'02',X'',1", "f:200", &at, 5000, &cs, &m);
    xa_prepare(&s, "X'03',X'',1", "f:300", &at, 9000, &cs, &m);
    assert_string_equal(xa_hold(&s), "f:100");
    xa_forget(&s, xa_find(&s, "X'02',X'',1")); /* a later one ends first */
    assert_string_equal(xa_hold(&s), "f:100");
    assert_null(xa_find(&s, "X'02',X'',1"));
    assert_false(xa_expire(&s, 1000 + 59999, 60000)); /* not yet */
    assert_false(xa_expire(&s, 1000 + 99999, 0));     /* 0: never */
    assert_true(xa_expire(&s, 1000 + 60000, 60000));
    assert_string_equal(xa_hold(&s), "f:300"); /* the expired one no longer holds */
    assert_non_null(xa_find(&s, "X'01',X'',1")); /* ... and is still followed */
    assert_false(xa_expire(&s, 1000 + 60001, 60000)); /* said once */
    assert_true(xa_expire(&s, 9000 + 60000, 60000));
    assert_null(xa_hold(&s));
    /* one with no mapped row holds nothing back, yet is known at its commit */
    assert_non_null(xa_prepare(&s, "X'04',X'',1", NULL, &at, 9500, &cs, &m));
    assert_null(xa_hold(&s));
    assert_false(xa_expire(&s, 9500 + 60000, 60000));
    assert_non_null(xa_find(&s, "X'04',X'',1"));
    for (int i = 0; i < 20; i++) { /* grows */
        char xid[32];
        snprintf(xid, sizeof xid, "X'%02x',X'ff',2", i + 16);
        xa_prepare(&s, xid, "f:1", &at, 10, &cs, &m);
    }
    assert_int_equal(s.n, 23);
    xa_set_free(&s);
    assert_int_equal(s.n, 0);
    changeset_free(&cs);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prepare_and_restore),
        cmocka_unit_test(test_hold_order_and_expiry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
