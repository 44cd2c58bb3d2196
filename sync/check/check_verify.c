/* check_verify: the candidates of a consistency check rebuilt from MySQL
 * and fetched from the engine again, round after round, until a difference
 * is seen twice alike (rows changing during the check are not differences);
 * and the rebuild of a list of ids as MySQL gives them (check_int.h). */
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
/* ---------------------------------------------------------------- verify */

static int keep_built(void *vl, const char *id, const char *routing, const char *body,
                      size_t len) {
    struct check_built_list *l = vl;
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->v = xrealloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = (struct check_built){xstrdup(id), routing && *routing ? xstrdup(routing) : NULL,
                                        xstrndup(body, len), len};
    return 0;
}

void check_built_free(struct check_built_list *l) {
    for (size_t k = 0; k < l->n; k++) free(l->v[k].id), free(l->v[k].routing), free(l->v[k].body);
    free(l->v);
    memset(l, 0, sizeof *l);
}

const struct check_built *check_built_find(const struct check_built_list *l, const char *id) {
    for (size_t k = 0; k < l->n; k++)
        if (!strcmp(l->v[k].id, id)) return &l->v[k];
    return NULL;
}

int check_build(struct ctx *c, const struct cand *v, size_t n, struct check_built_list *out) {
    struct docbuild_sink sink = {keep_built, NULL, out};
    int rc = 0;
    for (size_t u = 0; u < c->nunits && rc == 0; u++) { /* each id in its shard's unit */
        const struct mp_index *ix = &c->pr->m.indices[c->at0 + u];
        struct docbuild b;
        docbuild_init(&b, c->pr->p.src, ix);
        for (size_t t = 0; t < ix->ntables && rc == 0; t++) {
            if (!check_doc_table(ix, t)) continue;
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
    return rc;
}

struct edoc {
    char *id, *source, *routing;
    long long hash;
};

/* rebuild cands[0..n) from MySQL, fetch their engine copies, and keep in
 * out those that still differ (the rest agree now) */
static int verify_chunk(struct ctx *c, struct cand *v, size_t n, struct cand **out, size_t *nout,
                        size_t *capout) {
    struct check_built_list bl = {0};
    int rc = check_build(c, v, n, &bl);
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
        cJSON *j = check_engine_search(c, NULL, &q);
        if (!j) rc = -1;
        cJSON *hits = check_json_path(j, "hits", "hits", NULL), *h;
        e = xcalloc((size_t)cJSON_GetArraySize(hits) + 1, sizeof *e);
        cJSON_ArrayForEach(h, hits) {
            cJSON *id = cJSON_GetObjectItemCaseSensitive(h, "_id");
            cJSON *src = cJSON_GetObjectItemCaseSensitive(h, "_source");
            if (!cJSON_IsString(id)) continue;
            cJSON *f = check_json_path(h, "fields", CONTENT_HASH_FIELD, NULL);
            double hv = cJSON_IsArray(f) ? check_json_num(cJSON_GetArrayItem(f, 0)) : -1;
            /* a legacy document keeps its hash in _source */
            if (hv < 0) hv = check_json_num(cJSON_GetObjectItemCaseSensitive(src, CONTENT_HASH_FIELD));
            cJSON *rt = cJSON_GetObjectItemCaseSensitive(h, "_routing");
            e[ne++] = (struct edoc){xstrdup(id->valuestring),
                                    src ? cJSON_PrintUnformatted(src) : xstrdup("null"),
                                    cJSON_IsString(rt) ? xstrdup(rt->valuestring) : NULL,
                                    hv >= 0 ? (long long)hv : -1};
        }
        c->res->docs_fetched += ne;
        cJSON_Delete(j);
    }
    sbuf path = SBUF_INIT;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const struct check_built *bd = check_built_find(&bl, v[i].id);
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
        (*out)[(*nout)++] = (struct cand){xstrdup(v[i].id), kind, where, sig, false, v[i].content,
                                          ed && ed->routing ? xstrdup(ed->routing) : NULL};
    }
    sbuf_free(&path);
    sbuf_free(&q);
    for (size_t k = 0; k < ne; k++) free(e[k].id), free(e[k].source), free(e[k].routing);
    free(e);
    check_built_free(&bl);
    return rc;
}

int check_verify(struct ctx *c) {
    struct cand *out = NULL;
    size_t nout = 0, cap = 0;
    for (size_t off = 0; off < c->nc; off += VERIFY_CHUNK) {
        if (c->o->stop && *c->o->stop) {
            check_free_cands(out, nout);
            return errf(c->err, c->errlen, "stopped while comparing documents");
        }
        size_t k = c->nc - off < VERIFY_CHUNK ? c->nc - off : VERIFY_CHUNK;
        if (verify_chunk(c, c->c + off, k, &out, &nout, &cap) < 0) {
            check_free_cands(out, nout);
            return -1;
        }
    }
    check_free_cands(c->c, c->nc);
    c->c = out, c->nc = nout, c->capc = cap;
    return 0;
}
