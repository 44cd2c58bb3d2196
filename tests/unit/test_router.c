/* Unit tests of the change router (sync/pipeline/router.c) on the demo shop's mapping
 * (sql/demo/mapping.json): the join paths it derives, and the documents a row
 * change reaches when no query is needed; a parent's where and the
 * children routed under it. The paths that need the source are
 * exercised against MariaDB by the sync integration tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sync/mapping/mapping.h"
#include "sync/mapping/row_filter.h"
#include "sync/pipeline/router.h"
#include "sbuf.h"
#include "strset.h"

/* the change set's routing state (struct changeset.seeds) */
static struct route_seeds sd;

static struct mapping M;

static int load(void **state) {
    (void)state;
    const char *dir = getenv("SEARCHSYNC_SRCDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/sql/demo/mapping.json", dir ? dir : ".");
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    sbuf t = SBUF_INIT;
    sbuf_read_fp(&t, f);
    fclose(f);
    char err[512];
    int rc = mapping_parse(path, t.data, t.len, &M, err, sizeof err);
    sbuf_free(&t);
    if (rc) fprintf(stderr, "%s\n", err);
    return rc;
}
static int unload(void **state) {
    (void)state;
    mapping_free(&M);
    return 0;
}

/* a row image: "col=value" pairs; value "\\N" is NULL; missing = absent */
struct img {
    const char *kv[8];
};
static const char *get(void *image, const char *column, size_t *len, bool *absent) {
    struct img *im = image;
    size_t cl = strlen(column);
    for (int i = 0; i < 8 && im->kv[i]; i++)
        if (!strncmp(im->kv[i], column, cl) && im->kv[i][cl] == '=') {
            const char *v = im->kv[i] + cl + 1;
            *absent = false;
            if (!strcmp(v, "\\N")) return NULL;
            *len = strlen(v);
            return v;
        }
    *absent = true;
    return NULL;
}

struct got {
    sbuf s;
};
static int emit(void *ctx, size_t index, size_t table, const char *key, size_t len) {
    struct got *g = ctx;
    sbuf_printf(&g->s, "%s/%s.%s/%.*s\n", M.indices[index].alias, M.indices[index].tables[table].db,
                M.indices[index].tables[table].table, (int)len, key);
    return 0;
}

/* emitted lines sorted, so the test does not depend on hash order */
static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }
static void expect(struct got *g, const char *want) {
    char *lines[64];
    int n = 0;
    for (char *p = strtok(g->s.data ? g->s.data : (char[1]){0}, "\n"); p && n < 64;
         p = strtok(NULL, "\n"))
        lines[n++] = p;
    qsort(lines, (size_t)n, sizeof *lines, cmp);
    sbuf s = SBUF_INIT;
    for (int i = 0; i < n; i++) sbuf_printf(&s, "%s\n", lines[i]);
    assert_string_equal(s.data ? s.data : "", want);
    sbuf_free(&s);
    sbuf_reset(&g->s);
}

static void test_paths(void **state) {
    (void)state;
    struct router *r = router_new(&M);
    sbuf d = SBUF_INIT;
    router_describe(r, &d);
    /* a barcode reaches its product through the sku row */
    assert_non_null(strstr(d.data, "shop.sku_barcodes.sku_id = shop.skus.id -> product_id = "
                                   "shop.products.id => products shop.products\n"));
    /* a tag reaches its products through the relation table */
    assert_non_null(strstr(d.data, "shop.tags.id = shop.product_tags.tag_id -> product_id = "
                                   "shop.products.id => products shop.products\n"));
    /* a sku's product id is the document key: no query */
    assert_non_null(strstr(d.data, "shop.skus.product_id = shop.products.id => products "
                                   "shop.products\n"));
    /* reviews and replies are documents of their own */
    assert_non_null(strstr(d.data, "shop.reviews.id => products shop.reviews\n"));
    assert_non_null(strstr(d.data, "shop.review_replies.id => products shop.review_replies\n"));
    /* a review's replies, and a product's reviews and replies, follow their
     * parent (routing) */
    assert_non_null(strstr(d.data, "shop.reviews.id = shop.review_replies.review_id -> id => "
                                   "products shop.review_replies\n"));
    assert_non_null(strstr(d.data, "shop.products.id = shop.reviews.product_id -> id = "
                                   "shop.review_replies.review_id -> id => products "
                                   "shop.review_replies\n"));
    assert_non_null(strstr(d.data, "shop.products.id = shop.reviews.product_id -> id => products "
                                   "shop.reviews\n"));
    assert_true(router_wants(r, "shop", "skus"));
    assert_true(router_wants(r, "shop", "categories"));
    assert_true(router_delayed(r, "shop", "categories"));
    assert_false(router_delayed(r, "shop", "skus"));
    assert_false(router_wants(r, "shop", "orders"));
    sbuf_free(&d);
    route_seeds_free(&sd);
    router_free(r);
}

static void test_route_without_queries(void **state) {
    (void)state;
    struct router *r = router_new(&M);
    struct got g = {SBUF_INIT};
    char err[512];
    /* a product update: its own document */
    struct img p1 = {{"id=7", "name=x"}}, p2 = {{"id=7", "name=y"}};
    assert_int_equal(router_add(r, &sd, "shop", "products", get, &p1, &p2, err, sizeof err), 0);
    /* a sku moved from product 7 to product 9: both documents */
    struct img s1 = {{"id=100", "product_id=7"}}, s2 = {{"id=100", "product_id=9"}};
    assert_int_equal(router_add(r, &sd, "shop", "skus", get, &s1, &s2, err, sizeof err), 0);
    /* a review updated in place: its own child document (its replies keep
     * their routing, so they are not looked up) */
    struct img rv = {{"id=55", "product_id=9", "title=a"}}, rv2 = {{"id=55", "product_id=9", "title=b"}};
    assert_int_equal(router_add(r, &sd, "shop", "reviews", get, &rv, &rv2, err, sizeof err), 0);
    /* a sku with a NULL product reaches nothing; a category change is delayed */
    struct img s3 = {{"id=101", "product_id=\\N"}};
    assert_int_equal(router_add(r, &sd, "shop", "skus", get, &s3, NULL, err, sizeof err), 0);
    struct img c = {{"id=3", "name=z"}};
    assert_int_equal(router_add(r, &sd, "shop", "categories", get, &c, &c, err, sizeof err), 0);
    assert_int_equal(router_flush(r, &sd, NULL, emit, &g, err, sizeof err), 0);
    expect(&g, "products/shop.products/7\nproducts/shop.products/9\nproducts/shop.reviews/55\n");
    assert_int_equal(router_queries(r), 0);
    /* the seeds are gone after a flush */
    assert_int_equal(router_flush(r, &sd, NULL, emit, &g, err, sizeof err), 0);
    expect(&g, "");
    sbuf_free(&g.s);
    route_seeds_free(&sd);
    router_free(r);
}

static void test_absent_column(void **state) {
    (void)state;
    struct router *r = router_new(&M);
    char err[512];
    /* a MINIMAL image holds the key only: the sku's product cannot be known */
    struct img s1 = {{"id=100"}};
    assert_int_equal(router_add(r, &sd, "shop", "skus", get, &s1, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "shop.skus: column product_id is not in the row image"));
    assert_non_null(strstr(err, "binlog_row_image=FULL"));
    route_seeds_free(&sd);
    router_free(r);
}

static int emit_area(void *ctx, size_t index, const struct mp_relation *rel, const char *doc,
                     const char *elem) {
    struct got *g = ctx;
    sbuf_printf(&g->s, "%s/%s.%s/%s/%s\n", M.indices[index].alias, rel->db, rel->table, doc, elem);
    return 0;
}

/* The demo's products hold attrs (JSON) and weight (FLOAT): element
 * scripts would rewrite them in the engine's form, so its skus, though
 * area_update, rebuild whole documents. */
static void test_area_whole_with_json(void **state) {
    (void)state;
    const char *type = NULL;
    assert_string_equal(mp_index_rewritten_column(&M.indices[0], &type), "weight");
    assert_string_equal(type, "float");
    struct router *r = router_new(&M);
    router_set_area(r, emit_area);
    struct got g = {SBUF_INIT};
    char err[512];
    struct img s1 = {{"id=100", "product_id=7"}}, s2 = {{"id=100", "product_id=9"}};
    assert_int_equal(router_add(r, &sd, "shop", "skus", get, &s1, &s2, err, sizeof err), 0);
    assert_int_equal(router_flush(r, &sd, NULL, emit, &g, err, sizeof err), 0);
    expect(&g, "products/shop.products/7\nproducts/shop.products/9\n");
    sbuf_free(&g.s);
    route_seeds_free(&sd);
    router_free(r);
}

/* the demo's products without their JSON and FLOAT columns' types: for the
 * element tests below */
static char *saved_types[64];
static void hide_rewritten(bool hide) {
    struct mp_table *t = &M.indices[0].tables[0];
    for (size_t i = 0; i < t->ncolumns && i < 64; i++) {
        if (hide) {
            saved_types[i] = t->columns[i].mysql_type;
            if (saved_types[i] && (!strcmp(saved_types[i], "json") || !strcmp(saved_types[i], "float")))
                t->columns[i].mysql_type = "varchar(10)";
        } else {
            t->columns[i].mysql_type = saved_types[i];
        }
    }
}

/* skus are area_update in the demo mapping: a sku's own row reports the
 * element under its old and new product, from the images alone */
static void test_area_elements(void **state) {
    (void)state;
    hide_rewritten(true);
    assert_null(mp_index_rewritten_column(&M.indices[0], NULL));
    struct router *r = router_new(&M);
    hide_rewritten(false);
    router_set_area(r, emit_area);
    struct got g = {SBUF_INIT};
    char err[512];
    struct img s1 = {{"id=100", "product_id=7"}}, s2 = {{"id=100", "product_id=9"}};
    assert_false(router_pending(r, &sd));
    assert_int_equal(router_add(r, &sd, "shop", "skus", get, &s1, &s2, err, sizeof err), 0);
    /* the elements are read at commit: the daemon must open its snapshot */
    assert_true(router_pending(r, &sd));
    struct img s3 = {{"id=101", "product_id=7"}};
    assert_int_equal(router_add(r, &sd, "shop", "skus", get, NULL, &s3, err, sizeof err), 0);
    struct img s4 = {{"id=102", "product_id=\\N"}}; /* no product: no element */
    assert_int_equal(router_add(r, &sd, "shop", "skus", get, &s4, NULL, err, sizeof err), 0);
    struct img p1 = {{"id=7", "name=x"}};
    assert_int_equal(router_add(r, &sd, "shop", "products", get, &p1, &p1, err, sizeof err), 0);
    assert_int_equal(router_flush(r, &sd, NULL, emit, &g, err, sizeof err), 0);
    expect(&g, "products/shop.products/7\n"
               "products/shop.skus/7/100\n"
               "products/shop.skus/7/101\n"
               "products/shop.skus/9/100\n");
    assert_false(router_pending(r, &sd));
    assert_int_equal(router_queries(r), 0);
    /* the element's key must be in the image */
    struct img s5 = {{"product_id=7"}};
    assert_int_equal(router_add(r, &sd, "shop", "skus", get, NULL, &s5, err, sizeof err), -1);
    assert_non_null(strstr(err, "column id is not in the row image"));
    sbuf_free(&g.s);
    route_seeds_free(&sd);
    router_free(r);
}

/* refresh_parent false: a change of that relation's own rows reaches no
 * document (and its table is not read at all when nothing else uses it);
 * a relation with the default still refreshes, and a relation nested below
 * the quiet one still leads up through it. */
static const char RP_MAPPING[] =
    "{\"indices\":[{\"alias\":\"rp\",\"tables\":[{\"table\":\"d.docs\",\"columns\":["
    "{\"name\":\"id\",\"mysql_type\":\"int(11)\",\"key\":true}],\"relations\":["
    "{\"column\":\"id\",\"table\":\"d.notes\",\"join_column\":\"doc_id\",\"extend_name\":\"notes\","
    "\"nested\":true,\"refresh_parent\":false,\"columns\":[{\"name\":\"id\",\"mysql_type\":\"int(11)\","
    "\"key\":true},{\"name\":\"doc_id\",\"mysql_type\":\"int(11)\"}],\"relations\":["
    "{\"column\":\"id\",\"table\":\"d.note_links\",\"join_column\":\"note_id\",\"extend_name\":"
    "\"links\",\"nested\":true,\"columns\":[{\"name\":\"id\",\"mysql_type\":\"int(11)\"}]}]},"
    "{\"column\":\"id\",\"table\":\"d.items\",\"join_column\":\"doc_id\",\"extend_name\":\"items\","
    "\"nested\":true,\"columns\":[{\"name\":\"id\",\"mysql_type\":\"int(11)\",\"key\":true},"
    "{\"name\":\"doc_id\",\"mysql_type\":\"int(11)\"}]}]}]}]}";

static struct mapping RP;
static int emit_rp(void *ctx, size_t index, size_t table, const char *key, size_t len) {
    struct got *g = ctx;
    sbuf_printf(&g->s, "%s/%s.%s/%.*s\n", RP.indices[index].alias,
                RP.indices[index].tables[table].db, RP.indices[index].tables[table].table, (int)len,
                key);
    return 0;
}

static void test_refresh_parent_false(void **state) {
    (void)state;
    char err[512];
    if (mapping_parse("rp.json", RP_MAPPING, strlen(RP_MAPPING), &RP, err, sizeof err) < 0)
        fail_msg("%s", err);
    assert_false(RP.indices[0].tables[0].relations[0].refresh_parent);
    assert_true(RP.indices[0].tables[0].relations[1].refresh_parent);
    struct router *r = router_new(&RP);
    sbuf d = SBUF_INIT;
    router_describe(r, &d);
    assert_null(strstr(d.data, "d.notes.doc_id"));
    assert_non_null(strstr(d.data, "d.items.doc_id = d.docs.id => rp d.docs\n"));
    assert_non_null(strstr(d.data, "d.note_links.note_id = d.notes.id -> doc_id = d.docs.id => rp "
                                   "d.docs\n"));
    assert_false(router_wants(r, "d", "notes"));
    assert_true(router_wants(r, "d", "items"));
    assert_true(router_wants(r, "d", "note_links"));
    struct got g = {SBUF_INIT};
    /* a note inserted, moved, deleted: no document */
    struct img n1 = {{"id=1", "doc_id=7"}}, n2 = {{"id=1", "doc_id=9"}};
    assert_int_equal(router_add(r, &sd, "d", "notes", get, NULL, &n1, err, sizeof err), 0);
    assert_int_equal(router_add(r, &sd, "d", "notes", get, &n1, &n2, err, sizeof err), 0);
    assert_int_equal(router_add(r, &sd, "d", "notes", get, &n2, NULL, err, sizeof err), 0);
    assert_false(router_pending(r, &sd));
    assert_int_equal(router_flush(r, &sd, NULL, emit_rp, &g, err, sizeof err), 0);
    expect(&g, "");
    /* an item moved: both documents */
    struct img i1 = {{"id=5", "doc_id=7"}}, i2 = {{"id=5", "doc_id=8"}};
    assert_int_equal(router_add(r, &sd, "d", "items", get, &i1, &i2, err, sizeof err), 0);
    assert_int_equal(router_flush(r, &sd, NULL, emit_rp, &g, err, sizeof err), 0);
    expect(&g, "rp/d.docs/7\nrp/d.docs/8\n");
    assert_int_equal(router_queries(r), 0);
    sbuf_free(&d);
    sbuf_free(&g.s);
    route_seeds_free(&sd);
    router_free(r);
    mapping_free(&RP);
}

static size_t seeded(const struct route_seeds *s) {
    size_t n = 0;
    for (size_t i = 0; i < s->nnodes; i++) n += s->nodes[i].n;
    return n;
}

/* The products of the demo with a where: a product's reviews and replies
 * (child documents, routed under it) are looked up again when an update
 * may move it in or out (a column its where reads changed), not when it
 * changes otherwise; with a where whose columns are not known, at every
 * update. */
static void test_filtered_parent(void **state) {
    (void)state;
    struct mp_table *p = &M.indices[0].tables[0];
    char why[256], err[512];
    p->where = xstrdup("status <> 'draft'");
    p->filter = row_filter_parse(p->where, why, sizeof why);
    assert_non_null(p->filter);
    struct router *r = router_new(&M);
    struct img a = {{"id=7", "name=x", "status=draft"}}, b = {{"id=7", "name=y", "status=draft"}},
               c = {{"id=7", "name=y", "status=active"}};
    assert_int_equal(router_add(r, &sd, "shop", "products", get, &a, &b, err, sizeof err), 0);
    assert_int_equal(1, seeded(&sd)); /* its own document only */
    route_seeds_clear(&sd);
    assert_int_equal(router_add(r, &sd, "shop", "products", get, &b, &c, err, sizeof err), 0);
    assert_int_equal(3, seeded(&sd)); /* ... and its reviews and their replies */
    route_seeds_clear(&sd);
    router_free(r);
    row_filter_free(p->filter);
    p->filter = NULL; /* a where outside what the row filter reads */
    r = router_new(&M);
    assert_int_equal(router_add(r, &sd, "shop", "products", get, &a, &b, err, sizeof err), 0);
    assert_int_equal(3, seeded(&sd));
    route_seeds_free(&sd);
    router_free(r);
    free(p->where);
    p->where = NULL;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_route_without_queries),
        cmocka_unit_test(test_absent_column),
        cmocka_unit_test(test_area_whole_with_json),
        cmocka_unit_test(test_area_elements),
        cmocka_unit_test(test_refresh_parent_false),
        cmocka_unit_test(test_filtered_parent),
    };
    return cmocka_run_group_tests(tests, load, unload);
}
