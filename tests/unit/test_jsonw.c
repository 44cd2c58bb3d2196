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

/* every digit count and the carries between them, against printf */
static void test_fmt_u64_every_width(void **state) {
    (void)state;
    char got[32], want[32];
    uint64_t p = 1;
    for (int d = 0; d < 20; d++, p *= 10) {
        uint64_t vs[] = {p - 1, p, p + 1, p * 5 + 7, p * 9 + (p - 1)};
        for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++) {
            if (d == 19 && i == 4) vs[i] = UINT64_MAX;
            got[fmt_u64(got, vs[i])] = 0;
            snprintf(want, sizeof want, "%llu", (unsigned long long)vs[i]);
            assert_string_equal(got, want);
        }
    }
    for (uint64_t v = 0; v < 100000; v += 7) {
        got[fmt_u64(got, v * 2654435761u)] = 0;
        snprintf(want, sizeof want, "%llu", (unsigned long long)(v * 2654435761u));
        assert_string_equal(got, want);
    }
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

/* Random strings of tokens whose escaped form is known, so every byte value
 * that needs care lands at every offset of the 8-byte words the escaper
 * skips whole: plain ASCII, '"', '\\', control bytes, NUL, valid 2- to
 * 4-byte UTF-8, and bytes that start or continue no valid sequence. */
static void test_escaping_at_every_offset(void **state) {
    (void)state;
    static const struct { const char *in, *out; } tok[] = {
        {"a", "a"}, {"Z", "Z"}, {" ", " "}, {"~", "~"}, {"\x7f", "\x7f"},
        {"\"", "\\\""}, {"\\", "\\\\"}, {"\n", "\\n"}, {"\x1f", "\\u001f"},
        {"\xc3\xa9", "\xc3\xa9"}, {"\xe2\x82\xac", "\xe2\x82\xac"},
        {"\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80"}, {"\xff", "\xEF\xBF\xBD"},
        {"\x80", "\xEF\xBF\xBD"},
    };
    const size_t ntok = sizeof tok / sizeof tok[0];
    sbuf in = SBUF_INIT, want = SBUF_INIT, got = SBUF_INIT;
    unsigned seed = 12345;
    for (int round = 0; round < 20000; round++) {
        sbuf_reset(&in);
        sbuf_reset(&want);
        sbuf_reset(&got);
        sbuf_addc(&want, '"');
        seed = seed * 1103515245u + 12345u;
        int len = (int)(seed >> 16) % 40;
        bool nul = (seed >> 8) % 7 == 0;
        for (int k = 0; k < len; k++) {
            seed = seed * 1103515245u + 12345u;
            /* mostly plain letters, as real values are */
            size_t t = (seed >> 16) % 4 ? (seed >> 20) % 4 : (seed >> 16) % ntok;
            if (nul && k == len / 2) {
                sbuf_add(&in, "\0", 1);
                sbuf_adds(&want, "\\u0000");
                continue;
            }
            sbuf_adds(&in, tok[t].in);
            sbuf_adds(&want, tok[t].out);
        }
        sbuf_addc(&want, '"');
        json_escape(&got, in.data ? in.data : "", in.len);
        assert_int_equal(got.len, want.len);
        assert_memory_equal(got.data, want.data, want.len);
    }
    sbuf_free(&in);
    sbuf_free(&want);
    sbuf_free(&got);
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
        cmocka_unit_test(test_fmt_u64_every_width),
        cmocka_unit_test(test_shortest_round_trip), cmocka_unit_test(test_escaping),
        cmocka_unit_test(test_escaping_at_every_offset),
        cmocka_unit_test(test_sbuf_growth), cmocka_unit_test(test_key_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
