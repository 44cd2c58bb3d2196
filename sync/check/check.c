/* check: the consistency check of one index config (see check.h). */
#include "sync/check/check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "binlog/binlog.h"
#include "sync/check/check_diff.h"
#include "sync/check/check_versions.h"
#include "commands.h"
#include "sync/delayed/delayed.h"
#include "sync/pipeline/docbuild.h"
#include "json_exact.h"
#include "jsonw.h"
#include "log.h"
#include "search/content_hash.h"
#include "sync/node/status.h"
#include "strset.h"

#define VERIFY_CHUNK 500 /* candidates rebuilt and fetched per request */
#define MAX_ROUNDS 3

/* one document of MySQL's side */
struct rec {
    uint32_t kh, ch;
    size_t id; /* offset into ids */
};

/* one document that may differ, until the settle rounds say */
struct cand {
    char *id;
    enum check_kind kind;
    char *path;
    uint32_t sig;   /* verify: the hashes of both sides' content as seen */
    bool confirmed; /* seen the same way in the round before */
    bool content;   /* compared by content though the hashes agree: written last
                     * by someone else, ss_hash copied along (written_elsewhere) */
};

struct ctx {
    struct producer *pr;
    const struct mp_index *ix; /* the index config; over shard tables, the unit of the
                                * shard at hand (mapping_shard.h): at .. at + nunits */
    size_t at, at0, nunits;
    const struct check_opts *o;
    struct check_result *res;
    bool window;           /* a window check (--since), not one of the whole index */
    struct rec *r;
    size_t n, cap;
    sbuf ids;              /* NUL-separated ids of r */
    struct strset legacy;  /* engine documents without ss_key_hash */
    struct strset mysql_ids; /* filled only when there are legacy documents */
    struct strset *related;  /* window: per document table, keys reached from related
                              * tables changed in the window */
    struct cand *c;
    size_t nc, capc;
    char *err;
    size_t errlen;
};

const char *check_kind_name(enum check_kind k) {
    static const char *const n[] = {"missing", "extra", "different", "unhashed", "duplicate"};
    return n[k];
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *rec_id(const struct ctx *c, const struct rec *r) { return c->ids.data + r->id; }

static void add_cand(struct ctx *c, const char *id, enum check_kind kind) {
    if (c->nc == c->capc) {
        c->capc = c->capc ? c->capc * 2 : 64;
        c->c = xrealloc(c->c, c->capc * sizeof *c->c);
    }
    c->c[c->nc++] = (struct cand){xstrdup(id), kind, NULL, 0, false, false};
}

static void free_cands(struct cand *v, size_t n) {
    for (size_t i = 0; i < n; i++) free(v[i].id), free(v[i].path);
    free(v);
}

/* ---------------------------------------------------------------- MySQL side */

static int add_doc(void *vc, const char *id, const char *routing, const char *body, size_t len) {
    (void)routing;
    struct ctx *c = vc;
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 4096;
        c->r = xrealloc(c->r, c->cap * sizeof *c->r);
    }
    size_t idlen = strlen(id);
    c->r[c->n++] = (struct rec){key_hash(id, idlen), content_hash(body, len), c->ids.len};
    sbuf_add(&c->ids, id, idlen + 1); /* with its NUL */
    return 0;
}

static bool doc_table(const struct mp_index *ix, size_t t) {
    return t == 0 || ix->tables[t].parent_table;
}

/* the key column of a document table */
static const char *table_key(const struct mp_index *ix, size_t t) {
    const struct mp_table *tb = &ix->tables[t];
    const struct mp_column *k = mp_table_key(tb);
    return k ? k->name : NULL;
}

/* The key column key of the rows of table tb changed in the window (its
 * daily_check_column): *keys (n of them, the caller frees), 0; or -1 with
 * c->err. */
static int window_keys(struct ctx *c, const char *key, const struct mp_table *tb, char ***keys,
                       size_t *n) {
    MYSQL *src = c->pr->p.src;
    sbuf q = SBUF_INIT;
    db_select_from(&q, key, tb->db, tb->table);
    sbuf_adds(&q, " WHERE ");
    db_ident(&q, tb->daily_check_column);
    sbuf_printf(&q, " >= NOW(6) - INTERVAL %ld SECOND", c->o->since_s);
    MYSQL_RES *res = db_query(src, q.data, q.len, c->err, c->errlen);
    sbuf_free(&q);
    if (!res) return -1;
    size_t nr = (size_t)mysql_num_rows(res), i = 0;
    *keys = xcalloc(nr ? nr : 1, sizeof **keys);
    MYSQL_ROW row;
    while ((row = mysql_fetch_row(res)))
        if (row[0]) (*keys)[i++] = xstrdup(row[0]);
    mysql_free_result(res);
    *n = i;
    return 0;
}

/* keys of document table t changed in the window (its daily_check_column) */
static int since_keys(struct ctx *c, size_t t, char ***keys, size_t *n) {
    const struct mp_table *tb = &c->ix->tables[t];
    const char *key = table_key(c->ix, t);
    *keys = NULL, *n = 0;
    if (!tb->daily_check_column || !key) return 0;
    return window_keys(c, key, tb, keys, n);
}

/* the document keys a relation-top chain reached (rt_walk) */
static int walk_sink(void *ud, const struct rt_chain *ch, char *const *keys, size_t n) {
    struct ctx *c = ud;
    for (size_t i = 0; i < n; i++) strset_add(&c->related[ch->doctable], keys[i], strlen(keys[i]));
    return 0;
}

/* The window of a related table (one of the index's relations, listed in
 * the mapping with a daily_check_column): its rows changed in the window,
 * by their primary key, up the relation paths to the documents that embed
 * them. 1 when no path can be walked (no single-column primary key, no
 * path): the window is the whole index. */
static int window_of_related(struct ctx *c, const struct mp_table *rt) {
    MYSQL *src = c->pr->p.src;
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ");
    db_quote(src, &q, rt->db, strlen(rt->db));
    sbuf_adds(&q, " AND TABLE_NAME = ");
    db_quote(src, &q, rt->table, strlen(rt->table));
    sbuf_adds(&q, " AND COLUMN_KEY = 'PRI'");
    MYSQL_RES *res = db_query(src, q.data, q.len, c->err, c->errlen);
    if (!res) return sbuf_free(&q), -1;
    MYSQL_ROW row = mysql_num_rows(res) == 1 ? mysql_fetch_row(res) : NULL;
    char *pk = row && row[0] ? xstrdup(row[0]) : NULL;
    mysql_free_result(res);
    if (!pk) return sbuf_free(&q), 1;
    struct rt_plan plan = {0};
    int rc = rt_plan_build(src, c->pr->p.m, c->pr->p.router, rt->db, rt->table, (long)c->at,
                           &plan, c->err, c->errlen);
    char **keys = NULL;
    size_t n = 0;
    if (rc == 0) rc = window_keys(c, pk, rt, &keys, &n);
    bool any = false;
    for (size_t i = 0; rc == 0 && i < plan.nchains; i++) {
        const struct rt_chain *ch = &plan.chains[i];
        if (ch->index != c->at) continue;
        if (ch->whole) {
            rc = 1;
            break;
        }
        any = true;
        struct rt_walk w = {.src = c->pr->p.src, .chunk = DOCBUILD_CHUNK, .page = 5000,
                            .sink = walk_sink, .ud = c, .what = "a relation top",
                            .err = c->err, .errlen = c->errlen};
        if (n) rc = rt_walk(&w, ch, 0, keys, n); /* (scheme 1 is a whole chain: above) */
    }
    if (rc == 0 && !any) rc = 1;
    for (size_t i = 0; i < n; i++) free(keys[i]);
    free(keys);
    if (plan.db) rt_plan_free(&plan);
    free(pk);
    sbuf_free(&q);
    return rc;
}

/* the related tables' windows; 1: the window is the whole index */
static int related_windows(struct ctx *c) {
    c->related = xcalloc(c->ix->ntables, sizeof *c->related);
    for (size_t t = 1; t < c->ix->ntables; t++) {
        const struct mp_table *rt = &c->ix->tables[t];
        if (doc_table(c->ix, t) || !rt->daily_check_column) continue;
        int rc = window_of_related(c, rt);
        if (rc) return rc;
    }
    return 0;
}

static void related_free(struct ctx *c) {
    for (size_t t = 0; c->related && t < c->ix->ntables; t++) strset_clear(&c->related[t]);
    free(c->related);
    c->related = NULL;
}

static int unit_side(struct ctx *c, bool window);

/* MySQL's side: every document of the index config, of every shard */
static int mysql_side(struct ctx *c) {
    for (size_t u = 0; u < c->nunits; u++) {
        c->at = c->at0 + u;
        c->ix = &c->pr->m.indices[c->at];
        bool window = c->window;
        if (window && c->nunits > 1) { /* each shard's related windows are its own */
            related_free(c);
            int w = related_windows(c);
            if (w < 0) return -1;
            window = w == 0; /* (no path: the whole shard) */
        }
        if (unit_side(c, window) < 0) return -1;
    }
    c->res->rows = c->n;
    return 0;
}

static int unit_side(struct ctx *c, bool window) {
    struct docbuild b;
    docbuild_init(&b, c->pr->p.src, c->ix);
    struct docbuild_sink sink = {add_doc, NULL, c};
    size_t page = (size_t)c->pr->p.cfg->reindex.page_size;
    if (page < 100) page = 100;
    for (size_t t = 0; t < c->ix->ntables; t++) {
        if (!doc_table(c->ix, t)) continue;
        if (window) {
            char **keys;
            size_t n;
            if (since_keys(c, t, &keys, &n) < 0) return -1;
            /* the table's own changed rows and those reached from related
             * tables, each once, built in chunks */
            for (size_t i = 0; i < n; i++) {
                strset_add(&c->related[t], keys[i], strlen(keys[i]));
                free(keys[i]);
            }
            free(keys);
            const char **all = xcalloc(c->related[t].n ? c->related[t].n : 1, sizeof *all);
            size_t na = 0;
            for (size_t i = 0; i < c->related[t].cap; i++)
                if (c->related[t].slot[i]) all[na++] = c->related[t].slot[i];
            int rc = 0;
            for (size_t off = 0; rc == 0 && off < na; off += DOCBUILD_CHUNK) {
                size_t k = na - off < DOCBUILD_CHUNK ? na - off : DOCBUILD_CHUNK;
                rc = t == 0 ? docbuild_roots(&b, all + off, k, &sink, c->err, c->errlen)
                            : docbuild_children(&b, t, all + off, k, &sink, c->err, c->errlen);
            }
            free(all);
            if (rc) return -1;
            continue;
        }
        char *after = NULL;
        for (;;) {
            if (c->o->stop && *c->o->stop) {
                free(after);
                return errf(c->err, c->errlen, "stopped while reading the rows");
            }
            char *last = NULL;
            size_t rows = 0;
            int rc = docbuild_page(&b, t, NULL, after, page, true, &sink, &last, &rows, c->err,
                                   c->errlen);
            if (rc <= 0) {
                free(after);
                if (rc < 0) return -1;
                break;
            }
            free(after);
            after = last;
        }
    }
    return 0;
}

static int by_kh(const void *a, const void *b) {
    const struct rec *x = a, *y = b;
    return x->kh < y->kh ? -1 : x->kh > y->kh;
}

/* first record with kh >= v */
static size_t lower(const struct ctx *c, uint64_t v) {
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->r[mid].kh < v) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* ---------------------------------------------------------------- engine side */

/* POST a search; the parsed response (numbers exact) or NULL with err */
static cJSON *engine_search(struct ctx *c, const char *query_string, const sbuf *body) {
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
static double num(const cJSON *j) {
    if (!j) return -1;
    if (cJSON_IsRaw(j)) return strtod(j->valuestring, NULL);
    if (cJSON_IsNumber(j)) return j->valuedouble;
    return -1;
}

static cJSON *path_get(cJSON *j, const char *a, const char *b, const char *d) {
    if (j && a) j = cJSON_GetObjectItemCaseSensitive(j, a);
    if (j && b) j = cJSON_GetObjectItemCaseSensitive(j, b);
    if (j && d) j = cJSON_GetObjectItemCaseSensitive(j, d);
    return j;
}

static unsigned long long total_hits(cJSON *j) {
    cJSON *t = path_get(j, "hits", "total", NULL);
    if (cJSON_IsObject(t)) t = cJSON_GetObjectItemCaseSensitive(t, "value");
    double v = num(t);
    return v > 0 ? (unsigned long long)v : 0;
}

static int refresh(struct ctx *c) {
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
    cJSON *j = engine_search(c, "?request_cache=false", &q);
    sbuf_free(&q);
    if (!j) return -1;
    if (total) *total = total_hits(j);
    cJSON *bs = path_get(j, "aggregations", "b", "buckets"), *it;
    memset(eb, 0, nb * sizeof *eb);
    cJSON_ArrayForEach(it, bs) {
        double key = num(cJSON_GetObjectItemCaseSensitive(it, "key"));
        if (key < (double)lo) continue;
        size_t i = (size_t)(((uint64_t)key - lo) / iv);
        if (i >= nb) continue;
        double dc = num(cJSON_GetObjectItemCaseSensitive(it, "doc_count")),
               sum = num(path_get(it, "h", "value", NULL)), hn = num(path_get(it, "n", "value", NULL));
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
    cJSON *j = engine_search(c, NULL, &q);
    sbuf_free(&q);
    if (!j) return -1;
    cJSON *hits = path_get(j, "hits", "hits", NULL), *h;
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
        cJSON *f = path_get(h, "fields", CONTENT_HASH_FIELD, NULL);
        double v = cJSON_IsArray(f) ? num(cJSON_GetArrayItem(f, 0)) : -1;
        e[k++] = (struct eid){xstrdup(id->valuestring), v >= 0 ? (long long)v : -1};
    }
    cJSON_Delete(j);
    ne = k;
    c->res->ids_listed += ne;
    qsort(e, ne, sizeof *e, by_eid);
    /* MySQL's side of the range, sorted by id the same way (ids borrowed) */
    size_t a = lower(c, lo), b = lower(c, hi), nm = b - a;
    struct eid *m = xcalloc(nm ? nm : 1, sizeof *m);
    for (size_t y = 0; y < nm; y++)
        m[y] = (struct eid){(char *)rec_id(c, &c->r[a + y]), c->r[a + y].ch};
    qsort(m, nm, sizeof *m, by_eid);
    size_t i = 0, x = 0;
    while (i < nm || x < ne) {
        int cmp = i == nm ? 1 : x == ne ? -1 : strcmp(m[i].id, e[x].id);
        if (cmp < 0) {
            const char *id = m[i].id;
            if (!strset_has(&c->legacy, id, strlen(id))) add_cand(c, id, CK_MISSING);
            i++;
        } else if (cmp > 0) {
            add_cand(c, e[x].id, CK_EXTRA);
            while (x + 1 < ne && !strcmp(e[x + 1].id, e[x].id)) x++;
            x++;
        } else {
            size_t copies = 1;
            while (x + copies < ne && !strcmp(e[x + copies].id, e[x].id)) copies++;
            if (copies > 1) add_cand(c, e[x].id, CK_DUPLICATE);
            else if (e[x].hash < 0) add_cand(c, e[x].id, CK_UNHASHED);
            else if (e[x].hash != m[i].hash || c->o->deep)
                add_cand(c, e[x].id, CK_DIFFERENT);
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
    for (size_t i = lower(c, lo); i < c->n && c->r[i].kh < hi; i++) {
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
    cJSON *j = engine_search(c, NULL, &q);
    if (!j) return sbuf_free(&q), -1;
    unsigned long long n = total_hits(j);
    cJSON_Delete(j);
    c->res->legacy = n;
    if (!n) return sbuf_free(&q), 0;
    for (size_t i = 0; i < c->n; i++) {
        const char *id = rec_id(c, &c->r[i]);
        strset_add(&c->mysql_ids, id, strlen(id));
    }
    sbuf_reset(&q);
    sbuf_adds(&q, "{\"size\":5000,\"_source\":false,\"query\":{\"bool\":{\"must_not\":{"
                  "\"exists\":{\"field\":\"" KEY_HASH_FIELD "\"}}}},\"sort\":[\"_doc\"]}");
    j = engine_search(c, "?scroll=1m", &q);
    int rc = j ? 0 : -1;
    while (j) {
        cJSON *hits = path_get(j, "hits", "hits", NULL), *h;
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
            add_cand(c, s, in_mysql ? CK_UNHASHED : CK_EXTRA);
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
        add_cand(c, id, CK_DIFFERENT);
        c->c[c->nc - 1].content = true;
    }
    strset_clear(&foreign);
    strset_clear(&had);
    return rc;
}

static int engine_side(struct ctx *c) {
    if (c->window) { /* the window's documents, straight to the ids, each compared by
                      * content (those without hashes too: no scroll over the index) */
        for (size_t i = 0; i < c->n; i++) add_cand(c, rec_id(c, &c->r[i]), CK_DIFFERENT);
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

/* ---------------------------------------------------------------- verify */

struct built {
    char *id, *body;
    size_t len;
};
struct built_list {
    struct built *v;
    size_t n, cap;
};

static int keep_built(void *vl, const char *id, const char *routing, const char *body,
                      size_t len) {
    (void)routing;
    struct built_list *l = vl;
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->v = xrealloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = (struct built){xstrdup(id), xstrndup(body, len), len};
    return 0;
}

struct edoc {
    char *id, *source;
    long long hash;
};

/* rebuild cands[0..n) from MySQL, fetch their engine copies, and keep in
 * out those that still differ (the rest agree now) */
static int verify_chunk(struct ctx *c, struct cand *v, size_t n, struct cand **out, size_t *nout,
                        size_t *capout) {
    struct built_list bl = {0};
    struct docbuild_sink sink = {keep_built, NULL, &bl};
    int rc = 0;
    for (size_t u = 0; u < c->nunits && rc == 0; u++) { /* each id in its shard's unit */
        const struct mp_index *ix = &c->pr->m.indices[c->at0 + u];
        struct docbuild b;
        docbuild_init(&b, c->pr->p.src, ix);
        for (size_t t = 0; t < ix->ntables && rc == 0; t++) {
            if (!doc_table(ix, t)) continue;
            const char **keys = xcalloc(n, sizeof *keys);
            size_t nk = 0;
            for (size_t i = 0; i < n; i++) {
                char *key = NULL;
                size_t kt = producer_doc_key(ix, v[i].id, &key);
                if (kt == t) keys[nk++] = key;
                else free(key);
            }
            if (nk)
                rc = t == 0 ? docbuild_roots(&b, keys, nk, &sink, c->err, c->errlen)
                            : docbuild_children(&b, t, keys, nk, &sink, c->err, c->errlen);
            for (size_t i = 0; i < nk; i++) free((char *)keys[i]);
            free(keys);
        }
    }
    sbuf q = SBUF_INIT;
    struct edoc *e = NULL;
    size_t ne = 0;
    if (rc == 0) {
        sbuf_printf(&q, "{\"size\":%zu,\"docvalue_fields\":[\"" CONTENT_HASH_FIELD
                        "\"],\"query\":{\"ids\":{\"values\":[", n * 4 + 16);
        for (size_t i = 0; i < n; i++) {
            if (i) sbuf_addc(&q, ',');
            json_escape(&q, v[i].id, strlen(v[i].id));
        }
        sbuf_adds(&q, "]}}}");
        cJSON *j = engine_search(c, NULL, &q);
        if (!j) rc = -1;
        cJSON *hits = path_get(j, "hits", "hits", NULL), *h;
        e = xcalloc((size_t)cJSON_GetArraySize(hits) + 1, sizeof *e);
        cJSON_ArrayForEach(h, hits) {
            cJSON *id = cJSON_GetObjectItemCaseSensitive(h, "_id");
            cJSON *src = cJSON_GetObjectItemCaseSensitive(h, "_source");
            if (!cJSON_IsString(id)) continue;
            cJSON *f = path_get(h, "fields", CONTENT_HASH_FIELD, NULL);
            double hv = cJSON_IsArray(f) ? num(cJSON_GetArrayItem(f, 0)) : -1;
            /* a legacy document keeps its hash in _source */
            if (hv < 0) hv = num(cJSON_GetObjectItemCaseSensitive(src, CONTENT_HASH_FIELD));
            e[ne++] = (struct edoc){xstrdup(id->valuestring),
                                    src ? cJSON_PrintUnformatted(src) : xstrdup("null"),
                                    hv >= 0 ? (long long)hv : -1};
        }
        c->res->docs_fetched += ne;
        cJSON_Delete(j);
    }
    sbuf path = SBUF_INIT;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const struct built *bd = NULL;
        for (size_t k = 0; k < bl.n && !bd; k++)
            if (!strcmp(bl.v[k].id, v[i].id)) bd = &bl.v[k];
        const struct edoc *ed = NULL;
        size_t copies = 0;
        for (size_t k = 0; k < ne; k++)
            if (!strcmp(e[k].id, v[i].id)) ed = ed ? ed : &e[k], copies++;
        enum check_kind kind;
        char *where = NULL;
        if (!bd && !ed) continue;
        if (bd && !ed) kind = CK_MISSING;
        else if (!bd) kind = CK_EXTRA;
        else if (copies > 1) kind = CK_DUPLICATE;
        else {
            bool same_hash = ed->hash >= 0 && (uint32_t)ed->hash == content_hash(bd->body, bd->len);
            /* the hash settles it, except where content must be looked at: --deep, a window */
            if (same_hash && !c->o->deep && !c->window && !v[i].content) continue;
            if (check_diff(bd->body, bd->len, ed->source, strlen(ed->source), &path)) {
                kind = CK_DIFFERENT;
                where = xstrdup(path.data ? path.data : "");
            } else if (same_hash) {
                continue;
            } else {
                kind = CK_UNHASHED; /* the same content, without (or with a stale) hash */
            }
        }
        if (*nout == *capout) {
            *capout = *capout ? *capout * 2 : 64;
            *out = xrealloc(*out, *capout * sizeof **out);
        }
        uint32_t sig = (bd ? content_hash(bd->body, bd->len) : 0) * 31u +
                       (ed ? content_hash(ed->source, strlen(ed->source)) : 0);
        (*out)[(*nout)++] = (struct cand){xstrdup(v[i].id), kind, where, sig, false, v[i].content};
    }
    sbuf_free(&path);
    sbuf_free(&q);
    for (size_t k = 0; k < ne; k++) free(e[k].id), free(e[k].source);
    free(e);
    for (size_t k = 0; k < bl.n; k++) free(bl.v[k].id), free(bl.v[k].body);
    free(bl.v);
    return rc;
}

static int verify(struct ctx *c) {
    struct cand *out = NULL;
    size_t nout = 0, cap = 0;
    for (size_t off = 0; off < c->nc; off += VERIFY_CHUNK) {
        if (c->o->stop && *c->o->stop) {
            free_cands(out, nout);
            return errf(c->err, c->errlen, "stopped while comparing documents");
        }
        size_t k = c->nc - off < VERIFY_CHUNK ? c->nc - off : VERIFY_CHUNK;
        if (verify_chunk(c, c->c + off, k, &out, &nout, &cap) < 0) {
            free_cands(out, nout);
            return -1;
        }
    }
    free_cands(c->c, c->nc);
    c->c = out, c->nc = nout, c->capc = cap;
    return 0;
}

/* ---------------------------------------------------------------- repair */

static int repair(struct ctx *c) {
    struct pipeline *p = &c->pr->p;
    bl_pos end;
    if (pipeline_snapshot_begin(p, c->pr->m.indices[c->at0].alias, NULL, &end) < 0)
        return errf(c->err, c->errlen, "repair: %s", p->err);
    struct changeset cs = {0};
    for (size_t i = 0; i < c->nc; i++) {
        for (size_t u = 0; u < c->nunits; u++) { /* in its shard's unit */
            char *key = NULL;
            size_t t = producer_doc_key(&c->pr->m.indices[c->at0 + u], c->c[i].id, &key);
            if (t != SIZE_MAX) changeset_add_doc(&cs, c->at0 + u, t, key, strlen(key));
            free(key);
            if (t != SIZE_MAX) break;
        }
    }
    cs.copies_may_move = true; /* a duplicate's copies under other routings go */
    unsigned long long docs0 = p->docs, del0 = p->deletes;
    struct deliver_stats ds0;
    deliver_get_stats(p->d, &ds0); /* one producer may repair several index configs */
    int rc = pipeline_build(p, &cs, &end);
    pipeline_snapshot_end(p);
    if (rc != 0) errf(c->err, c->errlen, "repair: %s", p->err);
    pipeline_end(p, &cs, &end, NULL, false);
    changeset_free(&cs);
    int drc = deliver_drain(p->d, p->cfg->delivery.drain_timeout_ms);
    struct deliver_stats ds;
    deliver_get_stats(p->d, &ds);
    c->res->repaired_docs = p->docs - docs0;
    c->res->repaired_deletes = p->deletes - del0;
    c->res->dead_letters = ds.dead_letters - ds0.dead_letters;
    if (rc != 0) return -1;
    if (drc != DELIVER_OK)
        return errf(c->err, c->errlen, "repair: delivery did not finish within drain_timeout_ms");
    c->res->repaired = c->res->dead_letters == 0;
    return 0;
}

/* ---------------------------------------------------------------- the run */

int check_run(struct producer *pr, const struct check_opts *o, struct check_result *res) {
    memset(res, 0, sizeof *res);
    double t0 = now_s();
    struct ctx c = {.pr = pr, .o = o, .res = res, .err = pr->err, .errlen = sizeof pr->err};
    sbuf_init(&c.ids);
    size_t at = 0;
    while (at < pr->m.nindices && strcmp(pr->m.indices[at].alias, o->alias)) at++;
    if (at == pr->m.nindices) {
        snprintf(pr->err, sizeof pr->err, "source %s has no index config \"%s\"",
                 pr->p.cfg->source.name, o->alias);
        return EXIT_USAGE;
    }
    c.at = c.at0 = at;
    c.ix = &pr->m.indices[at];
    while (at + c.nunits < pr->m.nindices && !strcmp(pr->m.indices[at + c.nunits].alias, o->alias))
        c.nunits++;
    if (!c.ix->current_version) {
        snprintf(pr->err, sizeof pr->err, "index %s has no version yet: run searchsync reindex %s",
                 o->alias, o->alias);
        return EXIT_USAGE;
    }
    if (o->since_s > 0) {
        bool any = false;
        for (size_t t = 0; t < c.ix->ntables; t++)
            if (doc_table(c.ix, t) && c.ix->tables[t].daily_check_column) any = true;
        if (!any) {
            snprintf(pr->err, sizeof pr->err,
                     "index %s: --since needs a daily_check_column on its root table (a column "
                     "that holds each row's last change, e.g. updated_at): set it in the mapping "
                     "file, or check the whole index without --since", o->alias);
            return EXIT_USAGE;
        }
        c.window = true;
    }
    int rc = EXIT_RUNTIME;
    if (c.window && c.nunits == 1) { /* (over shards: each shard's, mysql_side) */
        int w = related_windows(&c);
        if (w < 0) goto out;
        if (w > 0) { /* a related table's changes cannot be followed: the whole index */
            c.window = false;
            snprintf(res->window_note, sizeof res->window_note,
                     "a related table's window cannot be followed to its documents (no "
                     "single-column primary key, or no relation path): the whole index was "
                     "checked");
        }
    }
    /* drain before an exchange: what the daemon had queued before the rows are read is
     * delivered before the engine is asked */
    res->settled = check_settle(pr, o, res);
    if (mysql_side(&c) < 0) goto out;
    qsort(c.r, c.n, sizeof *c.r, by_kh);
    if (refresh(&c) < 0 || engine_side(&c) < 0) goto out;
    /* Round 1 at once; later rounds once the daemon passed a newer position.
     * A difference is believed when the round before saw it the same way
     * (same kind, path and content on both sides): a row still changing
     * looks different each time. With no daemon to wait for (no checkpoint,
     * or one that does not move), nothing is on its way: what is seen is
     * believed. Differences never seen twice alike are reported apart as
     * unsettled (rows busy during the check), not as drift. */
    struct strset seen = {0};
    for (res->rounds = 1;; res->rounds++) {
        if (c.nc && verify(&c) < 0) {
            strset_clear(&seen);
            goto out;
        }
        struct strset now = {0};
        bool all = true;
        for (size_t i = 0; i < c.nc; i++) {
            if (c.c[i].kind == CK_UNHASHED) continue;
            sbuf l = SBUF_INIT;
            sbuf_printf(&l, "%s\t%d\t%s\t%u", c.c[i].id, (int)c.c[i].kind,
                        c.c[i].path ? c.c[i].path : "", c.c[i].sig);
            c.c[i].confirmed = strset_has(&seen, l.data, l.len);
            all = all && c.c[i].confirmed;
            strset_add(&now, l.data, l.len);
            sbuf_free(&l);
        }
        strset_clear(&seen);
        seen = now;
        if (all || res->rounds == MAX_ROUNDS) break;
        if (!(res->settled = check_settle(pr, o, res))) {
            for (size_t i = 0; i < c.nc; i++) c.c[i].confirmed = true;
            break;
        }
        if (refresh(&c) < 0) {
            strset_clear(&seen);
            goto out;
        }
    }
    strset_clear(&seen);
    for (size_t i = 0; i < c.nc; i++) res->unhashed += c.c[i].kind == CK_UNHASHED;
    if (o->repair && c.nc && !(o->stop && *o->stop) && repair(&c) < 0) goto out;
    res->items = xcalloc(c.nc ? c.nc : 1, sizeof *res->items);
    for (size_t i = 0; i < c.nc; i++) {
        if (c.c[i].kind == CK_UNHASHED) continue;
        if (!c.c[i].confirmed) {
            res->unsettled++;
            continue;
        }
        res->items[res->nitems++] =
            (struct check_item){c.c[i].id, c.c[i].kind, c.c[i].path};
        c.c[i].id = c.c[i].path = NULL;
    }
    rc = !res->nitems || res->repaired ? EXIT_OK : EXIT_FOUND;
out:
    res->seconds = now_s() - t0;
    free_cands(c.c, c.nc);
    free(c.r);
    sbuf_free(&c.ids);
    strset_clear(&c.legacy);
    strset_clear(&c.mysql_ids);
    related_free(&c);
    return rc;
}

void check_result_free(struct check_result *res) {
    for (size_t i = 0; i < res->nitems; i++) free(res->items[i].id), free(res->items[i].path);
    free(res->items);
    memset(res, 0, sizeof *res);
}
