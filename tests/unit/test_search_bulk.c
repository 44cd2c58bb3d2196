/* test_search_bulk: bulk bodies per dialect against golden files
 * (tests/fixtures/search/bulk/<dialect>.ndjson; SEARCHSYNC_UPDATE_GOLDEN=1
 * rewrites them), the bulk response scanner on a real OpenSearch 2.19.1
 * response, item classification, and gzip. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "deliver/deliver.h"
#include "search/search.h"

static void fixture_path(char *out, size_t n, const char *rel) {
    const char *src = getenv("SEARCHSYNC_SRCDIR");
    snprintf(out, n, "%s/tests/fixtures/search/%s", src ? src : ".", rel);
}

static char *slurp(const char *rel, size_t *len) {
    char path[1024];
    fixture_path(path, sizeof path, rel);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    sbuf b = SBUF_INIT;
    sbuf_read_fp(&b, f);
    fclose(f);
    *len = b.len;
    if (!b.data) sbuf_grow(&b, 0);
    return sbuf_detach(&b);
}

/* the same items for every dialect */
static void sample_body(sbuf *out, const struct search_dialect *d) {
    uint64_t v = version_make(1, 3, 4711); /* > 2^53: must stay exact */
    const char *doc = "{\"title\":\"caf\xc3\xa9\",\n  \"n\":1}";
    struct bulk_item items[] = {
        {.op = BULK_INDEX, .index = "products_v1", .id = "42", .version = v, .body = doc,
         .body_len = strlen(doc), .version_field = "ss_version", .content_hash = true},
        {.op = BULK_INDEX, .index = "products_v1", .id = "q\"uote\\", .routing = "7",
         .version = v + 1, .body = "{}", .body_len = 2, .version_field = "ss_version",
         .content_hash = true},
        {.op = BULK_INDEX, .index = "plain", .id = "1", .version = 5, .body = "{\"a\":1}",
         .body_len = 7, .version_field = ""},
        {.op = BULK_DELETE, .index = "products_v1", .id = "43", .routing = "7", .version = v + 2},
        {.op = BULK_UPDATE, .index = "products_v1", .id = "44", .version = v + 3,
         .body = "{\"price\":\"12.50\"}", .body_len = 17, .version_field = "ss_version",
         .content_hash = true},
        {.op = BULK_UPDATE, .index = "plain", .id = "45", .version = v + 4,
         .body = "{\"price\":1}", .body_len = 11, .version_field = NULL},
        {.op = BULK_SCRIPT, .index = "products_v1", .id = "46", .version = v + 5,
         .script = "ctx._source.tags.add(params.tag)", .body = "{\"tag\":\"new\"}",
         .body_len = 13, .version_field = "ss_version", .content_hash = true},
        {.op = BULK_SCRIPT, .index = "products_v1", .id = "47", .version = v + 6,
         .script = "ctx._source.n += 1", .body = "{ }", .body_len = 3,
         .version_field = "ss_version"},
    };
    for (size_t i = 0; i < sizeof items / sizeof items[0]; i++) bulk_append(out, d, &items[i]);
}

static void t_golden(void **s) {
    (void)s;
    const char *names[] = {"elasticsearch-7", "elasticsearch-8", "elasticsearch-9",
                           "opensearch-1", "opensearch-2", "opensearch-3"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        struct search_dialect d;
        assert_int_equal(search_dialect_named(names[i], &d), 0);
        sbuf b = SBUF_INIT;
        sample_body(&b, &d);
        /* NDJSON: every line is one JSON object; no raw newline inside */
        int lines = 0;
        for (size_t k = 0; k < b.len; k++) lines += b.data[k] == '\n';
        assert_int_equal(lines, 15);
        assert_int_equal(b.data[b.len - 1], '\n');
        char rel[256];
        snprintf(rel, sizeof rel, "bulk/%s.ndjson", names[i]);
        if (getenv("SEARCHSYNC_UPDATE_GOLDEN")) {
            char path[1024];
            fixture_path(path, sizeof path, rel);
            FILE *f = fopen(path, "wb");
            assert_non_null(f);
            fwrite(b.data, 1, b.len, f);
            fclose(f);
        }
        size_t len;
        char *g = slurp(rel, &len);
        if (!g) fail_msg("missing golden file %s (SEARCHSYNC_UPDATE_GOLDEN=1 writes it)", rel);
        if (len != b.len || memcmp(g, b.data, len))
            fail_msg("%s differs from the golden file:\n%s", rel, b.data);
        free(g);
        sbuf_free(&b);
    }
}

static void t_version_exact(void **s) {
    (void)s;
    sbuf b = SBUF_INIT;
    struct bulk_item it = {.op = BULK_DELETE, .index = "i", .id = "1",
                           .version = 9007199254740993ull};
    bulk_append(&b, NULL, &it);
    assert_string_equal(b.data, "{\"delete\":{\"_index\":\"i\",\"_id\":\"1\","
                                "\"version\":9007199254740993,\"version_type\":\"external\"}}\n");
    /* external_gte: lands on an equal stored version too (a check's repair) */
    sbuf_reset(&b);
    it.version_gte = true;
    bulk_append(&b, NULL, &it);
    assert_string_equal(b.data, "{\"delete\":{\"_index\":\"i\",\"_id\":\"1\","
                                "\"version\":9007199254740993,\"version_type\":\"external_gte\"}}\n");
    sbuf_free(&b);
}

static void t_response(void **s) {
    (void)s;
    size_t len;
    char *j = slurp("bulk/response-opensearch-2.19.1-mixed.json", &len);
    assert_non_null(j);
    struct bulk_result r[5];
    assert_int_equal(bulk_response_parse(j, len, r, 5), 5);
    assert_int_equal(r[0].status, 201);
    assert_null(r[0].error);
    assert_int_equal(bulk_classify(BULK_INDEX, &r[0]), BULK_OK);
    assert_int_equal(r[1].status, 409);
    assert_string_equal(r[1].err_type, "version_conflict_engine_exception");
    assert_int_equal(bulk_classify(BULK_INDEX, &r[1]), BULK_STALE);
    /* the stored version the conflict names, exact past 2^53 */
    assert_true(bulk_conflict_version(&r[1]) == 9007199254740993ull);
    assert_true(bulk_conflict_version(&r[0]) == 0);
    assert_true(bulk_conflict_version(&r[2]) == 0);
    assert_int_equal(r[2].status, 400);
    assert_string_equal(r[2].err_type, "mapper_parsing_exception");
    assert_int_equal(bulk_classify(BULK_INDEX, &r[2]), BULK_PERMANENT);
    assert_true(r[2].error_len > 10 && r[2].error[0] == '{' && r[2].error[r[2].error_len - 1] == '}');
    assert_int_equal(r[3].status, 404);
    assert_int_equal(bulk_classify(BULK_UPDATE, &r[3]), BULK_MISSING);
    assert_int_equal(r[4].status, 404);
    assert_int_equal(bulk_classify(BULK_DELETE, &r[4]), BULK_OK);
    /* truncated responses are refused, never half-read */
    for (size_t cut = 0; cut < len; cut += 7) assert_true(bulk_response_parse(j, cut, r, 5) < 5 || cut == len);
    free(j);
}

static void t_classify(void **s) {
    (void)s;
    struct bulk_result r = {0};
    r.status = 429;
    assert_int_equal(bulk_classify(BULK_INDEX, &r), BULK_TRANSIENT);
    r.status = 503;
    assert_int_equal(bulk_classify(BULK_INDEX, &r), BULK_TRANSIENT);
    r.status = 409;
    assert_int_equal(bulk_classify(BULK_UPDATE, &r), BULK_TRANSIENT);
    r.status = 400;
    assert_int_equal(bulk_classify(BULK_SCRIPT, &r), BULK_PERMANENT);
    assert_int_equal(http_classify(200), BULK_OK);
    assert_int_equal(http_classify(429), BULK_TRANSIENT);
    assert_int_equal(http_classify(502), BULK_TRANSIENT);
    assert_int_equal(http_classify(504), BULK_TRANSIENT);
    assert_int_equal(http_classify(0), BULK_TRANSIENT);
    assert_int_equal(http_classify(400), BULK_PERMANENT);
}

static void t_gzip(void **s) {
    (void)s;
    sbuf in = SBUF_INIT, out = SBUF_INIT;
    for (int i = 0; i < 1000; i++) sbuf_printf(&in, "{\"index\":{\"_id\":\"%d\"}}\n", i);
    assert_int_equal(search_gzip(in.data, in.len, &out), 0);
    assert_true(out.len < in.len / 3);
    assert_int_equal((unsigned char)out.data[0], 0x1f);
    assert_int_equal((unsigned char)out.data[1], 0x8b);
    /* inflate it back */
    z_stream z;
    memset(&z, 0, sizeof z);
    assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
    char *back = malloc(in.len + 1);
    z.next_in = (Bytef *)out.data;
    z.avail_in = (uInt)out.len;
    z.next_out = (Bytef *)back;
    z.avail_out = (uInt)in.len + 1;
    assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
    assert_int_equal(z.total_out, in.len);
    assert_memory_equal(back, in.data, in.len);
    inflateEnd(&z);
    free(back);
    sbuf_free(&in);
    sbuf_free(&out);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_golden),
        cmocka_unit_test(t_version_exact),
        cmocka_unit_test(t_response),
        cmocka_unit_test(t_classify),
        cmocka_unit_test(t_gzip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
