/* Unit tests of the pure parts of the admin HTTP server: request checks
 * (web/guard.c: token, Host, Origin, Content-Type), routing and body parsing
 * (web/route.c), the JSON error shape (web/api.c), log escaping, sessions,
 * the failed-login limit, connection admission (on socketpairs) and the
 * dynamic words' input checks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "json_exact.h"
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "web/admission.h"
#include "web/api.h"
#include "web/guard.h"
#include "web/metrics.h"
#include "web/ratelimit.h"
#include "web/route.h"
#include "web/session.h"
#include "web/ui_assets.h"
#include "web/words.h"

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
    route_is("GET", "/api/v1/checks", ROUTE_CHECKS, "");
    route_is("GET", "/api/v1/delayed/runs", ROUTE_DELAYED_RUNS, "");
    route_is("GET", "/api/v1/delayed/snapshots", ROUTE_DELAYED_SNAPSHOTS, "");
    route_is("GET", "/api/v1/delayed/relation-tops", ROUTE_RELATION_TOPS, "");
    route_is("GET", "/api/v1/delayed", ROUTE_NOT_FOUND, "");
    route_is("GET", "/api/v1/indices/products/checks", ROUTE_CHECKS, "products");
    route_is("POST", "/api/v1/checks", ROUTE_BAD_METHOD, "");
    route_is("GET", "/api/v1/indices/products/checks/1", ROUTE_NOT_FOUND, "");
    route_is("GET", "/api/v1/dead-letters", ROUTE_DEAD_LETTERS_LIST, "");
    route_is("POST", "/api/v1/indices/products/resync", ROUTE_RESYNC, "products");
    route_is("GET", "/api/v1/indices/products/resync", ROUTE_BAD_METHOD, "products");
    route_is("POST", "/api/v1/indices/products/delete-all", ROUTE_DELETE_ALL, "products");
    route_is("GET", "/api/v1/sync-log", ROUTE_SYNC_LOG, "");
    route_is("GET", "/api/v1/indices/products/runs", ROUTE_RUNS, "products");
    route_is("GET", "/api/v1/mapping", ROUTE_MAPPING_GET, "");
    route_is("POST", "/api/v1/mapping/plan", ROUTE_MAPPING_PLAN, "");
    route_is("POST", "/api/v1/mapping/apply", ROUTE_MAPPING_APPLY, "");
    route_is("GET", "/api/v1/mapping/apply", ROUTE_BAD_METHOD, "");
    route_is("GET", "/api/v1/source/tables", ROUTE_SOURCE_TABLES, "");
    route_is("GET", "/api/v1/source/tables/shop/products/mapping", ROUTE_SOURCE_TABLE_MAPPING, "");
    route_is("GET", "/api/v1/source/tables/shop/products", ROUTE_NOT_FOUND, "");
    route_is("GET", "/api/v1/source/tables/sh.op/products/mapping", ROUTE_NOT_FOUND, "");
    route_is("GET", "/api/v1/source/tables//products/mapping", ROUTE_NOT_FOUND, "");
    route_is("POST", "/api/v1/dead-letters/replay", ROUTE_DEAD_LETTERS_REPLAY, "");
    route_is("GET", "/api/v1/dead-letters/replay", ROUTE_BAD_METHOD, "");
    route_is("GET", "/api/v1/dead-letters/41", ROUTE_DEAD_LETTER_GET, "");
    route_is("DELETE", "/api/v1/dead-letters/41", ROUTE_DEAD_LETTER_DELETE, "");
    route_is("PUT", "/api/v1/dead-letters/41", ROUTE_BAD_METHOD, "");
    route_is("GET", "/api/v1/dead-letters/041", ROUTE_NOT_FOUND, "");
    route_is("GET", "/api/v1/dead-letters/4x", ROUTE_NOT_FOUND, "");
    route_is("GET", "/api/v1/dead-letters/1234567890123456789", ROUTE_NOT_FOUND, "");
    route_is("DELETE", "/api/v1/dead-letters/", ROUTE_NOT_FOUND, "");
    route_is("GET", "/api/v1/topics", ROUTE_TOPICS_LIST, "");
    route_is("POST", "/api/v1/topics", ROUTE_TOPIC_ADD, "");
    route_is("DELETE", "/api/v1/topics", ROUTE_BAD_METHOD, "");
    route_is("DELETE", "/api/v1/topics/cdc.orders-1_x", ROUTE_TOPIC_DELETE, "cdc.orders-1_x");
    route_is("GET", "/api/v1/topics/cdc.orders", ROUTE_BAD_METHOD, "cdc.orders");
    route_is("DELETE", "/api/v1/topics/..", ROUTE_NOT_FOUND, "");
    route_is("DELETE", "/api/v1/topics/a%20b", ROUTE_NOT_FOUND, "");
    route_is("DELETE", "/api/v1/topics/", ROUTE_NOT_FOUND, "");
    route_is("GET", "/api/v1/sources", ROUTE_SOURCES_LIST, "");
    route_is("POST", "/api/v1/sources", ROUTE_SOURCE_ADD, "");
    route_is("PUT", "/api/v1/sources", ROUTE_BAD_METHOD, "");
    route_is("PUT", "/api/v1/sources/west-2.a", ROUTE_SOURCE_EDIT, "west-2.a");
    route_is("DELETE", "/api/v1/sources/west", ROUTE_SOURCE_REMOVE, "west");
    route_is("GET", "/api/v1/sources/west", ROUTE_BAD_METHOD, "west");
    route_is("PUT", "/api/v1/sources/a%2Fb", ROUTE_NOT_FOUND, "");
    route_is("PUT", "/api/v1/sources/../etc", ROUTE_NOT_FOUND, "");
    route_is("DELETE", "/api/v1/sources/"
             "a123456789b123456789c123456789d123456789e123456789f123456789g1234", ROUTE_NOT_FOUND, "");
    {
        struct route r;
        route_match("DELETE", "/api/v1/topics/cdc.x", &r);
        assert_true(r.mutating);
        route_match("POST", "/api/v1/topics", &r);
        assert_true(r.mutating);
        route_match("GET", "/api/v1/topics", &r);
        assert_false(r.mutating);
    }
    {
        struct route r;
        route_match("DELETE", "/api/v1/dead-letters/41", &r);
        assert_string_equal(r.row_id, "41");
        assert_true(r.mutating);
    }
    /* not found: unknown paths, trailing slashes, bad aliases */
    route_is("GET", "//", ROUTE_NOT_FOUND, "");
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

/* the web UI: / and /ui/... are read-only, need a session or the token,
 * and are served from the embedded files with ETag revalidation */
static void test_ui_assets(void **state) {
    (void)state;
    route_is("GET", "/", ROUTE_UI, "");
    route_is("HEAD", "/", ROUTE_UI, "");
    route_is("GET", "/ui/app.js", ROUTE_UI, "");
    struct route r;
    route_match("GET", "/", &r);
    assert_false(r.public);
    assert_false(r.mutating);
    route_match("POST", "/ui/app.js", &r);
    assert_int_equal(r.id, ROUTE_BAD_METHOD);
    assert_string_equal(r.allow, "GET, HEAD");

    struct api_resp resp = {0};
    ui_asset_serve("/", NULL, &resp);
    assert_int_equal(resp.status, 200);
    assert_string_equal(resp.content_type, "text/html; charset=utf-8");
    assert_non_null(strstr(resp.body.data, "<script type=\"module\" src=\"/ui/app.js\">"));
    assert_non_null(strstr(resp.headers.data, "Cache-Control: private, no-cache\n"));
    const struct ui_asset *a = ui_asset_find("/");
    assert_non_null(a);
    char line[80];
    snprintf(line, sizeof line, "ETag: %s\n", a->etag);
    assert_non_null(strstr(resp.headers.data, line));
    api_resp_free(&resp);
    /* revalidation: the same ETag (also weak, or in a list) -> 304, no body */
    char inm[100];
    const char *lists[] = {a->etag, inm, "*"};
    snprintf(inm, sizeof inm, "\"other\", W/%s", a->etag);
    for (size_t i = 0; i < 3; i++) {
        struct api_resp n = {0};
        ui_asset_serve("/", lists[i], &n);
        assert_int_equal(n.status, 304);
        assert_int_equal(n.body.len, 0);
        api_resp_free(&n);
    }
    struct api_resp other = {0};
    ui_asset_serve("/", "\"other\"", &other);
    assert_int_equal(other.status, 200);
    api_resp_free(&other);
    struct api_resp missing = {0};
    ui_asset_serve("/ui/nosuch.js", NULL, &missing);
    assert_int_equal(missing.status, 404);
    assert_non_null(strstr(missing.body.data, "\"error\""));
    api_resp_free(&missing);
    /* every screen listed is an ES module served as JavaScript */
    const struct ui_asset *list = ui_asset_find("/ui/screens.json");
    assert_non_null(list);
    cJSON *names = cJSON_ParseWithLength((const char *)list->data, list->len);
    assert_true(cJSON_IsArray(names));
    assert_true(cJSON_GetArraySize(names) >= 6);
    cJSON *it;
    cJSON_ArrayForEach(it, names) {
        char path[200];
        snprintf(path, sizeof path, "/ui/screens/%s.js", it->valuestring);
        const struct ui_asset *s = ui_asset_find(path);
        assert_non_null(s);
        assert_string_equal(s->content_type, "text/javascript; charset=utf-8");
    }
    cJSON_Delete(names);
    assert_non_null(ui_asset_find("/ui/app.css"));
    assert_string_equal(ui_asset_find("/ui/app.css")->content_type, "text/css; charset=utf-8");
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

static void test_log_escape(void **state) {
    (void)state;
    char out[64];
    const char *forged = "/x\n2099-01-01T00:00:00Z ERROR [admin] forged";
    guard_log_escape(forged, strlen(forged), out, sizeof out);
    assert_null(strchr(out, '\n'));
    assert_non_null(strstr(out, "/x\\x0a2099"));
    assert_string_equal(guard_log_escape("a\r\tb\\\x7f", 6, out, sizeof out),
                        "a\\x0d\\x09b\\x5c\\x7f");
    char small[12];
    guard_log_escape("0123456789abcdef", 16, small, sizeof small);
    assert_string_equal(small, "01234567...");
    assert_string_equal(guard_log_escape(NULL, 0, out, sizeof out), "");
}

static void test_cookie_loopback_etag(void **state) {
    (void)state;
    size_t n = 0;
    const char *v = guard_cookie("a=1; ss_session=abc; b=2", "ss_session", &n);
    assert_non_null(v);
    assert_int_equal(n, 3);
    assert_memory_equal(v, "abc", 3);
    assert_null(guard_cookie("xss_session=abc", "ss_session", &n));
    assert_null(guard_cookie(NULL, "ss_session", &n));
    assert_true(guard_is_loopback("127.0.0.1"));
    assert_true(guard_is_loopback("127.1.2.3"));
    assert_true(guard_is_loopback("::1"));
    assert_true(guard_is_loopback("::ffff:127.0.0.1"));
    assert_false(guard_is_loopback("0.0.0.0"));
    assert_false(guard_is_loopback("::"));
    assert_false(guard_is_loopback("10.0.0.1"));
    assert_true(guard_etag_matches("\"a\"", "\"a\""));
    assert_true(guard_etag_matches("\"x\", W/\"a\"", "\"a\""));
    assert_true(guard_etag_matches("*", "\"a\""));
    assert_false(guard_etag_matches("\"ab\"", "\"a\""));
    assert_false(guard_etag_matches(NULL, "\"a\""));
}

static void test_routes_new(void **state) {
    (void)state;
    struct route r;
    route_match("POST", "/api/v1/login", &r);
    assert_int_equal(r.id, ROUTE_LOGIN);
    assert_true(r.public);
    assert_true(r.mutating);
    route_match("GET", "/api/v1/words", &r);
    assert_int_equal(r.id, ROUTE_WORDS_LIST);
    assert_false(r.public);
    route_match("PUT", "/api/v1/words/42", &r);
    assert_int_equal(r.id, ROUTE_WORD_UPDATE);
    assert_string_equal(r.word_id, "42");
    assert_true(r.mutating);
    route_match("DELETE", "/api/v1/words/42", &r);
    assert_int_equal(r.id, ROUTE_WORD_DELETE);
    route_match("POST", "/api/v1/words/42/publish", &r);
    assert_int_equal(r.id, ROUTE_WORD_PUBLISH);
    route_match("POST", "/api/v1/words/42", &r);
    assert_int_equal(r.id, ROUTE_BAD_METHOD);
    assert_string_equal(r.allow, "GET, HEAD, PUT, DELETE");
    route_is("GET", "/api/v1/words/042", ROUTE_NOT_FOUND, "");
    route_is("GET", "/api/v1/words/4x", ROUTE_NOT_FOUND, "");
    route_is("GET", "/api/v1/words/1234567890123456789", ROUTE_NOT_FOUND, "");
    route_match("HEAD", "/dict/ext.txt", &r);
    assert_int_equal(r.id, ROUTE_DICT);
    assert_string_equal(r.file, "ext");
    assert_true(r.public);
    route_match("GET", "/dict/stop.txt", &r);
    assert_string_equal(r.file, "stop");
    route_match("POST", "/dict/stop.txt", &r);
    assert_int_equal(r.id, ROUTE_BAD_METHOD);
    route_is("GET", "/dict/ext.txt%00", ROUTE_NOT_FOUND, "");
    route_is("GET", "/api/v1/status%00", ROUTE_NOT_FOUND, "");
}

static void test_sessions(void **state) {
    (void)state;
    struct sessions *ss = sessions_new(60);
    char id[SESSION_HEX + 1], csrf[SESSION_HEX + 1], got[SESSION_HEX + 1];
    time_t exp = 0;
    assert_int_equal(sessions_create(ss, 1000, id, csrf, &exp), 0);
    assert_int_equal(exp, 1060);
    assert_int_equal(strlen(id), SESSION_HEX);
    assert_string_not_equal(id, csrf);
    assert_true(sessions_check(ss, id, SESSION_HEX, 1059, got, NULL));
    assert_string_equal(got, csrf);
    assert_false(sessions_check(ss, id, SESSION_HEX - 1, 1000, NULL, NULL)); /* a prefix */
    assert_false(sessions_check(ss, csrf, SESSION_HEX, 1000, NULL, NULL));  /* not an id */
    assert_false(sessions_check(ss, id, SESSION_HEX, 1060, NULL, NULL));    /* expired */
    assert_false(sessions_check(ss, id, SESSION_HEX, 1000, NULL, NULL));    /* and forgotten */
    assert_int_equal(sessions_create(ss, 2000, id, csrf, &exp), 0);
    assert_true(sessions_delete(ss, id, SESSION_HEX));
    assert_false(sessions_check(ss, id, SESSION_HEX, 2001, NULL, NULL)); /* logged out */
    /* full: the one closest to expiry makes room */
    char first[SESSION_HEX + 1];
    for (int i = 0; i < SESSION_MAX + 1; i++) {
        assert_int_equal(sessions_create(ss, 3000 + i, id, csrf, &exp), 0);
        if (i == 0) memcpy(first, id, sizeof first);
    }
    assert_false(sessions_check(ss, first, SESSION_HEX, 3100, NULL, NULL));
    assert_true(sessions_check(ss, id, SESSION_HEX, 3100, NULL, NULL));
    sessions_free(ss);
}

static void test_ratelimit(void **state) {
    (void)state;
    struct ratelimit *rl = ratelimit_new(3, 60);
    int retry = 0;
    for (int i = 0; i < 3; i++) {
        assert_false(ratelimit_blocked(rl, "10.0.0.1", 100 + i, &retry));
        ratelimit_failure(rl, "10.0.0.1", 100 + i);
    }
    assert_true(ratelimit_blocked(rl, "10.0.0.1", 110, &retry));
    assert_int_equal(retry, 50);
    assert_false(ratelimit_blocked(rl, "10.0.0.2", 110, &retry)); /* per address */
    assert_false(ratelimit_blocked(rl, "10.0.0.1", 160, &retry)); /* the window ended */
    /* failures from more addresses than it remembers: none of them blocks
     * an address that never failed, and the blocked one stays blocked
     * while newer ones come (the stalest entry goes first) */
    for (int i = 0; i < 3; i++) ratelimit_failure(rl, "10.0.0.1", 200);
    char a[32];
    for (int i = 0; i < RATELIMIT_ADDRS - 1; i++) {
        snprintf(a, sizeof a, "10.1.%d.%d", i / 256, i % 256);
        for (int k = 0; k < 3; k++) ratelimit_failure(rl, a, 201);
    }
    assert_true(ratelimit_blocked(rl, "10.1.0.7", 202, &retry));
    assert_true(ratelimit_blocked(rl, "10.0.0.1", 202, &retry));
    assert_false(ratelimit_blocked(rl, "10.0.0.2", 202, &retry));
    assert_false(ratelimit_blocked(rl, "::1", 202, &retry));
    ratelimit_free(rl);
}

static void test_client_addr(void **state) {
    (void)state;
    char out[64];
    /* no proxy trusted: the peer, whatever X-Forwarded-For says */
    assert_string_equal("127.0.0.1", guard_client_addr("127.0.0.1", "10.0.0.9", NULL, out, sizeof out));
    assert_string_equal("127.0.0.1", guard_client_addr("127.0.0.1", "10.0.0.9", "", out, sizeof out));
    /* a peer that is not a trusted proxy: its header is not believed */
    assert_string_equal("192.0.2.5", guard_client_addr("192.0.2.5", "10.0.0.9", "127.0.0.1", out, sizeof out));
    /* behind the proxy: the client it names; from the right, proxies skipped
     * (what a client writes itself on the left is never taken past them) */
    assert_string_equal("10.0.0.9", guard_client_addr("127.0.0.1", "10.0.0.9", "127.0.0.1", out, sizeof out));
    assert_string_equal("10.0.0.9", guard_client_addr("127.0.0.1", "6.6.6.6, 10.0.0.9 , 127.0.0.2",
                                                      " 127.0.0.1 , 127.0.0.2", out, sizeof out));
    assert_string_equal("2001:db8::1", guard_client_addr("::1", "2001:db8::1", "::1", out, sizeof out));
    /* no header, an empty one, garbage: the peer */
    assert_string_equal("127.0.0.1", guard_client_addr("127.0.0.1", NULL, "127.0.0.1", out, sizeof out));
    assert_string_equal("127.0.0.1", guard_client_addr("127.0.0.1", "", "127.0.0.1", out, sizeof out));
    assert_string_equal("127.0.0.1", guard_client_addr("127.0.0.1", "unknown", "127.0.0.1", out, sizeof out));
    assert_string_equal("127.0.0.1", guard_client_addr("127.0.0.1", "10.0.0.9:4711", "127.0.0.1", out, sizeof out));
}

/* a connection whose server side is fd; true when the server cut it */
static bool was_cut(int client) {
    char c;
    return recv(client, &c, 1, MSG_DONTWAIT) == 0;
}

static void test_admission(void **state) {
    (void)state;
    struct adm_limits lim = {4, 3, 1, 2, 3};
    struct admission *a = adm_new(&lim);
    int sv[6][2];
    struct adm_slot *s[6];
    for (int i = 0; i < 6; i++) assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv[i]), 0);
    /* one address: the 4th goes over 3 per address and cuts the oldest
     * unauthenticated one (0), not the authenticated 1 */
    s[0] = adm_open(a, sv[0][0], "10.0.0.1");
    s[1] = adm_open(a, sv[1][0], "10.0.0.1");
    adm_authenticated(a, s[1]);
    s[2] = adm_open(a, sv[2][0], "10.0.0.1");
    s[3] = adm_open(a, sv[3][0], "10.0.0.1");
    assert_true(was_cut(sv[0][1]));
    assert_false(was_cut(sv[1][1]));
    assert_false(was_cut(sv[3][1]));
    assert_int_equal(adm_open_count(a), 3);
    /* another address: 4 in all; a 5th cuts the oldest unauthenticated
     * anywhere, one waiting for headers before one in a request */
    adm_request_start(a, s[2]);
    s[4] = adm_open(a, sv[4][0], "10.0.0.2");
    assert_int_equal(adm_open_count(a), 4);
    s[5] = adm_open(a, sv[5][0], "10.0.0.3");
    assert_true(was_cut(sv[3][1]));
    assert_false(was_cut(sv[2][1]));
    /* deadlines: headers within 1 s (s[4], s[5]), a request within 3 s (s[2]),
     * an authenticated idle connection 2 s (s[1]) */
    usleep(1600 * 1000);
    assert_true(was_cut(sv[4][1]));
    assert_true(was_cut(sv[5][1]));
    assert_false(was_cut(sv[2][1]));
    assert_false(was_cut(sv[1][1]));
    usleep(1000 * 1000);
    assert_true(was_cut(sv[1][1]));
    usleep(1000 * 1000);
    assert_true(was_cut(sv[2][1]));
    assert_true(adm_cut_count(a) >= 6);
    for (int i = 0; i < 6; i++) {
        adm_close(a, s[i]);
        close(sv[i][0]);
        close(sv[i][1]);
    }
    adm_free(a);
}

static int wbody(const char *b, bool create, const char **field) {
    char *word = NULL, err[256];
    const char *kind = NULL;
    int rc = words_parse_body(b, strlen(b), create, &word, &kind, field, err, sizeof err);
    free(word);
    return rc;
}

static void test_words_input(void **state) {
    (void)state;
    const char *f = NULL;
    char *word = NULL, err[256];
    const char *kind = NULL;
    const char *b = "{\"word\":\"x'; --\",\"kind\":\"stop\"}";
    assert_int_equal(words_parse_body(b, strlen(b), true, &word, &kind, &f, err, sizeof err), 0);
    assert_string_equal(word, "x'; --");
    assert_string_equal(kind, "stop");
    free(word);
    assert_int_equal(wbody("{\"word\":\"机器\"}", false, &f), 0);
    assert_int_equal(wbody("{\"word\":\"x\"}", true, &f), -1);
    assert_string_equal(f, "kind");
    assert_int_equal(wbody("{\"kind\":\"ext\"}", true, &f), -1);
    assert_string_equal(f, "word");
    assert_int_equal(wbody("{\"word\":\"a\\nb\",\"kind\":\"ext\"}", true, &f), -1);
    assert_string_equal(f, "word");
    assert_int_equal(wbody("{\"word\":\"a\\u0000b\",\"kind\":\"ext\"}", true, &f), -1);
    assert_int_equal(wbody("{\"word\":\"x\",\"kind\":\"EXT\"}", true, &f), -1);
    assert_string_equal(f, "kind");
    assert_int_equal(wbody("{}", false, &f), -1);
    assert_int_equal(wbody("{\"word\":", true, &f), -1);
    assert_string_equal(f, "");
    assert_null(words_invalid("深度学习", strlen("深度学习")));
    assert_non_null(words_invalid("\xff", 1));
    assert_non_null(words_invalid("\xc0\xaf", 2)); /* overlong */
    assert_non_null(words_invalid(" x", 2));
    assert_non_null(words_invalid("a\xe2\x80\xa8" "b", 5)); /* U+2028 */
    char big[300];
    memset(big, 'a', 256);
    assert_non_null(words_invalid(big, 256));
    assert_null(words_invalid(big, 255));
}

/* every sample of a process's page gets its source, once; comments, samples
 * that name a source of their own and escaped values are left as they are */
static void test_metrics_source_label(void **state) {
    (void)state;
    const char *in = "# HELP a_total A\n# TYPE a_total counter\n"
                     "a_total 3\n"
                     "b{stream=\"live\"} 1\n"
                     "c{} 2\n"
                     "d{source=\"own\",x=\"1\"} 4\n"
                     "e{x=\"say \\\"source=\\\" }here\",y=\"2\"} 5\n"
                     "\n"
                     "f 6";
    sbuf o = SBUF_INIT;
    metrics_label_all(in, strlen(in), "source", "we\"st", &o);
    assert_string_equal(o.data, "# HELP a_total A\n# TYPE a_total counter\n"
                                "a_total{source=\"we\\\"st\"} 3\n"
                                "b{stream=\"live\",source=\"we\\\"st\"} 1\n"
                                "c{source=\"we\\\"st\"} 2\n"
                                "d{source=\"own\",x=\"1\"} 4\n"
                                "e{x=\"say \\\"source=\\\" }here\",y=\"2\",source=\"we\\\"st\"} 5\n"
                                "\n"
                                "f{source=\"we\\\"st\"} 6");
    sbuf_free(&o);
}

static void test_error_field(void **state) {
    (void)state;
    struct api_resp r = {0};
    api_error_field(&r, 400, "word", "\"word\" must be a string", NULL);
    cJSON *j = json_exact_parse(r.body.data, r.body.len);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "field")), "word");
    cJSON_Delete(j);
    api_resp_free(&r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_log_escape), cmocka_unit_test(test_cookie_loopback_etag),
        cmocka_unit_test(test_routes_new), cmocka_unit_test(test_sessions),
        cmocka_unit_test(test_ratelimit), cmocka_unit_test(test_client_addr),
        cmocka_unit_test(test_admission),
        cmocka_unit_test(test_words_input), cmocka_unit_test(test_error_field),
        cmocka_unit_test(test_metrics_source_label),
        cmocka_unit_test(test_token),  cmocka_unit_test(test_bearer),
        cmocka_unit_test(test_host),   cmocka_unit_test(test_origin),
        cmocka_unit_test(test_content_type), cmocka_unit_test(test_routes), cmocka_unit_test(test_ui_assets),
        cmocka_unit_test(test_body),   cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
