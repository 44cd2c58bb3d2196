/* Unit tests of the mapping model (sync/mapping/mapping.c, sync/mapping/index_mapping.c):
 * parsing and its errors (file + JSON path), MySQL -> engine type defaults
 * and compatibility, validation against a schema (unknown tables/columns,
 * type mismatches, cycles, keys, parent/child, a relation's override of its column),
 * the canonical file round trip, and the generated index bodies of the demo
 * mapping checked against golden files per dialect
 * (tests/fixtures/mapping/<alias>.<dialect>.json; regenerate with
 * SEARCHSYNC_UPDATE_GOLDEN=1). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbuf.h"
#include "sync/mapping/index_mapping.h"
#include "sync/mapping/mapping.h"
#include "sync/mapping/row_filter.h"

static const char *srcdir(void) {
    const char *s = getenv("SEARCHSYNC_SRCDIR");
    return s && *s ? s : ".";
}

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    sbuf b = SBUF_INIT;
    sbuf_read_fp(&b, f);
    fclose(f);
    if (!b.data) sbuf_grow(&b, 1);
    if (len) *len = b.len;
    return sbuf_detach(&b);
}

static void load_demo(struct mapping *m) {
    char path[4096], err[1024];
    snprintf(path, sizeof path, "%s/sql/demo/mapping.json", srcdir());
    size_t len;
    char *text = slurp(path, &len);
    if (!text) fail_msg("cannot read %s", path);
    if (mapping_parse("mapping.json", text, len, m, err, sizeof err) < 0) fail_msg("%s", err);
    free(text);
}

/* ---------------------------------------------------------------- types */

static void test_type_defaults(void **state) {
    (void)state;
    static const char *const cases[][2] = {
        {"bigint(20)", "long"}, {"bigint(20) unsigned", "long"}, {"int(11)", "integer"},
        {"int(10) unsigned", "long"}, {"smallint(6)", "short"}, {"tinyint(4)", "byte"},
        {"tinyint(1)", "byte"}, {"tinyint(3) unsigned", "short"}, {"mediumint(9)", "integer"},
        {"decimal(12,2)", "scaled_float"}, {"decimal(30,10)", "keyword"},
        {"float", "float"}, {"double", "double"}, {"datetime(3)", "date"},
        {"timestamp(6)", "date"}, {"date", "date"}, {"time", "keyword"}, {"year(4)", "short"},
        {"varchar(255)", "text"}, {"text", "text"}, {"char(2)", "keyword"},
        {"enum('a','b')", "keyword"}, {"set('x','y')", "keyword"}, {"json", "object"},
        {"bit(1)", "long"}, {"bit(64)", "unsigned_long"}, {"blob", "binary"},
        {"varbinary(16)", "binary"}, {"geometry", "geo_shape"}, {"point", "geo_shape"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = mapping_default_type(cases[i][0]);
        if (strcmp(got, cases[i][1]))
            fail_msg("%s: default %s, want %s", cases[i][0], got, cases[i][1]);
        char why[256];
        if (mapping_type_compatible(cases[i][0], got, why, sizeof why) < 0)
            fail_msg("%s: default %s not compatible: %s", cases[i][0], got, why);
        /* integer columns: those SQL orders as numbers (keyset pages, ranges) */
        bool want_int = !strncmp(cases[i][0], "bigint", 6) || !strncmp(cases[i][0], "int", 3) ||
                        strstr(cases[i][0], "mediumint") || strstr(cases[i][0], "smallint") ||
                        !strncmp(cases[i][0], "tinyint", 7);
        if (mapping_is_integer_type(cases[i][0]) != want_int)
            fail_msg("%s: integer type %d, want %d", cases[i][0], !want_int, want_int);
    }
    assert_false(mapping_is_integer_type(""));
    assert_false(mapping_is_integer_type(NULL));
    assert_true(mapping_is_unsigned_bigint("bigint(20) unsigned"));
    assert_true(mapping_is_unsigned_bigint("bigint unsigned zerofill"));
    assert_false(mapping_is_unsigned_bigint("bigint(20)"));
    assert_false(mapping_is_unsigned_bigint("int(10) unsigned"));
    assert_false(mapping_is_unsigned_bigint(NULL));
}

static void test_type_compat(void **state) {
    (void)state;
    char why[256];
    /* never lose precision silently */
    assert_int_equal(-1, mapping_type_compatible("bigint(20)", "double", why, sizeof why));
    assert_non_null(strstr(why, "round"));
    assert_int_equal(-1, mapping_type_compatible("bigint(20)", "integer", why, sizeof why));
    assert_int_equal(-1, mapping_type_compatible("int(10) unsigned", "integer", why, sizeof why));
    assert_int_equal(-1, mapping_type_compatible("decimal(20,4)", "scaled_float", why, sizeof why));
    assert_int_equal(-1, mapping_type_compatible("double", "float", why, sizeof why));
    assert_int_equal(0, mapping_type_compatible("decimal(20,4)", "keyword", why, sizeof why));
    assert_int_equal(0, mapping_type_compatible("bigint(20) unsigned", "unsigned_long", why, sizeof why));
    assert_int_equal(0, mapping_type_compatible("int(11)", "double", why, sizeof why));
    /* booleans only where 0/1 fits */
    assert_int_equal(0, mapping_type_compatible("tinyint(1)", "boolean", why, sizeof why));
    assert_int_equal(0, mapping_type_compatible("bit(1)", "boolean", why, sizeof why));
    assert_int_equal(-1, mapping_type_compatible("int(11)", "boolean", why, sizeof why));
    /* categories that do not mix */
    assert_int_equal(-1, mapping_type_compatible("varchar(10)", "long", why, sizeof why));
    assert_non_null(strstr(why, "cannot hold"));
    assert_int_equal(-1, mapping_type_compatible("datetime", "long", why, sizeof why));
    assert_int_equal(0, mapping_type_compatible("json", "keyword", why, sizeof why));
    assert_int_equal(-1, mapping_type_compatible("blob", "text", why, sizeof why));
    assert_int_equal(0, mapping_type_compatible("point", "geo_point", why, sizeof why));
    assert_int_equal(-1, mapping_type_compatible("polygon", "geo_point", why, sizeof why));
    assert_int_equal(-1, mapping_type_compatible("int(11)", "lon", why, sizeof why));
    assert_non_null(strstr(why, "unknown engine type 'lon'"));
    assert_int_equal(2, mapping_decimal_scale("decimal(12,2)"));
    assert_int_equal(-1, mapping_decimal_scale("int(11)"));
}

/* ---------------------------------------------------------------- parsing */

static void parse_fails(const char *text, const char *want) {
    struct mapping m;
    char err[1024];
    if (mapping_parse("f.json", text, strlen(text), &m, err, sizeof err) == 0) {
        mapping_free(&m);
        fail_msg("parsed, expected error %s", want);
    }
    if (!strstr(err, want)) fail_msg("error \"%s\" does not contain \"%s\"", err, want);
}

static void test_parse_errors(void **state) {
    (void)state;
    parse_fails("{", "f.json: $: not valid JSON");
    parse_fails("[]", "must hold a JSON object");
    parse_fails("{\"indices\":[{\"alias\":\"a\"}]}", "$.indices[0]: \"tables\" must be a non-empty");
    parse_fails("{\"indices\":[{\"alias\":\"a\",\"tables\":[{\"table\":\"nodot\"}]}]}",
                "$.indices[0].tables[0]: \"table\" must be \"database.table\"");
    parse_fails("{\"indices\":[{\"alias\":\"a\",\"tables\":[{\"table\":\"d.t\",\"columns\":[{\"nam\":1}]}]}]}",
                "$.indices[0].tables[0].columns[0]: unknown key \"nam\"");
    parse_fails("{\"indices\":[{\"alias\":\"a\",\"shards\":1.5,\"tables\":[{\"table\":\"d.t\"}]}]}",
                "\"shards\" must be an integer");
    parse_fails("{\"indices\":[{\"alias\":\"a\",\"shards\":99999999999999999999,\"tables\":[{\"table\":\"d.t\"}]}]}",
                "\"shards\" must be an integer");
    parse_fails("{\"indices\":[{\"alias\":\"a\",\"tables\":[{\"table\":\"d.t\",\"mode\":\"x\"}]}]}",
                "\"mode\" must be");
    parse_fails("{\"indices\":[{\"alias\":\"a\",\"tables\":[{\"table\":\"d.t\",\"relations\":"
                "[{\"column\":\"c\",\"table\":\"d.u\",\"join_column\":\"id\",\"columns\":[]}]}]}]}",
                "$.indices[0].tables[0].relations[0]: \"columns\": a relation loads");
    parse_fails("{\"version\":2,\"indices\":[]}", "\"version\"");
}

static void test_roundtrip(void **state) {
    (void)state;
    char path[4096];
    snprintf(path, sizeof path, "%s/sql/demo/mapping.json", srcdir());
    char *text = slurp(path, NULL);
    assert_non_null(text);
    struct mapping m;
    load_demo(&m);
    assert_int_equal(2, m.nindices);
    assert_int_equal(4, m.indices[0].ntables);
    sbuf out = SBUF_INIT;
    mapping_write(&m, &out);
    assert_string_equal(text, out.data); /* the shipped file is canonical */
    /* parse what we wrote: the same again */
    struct mapping m2;
    char err[512];
    assert_int_equal(0, mapping_parse("out", out.data, out.len, &m2, err, sizeof err));
    sbuf out2 = SBUF_INIT;
    mapping_write(&m2, &out2);
    assert_string_equal(out.data, out2.data);
    /* a relation overrides the column's extend name / nested flag */
    const struct mp_table *p = &m.indices[0].tables[0];
    assert_string_equal("brand", mp_relation_name(&p->relations[0], p->columns, p->ncolumns));
    assert_false(mp_relation_nested(&p->relations[0], p->columns, p->ncolumns));
    assert_true(mp_relation_nested(&p->relations[2], p->columns, p->ncolumns));
    sbuf errs = SBUF_INIT;
    assert_int_equal(0, mapping_validate(&m, NULL, &errs));
    sbuf_free(&errs);
    mapping_free(&m);
    mapping_free(&m2);
    mapping_free(NULL);
    sbuf_free(&out);
    sbuf_free(&out2);
    free(text);
}

/* ---------------------------------------------------------------- validation */

static void schema_demo(struct mp_schema *s) {
    memset(s, 0, sizeof *s);
    mp_schema_add(s, "d", "p", "id", "bigint(20)", true);
    mp_schema_add(s, "d", "p", "name", "varchar(10)", false);
    mp_schema_add(s, "d", "p", "cat", "int(11)", false);
    mp_schema_add(s, "d", "c", "id", "int(11)", true);
    mp_schema_add(s, "d", "c", "pid", "bigint(20)", false);
    s->cols[s->n - 1].leads_index = true; /* KEY (pid) */
    mp_schema_add(s, "d", "c", "label", "varchar(10)", false);
    for (size_t i = s->n - 3; i < s->n; i++) s->cols[i].clustered = true; /* InnoDB */
    mp_schema_add(s, "d", "r", "id", "bigint(20)", true);
    mp_schema_add(s, "d", "r", "p_id", "bigint(20)", false);
    mp_schema_add(s, "d", "n", "a", "int(11)", false); /* no primary key */
    mp_schema_add(s, "d", "pc", "p_id", "bigint(20)", true); /* a link table p <-> c */
    mp_schema_add(s, "d", "pc", "c_id", "int(11)", true);
    mp_schema_add(s, "d", "ck", "a", "varchar(10)", true); /* a composite primary key */
    mp_schema_add(s, "d", "ck", "b", "int(11)", true);
    mp_schema_add(s, "d", "ck", "u", "varchar(40)", false); /* ... and a unique column */
    s->cols[s->n - 1].unique = true;
    mp_schema_add(s, "d", "ck2", "a", "varchar(10)", true); /* composite, nothing unique */
    mp_schema_add(s, "d", "ck2", "b", "int(11)", true);
    mp_schema_add(s, "d", "ck2", "v", "int(11)", false);
    mp_schema_add(s, "d", "j", "id", "int(11)", true); /* a JSON column */
    mp_schema_add(s, "d", "j", "attrs", "json", false);
}

/* Validate text against the small schema; every wanted fragment must be in the errors. */
static void validate_expect(const char *text, int nerr, const char *want) {
    struct mapping m;
    char err[1024];
    if (mapping_parse("v.json", text, strlen(text), &m, err, sizeof err) < 0) fail_msg("%s", err);
    struct mp_schema s;
    schema_demo(&s);
    sbuf errs = SBUF_INIT;
    int n = mapping_validate(&m, &s, &errs);
    if (n != nerr || (want && (!errs.data || !strstr(errs.data, want))))
        fail_msg("%d errors (want %d, containing \"%s\"):\n%s", n, nerr, want ? want : "",
                 errs.data ? errs.data : "");
    sbuf_free(&errs);
    mp_schema_free(&s);
    mapping_free(&m);
}

/* Parse and validate text against the small schema into m (freed by the
 * caller); any problem fails the test. */
static void validate_ok(const char *text, struct mapping *m) {
    char err[1024];
    if (mapping_parse("v.json", text, strlen(text), m, err, sizeof err) < 0) fail_msg("%s", err);
    struct mp_schema s;
    schema_demo(&s);
    sbuf errs = SBUF_INIT;
    if (mapping_validate(m, &s, &errs) != 0) fail_msg("%s", errs.data);
    sbuf_free(&errs);
    mp_schema_free(&s);
}

#define IX(tables) "{\"indices\":[{\"alias\":\"p\",\"tables\":[" tables "]}]}"
#define ROOT "{\"table\":\"d.p\",\"columns\":[{\"name\":\"id\",\"key\":true},\"name\",\"cat\"]"

/* validation notes each relation's primary key from the schema (the
 * document builder orders related rows by it) */
static void test_validation_primary_key(void **state) {
    (void)state;
    const char *text = IX("{\"table\":\"d.p\",\"columns\":[{\"name\":\"id\",\"key\":true},"
                          "{\"name\":\"cat\",\"extend_name\":\"category\"},{\"name\":\"name\",\"extend_name\":\"kids\"}],"
                          "\"relations\":[{\"column\":\"cat\",\"table\":\"d.c\",\"join_column\":\"id\",\"columns\":[\"label\"]},"
                          "{\"column\":\"id\",\"extend_name\":\"kids\",\"nested\":true,\"table\":\"d.c\",\"join_column\":\"pid\",\"columns\":[\"label\",\"id\"]}]}");
    struct mapping m;
    char err[1024];
    if (mapping_parse("v.json", text, strlen(text), &m, err, sizeof err) < 0) fail_msg("%s", err);
    const struct mp_table *t = &m.indices[0].tables[0];
    assert_int_equal(0, t->relations[0].nprimary); /* not validated yet: not known */
    struct mp_schema s;
    schema_demo(&s);
    sbuf errs = SBUF_INIT;
    if (mapping_validate(&m, &s, &errs) != 0) fail_msg("%s", errs.data);
    assert_int_equal(1, t->relations[0].nprimary);
    assert_true(t->relations[0].join_primary);
    assert_int_equal(1, t->relations[1].nprimary);
    assert_false(t->relations[1].join_primary);
    assert_false(t->relations[1].columns[0].primary);
    assert_true(t->relations[1].columns[1].primary);
    /* and the join column's type class: both join integer columns */
    assert_int_equal(MP_JOIN_INTEGER, t->relations[0].join_kind);
    assert_int_equal(MP_JOIN_INTEGER, t->relations[1].join_kind);
    /* pid leads an index of an InnoDB table: its entries hold c's key */
    assert_true(t->relations[1].join_indexed);
    assert_false(t->relations[0].join_indexed); /* the primary key itself */
    sbuf_free(&errs);
    mapping_free(&m);
    /* the same index on a table that is not InnoDB: its entries hold no key */
    if (mapping_parse("v.json", text, strlen(text), &m, err, sizeof err) < 0) fail_msg("%s", err);
    for (size_t i = 0; i < s.n; i++)
        if (!strcmp(s.cols[i].table, "c")) s.cols[i].clustered = false;
    if (mapping_validate(&m, &s, &errs) != 0) fail_msg("%s", errs.data);
    assert_false(m.indices[0].tables[0].relations[1].join_indexed);
    sbuf_free(&errs);
    mapping_free(&m);
    /* a VARCHAR join column: its lookups must be quoted strings */
    text = IX("{\"table\":\"d.p\",\"columns\":[{\"name\":\"id\",\"key\":true},\"name\"],"
              "\"relations\":[{\"column\":\"id\",\"extend_name\":\"labels\",\"table\":\"d.c\","
              "\"join_column\":\"label\",\"columns\":[\"id\"]}]}");
    if (mapping_parse("v.json", text, strlen(text), &m, err, sizeof err) < 0) fail_msg("%s", err);
    t = &m.indices[0].tables[0];
    assert_int_equal(MP_JOIN_UNKNOWN, t->relations[0].join_kind); /* not validated yet */
    if (mapping_validate(&m, &s, &errs) != 0) fail_msg("%s", errs.data);
    assert_int_equal(MP_JOIN_OTHER, t->relations[0].join_kind);
    sbuf_free(&errs);
    mp_schema_free(&s);
    mapping_free(&m);
}

/* a document's id is one column: two keys (marked, or a composite primary
 * key taken) are refused with what to do; a composite primary key with a
 * column unique on its own takes that column */
static void test_validation_composite_key(void **state) {
    (void)state;
    validate_expect(IX("{\"table\":\"d.ck2\"}"), 1,
                    "root table with 2 key columns (a, b; marked, or the source's primary key)");
    validate_expect(IX("{\"table\":\"d.ck2\"}"), 1, "(CONCAT_WS(':', `a`, `b`)) STORED");
    validate_expect(IX("{\"table\":\"d.p\",\"columns\":[{\"name\":\"id\",\"key\":true},"
                       "{\"name\":\"cat\",\"key\":true}]}"),
                    1, "root table with 2 key columns (id, cat");
    struct mapping m;
    validate_ok(IX("{\"table\":\"d.ck\"}"), &m);
    const struct mp_column *k = mp_table_key(&m.indices[0].tables[0]);
    assert_non_null(k);
    assert_string_equal("u", k->name);
    size_t nkeys = 0;
    for (size_t c = 0; c < m.indices[0].tables[0].ncolumns; c++)
        nkeys += m.indices[0].tables[0].columns[c].is_key;
    assert_int_equal(1, nkeys);
    mapping_free(&m);
}

/* a JSON column without a "type" is an object kept in _source only, unless
 * the file says "index" */
static void test_validation_json_stored(void **state) {
    (void)state;
    const char *texts[] = {IX("{\"table\":\"d.j\",\"columns\":[\"id\",\"attrs\"]}"),
                           IX("{\"table\":\"d.j\",\"columns\":[\"id\",{\"name\":\"attrs\","
                              "\"index\":true}]}"),
                           IX("{\"table\":\"d.j\",\"columns\":[\"id\",{\"name\":\"attrs\","
                              "\"type\":\"object\"}]}")};
    const bool want[] = {false, true, true};
    for (size_t i = 0; i < 3; i++) {
        struct mapping m;
        validate_ok(texts[i], &m);
        const struct mp_column *c = &m.indices[0].tables[0].columns[1];
        assert_string_equal("object", c->type);
        if (c->indexed != want[i]) fail_msg("case %zu: indexed %d, want %d", i, c->indexed, want[i]);
        mapping_free(&m);
    }
}

static void test_type_widens(void **state) {
    (void)state;
    assert_true(mapping_type_widens("int(11)", "bigint(20)", "long"));
    assert_false(mapping_type_widens("int(11)", "bigint(20)", "integer"));
    assert_false(mapping_type_widens("bigint(20)", "int(11)", "long"));
    assert_true(mapping_type_widens("int(10) unsigned", "bigint(20)", "long"));
    assert_false(mapping_type_widens("int(10) unsigned", "int(11)", "long"));
    assert_true(mapping_type_widens("varchar(60)", "varchar(80)", "text"));
    assert_true(mapping_type_widens("varchar(60)", "text", "keyword"));
    assert_true(mapping_type_widens("decimal(10,2)", "decimal(12,2)", "keyword"));
    assert_false(mapping_type_widens("decimal(10,2)", "decimal(12,3)", "keyword"));
    assert_false(mapping_type_widens("decimal(10,2)", "decimal(20,2)", "double"));
    assert_true(mapping_type_widens("float", "double", "double"));
    assert_false(mapping_type_widens("datetime", "datetime(3)", "date"));
    assert_false(mapping_type_widens("varchar(10)", "int(11)", "keyword"));
    assert_true(mapping_type_widens("enum('a','b')", "enum('a','b','c')", "keyword"));
}

/* A mapping whose recorded type the source has widened: accepted, and the
 * old type kept for the caller to record. */
static void test_validation_widened(void **state) {
    (void)state;
    const char *text = IX("{\"table\":\"d.p\",\"columns\":[{\"name\":\"id\",\"key\":true,"
                          "\"mysql_type\":\"int(11)\",\"type\":\"long\"},\"name\"]}");
    struct mapping m;
    char err[1024];
    if (mapping_parse("v.json", text, strlen(text), &m, err, sizeof err) < 0) fail_msg("%s", err);
    struct mp_schema s;
    schema_demo(&s);
    sbuf errs = SBUF_INIT;
    assert_int_equal(0, mapping_validate(&m, &s, &errs));
    const struct mp_column *c = &m.indices[0].tables[0].columns[0];
    assert_string_equal("bigint(20)", c->mysql_type);
    assert_string_equal("int(11)", c->widened_from);
    assert_null(m.indices[0].tables[0].columns[1].widened_from);
    sbuf_free(&errs);
    mp_schema_free(&s);
    mapping_free(&m);
}

/* A root and a relation without "columns" get every column of the source
 * table, in its order; a root without a key takes the primary key, added
 * first when the file does not list it. */
static void test_validation_fills(void **state) {
    (void)state;
    const char *text = IX("{\"table\":\"d.p\",\"relations\":[{\"column\":\"id\",\"table\":"
                          "\"d.c\",\"join_column\":\"pid\",\"extend_name\":\"cs\"}]},"
                          "{\"table\":\"d.r\",\"parent\":\"d.p\",\"join_name\":\"r\","
                          "\"parent_column\":\"p_id\",\"columns\":[\"p_id\"]}");
    struct mapping m;
    char err[1024];
    if (mapping_parse("v.json", text, strlen(text), &m, err, sizeof err) < 0) fail_msg("%s", err);
    struct mp_schema s;
    schema_demo(&s);
    sbuf errs = SBUF_INIT;
    /* the root needs a join_name once it has a child */
    int n = mapping_validate(&m, &s, &errs);
    assert_int_equal(1, n);
    assert_non_null(strstr(errs.data, "needs a \"join_name\""));
    const struct mp_table *p = &m.indices[0].tables[0], *r = &m.indices[0].tables[1];
    assert_int_equal(3, p->ncolumns);
    assert_string_equal("id", p->columns[0].name);
    assert_string_equal("cat", p->columns[2].name);
    assert_true(p->columns[0].is_key);
    assert_false(p->columns[1].is_key);
    assert_string_equal("long", p->columns[0].type);
    assert_int_equal(3, p->relations[0].ncolumns);
    assert_string_equal("label", p->relations[0].columns[2].name);
    assert_int_equal(2, r->ncolumns);
    assert_string_equal("id", r->columns[0].name);
    assert_true(r->columns[0].is_key);
    assert_string_equal("p_id", r->columns[1].name);
    sbuf_free(&errs);
    mapping_free(&m);
    /* without the source's schema there is nothing to fill from */
    if (mapping_parse("v.json", IX("{\"table\":\"d.p\"}"), strlen(IX("{\"table\":\"d.p\"}")), &m,
                      err, sizeof err) < 0)
        fail_msg("%s", err);
    errs = (sbuf)SBUF_INIT;
    assert_int_equal(2, mapping_validate(&m, NULL, &errs));
    assert_non_null(strstr(errs.data, "every column of d.p is meant"));
    sbuf_free(&errs);
    mapping_free(&m);
    mp_schema_free(&s);
}

static void test_validation(void **state) {
    (void)state;
    validate_expect(IX(ROOT "}"), 0, NULL);
    validate_expect(IX("{\"table\":\"d.nope\",\"columns\":[{\"name\":\"id\",\"key\":true}]}"), 1,
                    "table d.nope does not exist in the source");
    validate_expect(IX("{\"table\":\"d.p\",\"columns\":[{\"name\":\"id\",\"key\":true},\"colour\"]}"),
                    1, "(column d.p.colour): no such column in the source");
    validate_expect(IX("{\"table\":\"d.p\",\"columns\":[\"id\"]}"), 0, NULL); /* takes the PK */
    /* the fields delivery and the check write into every document are no columns
     * (refused before the schema is asked: the column does not exist there either) */
    validate_expect(IX("{\"table\":\"d.p\",\"columns\":[{\"name\":\"id\",\"key\":true},\"ss_hash\"]}"),
                    2, "ss_hash is a field searchsync writes into every document");
    validate_expect(IX("{\"table\":\"d.n\"}"), 1,
                    "root table without a key (the source table has no primary key)");
    validate_expect(IX("{\"table\":\"d.p\",\"columns\":[{\"name\":\"id\",\"key\":true,\"type\":\"integer\"}]}"),
                    1, "columns[0] (column d.p.id): type mismatch: integer holds 31");
    validate_expect(IX("{\"table\":\"d.p\",\"columns\":[{\"name\":\"id\",\"key\":true,\"mysql_type\":\"int(11)\"}]}"),
                    1, "mysql_type \"int(11)\" does not match the source's \"bigint(20)\"");
    /* a column widened in the source is followed when the engine type holds the new type */
    validate_expect(IX("{\"table\":\"d.p\",\"columns\":[{\"name\":\"id\",\"key\":true,\"mysql_type\":\"int(11)\",\"type\":\"long\"},"
                       "{\"name\":\"name\",\"mysql_type\":\"varchar(6)\",\"type\":\"text\"}]}"),
                    0, NULL);
    /* ... and refused when it cannot (a narrowed column, an engine type too small) */
    validate_expect(IX("{\"table\":\"d.p\",\"columns\":[{\"name\":\"id\",\"key\":true,\"mysql_type\":\"int(11)\",\"type\":\"integer\"}]}"),
                    1, "cannot follow it without a reindex");
    /* the same type spelt without the display width (MySQL 8) is the same type */
    validate_expect(IX("{\"table\":\"d.p\",\"columns\":[{\"name\":\"id\",\"key\":true,\"mysql_type\":\"BIGINT\"}]}"),
                    0, NULL);
    validate_expect(IX("{\"table\":\"d.p\",\"columns\":[{\"name\":\"id\",\"key\":true,\"analyzer\":\"english\"}]}"),
                    1, "analyzer/search_analyzer need a text type");
    /* relation without an extend name anywhere; then with the column's */
    validate_expect(IX(ROOT ",\"relations\":[{\"column\":\"cat\",\"table\":\"d.c\",\"join_column\":\"id\",\"columns\":[\"label\"]}]}"),
                    1, "no extend name: set the relation's extend_name or column cat's");
    validate_expect(IX("{\"table\":\"d.p\",\"columns\":[{\"name\":\"id\",\"key\":true},{\"name\":\"cat\",\"extend_name\":\"category\"}],"
                       "\"relations\":[{\"column\":\"cat\",\"table\":\"d.c\",\"join_column\":\"id\",\"columns\":[\"label\"]}]}"),
                    0, NULL);
    /* unknown join column / relation column */
    validate_expect(IX(ROOT ",\"relations\":[{\"column\":\"cat\",\"extend_name\":\"c\",\"table\":\"d.c\",\"join_column\":\"idx\",\"columns\":[\"labelx\"]}]}"),
                    2, "join_column: column d.c.idx does not exist");
    /* cycle: p -> c -> p */
    validate_expect(IX(ROOT ",\"relations\":[{\"column\":\"id\",\"extend_name\":\"cs\",\"nested\":true,\"table\":\"d.c\",\"join_column\":\"pid\",\"columns\":[\"pid\"],"
                       "\"relations\":[{\"column\":\"pid\",\"extend_name\":\"back\",\"table\":\"d.p\",\"join_column\":\"id\",\"columns\":[\"name\"]}]}]}"),
                    1, "relation cycle: d.p -> d.c -> d.p");
    /* area_update needs nested */
    validate_expect(IX(ROOT ",\"relations\":[{\"column\":\"cat\",\"extend_name\":\"c\",\"table\":\"d.c\",\"join_column\":\"id\",\"area_update\":true,\"columns\":[\"label\"]}]}"),
                    1, "area_update needs a nested");
    /* area_update: joined on the root key, with a key, on the root only */
    validate_expect(IX(ROOT ",\"relations\":[{\"column\":\"id\",\"extend_name\":\"cs\",\"nested\":true,\"table\":\"d.c\",\"join_column\":\"pid\",\"area_update\":true,\"columns\":[{\"name\":\"id\",\"key\":true},\"label\"]}]}"),
                    0, NULL);
    validate_expect(IX(ROOT ",\"relations\":[{\"column\":\"id\",\"extend_name\":\"cs\",\"nested\":true,\"table\":\"d.c\",\"join_column\":\"pid\",\"area_update\":true,\"columns\":[\"label\"]}]}"),
                    1, "area_update needs a key among the relation's columns");
    validate_expect(IX(ROOT ",\"relations\":[{\"column\":\"id\",\"extend_name\":\"cs\",\"nested\":true,\"table\":\"d.c\",\"join_column\":\"pid\",\"area_update\":true,\"columns\":[{\"name\":\"id\",\"key\":true},{\"name\":\"pid\",\"key\":true}]}]}"),
                    1, "area_update needs one key column among the relation's columns, not 2");
    validate_expect(IX(ROOT ",\"relations\":[{\"column\":\"cat\",\"extend_name\":\"cs\",\"nested\":true,\"table\":\"d.c\",\"join_column\":\"id\",\"area_update\":true,\"columns\":[{\"name\":\"id\",\"key\":true}]}]}"),
                    1, "area_update needs the relation joined on the root's key column");
    validate_expect(IX(ROOT ",\"relations\":[{\"column\":\"id\",\"extend_name\":\"cs\",\"nested\":true,\"table\":\"d.c\",\"join_column\":\"pid\",\"columns\":[{\"name\":\"id\",\"key\":true},\"pid\"],"
                       "\"relations\":[{\"column\":\"id\",\"extend_name\":\"xs\",\"nested\":true,\"table\":\"d.r\",\"join_column\":\"p_id\",\"area_update\":true,\"columns\":[{\"name\":\"id\",\"key\":true}]}]}]}"),
                    1, "area_update works on a relation of the root table itself");
    /* row-image: a root without relations only */
    validate_expect(IX("{\"table\":\"d.p\",\"mode\":\"row-image\",\"columns\":[{\"name\":\"id\",\"key\":true},\"name\"]}"),
                    0, NULL);
    validate_expect(IX("{\"table\":\"d.p\",\"mode\":\"row-image\",\"columns\":[{\"name\":\"id\",\"key\":true},{\"name\":\"cat\",\"extend_name\":\"category\"}],"
                       "\"relations\":[{\"column\":\"cat\",\"table\":\"d.c\",\"join_column\":\"id\",\"columns\":[\"label\"]}]}"),
                    1, "mode row-image builds documents from the binlog row alone");
    /* parent/child: missing join names and parent column */
    validate_expect(IX(ROOT "},{\"table\":\"d.r\",\"parent\":\"d.p\",\"columns\":[{\"name\":\"id\",\"key\":true}]}"),
                    3, "parent/child child without \"join_name\"");
    validate_expect(IX("{\"table\":\"d.p\",\"join_name\":\"p\",\"columns\":[{\"name\":\"id\",\"key\":true}]},"
                       "{\"table\":\"d.r\",\"join_name\":\"r\",\"parent\":\"d.p\",\"parent_column\":\"p_id\",\"columns\":[{\"name\":\"id\",\"key\":true},\"p_id\"]}"),
                    0, NULL);
    /* a settings-only table nobody reads */
    validate_expect(IX(ROOT "},{\"table\":\"d.c\",\"delay_effect\":true}"), 1,
                    "no relation of this index reads it");
    validate_expect("{\"indices\":[{\"alias\":\"Bad Name\",\"tables\":[" ROOT "}]}]}", 1,
                    "is not a valid index name");
}

/* a document table's where: kept through the file, a copy and validation;
 * on a document table only; in row-image mode only what the row filter
 * reads, its comparisons ones it makes as the server does */
static void test_table_where(void **state) {
    (void)state;
    const char *text =
        IX("{\"table\":\"d.p\",\"where\":\"name <> 'draft' AND cat IS NOT NULL\","
           "\"join_name\":\"p\",\"columns\":[{\"name\":\"id\",\"key\":true},\"name\"]},"
           "{\"table\":\"d.r\",\"join_name\":\"r\",\"parent\":\"d.p\",\"parent_column\":\"p_id\","
           "\"where\":\"NOW() > 0\",\"columns\":[{\"name\":\"id\",\"key\":true},\"p_id\"]}");
    struct mapping m;
    validate_ok(text, &m);
    const struct mp_table *p = &m.indices[0].tables[0], *r = &m.indices[0].tables[1];
    assert_string_equal("name <> 'draft' AND cat IS NOT NULL", p->where);
    assert_non_null(p->filter); /* read: its columns are known */
    assert_true(row_filter_bound(p->filter));
    assert_int_equal(2, row_filter_ncols(p->filter));
    assert_string_equal("cat", row_filter_col(p->filter, 1));
    assert_null(r->filter); /* re-query: the server's SQL, whatever it holds */
    sbuf out = SBUF_INIT;
    mapping_write(&m, &out);
    assert_non_null(strstr(out.data, "\"where\": \"name <> 'draft' AND cat IS NOT NULL\""));
    struct mapping m2;
    char err[512];
    assert_int_equal(0, mapping_parse("out", out.data, out.len, &m2, err, sizeof err));
    sbuf out2 = SBUF_INIT;
    mapping_write(&m2, &out2);
    assert_string_equal(out.data, out2.data); /* the canonical file round trip */
    /* a copy (table patterns expand a config into units so) owns its own */
    struct mp_index cp;
    mp_index_copy(&cp, &m.indices[0]);
    mapping_free(&m);
    assert_string_equal("name <> 'draft' AND cat IS NOT NULL", cp.tables[0].where);
    assert_true(row_filter_bound(cp.tables[0].filter));
    assert_string_equal("NOW() > 0", cp.tables[1].where);
    mp_index_free(&cp);
    mapping_free(&m2);
    sbuf_free(&out);
    sbuf_free(&out2);

    /* on a table whose rows are no documents */
    validate_expect(IX("{\"table\":\"d.p\",\"columns\":[{\"name\":\"id\",\"key\":true},"
                       "{\"name\":\"cat\",\"extend_name\":\"c\"}],\"relations\":[{\"column\":\"cat\","
                       "\"table\":\"d.c\",\"join_column\":\"id\",\"columns\":[\"label\"]}]},"
                       "{\"table\":\"d.c\",\"where\":\"label <> 'x'\"}"),
                    1, "\"where\" filters the rows of a document table (the root or a parent/child "
                       "child): a related table's rows are filtered by its relation's \"where\"");
    /* what a spliced condition may not hold, whatever the mode */
    validate_expect(IX("{\"table\":\"d.p\",\"where\":\"1=1; DROP TABLE p\",\"columns\":["
                       "{\"name\":\"id\",\"key\":true}]}"),
                    1, "(table d.p): where: must be one condition, without ';'");
    validate_expect(IX("{\"table\":\"d.p\",\"where\":\"id IN (SELECT id FROM p)\",\"columns\":["
                       "{\"name\":\"id\",\"key\":true}]}"),
                    1, "the word select is not allowed");
    /* a column the table lacks: in any mode, when the condition is read */
    validate_expect(IX("{\"table\":\"d.p\",\"where\":\"deleted = 0\",\"columns\":["
                       "{\"name\":\"id\",\"key\":true}]}"),
                    1, "where \"deleted = 0\": deleted is not a column of d.p");
    /* row-image: the subset, named */
    validate_expect(IX("{\"table\":\"d.p\",\"mode\":\"row-image\",\"where\":\"cat > 0 AND "
                       "LOWER(name) = 'x'\",\"columns\":[{\"name\":\"id\",\"key\":true}]}"),
                    1, "in mode row-image it is decided from the row image, without the server, and "
                       "the function LOWER() is not supported");
    validate_expect(IX("{\"table\":\"d.j\",\"mode\":\"row-image\",\"where\":\"attrs = '{}'\","
                       "\"columns\":[{\"name\":\"id\",\"key\":true}]}"),
                    1, "column attrs (JSON) is compared with nothing in row-image mode");
    validate_expect(IX("{\"table\":\"d.j\",\"mode\":\"row-image\",\"where\":\"attrs IS NOT NULL\","
                       "\"columns\":[{\"name\":\"id\",\"key\":true}]}"),
                    0, NULL);
    /* ... which re-query mode leaves to the server */
    validate_expect(IX("{\"table\":\"d.j\",\"where\":\"attrs = '{}' AND LOWER(id) > 0\","
                       "\"columns\":[{\"name\":\"id\",\"key\":true}]}"),
                    0, NULL);
}

/* many-to-many through the link table d.pc, flattened: each element is a
 * row of d.c */
#define LINK(flags, inner) "{\"column\":\"id\",\"extend_name\":\"cs\",\"table\":\"d.pc\"," \
    "\"join_column\":\"p_id\"," flags "\"columns\":[\"c_id\"],\"relations\":[" inner "]}"
#define TO_C "{\"column\":\"c_id\",\"table\":\"d.c\",\"join_column\":\"id\"}"

static void test_flatten(void **state) {
    (void)state;
    /* the inner relation needs no extend name: its row replaces the link row */
    const char *ok = IX(ROOT ",\"relations\":[" LINK("\"nested\":true,\"flatten\":true,", TO_C) "]}");
    validate_expect(ok, 0, NULL);
    validate_expect(IX(ROOT ",\"relations\":[" LINK("\"flatten\":true,", TO_C) "]}"), 1,
                    "flatten needs a nested (one-to-many) relation on the link table");
    validate_expect(IX(ROOT ",\"relations\":[" LINK("\"nested\":true,\"flatten\":true,", "") "]}"), 1,
                    "flatten needs exactly one relation inside");
    validate_expect(IX(ROOT ",\"relations\":[" LINK("\"nested\":true,\"flatten\":true,", TO_C "," TO_C) "]}"), 1,
                    "(this one has 2)");
    validate_expect(IX(ROOT ",\"relations\":[" LINK("\"nested\":true,\"flatten\":true,",
                    "{\"column\":\"c_id\",\"table\":\"d.c\",\"join_column\":\"id\",\"nested\":true}") "]}"),
                    1, "flatten needs its inner relation one-to-one");
    validate_expect(IX(ROOT ",\"relations\":[" LINK("\"nested\":true,\"flatten\":true,\"area_update\":true,", TO_C) "]}"),
                    2, "flatten and area_update do not go together");
    /* not flattened, the inner relation needs its name as before */
    validate_expect(IX(ROOT ",\"relations\":[" LINK("\"nested\":true,", TO_C) "]}"), 1,
                    "no extend name");

    /* the file keeps it; the index body gives the nested field the linked
     * table's properties, not the link table's */
    struct mapping m;
    char err[512];
    assert_int_equal(0, mapping_parse("x", ok, strlen(ok), &m, err, sizeof err));
    assert_true(m.indices[0].tables[0].relations[0].flatten);
    assert_false(m.indices[0].tables[0].relations[0].relations[0].flatten);
    sbuf out = SBUF_INIT, errs = SBUF_INIT, body = SBUF_INIT;
    mapping_write(&m, &out);
    assert_non_null(strstr(out.data, "\"flatten\": true"));
    struct mp_schema sc;
    schema_demo(&sc);
    assert_int_equal(0, mapping_validate(&m, &sc, &errs));
    struct search_dialect d;
    search_dialect_named("opensearch-2", &d);
    if (index_mapping_body(&m.indices[0], &d, false, &body, err, sizeof err) < 0)
        fail_msg("%s", err);
    const char *want = "\"cs\":{\"type\":\"nested\",\"properties\":{\"id\":{\"type\":\"integer\"},"
                       "\"pid\":{\"type\":\"long\"},\"label\":{\"type\":\"text\"}}}";
    if (!strstr(body.data, want)) fail_msg("want %s in\n%s", want, body.data);
    assert_null(strstr(body.data, "c_id"));
    struct mapping m2;
    if (mapping_parse("out", out.data, out.len, &m2, err, sizeof err) < 0)
        fail_msg("%s\n%s", err, out.data);
    assert_true(m2.indices[0].tables[0].relations[0].flatten);
    mapping_free(&m2);
    mp_schema_free(&sc);
    sbuf_free(&out);
    sbuf_free(&errs);
    sbuf_free(&body);
    mapping_free(&m);
}

/* ---------------------------------------------------------------- generation */

static void golden(const char *alias, const char *dialect, const char *body) {
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/fixtures/mapping/%s.%s.json", srcdir(), alias, dialect);
    if (getenv("SEARCHSYNC_UPDATE_GOLDEN")) {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        fputs(body, f);
        fclose(f);
        return;
    }
    char *want = slurp(path, NULL);
    if (!want) fail_msg("missing golden %s (SEARCHSYNC_UPDATE_GOLDEN=1 writes it)", path);
    if (strcmp(want, body)) fail_msg("%s differs from the generated body:\n%s", path, body);
    free(want);
}

static void test_generate_goldens(void **state) {
    (void)state;
    struct mapping m;
    load_demo(&m);
    sbuf errs = SBUF_INIT;
    assert_int_equal(0, mapping_validate(&m, NULL, &errs));
    static const char *const dialects[] = {"elasticsearch-7", "elasticsearch-8", "opensearch-2"};
    for (size_t d = 0; d < 3; d++) {
        struct search_dialect sd;
        assert_int_equal(0, search_dialect_named(dialects[d], &sd));
        for (size_t i = 0; i < m.nindices; i++) {
            sbuf body = SBUF_INIT;
            char err[512];
            if (index_mapping_body(&m.indices[i], &sd, true, &body, err, sizeof err) < 0)
                fail_msg("%s", err);
            golden(m.indices[i].alias, dialects[d], body.data);
            sbuf_free(&body);
        }
    }
    sbuf_free(&errs);
    mapping_free(&m);
}

/* A version being built is created with no replicas, no refreshes and its
 * translog written asynchronously, the rest of its body equal to the body it
 * records and serves with. */
static void test_generate_build_body(void **state) {
    (void)state;
    const char *text = "{\"indices\":[{\"alias\":\"p\",\"replicas\":2,\"tables\":[{\"table\":"
                       "\"d.p\",\"columns\":[{\"name\":\"id\",\"key\":true,\"mysql_type\":"
                       "\"int(11)\"}]}]}]}";
    struct mapping m;
    char err[512];
    assert_int_equal(0, mapping_parse("x", text, strlen(text), &m, err, sizeof err));
    sbuf errs = SBUF_INIT, body = SBUF_INIT, build = SBUF_INIT;
    assert_int_equal(0, mapping_validate(&m, NULL, &errs));
    struct search_dialect d;
    search_dialect_named("opensearch-2", &d);
    assert_int_equal(0, index_mapping_body(&m.indices[0], &d, false, &body, err, sizeof err));
    assert_int_equal(0, index_mapping_build_body(&m.indices[0], &d, 3600, &build, err, sizeof err));
    assert_non_null(strstr(body.data, "\"number_of_replicas\":2"));
    assert_null(strstr(body.data, "refresh_interval"));
    assert_null(strstr(body.data, "translog"));
    assert_null(strstr(body.data, "gc_deletes"));
    const char *build_settings = "\"number_of_replicas\":0,\"refresh_interval\":\"-1\","
                                 "\"translog\":{\"durability\":\"async\"},"
                                 "\"gc_deletes\":\"3600s\"";
    assert_non_null(strstr(build.data, build_settings));
    /* nothing else differs */
    const char *b2 = strstr(body.data, "\"number_of_replicas\":2");
    const char *m2 = strstr(build.data, build_settings);
    assert_memory_equal(body.data, build.data, (size_t)(b2 - body.data));
    assert_string_equal(b2 + strlen("\"number_of_replicas\":2"), m2 + strlen(build_settings));
    sbuf_free(&errs);
    sbuf_free(&body);
    sbuf_free(&build);
    mapping_free(&m);
}

static void test_generate_dialect_errors(void **state) {
    (void)state;
    const char *text = IX("{\"table\":\"d.p\",\"columns\":[{\"name\":\"id\",\"key\":true,\"type\":\"unsigned_long\"}]}");
    struct mapping m;
    char err[512];
    assert_int_equal(0, mapping_parse("x", text, strlen(text), &m, err, sizeof err));
    struct search_dialect d;
    sbuf b = SBUF_INIT;
    search_dialect_named("elasticsearch-7", &d); /* 7.0: no unsigned_long */
    assert_int_equal(-1, index_mapping_body(&m.indices[0], &d, false, &b, err, sizeof err));
    assert_non_null(strstr(err, "column id: engine type unsigned_long is not available"));
    search_dialect_named("elasticsearch-6", &d);
    assert_int_equal(-1, index_mapping_body(&m.indices[0], &d, false, &b, err, sizeof err));
    assert_non_null(strstr(err, "mapping types"));
    search_dialect_named("opensearch-3", &d);
    assert_int_equal(0, index_mapping_body(&m.indices[0], &d, false, &b, err, sizeof err));
    assert_non_null(strstr(b.data, "\"id\":{\"type\":\"unsigned_long\"}"));
    sbuf_free(&b);
    mapping_free(&m);
}

/* Every prefix of the demo file is refused cleanly (no crash, no leak). */
static void test_truncated(void **state) {
    (void)state;
    char path[4096], err[1024];
    snprintf(path, sizeof path, "%s/sql/demo/mapping.json", srcdir());
    size_t len;
    char *text = slurp(path, &len);
    assert_non_null(text);
    while (len && (text[len - 1] == '\n' || text[len - 1] == '}')) len--;
    for (size_t n = 0; n < len; n++) {
        struct mapping m;
        char *copy = xstrndup(text, n); /* exact length: no reading past n */
        if (mapping_parse("t", copy, n, &m, err, sizeof err) == 0)
            fail_msg("prefix of %zu bytes parsed", n);
        free(copy);
    }
    free(text);
}

/* analysis settings and numbers pass through exactly; a custom join field */
static void test_where_check(void **state) {
    (void)state;
    char why[160];
    const char *ok[] = {"deleted = 0 AND status = 1", "(a > 1 OR b IN (1, 2))",
                        "name = 'x; -- union select'", "code LIKE 'a#%'", "`into` = 1",
                        "selected = 1", "a = \"it\\'s\""};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (mapping_where_check(ok[i], why, sizeof why) != 0)
            fail_msg("refused a plain condition: %s (%s)", ok[i], why);
    const char *bad[] = {"1=1; DROP TABLE t", "a = 1 -- x", "a = 1 /* x */", "a = 1 # x",
                         "1) OR (1", "(a = 1", "a = 1) UNION SELECT password FROM mysql.user WHERE (1",
                         "id IN (SELECT id FROM t)", "SLEEP(10) = 0", "BENCHMARK(1e9, MD5(1))",
                         "a = 1 INTO OUTFILE '/tmp/x'", "a = 'open"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (mapping_where_check(bad[i], why, sizeof why) == 0)
            fail_msg("accepted a dangerous condition: %s", bad[i]);
}

static void test_analysis_exact(void **state) {
    (void)state;
    const char *text =
        "{\"indices\":[{\"alias\":\"a\",\"join_field\":\"jf\",\"analysis\":{\"filter\":{\"f\":"
        "{\"type\":\"length\",\"max\":12345678901234567890}}},\"tables\":["
        "{\"table\":\"d.p\",\"join_name\":\"p\",\"columns\":[{\"name\":\"id\",\"key\":true,"
        "\"mysql_type\":\"bigint(20)\"}]},"
        "{\"table\":\"d.r\",\"join_name\":\"r\",\"parent\":\"d.p\",\"parent_column\":\"p_id\","
        "\"columns\":[{\"name\":\"id\",\"key\":true,\"mysql_type\":\"bigint(20)\"}]}]}]}";
    struct mapping m;
    char err[512];
    assert_int_equal(0, mapping_parse("x", text, strlen(text), &m, err, sizeof err));
    sbuf errs = SBUF_INIT, out = SBUF_INIT, body = SBUF_INIT;
    assert_int_equal(0, mapping_validate(&m, NULL, &errs));
    mapping_write(&m, &out);
    assert_non_null(strstr(out.data, "12345678901234567890"));
    assert_non_null(strstr(out.data, "\"join_field\": \"jf\""));
    struct search_dialect d;
    search_dialect_named("elasticsearch-8", &d);
    assert_int_equal(0, index_mapping_body(&m.indices[0], &d, false, &body, err, sizeof err));
    assert_non_null(strstr(body.data, "\"max\":12345678901234567890"));
    assert_non_null(strstr(body.data, "\"jf\":{\"type\":\"join\",\"relations\":{\"p\":[\"r\"]}}"));
    sbuf_free(&errs);
    sbuf_free(&out);
    sbuf_free(&body);
    mapping_free(&m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_type_defaults),     cmocka_unit_test(test_type_compat),
        cmocka_unit_test(test_parse_errors),      cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_validation),        cmocka_unit_test(test_validation_fills),
        cmocka_unit_test(test_validation_composite_key),
        cmocka_unit_test(test_validation_json_stored),
        cmocka_unit_test(test_flatten),
        cmocka_unit_test(test_type_widens),       cmocka_unit_test(test_validation_widened),
        cmocka_unit_test(test_validation_primary_key),
        cmocka_unit_test(test_generate_goldens),
        cmocka_unit_test(test_generate_dialect_errors),
        cmocka_unit_test(test_generate_build_body),
        cmocka_unit_test(test_truncated),         cmocka_unit_test(test_analysis_exact),
        cmocka_unit_test(test_where_check),       cmocka_unit_test(test_table_where),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
