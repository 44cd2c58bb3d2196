/* check_run: the consistency check of one index config run (see check.h) —
 * MySQL's side (every document's key and content hash, or those the window
 * reaches), compared with the engine's (check_engine.c), the candidates
 * verified round after round (check_verify.c) and repaired; the result
 * recorded by the caller (check_report.c). */
#include "sync/check/check.h"
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
#include "sync/mapping/mapping_source.h"
#include "sync/pipeline/docbuild.h"
#include "json_exact.h"
#include "jsonw.h"
#include "log.h"
#include "search/content_hash.h"
#include "sync/status/status.h"
#include "strset.h"

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
        if (check_doc_table(c->ix, t) || !rt->daily_check_column) continue;
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
        if (!check_doc_table(c->ix, t)) continue;
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

/* ---------------------------------------------------------------- the run */

/* Round 1 at once; later rounds once the daemon passed a newer position.
 * A difference is believed when the round before saw it the same way
 * (same kind, path and content on both sides): a row still changing
 * looks different each time. With no daemon to wait for (no checkpoint,
 * or one that does not move), nothing is on its way: what is seen is
 * believed. Differences never seen twice alike are reported apart as
 * unsettled (rows busy during the check), not as drift. */
static int rounds(struct ctx *c) {
    struct strset seen = {0};
    for (c->res->rounds = 1;; c->res->rounds++) {
        if (c->nc && check_verify(c) < 0) {
            strset_clear(&seen);
            return -1;
        }
        struct strset now = {0};
        bool all = true;
        for (size_t i = 0; i < c->nc; i++) {
            if (c->c[i].kind == CK_UNHASHED) continue;
            sbuf l = SBUF_INIT;
            sbuf_printf(&l, "%s\t%d\t%s\t%u", c->c[i].id, (int)c->c[i].kind,
                        c->c[i].path ? c->c[i].path : "", c->c[i].sig);
            c->c[i].confirmed = strset_has(&seen, l.data, l.len);
            all = all && c->c[i].confirmed;
            strset_add(&now, l.data, l.len);
            sbuf_free(&l);
        }
        strset_clear(&seen);
        seen = now;
        if (all || c->res->rounds == MAX_ROUNDS) break;
        if (!(c->res->settled = check_settle(c->pr, c->o, c->res))) {
            for (size_t i = 0; i < c->nc; i++) c->c[i].confirmed = true;
            break;
        }
        if (check_refresh(c) < 0) {
            strset_clear(&seen);
            return -1;
        }
    }
    strset_clear(&seen);
    return 0;
}

int check_producer_open(struct producer *pr, const struct ss_config *cfg,
                        struct deliver_hub *hub, const char *stream) {
    struct producer_opts po = {.engine = true, .flush_interval_ms = 5, .stream = stream,
                               .hub = hub};
    return producer_open(pr, cfg, &po);
}

/* c->at, at0, nunits and ix: the index config o->alias (its first shard
 * unit and their number). 0, or -1 with pr->err when the source has none */
static int ctx_index(struct ctx *c) {
    struct producer *pr = c->pr;
    size_t at = 0;
    while (at < pr->m.nindices && strcmp(pr->m.indices[at].alias, c->o->alias)) at++;
    if (at == pr->m.nindices) {
        snprintf(pr->err, sizeof pr->err, "source %s has no index config \"%s\"",
                 pr->p.cfg->source.name, c->o->alias);
        return -1;
    }
    c->at = c->at0 = at;
    c->ix = &pr->m.indices[at];
    while (at + c->nunits < pr->m.nindices &&
           !strcmp(pr->m.indices[at + c->nunits].alias, c->o->alias))
        c->nunits++;
    return 0;
}

int check_rewrite_ids(struct producer *pr, const struct check_opts *o, const char *const *ids,
                      size_t n, struct check_result *res) {
    memset(res, 0, sizeof *res);
    struct ctx c = {.pr = pr, .o = o, .res = res, .err = pr->err, .errlen = sizeof pr->err};
    if (ctx_index(&c) < 0) return EXIT_USAGE;
    sbuf_init(&c.ids);
    /* by content: a hand-made _update keeps the hash of what it replaced */
    for (size_t i = 0; i < n; i++) {
        check_add_cand(&c, ids[i], CK_DIFFERENT);
        c.c[c.nc - 1].content = true;
    }
    int rc = check_repair_again(&c) < 0 ? EXIT_RUNTIME : EXIT_OK;
    check_free_cands(c.c, c.nc);
    sbuf_free(&c.ids);
    return rc;
}

int check_run(struct producer *pr, const struct check_opts *o, struct check_result *res) {
    memset(res, 0, sizeof *res);
    double t0 = check_now_s();
    struct ctx c = {.pr = pr, .o = o, .res = res, .err = pr->err, .errlen = sizeof pr->err};
    sbuf_init(&c.ids);
    if (ctx_index(&c) < 0) return EXIT_USAGE;
    if (!c.ix->current_version) {
        snprintf(pr->err, sizeof pr->err, "index %s has no version yet: run searchsync reindex %s",
                 o->alias, o->alias);
        return EXIT_USAGE;
    }
    if (o->since_s > 0) {
        bool any = false;
        for (size_t t = 0; t < c.ix->ntables; t++)
            if (check_doc_table(c.ix, t) && c.ix->tables[t].daily_check_column) any = true;
        if (!any) {
            snprintf(pr->err, sizeof pr->err,
                     "index %s: --since needs a daily_check_column on its root table (a column "
                     "that holds each row's last change, e.g. updated_at): set it in the mapping "
                     "file, or check the whole index without --since", o->alias);
            return EXIT_USAGE;
        }
        c.window = true;
    }
    if (c.ix->source) { /* several sources: this one's documents (ss_source) */
        sbuf f = SBUF_INIT;
        sbuf_adds(&f, "{\"term\":{\"" MP_SOURCE_FIELD "\":");
        json_escape(&f, c.ix->source, strlen(c.ix->source));
        sbuf_adds(&f, "}}");
        c.only = sbuf_detach(&f);
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
    if (check_refresh(&c) < 0 || check_engine_side(&c) < 0) goto out;
    if (rounds(&c) < 0) goto out;
    for (size_t i = 0; i < c.nc; i++) res->unhashed += c.c[i].kind == CK_UNHASHED;
    if (o->repair && c.nc && !(o->stop && *o->stop) && check_repair(&c) < 0) goto out;
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
    res->seconds = check_now_s() - t0;
    check_free_cands(c.c, c.nc);
    free(c.r);
    free(c.only);
    sbuf_free(&c.ids);
    strset_clear(&c.legacy);
    strset_clear(&c.mysql_ids);
    related_free(&c);
    return rc;
}
