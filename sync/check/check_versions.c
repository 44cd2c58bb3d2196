/* check_versions: documents someone else than searchsync wrote last (see
 * check_versions.h). */
#include "sync/check/check_versions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_exact.h"
#include "jsonw.h"
#include "sbuf.h"
#include "search/content_hash.h"
#include "search/search.h"
#include "sync/mapping/index_mapping.h"

#define PAGE 5000

/* a whole number of the engine's answer, exact (json_exact keeps the text);
 * false when absent or not one */
static bool whole(const cJSON *j, unsigned long long *v) {
    if (cJSON_IsArray(j)) j = cJSON_GetArrayItem(j, 0);
    if (!j) return false;
    if (cJSON_IsRaw(j) || cJSON_IsString(j)) {
        char *end;
        const char *s = j->valuestring;
        if (!s || !*s || *s == '-') return false;
        *v = strtoull(s, &end, 10);
        return *end == '\0';
    }
    if (cJSON_IsNumber(j) && j->valuedouble >= 0 && j->valuedouble < 9007199254740992.0) {
        *v = (unsigned long long)j->valuedouble;
        return (double)*v == j->valuedouble;
    }
    return false;
}

bool check_versions_foreign(const cJSON *hit) {
    unsigned long long engine, own;
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(hit, "fields");
    if (!whole(cJSON_GetObjectItemCaseSensitive(hit, "_version"), &engine) ||
        !whole(cJSON_GetObjectItemCaseSensitive(f, INDEX_MAPPING_VERSION_FIELD), &own))
        return true;
    return engine != own;
}

/* one request; the parsed answer or NULL with err */
static cJSON *ask(struct search_conn *k, const char *method, const char *path, const sbuf *body,
                  const char *what, char *err, size_t errlen) {
    struct search_resp r;
    search_resp_init(&r);
    cJSON *j = NULL;
    if (search_request(k, method, path, "application/json", body->data, body->len, &r) != 0)
        errf(err, errlen, "engine: %s: %s", what, r.err);
    else if (r.status != 200)
        errf(err, errlen, "engine: %s answered %ld: %.300s", what, r.status,
             r.body.data ? r.body.data : "");
    else if (!(j = json_exact_parse(r.body.data, r.body.len)))
        errf(err, errlen, "engine: %s: the answer is not JSON", what);
    search_resp_free(&r);
    return j;
}

int check_versions_scan(struct search_conn *k, const char *alias, const char *only,
                        volatile sig_atomic_t *stop,
                        struct strset *foreign, unsigned long long *listed, char *err,
                        size_t errlen) {
    char path[700], what[400];
    snprintf(path, sizeof path,
             "/%s/_search?scroll=1m&filter_path=_scroll_id,hits.hits._id,hits.hits._version,"
             "hits.hits.fields", alias);
    snprintf(what, sizeof what, "listing the versions of %s's documents", alias);
    sbuf q = SBUF_INIT;
    static const char hashed[] = "{\"exists\":{\"field\":\"" CONTENT_HASH_FIELD "\"}}";
    sbuf_printf(&q, "{\"size\":%d,\"_source\":false,\"version\":true,\"docvalue_fields\":[\"" INDEX_MAPPING_VERSION_FIELD
                    "\"],\"query\":", PAGE);
    if (only) sbuf_printf(&q, "{\"bool\":{\"filter\":[%s,%s]}}", only, hashed);
    else sbuf_adds(&q, hashed);
    sbuf_adds(&q, ",\"sort\":[\"_doc\"]}");
    cJSON *j = ask(k, "POST", path, &q, what, err, errlen);
    int rc = j ? 0 : -1;
    char *scroll = NULL;
    while (j) {
        const cJSON *hits = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(j, "hits"), "hits");
        const cJSON *h;
        size_t got = 0;
        cJSON_ArrayForEach(h, hits) {
            const cJSON *id = cJSON_GetObjectItemCaseSensitive(h, "_id");
            if (!cJSON_IsString(id)) continue;
            got++;
            if (check_versions_foreign(h))
                strset_add(foreign, id->valuestring, strlen(id->valuestring));
        }
        *listed += got;
        const cJSON *sid = cJSON_GetObjectItemCaseSensitive(j, "_scroll_id");
        if (cJSON_IsString(sid)) {
            free(scroll);
            scroll = xstrdup(sid->valuestring);
        }
        cJSON_Delete(j);
        j = NULL;
        if (got < PAGE || !scroll) break;
        if (stop && *stop) {
            rc = errf(err, errlen, "stopped while listing the versions of %s's documents", alias);
            break;
        }
        sbuf_reset(&q);
        sbuf_adds(&q, "{\"scroll\":\"1m\",\"scroll_id\":");
        json_escape(&q, scroll, strlen(scroll));
        sbuf_addc(&q, '}');
        j = ask(k, "POST", "/_search/scroll?filter_path=_scroll_id,hits.hits._id,"
                "hits.hits._version,hits.hits.fields", &q, what, err, errlen);
        if (!j) rc = -1;
    }
    if (scroll) { /* let the engine free it now rather than in a minute */
        sbuf_reset(&q);
        sbuf_adds(&q, "{\"scroll_id\":");
        json_escape(&q, scroll, strlen(scroll));
        sbuf_addc(&q, '}');
        struct search_resp r;
        search_resp_init(&r);
        search_request(k, "DELETE", "/_search/scroll", "application/json", q.data, q.len, &r);
        search_resp_free(&r);
        free(scroll);
    }
    sbuf_free(&q);
    return rc;
}
