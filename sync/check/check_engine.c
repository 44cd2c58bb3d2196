/* check_engine: the engine side of a consistency check — the index's
 * documents counted per key-hash bucket (a histogram aggregation) against
 * MySQL's side, the buckets that differ split until they are small enough to
 * list, documents without hashes and those written by someone else found;
 * each document that may differ becomes a candidate (check_int.h). */
#include "sync/check/check_int.h"


#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "binlog/binlog.h"
#include "sync/check/check_diff.h"
#include "sync/check/check_versions.h"
#include "exit_codes.h"
#include "sync/delayed/delayed.h"
#include "sync/pipeline/docbuild.h"
#include "json_exact.h"
#include "jsonw.h"
#include "log.h"
#include "search/content_hash.h"
#include "sync/status/status.h"
#include "strset.h"
/* ---------------------------------------------------------------- engine side */

/* POST a search; the parsed response (numbers exact) or NULL with err */
cJSON *check_engine_search(struct ctx *c, const char *query_string, const sbuf *body) {
    char path[700];
    snprintf(path, sizeof path, "/%s/_search%s", c->ix->alias, query_string ? query_string : "");
    struct search_resp r;
    search_resp_init(&r);
    cJSON *j = NULL;
    if (search_request(c->pr->p.k, "POST", path, "application/json", body->data, body->len, &r) !=
        0) {
        errf(c->err, c->errlen, "engine: %s", r.err);
    } else if (r.status != 200) {
        errf(c->err, c->errlen, "engine: POST %s answered %ld: %.*s", path, r.status,
             (int)(r.body.len > 400 ? 400 : r.body.len), r.body.data ? r.body.data : "");
    } else if (!(j = json_exact_parse(r.body.data, r.body.len))) {
        errf(c->err, c->errlen, "engine: POST %s: the answer is not JSON", path);
    }
    search_resp_free(&r);
    return j;
}

/* a number of the engine's answer; -1 when absent (callers clamp) */
double check_json_num(const cJSON *j) {
    if (!j) return -1;
    if (cJSON_IsRaw(j)) return strtod(j->valuestring, NULL);
    if (cJSON_IsNumber(j)) return j->valuedouble;
    return -1;
}

cJSON *check_json_path(cJSON *j, const char *a, const char *b, const char *d) {
    if (j && a) j = cJSON_GetObjectItemCaseSensitive(j, a);
    if (j && b) j = cJSON_GetObjectItemCaseSensitive(j, b);
    if (j && d) j = cJSON_GetObjectItemCaseSensitive(j, d);
    return j;
}

static unsigned long long total_hits(cJSON *j) {
    cJSON *t = check_json_path(j, "hits", "total", NULL);
    if (cJSON_IsObject(t)) t = cJSON_GetObjectItemCaseSensitive(t, "value");
    double v = check_json_num(t);
    return v > 0 ? (unsigned long long)v : 0;
}

int check_refresh(struct ctx *c) {
    char path[600];
    snprintf(path, sizeof path, "/%s/_refresh", c->ix->alias);
    struct search_resp r;
    search_resp_init(&r);
    int rc = 0;
    if (search_request(c->pr->p.k, "POST", path, NULL, NULL, 0, &r) != 0 || r.status != 200) {
        if (r.status)
            errf(c->err, c->errlen, "engine: refresh of %s answered %ld: %.300s", c->ix->alias,
                 r.status, r.body.data ? r.body.data : "");
        else
            errf(c->err, c->errlen, "engine: refresh of %s: %s", c->ix->alias, r.err);
        rc = -1;
    }
    search_resp_free(&r);
    return rc;
}

struct ebucket {
    unsigned long long count, hashed, sum;
};

/* the engine's histogram of [lo,hi) by iv: nb buckets (count, hashed, sum) */
static int engine_hist(struct ctx *c, uint64_t lo, uint64_t hi, uint64_t iv, struct ebucket *eb,
                       size_t nb, unsigned long long *total) {
    sbuf q = SBUF_INIT;
    sbuf_printf(&q,
                "{\"size\":0,\"track_total_hits\":true,\"query\":{\"range\":{\"" KEY_HASH_FIELD
                "\":{\"gte\":%llu,\"lt\":%llu}}},\"aggs\":{\"b\":{\"histogram\":{\"field\":\"" KEY_HASH_FIELD
                "\",\"interval\":%llu,\"min_doc_count\":1},\"aggs\":{\"h\":{\"sum\":{\"field\":\"" CONTENT_HASH_FIELD
                "\"}},\"n\":{\"value_count\":{\"field\":\"" CONTENT_HASH_FIELD "\"}}}}}}",
                (unsigned long long)lo, (unsigned long long)hi, (unsigned long long)iv);
    cJSON *j = check_engine_search(c, "?request_cache=false", &q);
    sbuf_free(&q);
    if (!j) return -1;
    if (total) *total = total_hits(j);
    cJSON *bs = check_json_path(j, "aggregations", "b", "buckets"), *it;
    memset(eb, 0, nb * sizeof *eb);
    cJSON_ArrayForEach(it, bs) {
        double key = check_json_num(cJSON_GetObjectItemCaseSensitive(it, "key"));
        if (key < (double)lo) continue;
        size_t i = (size_t)(((uint64_t)key - lo) / iv);
        if (i >= nb) continue;
        double dc = check_json_num(cJSON_GetObjectItemCaseSensitive(it, "doc_count")),
               sum = check_json_num(check_json_path(it, "h", "value", NULL)), hn = check_json_num(check_json_path(it, "n", "value", NULL));
        eb[i].count = dc > 0 ? (unsigned long long)dc : 0;
        eb[i].sum = sum > 0 ? (unsigned long long)sum : 0;
        eb[i].hashed = hn > 0 ? (unsigned long long)hn : 0;
    }
    cJSON_Delete(j);
    return 0;
}

/* an engine document of a leaf */
struct eid {
    char *id;
    long long hash; /* -1: none */
};

static int by_eid(const void *a, const void *b) {
    return strcmp(((const struct eid *)a)->id, ((const struct eid *)b)->id);
}


/* a leaf: both sides' ids and hashes merged by id */
static int leaf(struct ctx *c, uint64_t lo, uint64_t hi) {
    sbuf q = SBUF_INIT;
    sbuf_printf(&q,
                "{\"size\":10000,\"_source\":false,\"docvalue_fields\":[\"" CONTENT_HASH_FIELD
                "\"],\"query\":{\"range\":{\"" KEY_HASH_FIELD "\":{\"gte\":%llu,\"lt\":%llu}}}}",
                (unsigned long long)lo, (unsigned long long)hi);
    cJSON *j = check_engine_search(c, NULL, &q);
    sbuf_free(&q);
    if (!j) return -1;
    cJSON *hits = check_json_path(j, "hits", "hits", NULL), *h;
    size_t ne = (size_t)cJSON_GetArraySize(hits), k = 0;
    if (ne >= 10000) {
        cJSON_Delete(j);
        return errf(c->err, c->errlen, "engine: a key-hash range of %s holds 10000 documents or "
                    "more (copies of one document under many routings?): run `searchsync "
                    "check --deep` to see them, or reindex %s", c->ix->alias, c->ix->alias);
    }
    struct eid *e = xcalloc(ne ? ne : 1, sizeof *e);
    cJSON_ArrayForEach(h, hits) {
        cJSON *id = cJSON_GetObjectItemCaseSensitive(h, "_id");
        if (!cJSON_IsString(id)) continue;
        cJSON *f = check_json_path(h, "fields", CONTENT_HASH_FIELD, NULL);
        double v = cJSON_IsArray(f) ? check_json_num(cJSON_GetArrayItem(f, 0)) : -1;
        e[k++] = (struct eid){xstrdup(id->valuestring), v >= 0 ? (long long)v : -1};
    }
    cJSON_Delete(j);
    ne = k;
    c->res->ids_listed += ne;
    qsort(e, ne, sizeof *e, by_eid);
    /* MySQL's side of the range, sorted by id the same way (ids borrowed) */
    size_t a = check_lower(c, lo), b = check_lower(c, hi), nm = b - a;
    struct eid *m = xcalloc(nm ? nm : 1, sizeof *m);
    for (size_t y = 0; y < nm; y++)
        m[y] = (struct eid){(char *)check_rec_id(c, &c->r[a + y]), c->r[a + y].ch};
    qsort(m, nm, sizeof *m, by_eid);
    size_t i = 0, x = 0;
    while (i < nm || x < ne) {
        int cmp = i == nm ? 1 : x == ne ? -1 : strcmp(m[i].id, e[x].id);
        if (cmp < 0) {
            const char *id = m[i].id;
            if (!strset_has(&c->legacy, id, strlen(id))) check_add_cand(c, id, CK_MISSING);
            i++;
        } else if (cmp > 0) {
            check_add_cand(c, e[x].id, CK_EXTRA);
            while (x + 1 < ne && !strcmp(e[x + 1].id, e[x].id)) x++;
            x++;
        } else {
            size_t copies = 1;
            while (x + copies < ne && !strcmp(e[x + copies].id, e[x].id)) copies++;
            if (copies > 1) check_add_cand(c, e[x].id, CK_DUPLICATE);
            else if (e[x].hash < 0) check_add_cand(c, e[x].id, CK_UNHASHED);
            else if (e[x].hash != m[i].hash || c->o->deep)
                check_add_cand(c, e[x].id, CK_DIFFERENT);
            i++;
            x += copies;
        }
    }
    for (size_t y = 0; y < ne; y++) free(e[y].id);
    free(e);
    free(m);
    return 0;
}

static int drill(struct ctx *c, uint64_t lo, uint64_t hi);

/* compare nb buckets of width iv from lo (the engine's in eb) with MySQL's;
 * a bucket that differs is listed or split */
static int compare_buckets(struct ctx *c, uint64_t lo, uint64_t hi, uint64_t iv,
                           const struct ebucket *eb, size_t nb) {
    struct ebucket *mb = xcalloc(nb, sizeof *mb);
    for (size_t i = check_lower(c, lo); i < c->n && c->r[i].kh < hi; i++) {
        size_t b = (size_t)((c->r[i].kh - lo) / iv);
        mb[b].count++;
        mb[b].sum += c->r[i].ch;
    }
    int rc = 0;
    for (size_t b = 0; b < nb && rc == 0; b++) {
        if (c->o->stop && *c->o->stop) {
            rc = errf(c->err, c->errlen, "stopped while comparing buckets");
            break;
        }
        if (!c->o->deep && mb[b].count == eb[b].count && mb[b].sum == eb[b].sum &&
            eb[b].hashed == eb[b].count)
            continue;
        if (!mb[b].count && !eb[b].count) continue;
        c->res->buckets_differed++;
        uint64_t blo = lo + b * iv, bhi = blo + iv < hi ? blo + iv : hi;
        unsigned long long big = mb[b].count > eb[b].count ? mb[b].count : eb[b].count;
        rc = big <= CHECK_LEAF || bhi - blo <= CHECK_SPLIT ? leaf(c, blo, bhi) : drill(c, blo, bhi);
    }
    free(mb);
    return rc;
}

static int drill(struct ctx *c, uint64_t lo, uint64_t hi) {
    uint64_t iv = (hi - lo + CHECK_SPLIT - 1) / CHECK_SPLIT;
    size_t nb = (size_t)((hi - lo + iv - 1) / iv);
    struct ebucket *eb = xcalloc(nb, sizeof *eb);
    int rc = engine_hist(c, lo, hi, iv, eb, nb, NULL);
    if (rc == 0) rc = compare_buckets(c, lo, hi, iv, eb, nb);
    free(eb);
    return rc;
}

/* documents without ss_key_hash — written before documents carried it, or
 * by someone else than searchsync — listed by a scroll, each compared by
 * content (their number is reported; a repair rewrites them whole, with
 * hashes). With --since, only those of the window's rows. */
static int legacy_docs(struct ctx *c) {
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "{\"size\":0,\"track_total_hits\":true,\"query\":{\"bool\":{\"must_not\":{"
                  "\"exists\":{\"field\":\"" KEY_HASH_FIELD "\"}}}}}");
    cJSON *j = check_engine_search(c, NULL, &q);
    if (!j) return sbuf_free(&q), -1;
    unsigned long long n = total_hits(j);
    cJSON_Delete(j);
    c->res->legacy = n;
    if (!n) return sbuf_free(&q), 0;
    for (size_t i = 0; i < c->n; i++) {
        const char *id = check_rec_id(c, &c->r[i]);
        strset_add(&c->mysql_ids, id, strlen(id));
    }
    sbuf_reset(&q);
    sbuf_adds(&q, "{\"size\":5000,\"_source\":false,\"query\":{\"bool\":{\"must_not\":{"
                  "\"exists\":{\"field\":\"" KEY_HASH_FIELD "\"}}}},\"sort\":[\"_doc\"]}");
    j = check_engine_search(c, "?scroll=1m", &q);
    int rc = j ? 0 : -1;
    while (j) {
        cJSON *hits = check_json_path(j, "hits", "hits", NULL), *h;
        size_t got = 0;
        cJSON_ArrayForEach(h, hits) {
            cJSON *id = cJSON_GetObjectItemCaseSensitive(h, "_id");
            if (!cJSON_IsString(id)) continue;
            got++;
            const char *s = id->valuestring;
            bool in_mysql = strset_has(&c->mysql_ids, s, strlen(s));
            if (c->window && !in_mysql) { /* outside the window */
                c->res->legacy--;
                continue;
            }
            strset_add(&c->legacy, s, strlen(s));
            check_add_cand(c, s, in_mysql ? CK_UNHASHED : CK_EXTRA);
        }
        cJSON *sid = cJSON_GetObjectItemCaseSensitive(j, "_scroll_id");
        char *scroll = cJSON_IsString(sid) ? xstrdup(sid->valuestring) : NULL;
        cJSON_Delete(j);
        j = NULL;
        if (!got || !scroll) {
            free(scroll);
            break;
        }
        sbuf_reset(&q);
        sbuf_adds(&q, "{\"scroll\":\"1m\",\"scroll_id\":");
        json_escape(&q, scroll, strlen(scroll));
        sbuf_addc(&q, '}');
        free(scroll);
        struct search_resp r;
        search_resp_init(&r);
        if (search_request(c->pr->p.k, "POST", "/_search/scroll", "application/json", q.data,
                           q.len, &r) != 0 || r.status != 200 ||
            !(j = json_exact_parse(r.body.data, r.body.len)))
            rc = r.status ? errf(c->err, c->errlen, "engine: scroll over %s's unhashed documents "
                                 "answered %ld: %.300s", c->ix->alias, r.status,
                                 r.body.data ? r.body.data : "")
                          : errf(c->err, c->errlen, "engine: scroll over %s's unhashed "
                                 "documents: %s", c->ix->alias, r.err);
        search_resp_free(&r);
    }
    sbuf_free(&q);
    return rc;
}

/* documents someone else wrote last, their ss_hash copied along (a GET, edit
 * and PUT; an _update): the sums cannot see them, their versions can
 * (check_versions.h); each compared by content */
static int written_elsewhere(struct ctx *c) {
    struct strset foreign = {0}, had = {0};
    int rc = check_versions_scan(c->pr->p.k, c->ix->alias, c->o->stop, &foreign,
                                 &c->res->versions_listed, c->err, c->errlen);
    for (size_t i = 0; rc == 0 && i < c->nc; i++) strset_add(&had, c->c[i].id, strlen(c->c[i].id));
    for (size_t i = 0; rc == 0 && i < foreign.cap; i++) {
        const char *id = foreign.slot[i];
        if (!id) continue;
        c->res->rewritten++;
        if (strset_has(&had, id, strlen(id))) continue;
        check_add_cand(c, id, CK_DIFFERENT);
        c->c[c->nc - 1].content = true;
    }
    strset_clear(&foreign);
    strset_clear(&had);
    return rc;
}

int check_engine_side(struct ctx *c) {
    if (c->window) { /* the window's documents, straight to the ids, each compared by
                      * content (those without hashes too: no scroll over the index) */
        for (size_t i = 0; i < c->n; i++) check_add_cand(c, check_rec_id(c, &c->r[i]), CK_DIFFERENT);
        c->res->buckets = 0;
        return 0;
    }
    if (legacy_docs(c) < 0) return -1;
    unsigned long long most = c->n;
    uint64_t b = 1;
    while (b < 8192 && b * 256 < most) b <<= 1;
    uint64_t iv = CONTENT_HASH_SPACE / b;
    struct ebucket *eb = xcalloc((size_t)b, sizeof *eb);
    unsigned long long total = 0;
    int rc = engine_hist(c, 0, CONTENT_HASH_SPACE, iv, eb, (size_t)b, &total);
    c->res->engine_docs = total + c->res->legacy;
    c->res->buckets = b;
    if (rc == 0) rc = compare_buckets(c, 0, CONTENT_HASH_SPACE, iv, eb, (size_t)b);
    free(eb);
    if (rc == 0 && !c->o->deep) rc = written_elsewhere(c);
    return rc;
}
