/* Unit tests of the pure parts of the admin HTTP server: request checks
 * (web/guard.c: token, Host, Origin, Content-Type), routing and body parsing
 * (web/route.c), and the JSON error shape (web/api.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "json_exact.h"
#include "web/api.h"
#include "web/guard.h"
#include "web/route.h"

static const char TOKEN[] = "0123456789abcdef0123456789abcdef";

static bool tok(const char *given) {
    return guard_token_equal(given, strlen(given), TOKEN, strlen(TOKEN));
}

static void test_token(void **state) {
    (void)state;
    assert_true(tok(TOKEN));
    assert_false(tok(""));
    assert_false(tok("0123456789abcdef0123456789abcde"));   /* a prefix */
    assert_false(tok("0123456789abcdef0123456789abcdef0")); /* longer */
    assert_false(tok("0123456789abcdef0123456789abcdeF"));  /* case matters */
    assert_false(tok("x123456789abcdef0123456789abcdef"));
    assert_false(guard_token_equal("", 0, "", 0)); /* no token configured never matches */
    /* embedded NUL: lengths count, not C strings */
    assert_false(guard_token_equal("0123456789abcdef0123456789abcdef\0x", 34, TOKEN, 32));
}

static void test_bearer(void **state) {
    (void)state;
    size_t n = 0;
    const char *t = guard_bearer("Bearer abc", &n);
    assert_non_null(t);
    assert_int_equal(n, 3);
    assert_memory_equal(t, "abc", 3);
    t = guard_bearer("  bearer   abc  ", &n);
    assert_non_null(t);
    assert_int_equal(n, 3);
    assert_null(guard_bearer("Basic abc", &n));
    assert_null(guard_bearer("Bearer", &n));
    assert_null(guard_bearer("Bearer   ", &n));
    assert_null(guard_bearer("Bearerabc", &n));
    assert_null(guard_bearer(NULL, &n));
}

static void test_host(void **state) {
    (void)state;
    const char *allowed = "127.0.0.1, localhost,admin.example:8443,[::1]";
    assert_true(guard_host_allowed(allowed, "127.0.0.1"));
    assert_true(guard_host_allowed(allowed, "127.0.0.1:8089"));
    assert_true(guard_host_allowed(allowed, "LocalHost:1"));
    assert_true(guard_host_allowed(allowed, "admin.example:8443"));
    assert_false(guard_host_allowed(allowed, "admin.example:80"));  /* port pinned */
    assert_false(guard_host_allowed(allowed, "admin.example"));
    assert_true(guard_host_allowed(allowed, "[::1]:8089"));
    assert_true(guard_host_allowed(allowed, "[::1]"));
    assert_false(guard_host_allowed(allowed, "::1"));               /* unbracketed v6 */
    assert_false(guard_host_allowed(allowed, "evil.example"));      /* DNS rebinding */
    assert_false(guard_host_allowed(allowed, "evil.example:8089"));
    assert_false(guard_host_allowed(allowed, "127.0.0.1.evil.example"));
    assert_false(guard_host_allowed(allowed, "localhost.:8089"));
    assert_false(guard_host_allowed(allowed, "127.0.0.1:"));
    assert_false(guard_host_allowed(allowed, "127.0.0.1:80x"));
    assert_false(guard_host_allowed(allowed, "user@127.0.0.1"));
    assert_false(guard_host_allowed(allowed, ""));
    assert_false(guard_host_allowed(allowed, NULL));
    assert_false(guard_host_allowed("", "127.0.0.1"));
    assert_false(guard_host_allowed(NULL, "127.0.0.1"));
}

static void test_origin(void **state) {
    (void)state;
    const char *allowed = "127.0.0.1,localhost";
    assert_true(guard_origin_allowed(allowed, "http://127.0.0.1:8089"));
    assert_true(guard_origin_allowed(allowed, "https://localhost"));
    assert_true(guard_origin_allowed(allowed, "http://localhost:8089/"));
    assert_false(guard_origin_allowed(allowed, "http://evil.example"));
    assert_false(guard_origin_allowed(allowed, "http://evil.example:8089"));
    assert_false(guard_origin_allowed(allowed, "null"));
    assert_false(guard_origin_allowed(allowed, "localhost"));
    assert_false(guard_origin_allowed(allowed, "http://localhost/path"));
    assert_false(guard_origin_allowed(allowed, "http://127.0.0.1@evil.example"));
    assert_false(guard_origin_allowed(allowed, "://localhost"));
    assert_false(guard_origin_allowed(allowed, NULL));
}

static void test_content_type(void **state) {
    (void)state;
    assert_true(guard_is_json_type("application/json"));
    assert_true(guard_is_json_type("Application/JSON; charset=utf-8"));
    assert_false(guard_is_json_type("application/jsonx"));
    assert_false(guard_is_json_type("text/plain"));
    assert_false(guard_is_json_type("application/x-www-form-urlencoded"));
    assert_false(guard_is_json_type(NULL));
}

static void route_is(const char *method, const char *path, enum route_id id, const char *alias) {
    struct route r;
    route_match(method, path, &r);
    assert_int_equal(r.id, id);
    assert_string_equal(r.alias, alias);
}

static void test_routes(void **state) {
    (void)state;
    route_is("GET", "/api/v1/status", ROUTE_STATUS, "");
    route_is("HEAD", "/api/v1/status", ROUTE_STATUS, "");
    route_is("GET", "/api/v1/indices", ROUTE_INDICES, "");
    route_is("GET", "/api/v1/indices/products/reindex", ROUTE_REINDEX_GET, "products");
    route_is("POST", "/api/v1/indices/products/reindex", ROUTE_REINDEX_POST, "products");
    route_is("POST", "/api/v1/indices/shop.v-2_x/reindex/reset", ROUTE_REINDEX_RESET,
             "shop.v-2_x");
    route_is("GET", "/metrics", ROUTE_METRICS, "");
    /* not found: unknown paths, trailing slashes, bad aliases */
    route_is("GET", "/", ROUTE_NOT_FOUND, "");
    route_is("GET", "/api/v1/status/", ROUTE_NOT_FOUND, "");
    route_is("GET", "/api/v2/status", ROUTE_NOT_FOUND, "");
    route_is("GET", "/api/v1/indices/", ROUTE_NOT_FOUND, "");
    route_is("GET", "/api/v1/indices//reindex", ROUTE_NOT_FOUND, "");
    route_is("GET", "/api/v1/indices/a b/reindex", ROUTE_NOT_FOUND, "");
    route_is("GET", "/api/v1/indices/a'b/reindex", ROUTE_NOT_FOUND, "");
    route_is("GET", "/api/v1/indices/../reindex", ROUTE_NOT_FOUND, "");
    route_is("GET", "/api/v1/indices/products/reindex/x", ROUTE_NOT_FOUND, "");
    route_is("GET", "/api/v1/indices/products", ROUTE_NOT_FOUND, "");
    char longp[400] = "/api/v1/indices/";
    memset(longp + strlen(longp), 'a', 256);
    strcat(longp, "/reindex");
    route_is("GET", longp, ROUTE_NOT_FOUND, "");
    /* wrong methods: 405 with the allowed ones */
    struct route r;
    route_match("POST", "/api/v1/status", &r);
    assert_int_equal(r.id, ROUTE_BAD_METHOD);
    assert_string_equal(r.allow, "GET, HEAD");
    route_match("DELETE", "/api/v1/indices/products/reindex", &r);
    assert_int_equal(r.id, ROUTE_BAD_METHOD);
    assert_string_equal(r.allow, "GET, HEAD, POST");
    route_match("GET", "/api/v1/indices/products/reindex/reset", &r);
    assert_int_equal(r.id, ROUTE_BAD_METHOD);
    assert_string_equal(r.allow, "POST");
    route_match("PUT", "/metrics", &r);
    assert_int_equal(r.id, ROUTE_BAD_METHOD);
    /* only POST is mutating */
    route_match("POST", "/api/v1/indices/products/reindex", &r);
    assert_true(r.mutating);
    route_match("GET", "/api/v1/indices/products/reindex", &r);
    assert_false(r.mutating);
}

static int body(const char *b, int *buckets, bool *by_mod, const char **field) {
    char err[256];
    return route_parse_reindex_body(b, b ? strlen(b) : 0, buckets, by_mod, field, err,
                                    sizeof err);
}

static void test_body(void **state) {
    (void)state;
    int n = -1;
    bool m = true;
    const char *f = NULL;
    assert_int_equal(body(NULL, &n, &m, &f), 0);
    assert_int_equal(n, 0);
    assert_false(m);
    assert_int_equal(body(" \n", &n, &m, &f), 0);
    assert_int_equal(body("{}", &n, &m, &f), 0);
    assert_int_equal(n, 0);
    assert_int_equal(body("{\"buckets\":8,\"by_mod\":true}", &n, &m, &f), 0);
    assert_int_equal(n, 8);
    assert_true(m);
    assert_int_equal(body("{\"buckets\":4096}", &n, &m, &f), 0);
    assert_int_equal(n, 4096);
    assert_false(m);
    /* each bad field is named */
    const char *bad_buckets[] = {"{\"buckets\":0}", "{\"buckets\":4097}", "{\"buckets\":-1}",
                                 "{\"buckets\":2.5}", "{\"buckets\":1e3}", "{\"buckets\":\"8\"}",
                                 "{\"buckets\":null}",
                                 "{\"buckets\":99999999999999999999999}"};
    for (size_t i = 0; i < sizeof bad_buckets / sizeof *bad_buckets; i++) {
        assert_int_equal(body(bad_buckets[i], &n, &m, &f), -1);
        assert_string_equal(f, "buckets");
    }
    assert_int_equal(body("{\"by_mod\":1}", &n, &m, &f), -1);
    assert_string_equal(f, "by_mod");
    char err[256];
    assert_int_equal(route_parse_reindex_body("{\"bucket\":2}", 12, &n, &m, &f, err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "\"bucket\""));
    /* not an object, or not JSON */
    assert_int_equal(body("[1]", &n, &m, &f), -1);
    assert_string_equal(f, "");
    assert_int_equal(body("{\"buckets\":", &n, &m, &f), -1);
    assert_int_equal(body("buckets=8", &n, &m, &f), -1);
}

static void test_errors(void **state) {
    (void)state;
    struct api_resp r = {0};
    api_error(&r, 404, "no index config \"x\"", "a \"hint\"");
    assert_int_equal(r.status, 404);
    cJSON *j = json_exact_parse(r.body.data, r.body.len);
    assert_non_null(j);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "error")),
                        "no index config \"x\"");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "hint")), "a \"hint\"");
    cJSON_Delete(j);
    /* unknown routes and wrong methods need no context */
    struct route rt;
    route_match("DELETE", "/api/v1/status", &rt);
    api_handle(NULL, &rt, NULL, 0, &r);
    assert_int_equal(r.status, 405);
    assert_string_equal(r.allow, "GET, HEAD");
    route_match("GET", "/nope", &rt);
    api_handle(NULL, &rt, NULL, 0, &r);
    assert_int_equal(r.status, 404);
    assert_non_null(strstr(r.body.data, "\"error\""));
    api_resp_free(&r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_token),  cmocka_unit_test(test_bearer),
        cmocka_unit_test(test_host),   cmocka_unit_test(test_origin),
        cmocka_unit_test(test_content_type), cmocka_unit_test(test_routes),
        cmocka_unit_test(test_body),   cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
