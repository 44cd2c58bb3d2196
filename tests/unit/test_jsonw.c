/* Unit tests of the streaming JSON writer (src/jsonw.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "jsonw.h"

static void test_nesting_and_commas(void **state) {
    (void)state;
    sbuf b = SBUF_INIT;
    jsonw w;
    jw_init(&w, &b);
    jw_obj_open(&w);
    jw_key(&w, "a");
    jw_int(&w, 1);
    jw_key(&w, "b");
    jw_arr_open(&w);
    jw_str(&w, "x");
    jw_null(&w);
    jw_bool(&w, true);
    jw_obj_open(&w);
    jw_obj_close(&w);
    jw_arr_close(&w);
    jw_key(&w, "c");
    jw_raw(&w, "{\"k\":[1,2]}", 11);
    jw_obj_close(&w);
    assert_string_equal(b.data, "{\"a\":1,\"b\":[\"x\",null,true,{}],\"c\":{\"k\":[1,2]}}");
    sbuf_free(&b);
}

static void test_integers_exact(void **state) {
    (void)state;
    sbuf b = SBUF_INIT;
    jsonw w;
    jw_init(&w, &b);
    jw_arr_open(&w);
    jw_uint(&w, UINT64_MAX);
    jw_int(&w, INT64_MIN);
    jw_int(&w, INT64_MAX);
    jw_int(&w, 0);
    jw_int(&w, -8388608);
    jw_arr_close(&w);
    assert_string_equal(
        b.data, "[18446744073709551615,-9223372036854775808,9223372036854775807,0,-8388608]");
    sbuf_free(&b);
}

static void test_shortest_round_trip(void **state) {
    (void)state;
    char buf[40];
    buf[fmt_float(buf, 1.1f)] = 0;
    assert_string_equal(buf, "1.1");
    buf[fmt_double(buf, 1.1)] = 0;
    assert_string_equal(buf, "1.1");
    buf[fmt_double(buf, 0.1 + 0.2)] = 0;
    assert_string_equal(buf, "0.30000000000000004");
    buf[fmt_double(buf, -2.5e-300)] = 0;
    assert_true(strtod(buf, NULL) == -2.5e-300);
    buf[fmt_float(buf, FLT_MAX)] = 0;
    assert_true(strtof(buf, NULL) == FLT_MAX);
    /* random doubles read back to the same bits */
    srand(42);
    for (int i = 0; i < 10000; i++) {
        uint64_t bits = ((uint64_t)rand() << 40) ^ ((uint64_t)rand() << 20) ^ (uint64_t)rand();
        double d;
        memcpy(&d, &bits, sizeof d);
        if (!isfinite(d)) continue;
        buf[fmt_double(buf, d)] = 0;
        assert_true(strtod(buf, NULL) == d);
    }
    /* common magnitudes take the fast path: still exact, and never longer
     * than the shortest %.Ng that reads back */
    for (int i = 0; i < 100000; i++) {
        double d = (double)rand() / RAND_MAX * pow(10, rand() % 14 - 4) * (i & 1 ? -1 : 1);
        float f = (float)d;
        char g[40];
        int n = fmt_double(buf, d);
        buf[n] = 0;
        assert_true(strtod(buf, NULL) == d);
        for (int prec = 1; prec <= 17; prec++) {
            snprintf(g, sizeof g, "%.*g", prec, d);
            if (strtod(g, NULL) == d) break;
        }
        if (!strchr(g, 'e')) assert_true(strlen(buf) <= strlen(g));
        n = fmt_float(buf, f);
        buf[n] = 0;
        assert_true(strtof(buf, NULL) == f);
        for (int prec = 1; prec <= 9; prec++) {
            snprintf(g, sizeof g, "%.*g", prec, (double)f);
            if (strtof(g, NULL) == f) break;
        }
        if (!strchr(g, 'e')) assert_true(strlen(buf) <= strlen(g));
    }
    sbuf b = SBUF_INIT;
    jsonw w;
    jw_init(&w, &b);
    jw_arr_open(&w);
    jw_double(&w, NAN);
    jw_double(&w, INFINITY);
    jw_arr_close(&w);
    assert_string_equal(b.data, "[null,null]");
    sbuf_free(&b);
}

/* a key escaped once and written for many objects */
static void test_key_json(void **state) {
    (void)state;
    sbuf names = SBUF_INIT, out = SBUF_INIT;
    json_escape(&names, "a\"b", 3);
    jsonw w;
    jw_init(&w, &out);
    jw_arr_open(&w);
    for (int i = 0; i < 2; i++) {
        jw_obj_open(&w);
        jw_key_json(&w, names.data, names.len);
        jw_int(&w, i);
        jw_key(&w, "c");
        jw_null(&w);
        jw_obj_close(&w);
    }
    jw_arr_close(&w);
    assert_string_equal(out.data, "[{\"a\\\"b\":0,\"c\":null},{\"a\\\"b\":1,\"c\":null}]");
    sbuf_free(&names);
    sbuf_free(&out);
}

static void test_escaping(void **state) {
    (void)state;
    sbuf b = SBUF_INIT;
    const char in[] = "a\"b\\c\n\t\x01 \xc3\xa9 \xf0\x9f\x98\x80 \xff\xc3";
    json_escape(&b, in, sizeof in - 1);
    assert_string_equal(b.data, "\"a\\\"b\\\\c\\n\\t\\u0001 \xc3\xa9 \xf0\x9f\x98\x80 "
                                "\xEF\xBF\xBD\xEF\xBF\xBD\"");
    sbuf_reset(&b);
    /* embedded NUL and an overlong encoding of '/' */
    json_escape(&b, "x\0y\xc0\xaf", 5);
    assert_string_equal(b.data, "\"x\\u0000y\xEF\xBF\xBD\xEF\xBF\xBD\"");
    sbuf_free(&b);
}

static void test_sbuf_growth(void **state) {
    (void)state;
    sbuf b = SBUF_INIT;
    for (int i = 0; i < 100000; i++) sbuf_printf(&b, "%d,", i % 10);
    assert_int_equal(b.len, 200000);
    assert_int_equal(b.data[b.len], '\0');
    char *s = sbuf_detach(&b);
    assert_null(b.data);
    free(s);
    sbuf_free(&b); /* NULL-safe after detach */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nesting_and_commas), cmocka_unit_test(test_integers_exact),
        cmocka_unit_test(test_shortest_round_trip), cmocka_unit_test(test_escaping),
        cmocka_unit_test(test_sbuf_growth), cmocka_unit_test(test_key_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
