/* Unit tests of the row-image documents (sync/pipeline/row_image.c) of rows
 * whose values a Kafka message could not give with certainty (BL_UNSURE):
 * the real Debezium connector's messages (tests/fixtures/mq/debezium/real/)
 * decoded by src/mq, routed for a row-image index of their table. A row
 * whose mapped columns are all certain is a document taken from the image;
 * one with an unsure mapped column is a document to read from the source
 * (a re-query, when its image wins: row_image_requery), never a document
 * holding a guess; an unsure column the mapping leaves out changes nothing;
 * an unsure key is an error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mq/mq.h"
#include "sync/pipeline/pipeline.h"

static const char *srcdir(void) {
    const char *s = getenv("SEARCHSYNC_SRCDIR");
    return s && *s ? s : ".";
}

static char *slurp(const char *name, size_t *len) {
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/fixtures/mq/debezium/real/%s", srcdir(), name);
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot open %s", path);
    sbuf b = SBUF_INIT;
    sbuf_read_fp(&b, f);
    fclose(f);
    *len = b.len;
    return sbuf_detach(&b);
}

/* the fixtures' table, as the source's information_schema has it */
static const mq_coldef fx_cols[] = {
    {"id", "bigint(20) unsigned", true}, {"y", "year(4)", false}, {"f", "float", false},
    {"dc1", "decimal(20,6)", false}, {"dc3", "decimal(10,0)", false}, {"dc2", "decimal(65,30)", false},
    {"vb", "varbinary(16)", false}, {"t6", "time(6)", false}, {"dt6", "datetime(6)", false},
    {"dt3", "datetime(3)", false}, {"ts6", "timestamp(6)", false}, {"da", "date", false},
    {"biu", "bigint(20) unsigned", false}, {"b64", "bit(64)", false}, {"b1", "bit(1)", false},
    {"j", "json", false}, {"l1", "varchar(8)", false}, {"vc", "varchar(16)", false},
    {"e", "enum('a','b')", false}, {"s", "set('x','y','z')", false},
};
static int lookup(void *ctx, const char *db, const char *table, const mq_coldef **cols, uint32_t *n,
                  char *err, size_t errlen) {
    (void)ctx, (void)err, (void)errlen;
    if (strcmp(db, "fx") || strcmp(table, "t")) return 0;
    *cols = fx_cols;
    *n = sizeof fx_cols / sizeof fx_cols[0];
    return 1;
}

#define ID "{\"name\":\"id\",\"mysql_type\":\"bigint(20) unsigned\",\"type\":\"unsigned_long\",\"key\":true}"

/* a row-image index of fx.t mapping the columns given (JSON, comma-separated) */
static void pipeline_of(struct pipeline *p, struct mapping *m, const char *columns) {
    char json[1024], err[512];
    snprintf(json, sizeof json,
             "{\"version\":1,\"indices\":[{\"alias\":\"ri\",\"tables\":[{\"table\":\"fx.t\","
             "\"mode\":\"row-image\",\"columns\":[%s]}]}]}", columns);
    memset(m, 0, sizeof *m);
    if (mapping_parse("test", json, strlen(json), m, err, sizeof err) != 0) fail_msg("%s", err);
    memset(p, 0, sizeof *p);
    p->m = m;
    bl_valctx_init(&p->v);
}

static void pipeline_done(struct pipeline *p, struct mapping *m) {
    bl_valctx_free(&p->v);
    sbuf_free(&p->val);
    mapping_free(m);
}

/* route fixture's row for the index; rc, and what the change set got */
static int route(const char *fixture, const char *columns, struct changeset *cs, char *err,
                 size_t errlen) {
    struct pipeline p;
    struct mapping m;
    pipeline_of(&p, &m, columns);
    size_t n;
    char *msg = slurp(fixture, &n);
    mq_msg mm;
    mq_msg_init(&mm);
    mq_opts o = {.lookup = lookup};
    if (mq_decode(&mm, &o, msg, n) != MQ_OK) fail_msg("%s: %s", fixture, mm.err);
    assert_int_equal(mm.nrows, 1);
    int rc = row_image_doc(&p, cs, 0, &mm.rows[0]);
    snprintf(err, errlen, "%s", p.err);
    mq_msg_free(&mm);
    free(msg);
    pipeline_done(&p, &m);
    return rc;
}

#define Y ",{\"name\":\"y\",\"mysql_type\":\"year(4)\",\"type\":\"short\"}"
#define DC1 ",{\"name\":\"dc1\",\"mysql_type\":\"decimal(20,6)\",\"type\":\"keyword\"}"
#define DT3 ",{\"name\":\"dt3\",\"mysql_type\":\"datetime(3)\",\"type\":\"date\"}"

/* the snapshot's row 1: YEAR 0000 sent as 2000, unsure */
static void unsure_mapped_column_is_reread(void **state) {
    (void)state;
    struct changeset cs;
    memset(&cs, 0, sizeof cs);
    char err[1024];
    assert_int_equal(route("on-r-1.json", ID Y, &cs, err, sizeof err), 0);
    /* no document from the image: one to read from the source when it wins */
    assert_int_equal(cs.nrdocs, 1);
    assert_int_equal(cs.nrequery, 1);
    assert_true(cs.rdocs[0].requery);
    assert_null(cs.rdocs[0].body);
    assert_int_equal(cs.rdocs[0].index, 0);
    assert_string_equal(cs.rdocs[0].id, "1");
    changeset_free(&cs);
}

/* the same row for a mapping without the unsure columns: from the image */
static void unsure_column_not_mapped(void **state) {
    (void)state;
    struct changeset cs;
    memset(&cs, 0, sizeof cs);
    char err[1024];
    assert_int_equal(route("on-r-1.json", ID DC1 DT3, &cs, err, sizeof err), 0);
    assert_int_equal(cs.npend, 0);
    assert_int_equal(cs.nrdocs, 1);
    assert_string_equal(cs.rdocs[0].id, "1");
    assert_string_equal(cs.rdocs[0].body,
                        "{\"id\":1,\"dc1\":\"-0.561484\",\"dt3\":\"1969-12-31T23:59:59.999\"}");
    changeset_free(&cs);
}

/* streamed, YEAR 0000 came as 1900: certain (0), a document from the image */
static void streamed_year_from_image(void **state) {
    (void)state;
    struct changeset cs;
    memset(&cs, 0, sizeof cs);
    char err[1024];
    assert_int_equal(route("on-u-1.json", ID Y, &cs, err, sizeof err), 0);
    assert_int_equal(cs.npend, 0);
    assert_int_equal(cs.nrdocs, 1);
    assert_string_equal(cs.rdocs[0].body, "{\"id\":1,\"y\":0}");
    changeset_free(&cs);
}

/* without schemas and nothing stated, "9260" reads two ways: re-read */
static void noschema_decimal_reread(void **state) {
    (void)state;
    struct changeset cs;
    memset(&cs, 0, sizeof cs);
    char err[1024];
    assert_int_equal(route("off-c-3.json", ID DC1, &cs, err, sizeof err), 0);
    assert_int_equal(cs.nrdocs, 1);
    assert_true(cs.rdocs[0].requery);
    assert_string_equal(cs.rdocs[0].id, "3");
    changeset_free(&cs);
}

/* a document named by a value that is not certain is no document: an error */
static void unsure_key(void **state) {
    (void)state;
    struct changeset cs;
    memset(&cs, 0, sizeof cs);
    char err[1024];
    assert_int_equal(route("on-r-1.json",
                           "{\"name\":\"y\",\"mysql_type\":\"year(4)\",\"type\":\"short\",\"key\":true}"
                           DC1, &cs, err, sizeof err), -1);
    assert_non_null(strstr(err, "fx.t: the value of key column y could not be decoded with certainty"));
    assert_int_equal(cs.nrdocs + cs.npend, 0);
    changeset_free(&cs);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unsure_mapped_column_is_reread),
        cmocka_unit_test(unsure_column_not_mapped),
        cmocka_unit_test(streamed_year_from_image),
        cmocka_unit_test(noschema_decimal_reread),
        cmocka_unit_test(unsure_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
