/* test_check_diff: the first differing field path the consistency check
 * reports (sync/check/check_diff.h), and the content/key hashes documents carry
 * (src/search/content_hash.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "search/content_hash.h"
#include "json_exact.h"
#include "sync/check/check_diff.h"
#include "sync/check/check_versions.h"

static const char *diff_of(sbuf *p, const char *built, const char *engine) {
    return check_diff(built, strlen(built), engine, strlen(engine), p) ? p->data : NULL;
}

static void test_equal(void **state) {
    (void)state;
    sbuf p = SBUF_INIT;
    /* member order, delivery's fields at the top level, 12.50 vs 12.5 */
    assert_null(diff_of(&p, "{\"a\":1,\"b\":{\"c\":\"x\"},\"p\":12.50}",
                        "{\"ss_version\":7,\"b\":{\"c\":\"x\"},\"a\":1,\"p\":12.5,\"ss_hash\":3}"));
    assert_null(diff_of(&p, "{\"t\":[],\"o\":null}", "{\"o\":null,\"t\":[]}"));
    sbuf_free(&p);
}

static void test_paths(void **state) {
    (void)state;
    sbuf p = SBUF_INIT;
    assert_string_equal("name", diff_of(&p, "{\"id\":1,\"name\":\"a\"}", "{\"id\":1,\"name\":\"b\"}"));
    assert_string_equal("skus[1].color",
                        diff_of(&p, "{\"skus\":[{\"color\":\"r\"},{\"color\":\"g\"}]}",
                                "{\"skus\":[{\"color\":\"r\"},{\"color\":\"b\"}]}"));
    /* an element removed at the end: the index where one side stops */
    assert_string_equal("tags[1]", diff_of(&p, "{\"tags\":[{\"n\":1},{\"n\":2}]}",
                                           "{\"tags\":[{\"n\":1}]}"));
    /* a member only the engine has, one only MySQL has */
    assert_string_equal("x", diff_of(&p, "{\"a\":1}", "{\"a\":1,\"x\":2}"));
    assert_string_equal("a", diff_of(&p, "{\"a\":1}", "{}"));
    /* delivery's fields are ignored only at the top level */
    assert_string_equal("o.ss_version", diff_of(&p, "{\"o\":{}}", "{\"o\":{\"ss_version\":1}}"));
    /* types: a number is not its string, null is not an object */
    assert_string_equal("n", diff_of(&p, "{\"n\":1}", "{\"n\":\"1\"}"));
    assert_string_equal("o", diff_of(&p, "{\"o\":null}", "{\"o\":{}}"));
    /* BIGINTs past 2^53 compare by text, never as doubles */
    assert_string_equal("b", diff_of(&p, "{\"b\":18446744073709551615}",
                                     "{\"b\":18446744073709551614}"));
    /* and DECIMALs past a double's precision, however small their value */
    assert_string_equal("d", diff_of(&p, "{\"d\":1234567890.12345678901}",
                                     "{\"d\":1234567890.12345678902}"));
    assert_string_equal("-", diff_of(&p, "{\"a\":1}", "{not json"));
    sbuf_free(&p);
}

static void test_hashes(void **state) {
    (void)state;
    const char *doc = "{\"title\":\"caf\xc3\xa9\",\n  \"n\":1}";
    /* pinned: a change of either function makes every stored hash differ (the
     * check then compares those documents by content: docs/check.md) */
    assert_int_equal(1068451030, content_hash(doc, strlen(doc)));
    assert_int_equal(77491474, key_hash("42", 2));
    assert_true(content_hash("{}", 2) < CONTENT_HASH_SPACE);
    assert_true(content_hash("{\"a\":1}", 7) != content_hash("{\"a\":2}", 7));
    assert_true(key_hash("1", 1) != content_hash("1", 1)); /* different seeds */
    unsigned buckets[16] = {0};
    char id[16];
    for (int i = 0; i < 16000; i++) {
        int n = snprintf(id, sizeof id, "%d", i);
        buckets[key_hash(id, (size_t)n) >> 27]++; /* top 4 of 31 bits */
    }
    for (int b = 0; b < 16; b++) assert_in_range(buckets[b], 800, 1200); /* spread evenly */
}

/* The body hash reads words in lanes with a tail: every single-bit change
 * of a body must change its hash at every length around those boundaries,
 * distinct bodies must spread over the 31 bits, and a long body is hashed
 * to the value pinned (the words are read little-endian on any host). */
static void test_content_hash_every_bit(void **state) {
    (void)state;
    char body[100];
    for (size_t i = 0; i < sizeof body; i++) body[i] = (char)("{\"a\":\"x\",}0123456789"[i % 19]);
    for (size_t len = 1; len <= sizeof body; len++) {
        uint32_t h = content_hash(body, len);
        assert_true(h < CONTENT_HASH_SPACE);
        for (size_t bit = 0; bit < len * 8; bit++) {
            body[bit / 8] ^= (char)(1u << (bit % 8));
            assert_true(content_hash(body, len) != h);
            body[bit / 8] ^= (char)(1u << (bit % 8));
        }
        assert_true(content_hash(body, len - 1) != h); /* the length counts */
    }
    unsigned buckets[16] = {0};
    char doc[64];
    for (int i = 0; i < 32000; i++) {
        int n = snprintf(doc, sizeof doc, "{\"id\":%d,\"title\":\"item %d\",\"n\":1}", i, i);
        buckets[content_hash(doc, (size_t)n) >> 27]++;
    }
    for (int b = 0; b < 16; b++) assert_in_range(buckets[b], 1700, 2300);
    assert_int_equal(2074220732, content_hash(body, sizeof body));
}

/* one hit of the version listing: written last by someone else? */
static bool foreign(const char *hit) {
    cJSON *j = json_exact_parse(hit, strlen(hit));
    assert_non_null(j);
    bool f = check_versions_foreign(j);
    cJSON_Delete(j);
    return f;
}

static void test_versions(void **state) {
    (void)state;
    /* searchsync's write: the engine's version is the document's own */
    assert_false(foreign("{\"_id\":\"1\",\"_version\":4294981017,"
                         "\"fields\":{\"ss_version\":[4294981017]}}"));
    /* a GET, edit, PUT (or an _update) counted the engine's version up */
    assert_true(foreign("{\"_id\":\"1\",\"_version\":4294981018,"
                        "\"fields\":{\"ss_version\":[4294981017]}}"));
    /* versions past 2^53 compared exactly, never as doubles */
    assert_true(foreign("{\"_id\":\"1\",\"_version\":9007199254740993,"
                        "\"fields\":{\"ss_version\":[9007199254740992]}}"));
    assert_false(foreign("{\"_id\":\"1\",\"_version\":9223372036854775806,"
                         "\"fields\":{\"ss_version\":[9223372036854775806]}}"));
    /* a hashed document without ss_version is no write of searchsync's */
    assert_true(foreign("{\"_id\":\"1\",\"_version\":3}"));
    assert_true(foreign("{\"_id\":\"1\",\"fields\":{\"ss_version\":[3]}}"));
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_equal), cmocka_unit_test(test_paths),
                                       cmocka_unit_test(test_hashes), cmocka_unit_test(test_content_hash_every_bit),
                                       cmocka_unit_test(test_versions)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
