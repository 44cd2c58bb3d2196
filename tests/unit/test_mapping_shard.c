/* test_mapping_shard: table patterns — placeholders checked, matched and put
 * back, id templates, and an index config expanded into one unit per shard
 * (sync/mapping/mapping_shard.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbuf.h"
#include "sync/mapping/mapping.h"
#include "sync/mapping/mapping_shard.h"

static void free_binds(char **b, size_t n) {
    for (size_t i = 0; i < n; i++) free(b[i]);
    free(b);
}

static void test_check(void **state) {
    (void)state;
    char why[512];
    assert_int_equal(0, mp_pattern_check("orders_{n:[0-9]+}", true, why, sizeof why));
    assert_int_equal(0, mp_pattern_check("o_{a:[a-z]{2,3}}_{b:(x|y)[0-9]}", true, why, sizeof why));
    assert_int_equal(0, mp_pattern_check("items_{n}", false, why, sizeof why));
    /* only the root binds */
    assert_int_equal(-1, mp_pattern_check("items_{n:[0-9]+}", false, why, sizeof why));
    assert_non_null(strstr(why, "only the root table binds"));
    const char *bad[] = {"o_{n:[0-9+}", "o_{:x}", "o_{9n:x}", "o_{n:}", "o_{n", "o_}",
                         "o_{n:x}_{n:y}", "o_{n x}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (mp_pattern_check(bad[i], true, why, sizeof why) == 0)
            fail_msg("\"%s\" was taken as a pattern", bad[i]);
    assert_true(mp_is_pattern("a_{n}"));
    assert_false(mp_is_pattern("orders"));
}

static void test_match_subst(void **state) {
    (void)state;
    char **b = NULL;
    size_t n = 0;
    assert_true(mp_pattern_match("orders_{n:[0-9]+}", "orders_07", &b, &n));
    assert_int_equal(1, n);
    assert_string_equal("n=07", b[0]);
    assert_false(mp_pattern_match("orders_{n:[0-9]+}", "orders_07x", &b, &n)); /* anchored */
    assert_false(mp_pattern_match("orders_{n:[0-9]+}", "xorders_07", &b, &n));
    assert_false(mp_pattern_match("orders.{n:[0-9]+}", "orders_07", &b, &n)); /* '.' literal */
    /* a use in the table part of a value the database part bound */
    assert_true(mp_pattern_match("orders_{n}", "orders_07", &b, &n));
    assert_false(mp_pattern_match("orders_{n}", "orders_08", &b, &n));
    free_binds(b, n);
    b = NULL, n = 0;
    /* groups inside a regex do not shift the next placeholder's value */
    assert_true(mp_pattern_match("t_{a:(x|y)[0-9]}_{b:[a-z]{2}}", "t_y7_qq", &b, &n));
    assert_int_equal(2, n);
    assert_string_equal("a=y7", b[0]);
    assert_string_equal("b=qq", b[1]);
    char why[256];
    char *s = mp_pattern_subst("items_{a}_{b}", b, n, why, sizeof why);
    assert_string_equal("items_y7_qq", s);
    free(s);
    assert_null(mp_pattern_subst("items_{c}", b, n, why, sizeof why));
    assert_non_null(strstr(why, "{c} is not bound"));
    free_binds(b, n);
}

static const char *MAP =
    "{\"version\":1,\"indices\":[{\"alias\":\"orders\",\"tables\":["
    "{\"table\":\"shop_{s:[0-9]+}.orders_{n:[0-9]+}\",\"columns\":[{\"name\":\"id\",\"key\":true},\"total\"],"
    " \"relations\":["
    "  {\"column\":\"id\",\"table\":\"shop_{s}.items_{n}\",\"join_column\":\"order_id\",\"nested\":true,"
    "   \"columns\":[{\"name\":\"id\",\"key\":true},\"qty\"]},"
    "  {\"column\":\"brand_id\",\"table\":\"common.brands\",\"join_column\":\"id\",\"columns\":[\"name\"]}]}]},"
    "{\"alias\":\"plain\",\"tables\":[{\"table\":\"common.brands\"}]}]}";

/* a relation's name that uses one placeholder in both its parts: the
 * second use must equal the first */
static void test_new_shard_tables(void **state) {
    (void)state;
    static const char *map =
        "{\"version\":1,\"indices\":[{\"alias\":\"t\",\"tables\":["
        "{\"table\":\"db_{s:[a-z]+}.t_{n:[0-9]+}\",\"columns\":[{\"name\":\"id\",\"key\":true}],"
        " \"relations\":[{\"column\":\"id\",\"table\":\"db_{s}.c_{s}_{n}\",\"join_column\":\"t_id\","
        "  \"nested\":true,\"columns\":[{\"name\":\"id\",\"key\":true}]}]}]}]}";
    struct mapping m;
    char err[512];
    if (mapping_parse("m.json", map, strlen(map), &m, err, sizeof err) < 0) fail_msg("%s", err);
    struct mp_source_table src[] = {{"db_ab", "t_1"}, {"db_ab", "c_ab_1"}, {"db_ab", "t_2"}};
    mapping_expand_with(&m, src, sizeof src / sizeof src[0], NULL, 0, NULL);
    assert_int_equal(1, m.nindices); /* t_2 left out: no c_ab_2 */
    const struct mp_index *u = &m.indices[0];
    assert_true(mp_index_matches_shard_table(u, "db_ab", "c_ab_2"));
    assert_true(mp_index_matches_shard_table(u, "db_cd", "c_cd_9"));
    assert_false(mp_index_matches_shard_table(u, "db_ab", "c_cd_2"));
    assert_false(mp_index_matches_shard_table(u, "db_ab", "c_ab_x"));
    mapping_free(&m);
}

static void test_expand(void **state) {
    (void)state;
    struct mapping m;
    char err[512];
    if (mapping_parse("m.json", MAP, strlen(MAP), &m, err, sizeof err) < 0) fail_msg("%s", err);
    struct mp_source_table src[] = {
        {"shop_2", "orders_10"}, {"shop_2", "items_10"}, {"shop_1", "orders_07"},
        {"shop_1", "items_07"},  {"shop_1", "orders_08"}, /* no items_08 yet */
        {"shop_1", "orders_x"},  {"common", "brands"},    {"shop_1", "items_99"}};
    sbuf skipped = SBUF_INIT;
    mapping_expand_with(&m, src, sizeof src / sizeof src[0], NULL, 0, &skipped);
    /* two shards of orders (in order), orders_08 left out, plain untouched */
    assert_int_equal(3, m.nindices);
    const struct mp_index *u0 = &m.indices[0], *u1 = &m.indices[1];
    assert_string_equal("orders", u0->alias);
    assert_string_equal("shop_1.orders_07", u0->unit);
    assert_string_equal("shop_2.orders_10", u1->unit);
    assert_string_equal("shop_1", u0->tables[0].db);
    assert_string_equal("orders_07", u0->tables[0].table);
    assert_string_equal("items_07", u0->tables[0].relations[0].table);
    assert_string_equal("shop_1", u0->tables[0].relations[0].db);
    assert_string_equal("brands", u0->tables[0].relations[1].table);
    assert_string_equal("shop_{s:[0-9]+}", u0->pattern_db);
    assert_null(m.indices[2].unit);
    assert_non_null(strstr(skipped.data, "shard shop_1.orders_08 is left out until its tables "
                                         "exist (shop_1.items_08 does not exist)"));
    /* ids: shards may share keys, so the default id carries the shard */
    sbuf id = SBUF_INIT;
    mp_doc_id(u0, "42", 2, &id);
    assert_string_equal("shop_1.orders_07:42", id.data);
    size_t kl = 0;
    const char *k = mp_doc_key(u0, id.data, &kl);
    assert_non_null(k);
    assert_int_equal(2, kl);
    assert_memory_equal("42", k, 2);
    assert_null(mp_doc_key(u1, id.data, &kl));
    sbuf_reset(&id);
    mp_doc_id(&m.indices[2], "42", 2, &id); /* no patterns: the key */
    assert_string_equal("42", id.data);
    /* new shards of the family are recognised */
    assert_true(mp_index_matches_shard(u0, "shop_9", "orders_001"));
    assert_false(mp_index_matches_shard(u0, "shop_9", "items_001"));
    assert_false(mp_index_matches_shard(&m.indices[2], "common", "brands"));
    /* ... and so are their other tables: a shard whose items table comes
     * after its orders table (left out until then) must be looked at again */
    assert_int_equal(1, u0->npatterns);
    assert_string_equal("shop_{s:[0-9]+}", u0->patterns[0]);
    assert_string_equal("items_{n:[0-9]+}", u0->patterns[1]);
    assert_true(mp_index_matches_shard_table(u0, "shop_9", "items_001"));
    assert_true(mp_index_matches_shard_table(u0, "shop_9", "orders_001"));
    assert_false(mp_index_matches_shard_table(u0, "shop_x", "items_001"));
    assert_false(mp_index_matches_shard_table(u0, "shop_9", "items_"));
    assert_false(mp_index_matches_shard_table(u0, "common", "brands"));
    assert_false(mp_index_matches_shard_table(&m.indices[2], "shop_9", "items_001"));
    struct mp_index cp;
    mp_index_copy(&cp, u0);
    assert_true(mp_index_matches_shard_table(&cp, "shop_1", "items_08"));
    mp_index_free(&cp);
    sbuf_free(&id);
    sbuf_free(&skipped);
    mapping_free(&m);
    /* a shard followed already stays while its tables are away for a moment
     * (an online schema change's swap): kept, whatever one look says */
    if (mapping_parse("m.json", MAP, strlen(MAP), &m, err, sizeof err) < 0) fail_msg("%s", err);
    struct mp_source_table swap[] = {{"shop_2", "orders_10"}, {"shop_2", "items_10"},
                                     {"shop_1", "_orders_07_gho"}, {"common", "brands"}};
    char *keep[] = {"shop_1.orders_07"};
    mapping_expand_with(&m, swap, 4, keep, 1, NULL);
    assert_int_equal(3, m.nindices);
    assert_string_equal("shop_1.orders_07", m.indices[0].unit);
    assert_string_equal("items_07", m.indices[0].tables[0].relations[0].table);
    assert_string_equal("shop_2.orders_10", m.indices[1].unit);
    mapping_free(&m);
}

static void test_templates(void **state) {
    (void)state;
    char err[512];
    struct mapping m;
    const char *tpl =
        "{\"version\":1,\"indices\":[{\"alias\":\"o\",\"id\":\"{n}-{key}\",\"tables\":["
        "{\"table\":\"shop.orders_{n:[0-9]+}\"}]},"
        "{\"alias\":\"u\",\"unique_keys\":true,\"tables\":[{\"table\":\"shop.t_{n:[0-9]+}\"}]}]}";
    if (mapping_parse("m.json", tpl, strlen(tpl), &m, err, sizeof err) < 0) fail_msg("%s", err);
    struct mp_source_table src[] = {{"shop", "orders_3"}, {"shop", "t_1"}};
    mapping_expand_with(&m, src, 2, NULL, 0, NULL);
    sbuf id = SBUF_INIT;
    mp_doc_id(&m.indices[0], "5", 1, &id);
    assert_string_equal("3-5", id.data);
    sbuf_reset(&id);
    mp_doc_id(&m.indices[1], "5", 1, &id); /* unique keys: the key alone */
    assert_string_equal("5", id.data);
    sbuf_free(&id);
    /* the round trip keeps the patterns and the template */
    mapping_free(&m);
    mapping_parse("m.json", tpl, strlen(tpl), &m, err, sizeof err);
    sbuf out = SBUF_INIT;
    mapping_write(&m, &out);
    size_t w = 0; /* (the canonical file is indented: compared without blanks) */
    for (size_t r = 0; r < out.len; r++)
        if (out.data[r] != ' ' && out.data[r] != '\n') out.data[w++] = out.data[r];
    out.data[w] = '\0';
    assert_non_null(strstr(out.data, "\"id\":\"{n}-{key}\""));
    assert_non_null(strstr(out.data, "\"unique_keys\":true"));
    assert_non_null(strstr(out.data, "\"table\":\"shop.orders_{n:[0-9]+}\""));
    sbuf_free(&out);
    mapping_free(&m);
    /* refused, each naming what to do */
    const char *bad[][2] = {
        {"{\"version\":1,\"indices\":[{\"alias\":\"o\",\"id\":\"{db}\",\"tables\":[{\"table\":"
         "\"shop.o_{n:[0-9]+}\"}]}]}", "{key} exactly once"},
        {"{\"version\":1,\"indices\":[{\"alias\":\"o\",\"id\":\"{x}:{key}\",\"tables\":[{\"table\":"
         "\"shop.o_{n:[0-9]+}\"}]}]}", "{x} is none of"},
        {"{\"version\":1,\"indices\":[{\"alias\":\"o\",\"tables\":[{\"table\":\"shop.o\","
         "\"relations\":[{\"column\":\"id\",\"table\":\"shop.i_{n:[0-9]+}\",\"join_column\":\"o\"}]}]}]}",
         "only the root table binds"},
        {"{\"version\":1,\"indices\":[{\"alias\":\"o\",\"tables\":[{\"table\":\"shop.o_{n:[0-9+}\"}]}]}",
         "the regex of {n}"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (mapping_parse("m.json", bad[i][0], strlen(bad[i][0]), &m, err, sizeof err) == 0)
            fail_msg("accepted: %s", bad[i][0]);
        if (!strstr(err, bad[i][1])) fail_msg("\"%s\" does not say \"%s\"", err, bad[i][1]);
        mapping_free(&m);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_check),
                                       cmocka_unit_test(test_match_subst),
                                       cmocka_unit_test(test_expand),
                                       cmocka_unit_test(test_new_shard_tables),
                                       cmocka_unit_test(test_templates)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
