/* test_changeset: the record the sync pipeline's stages pass on
 * (sync/changeset.h): gathering documents by (index, table), elements,
 * row-image documents; reset forgets all of it and the record is reused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "sync/changeset.h"

static void test_docs_grouped(void **state) {
    (void)state;
    struct changeset cs = {0};
    assert_false(changeset_reads(&cs));
    changeset_add_doc(&cs, 0, 0, "1", 1);
    changeset_add_doc(&cs, 1, 0, "7", 1);
    changeset_add_doc(&cs, 0, 0, "22x", 2); /* length, not NUL, bounds the key */
    changeset_add_doc(&cs, 0, 2, "5", 1);
    assert_true(changeset_reads(&cs));
    assert_int_equal(3, cs.npend); /* (0,0) (1,0) (0,2) */
    assert_int_equal(0, cs.pend[0].index);
    assert_int_equal(0, cs.pend[0].table);
    assert_int_equal(2, cs.pend[0].n);
    assert_string_equal("1", cs.pend[0].keys[0]);
    assert_string_equal("22", cs.pend[0].keys[1]);
    assert_int_equal(1, cs.pend[1].index);
    assert_int_equal(2, cs.pend[2].table);
    for (int i = 0; i < 200; i++) changeset_add_doc(&cs, 3, 0, "k", 1); /* grows */
    assert_int_equal(200, cs.pend[3].n);
    changeset_free(&cs);
}

static void test_elements_rowdocs_reset(void **state) {
    (void)state;
    struct changeset cs = {0};
    changeset_add_element(&cs, 0, NULL, "doc1", "e1");
    changeset_add_rowdoc(&cs, 0, "9", 1, "{\"a\":1}", 7);
    changeset_add_rowdoc(&cs, 0, "10", 2, NULL, 0);
    sbuf_adds(&cs.snaps, "('x')");
    cs.copies_may_move = cs.rows = cs.saves = cs.other_rows = true;
    assert_true(changeset_reads(&cs));
    assert_int_equal(1, cs.nelems);
    assert_string_equal("doc1", cs.elems[0].doc);
    assert_int_equal(2, cs.nrdocs);
    assert_string_equal("{\"a\":1}", cs.rdocs[0].body);
    assert_int_equal(7, cs.rdocs[0].len);
    assert_null(cs.rdocs[1].body);
    changeset_reset(&cs);
    assert_false(changeset_reads(&cs));
    assert_int_equal(0, cs.nelems);
    assert_int_equal(0, cs.nrdocs);
    assert_int_equal(0, cs.snaps.len);
    assert_false(cs.copies_may_move || cs.rows || cs.saves || cs.other_rows);
    /* reused after a reset */
    changeset_add_element(&cs, 1, NULL, "doc2", "e2");
    assert_string_equal("e2", cs.elems[0].elem);
    changeset_free(&cs);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_docs_grouped),
        cmocka_unit_test(test_elements_rowdocs_reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
