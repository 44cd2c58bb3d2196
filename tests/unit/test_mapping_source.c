/* test_mapping_source: several sources feeding one index config — the
 * "sources" list read and written, the id templates that must name the
 * source, the mapping as one source runs it (mapping_for_source: others'
 * index configs left out, ids and ss_source its own, also per shard), the
 * comma list the metadata keeps, and invariant I6 firing on a write that is
 * not the process's source's (sync/pipeline/targets.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "invariant.h"
#include "sbuf.h"
#include "sync/mapping/mapping.h"
#include "sync/mapping/mapping_shard.h"
#include "sync/mapping/mapping_source.h"
#include "sync/pipeline/pipeline.h"

static const char FILE3[] =
    "{\"version\":1,\"indices\":["
    "{\"alias\":\"orders\",\"sources\":[\"east\",\"west\",\"north\"],\"tables\":["
    " {\"table\":\"shop.orders\",\"columns\":[{\"name\":\"id\",\"key\":true},\"total\"]}]},"
    "{\"alias\":\"lines\",\"sources\":[\"east\",\"west\"],\"tables\":["
    " {\"table\":\"shop_{s:[0-9]+}.lines\",\"columns\":[{\"name\":\"id\",\"key\":true}]}]},"
    "{\"alias\":\"catalog\",\"tables\":[{\"table\":\"shop.brands\","
    " \"columns\":[{\"name\":\"id\",\"key\":true}]}]}]}";

static void parse(const char *text, struct mapping *m) {
    char err[1024];
    if (mapping_parse("m.json", text, strlen(text), m, err, sizeof err) != 0)
        fail_msg("parse: %s", err);
}

static void test_parse_write(void **state) {
    (void)state;
    struct mapping m = {0};
    parse(FILE3, &m);
    assert_int_equal(3, m.indices[0].nsources);
    assert_string_equal("north", m.indices[0].sources[2]);
    assert_true(mp_index_multi(&m.indices[0]));
    assert_false(mp_index_multi(&m.indices[2]));
    /* the default ids name the source; over shards the shard too */
    assert_string_equal(MP_ID_TEMPLATE_SOURCES, mp_id_template(&m.indices[0]));
    assert_string_equal(MP_ID_TEMPLATE_SOURCES_SHARDED, mp_id_template(&m.indices[1]));
    assert_string_equal("{key}", mp_id_template(&m.indices[2]));
    /* written back and read again: the same */
    sbuf a = SBUF_INIT, b = SBUF_INIT;
    mapping_write(&m, &a);
    assert_non_null(strstr(a.data, "\"sources\": [\"east\", \"west\", \"north\"]"));
    struct mapping m2 = {0};
    parse(a.data, &m2);
    mapping_write(&m2, &b);
    assert_string_equal(a.data, b.data);
    /* the metadata's comma list */
    sbuf c = SBUF_INIT;
    mp_sources_join(&m.indices[0], &c);
    assert_string_equal("east,west,north", c.data);
    mp_sources_split(&m2.indices[2], c.data);
    assert_int_equal(3, m2.indices[2].nsources);
    assert_string_equal("west", m2.indices[2].sources[1]);
    mp_sources_split(&m2.indices[2], NULL);
    assert_int_equal(0, m2.indices[2].nsources);
    sbuf_free(&a), sbuf_free(&b), sbuf_free(&c);
    mapping_free(&m);
    mapping_free(&m2);
}

static void test_refused(void **state) {
    (void)state;
    struct mapping m = {0};
    char err[1024];
    static const char *const bad[][2] = {
        /* keys of two sources may collide: the id must name the source */
        {"{\"version\":1,\"indices\":[{\"alias\":\"o\",\"sources\":[\"a\",\"b\"],\"id\":\"o-{key}\","
         "\"tables\":[{\"table\":\"s.o\"}]}]}", "must hold {source}"},
        {"{\"version\":1,\"indices\":[{\"alias\":\"o\",\"sources\":[\"a\",\"a\"],"
         "\"tables\":[{\"table\":\"s.o\"}]}]}", "listed twice"},
        {"{\"version\":1,\"indices\":[{\"alias\":\"o\",\"sources\":[\"a b\"],"
         "\"tables\":[{\"table\":\"s.o\"}]}]}", "only letters, digits"},
        {"{\"version\":1,\"indices\":[{\"alias\":\"o\",\"sources\":[],"
         "\"tables\":[{\"table\":\"s.o\"}]}]}", "non-empty array"},
        {"{\"version\":1,\"indices\":[{\"alias\":\"o\",\"sources\":[\"a\",7],"
         "\"tables\":[{\"table\":\"s.o\"}]}]}", "named by a string"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (mapping_parse("m.json", bad[i][0], strlen(bad[i][0]), &m, err, sizeof err) == 0)
            fail_msg("accepted: %s", bad[i][0]);
        if (!strstr(err, bad[i][1])) fail_msg("\"%s\" does not say \"%s\"", err, bad[i][1]);
        mapping_free(&m);
    }
    /* unique_keys: the operator's promise, ids the plain key */
    parse("{\"version\":1,\"indices\":[{\"alias\":\"o\",\"sources\":[\"a\",\"b\"],"
          "\"unique_keys\":true,\"tables\":[{\"table\":\"s.o\"}]}]}", &m);
    assert_string_equal("{key}", mp_id_template(&m.indices[0]));
    mapping_free(&m);
    /* a template of one's own that names the source */
    parse("{\"version\":1,\"indices\":[{\"alias\":\"o\",\"sources\":[\"a\",\"b\"],"
          "\"id\":\"{key}@{source}\",\"tables\":[{\"table\":\"s.o\"}]}]}", &m);
    mapping_for_source(&m, "shop", "b");
    sbuf id = SBUF_INIT;
    mp_doc_id(&m.indices[0], "42", 2, &id);
    assert_string_equal("42@b", id.data);
    sbuf_free(&id);
    mapping_free(&m);
}

static void test_for_source(void **state) {
    (void)state;
    struct mapping m = {0};
    parse(FILE3, &m);
    /* west reads mapping "shop": orders and lines are its, catalog (fed by
     * the source named like the mapping) is not */
    mapping_for_source(&m, "shop", "west");
    assert_int_equal(2, m.nindices);
    assert_string_equal("orders", m.indices[0].alias);
    assert_string_equal("west", m.indices[0].source);
    sbuf id = SBUF_INIT;
    mp_doc_id(&m.indices[0], "42", 2, &id);
    assert_string_equal("west:42", id.data);
    size_t n = 0;
    const char *k = mp_doc_key(&m.indices[0], "west:42", &n);
    assert_non_null(k);
    assert_int_equal(2, n);
    assert_null(mp_doc_key(&m.indices[0], "east:42", &n)); /* another source's document */
    assert_true(mp_ids_templated(&m.indices[0]));
    /* over shards: each shard's unit keeps the source in its ids */
    struct mp_source_table t[] = {{"shop_1", "lines"}, {"shop_2", "lines"}, {"other", "x"}};
    mapping_expand_with(&m, t, 3, NULL, 0, NULL);
    assert_int_equal(3, m.nindices);
    assert_string_equal("shop_2.lines", m.indices[2].unit);
    assert_string_equal("west", m.indices[2].source);
    sbuf_reset(&id);
    mp_doc_id(&m.indices[2], "7", 1, &id);
    assert_string_equal("west:shop_2.lines:7", id.data);
    sbuf_free(&id);
    mapping_free(&m);
    /* the one source named like the mapping feeds what lists no sources */
    parse(FILE3, &m);
    mapping_for_source(&m, "shop", "shop");
    assert_int_equal(1, m.nindices);
    assert_string_equal("catalog", m.indices[0].alias);
    assert_null(m.indices[0].source);
    assert_false(mp_ids_templated(&m.indices[0]));
    mapping_free(&m);
    /* a mapping of one source, as before several: untouched */
    parse("{\"version\":1,\"indices\":[{\"alias\":\"o\",\"tables\":[{\"table\":\"s.o\"}]}]}", &m);
    mapping_for_source(&m, "demo", "demo");
    assert_int_equal(1, m.nindices);
    assert_null(m.indices[0].id_pre);
    mapping_free(&m);
}

static char fired[8], said[512];
static void hook(const char *id, const char *msg) {
    snprintf(fired, sizeof fired, "%s", id);
    snprintf(said, sizeof said, "%s", msg);
}

/* I6: a write of another source's index config or document */
static void test_i6(void **state) {
    (void)state;
    struct mapping m = {0};
    parse(FILE3, &m);
    mapping_for_source(&m, "shop", "east");
    ss_invariant_hook = hook;
    fired[0] = '\0';
    targets_source_check("east", &m.indices[0], "east:42");
    assert_string_equal("", fired); /* its own: fine */
    targets_source_check("west", &m.indices[0], NULL); /* east's config, west's versions */
    assert_string_equal("I6", fired);
    assert_non_null(strstr(said, "written by source west as source east's"));
    fired[0] = '\0';
    targets_source_check("east", &m.indices[0], "west:42"); /* west's document */
    assert_string_equal("I6", fired);
    assert_non_null(strstr(said, "document west:42 is not one source east makes"));
    /* an index config of several sources not made any source's */
    struct mapping raw = {0};
    parse(FILE3, &raw);
    fired[0] = '\0';
    targets_source_check("east", &raw.indices[0], NULL);
    assert_string_equal("I6", fired);
    ss_invariant_hook = NULL;
    mapping_free(&raw);
    mapping_free(&m);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_parse_write),
                                       cmocka_unit_test(test_refused),
                                       cmocka_unit_test(test_for_source),
                                       cmocka_unit_test(test_i6)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
