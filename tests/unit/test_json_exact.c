/* Unit tests of the exact-number JSON parser (src/json_exact.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "json_exact.h"
#include "sbuf.h"

static void roundtrip(const char *in, const char *want) {
    cJSON *j = json_exact_parse(in, strlen(in));
    if (!j) fail_msg("did not parse: %s", in);
    char *s = cJSON_PrintUnformatted(j);
    assert_string_equal(s, want);
    cJSON_free(s);
    cJSON_Delete(j);
}

static void test_numbers_stay_exact(void **state) {
    (void)state;
    roundtrip("[18446744073709551615,-9223372036854775808,9007199254740993]",
              "[18446744073709551615,-9223372036854775808,9007199254740993]");
    roundtrip("{\"d\":-42000.123456000000000000000000001,\"e\":1.5E+300,\"z\":-0}",
              "{\"d\":-42000.123456000000000000000000001,\"e\":1.5E+300,\"z\":-0}");
}

static void test_strings_and_literals(void **state) {
    (void)state;
    roundtrip(" { \"a\" : [ true , false , null , \"x\\\"y\\\\\\/\\n\" ] } ",
              "{\"a\":[true,false,null,\"x\\\"y\\\\/\\n\"]}");
    /* \u escapes, including a surrogate pair, become UTF-8 */
    cJSON *j = json_exact_parse("\"\\u00e9\\ud83d\\ude00\"", 20);
    assert_non_null(j);
    assert_string_equal(j->valuestring, "\xc3\xa9\xf0\x9f\x98\x80");
    cJSON_Delete(j);
}

static void test_edit_keeps_other_numbers(void **state) {
    (void)state;
    const char *doc = "{\"id\":18446744073709551615,\"tags\":[1,2]}";
    cJSON *j = json_exact_parse(doc, strlen(doc));
    assert_non_null(j);
    cJSON *nv = json_exact_parse("12345678901234567890", 20);
    cJSON_ReplaceItemInArray(cJSON_GetObjectItem(j, "tags"), 0, nv);
    char *s = cJSON_PrintUnformatted(j);
    assert_string_equal(s, "{\"id\":18446744073709551615,\"tags\":[12345678901234567890,2]}");
    cJSON_free(s);
    cJSON_Delete(j);
}

static void test_malformed(void **state) {
    (void)state;
    const char *bad[] = {"", "{", "[1,]", "{\"a\"}", "{\"a\":}", "01", "1.", "1e", "-",
                         "\"abc", "\"\\x\"", "\"\\ud800\"", "\"\\u0000\"", "[1] 2", "tru",
                         "{\"a\":1,}", "\"a\nb\""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (json_exact_parse(bad[i], strlen(bad[i])))
            fail_msg("accepted malformed input: %s", bad[i]);
    /* nesting limit instead of a stack overflow */
    sbuf b = SBUF_INIT;
    for (int i = 0; i < 100000; i++) sbuf_addc(&b, '[');
    assert_null(json_exact_parse(b.data, b.len));
    sbuf_free(&b);
}

/* json_exact_parse_nul: a string may hold NUL bytes (canal's binary values),
 * all of them kept, their count from json_exact_strlen; json_exact_parse
 * still refuses them (test_malformed) */
static void test_nul_strings(void **state) {
    (void)state;
    const char *doc = "{\"b\":\"\\u0000\u00ff\\u0000\",\"z\":\"\\u0000\",\"s\":\"ab\",\"n\":12}";
    size_t at = 99;
    cJSON *j = json_exact_parse_nul(doc, strlen(doc), &at);
    assert_non_null(j);
    const cJSON *b = cJSON_GetObjectItem(j, "b"), *z = cJSON_GetObjectItem(j, "z");
    assert_int_equal(json_exact_strlen(b), 4); /* 00 C3 BF 00 */
    assert_memory_equal(b->valuestring, "\0\xc3\xbf\0", 5);
    assert_int_equal(json_exact_strlen(z), 1);
    assert_int_equal(z->valuestring[0], 0);
    assert_int_equal(json_exact_strlen(cJSON_GetObjectItem(j, "s")), 2);
    assert_int_equal(json_exact_strlen(cJSON_GetObjectItem(j, "n")), 2); /* raw number text */
    assert_int_equal(json_exact_strlen(NULL), 0);
    cJSON_Delete(j);
    assert_null(json_exact_parse_nul("\"a\\u0000", 8, &at));
    assert_int_equal(at, 8);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numbers_stay_exact),
        cmocka_unit_test(test_strings_and_literals),
        cmocka_unit_test(test_edit_keeps_other_numbers),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_nul_strings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
