/* test_changeset: the record the sync pipeline's stages pass on
 * (sync/pipeline/changeset.h): gathering documents by (index, table), elements,
 * row-image documents and which image of a document wins (by coordinates
 * across Kafka partitions, else read order); reset forgets all of it and the
 * record is reused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "sync/pipeline/changeset.h"

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

/* the winning image of document id of index 0, by the winners' list */
static const struct cs_rowdoc *winner(const struct changeset *cs, const size_t *win, size_t n,
                                      const char *id) {
    for (size_t k = 0; k < n; k++)
        if (cs->rdocs[win[k]].index == 0 && !strcmp(cs->rdocs[win[k]].id, id))
            return &cs->rdocs[win[k]];
    return NULL;
}

static void add_at(struct changeset *cs, uint64_t pos, uint32_t row, const char *id,
                   const char *body) {
    cs->at = (struct cs_at){true, 3, pos, row};
    changeset_add_rowdoc(cs, 0, id, strlen(id), body, body ? strlen(body) : 0);
}

/* Images of one row read from several Kafka partitions: read in
 * any order, the latest by coordinates wins, a delete included. */
static void test_rowdoc_winners_coordinates(void **state) {
    (void)state;
    struct changeset cs = {0};
    /* partition 1 read first: row 7's key moved away to 1007 at 300 (its
     * delete is in the new key's partition), then row 7 inserted again at
     * 400 in its own partition; the messages come in this order: */
    add_at(&cs, 400, 0, "7", "{\"v\":\"again\"}"); /* partition 0 */
    add_at(&cs, 100, 0, "5", "{\"v\":1}");           /* partition 0 */
    add_at(&cs, 300, 0, "7", NULL);                    /* partition 2: the key change */
    add_at(&cs, 300, 0, "1007", "{\"v\":\"moved\"}");
    add_at(&cs, 500, 0, "5", NULL);                    /* partition 0: deleted */
    add_at(&cs, 200, 0, "5", "{\"v\":2}");           /* partition 1: older, read last */
    /* one transaction's position: the row within it orders */
    add_at(&cs, 600, 3, "9", "{\"v\":\"second\"}");
    add_at(&cs, 600, 1, "9", "{\"v\":\"first\"}");
    cs.at = (struct cs_at){0};
    changeset_add_rowdoc(&cs, 1, "7", 1, "{\"other index\":1}", 17);
    size_t win[16];
    size_t n = changeset_rowdoc_winners(&cs, win);
    assert_int_equal(5, n); /* 5, 7, 9, 1007 of index 0 and 7 of index 1 */
    const struct cs_rowdoc *r = winner(&cs, win, n, "7");
    assert_non_null(r);
    assert_string_equal("{\"v\":\"again\"}", r->body); /* not the older delete read after it */
    assert_int_equal(400, r->at.pos);
    r = winner(&cs, win, n, "5");
    assert_null(r->body); /* a delete stays a delete */
    assert_int_equal(500, r->at.pos);
    r = winner(&cs, win, n, "9");
    assert_string_equal("{\"v\":\"second\"}", r->body);
    assert_string_equal("{\"v\":\"moved\"}", winner(&cs, win, n, "1007")->body);
    bool other = false;
    for (size_t k = 0; k < n; k++)
        if (cs.rdocs[win[k]].index == 1) other = !cs.rdocs[win[k]].at.known;
    assert_true(other);
    changeset_reset(&cs);
    assert_false(cs.at.known); /* a reset forgets where the rows were */
    changeset_free(&cs);
}

/* Without coordinates (the binlog source, canal's flat messages), or when
 * only one image has some: the image read last wins. */
static void test_rowdoc_winners_read_order(void **state) {
    (void)state;
    struct changeset cs = {0};
    changeset_add_rowdoc(&cs, 0, "1", 1, "{\"v\":1}", 7);
    changeset_add_rowdoc(&cs, 0, "2", 1, "{\"v\":1}", 7);
    changeset_add_rowdoc(&cs, 0, "1", 1, NULL, 0);
    changeset_add_rowdoc(&cs, 0, "1", 1, "{\"v\":3}", 7);
    changeset_add_rowdoc(&cs, 0, "2", 1, NULL, 0);
    add_at(&cs, 900, 0, "3", "{\"v\":\"coords\"}");
    cs.at = (struct cs_at){0};
    changeset_add_rowdoc(&cs, 0, "3", 1, "{\"v\":\"none\"}", 12);
    size_t win[8];
    size_t n = changeset_rowdoc_winners(&cs, win);
    assert_int_equal(3, n);
    assert_string_equal("{\"v\":3}", winner(&cs, win, n, "1")->body);
    assert_null(winner(&cs, win, n, "2")->body);
    assert_string_equal("{\"v\":\"none\"}", winner(&cs, win, n, "3")->body);
    changeset_reset(&cs);
    assert_int_equal(0, changeset_rowdoc_winners(&cs, win));
    changeset_free(&cs);
}

/* An image whose row filter only the server decides is a row-image
 * document to read from MySQL: the change set then reads (its snapshot is
 * opened), and the image wins or loses like any other. */
static void test_rowdoc_requery(void **state) {
    (void)state;
    struct changeset cs = {0};
    changeset_add_rowdoc(&cs, 0, "1", 1, "{\"v\":1}", 7);
    assert_false(changeset_reads(&cs)); /* images alone read nothing */
    changeset_add_rowdoc_requery(&cs, 0, "1", 1);
    changeset_add_rowdoc_requery(&cs, 0, "2", 1);
    changeset_add_rowdoc(&cs, 0, "2", 1, NULL, 0);
    assert_true(changeset_reads(&cs));
    assert_int_equal(2, cs.nrequery);
    size_t win[8];
    size_t n = changeset_rowdoc_winners(&cs, win);
    assert_int_equal(2, n);
    assert_true(winner(&cs, win, n, "1")->requery); /* the last image of 1 */
    assert_null(winner(&cs, win, n, "1")->body);
    assert_false(winner(&cs, win, n, "2")->requery); /* 2's last is a delete */
    changeset_reset(&cs);
    assert_int_equal(0, cs.nrequery);
    assert_false(changeset_reads(&cs));
    changeset_add_rowdoc(&cs, 0, "3", 1, NULL, 0);
    assert_false(cs.rdocs[0].requery); /* a reused slot starts clean */
    changeset_free(&cs);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_docs_grouped),
        cmocka_unit_test(test_elements_rowdocs_reset),
        cmocka_unit_test(test_rowdoc_winners_coordinates),
        cmocka_unit_test(test_rowdoc_winners_read_order),
        cmocka_unit_test(test_rowdoc_requery),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
