/* router: row change -> affected documents (see router.h for the design). */
#include "sync/pipeline/router.h"

#include <mysql.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "log.h"
#include "sbuf.h"
#include "strset.h"
#include "sync/mapping/row_filter.h"

#define IN_CHUNK 500

/* ---------- the paths ---------- */

struct rnode {
    size_t index, doctable;
    const char *db, *table;
    const char *seed;       /* column of this table whose values seed the path */
    struct router_step *steps;
    size_t nsteps;
    int area;               /* -1, or the area-update relation this node is in */
    size_t area_depth;      /* 0: the area relation's own node; d: d steps below it */
    const char *watch[2];   /* descendant nodes: seeded only when a row appears,
                             * goes, or changes one of these (its key, its parent
                             * column): the routing of the documents below */
    const struct mp_table *filtered; /* ... or moves in or out of this table's where
                             * (the documents below exist only while it is in) */
    bool dormant;           /* a refresh_parent false relation: never seeded by a
                             * live change, only listed by router_paths */
};

/* An area-update relation (a nested relation of a root table edited element
 * by element): its changed elements as "doc key \x1f element key" pairs. */
struct area {
    size_t index;
    const struct mp_relation *rel;
    const char *key;        /* the relation table's key column */
};

struct target {
    size_t index, doctable;
    struct strset keys;
};

struct router {
    const struct mapping *m;
    struct rnode *nodes;
    size_t nnodes, capnodes;
    struct target *targets;
    size_t ntargets;
    struct area *areas;
    size_t nareas;
    router_area_fn area_fn; /* NULL: area relations refresh whole documents */
    router_slice_fn slice_fn; /* NULL: every document of a flush is emitted at its end */
    size_t slice;
    unsigned long queries;
};


static const char *key_column(const struct mp_table *t) {
    const struct mp_column *k = mp_table_key(t);
    return k ? k->name : NULL;
}

static struct rnode *add_node(struct router *r, size_t index, size_t doctable, const char *db,
                              const char *table, const char *seed, const struct router_step *steps,
                              size_t nsteps) {
    if (r->nnodes == r->capnodes) {
        r->capnodes = r->capnodes ? r->capnodes * 2 : 16;
        r->nodes = xrealloc(r->nodes, r->capnodes * sizeof *r->nodes);
    }
    struct rnode *n = &r->nodes[r->nnodes++];
    memset(n, 0, sizeof *n);
    n->index = index, n->doctable = doctable, n->db = db, n->table = table, n->seed = seed;
    n->area = -1;
    n->nsteps = nsteps;
    if (nsteps) {
        n->steps = xmalloc(nsteps * sizeof *steps);
        memcpy(n->steps, steps, nsteps * sizeof *steps);
    }
    return n;
}

static const char *rel_key(const struct mp_relation *rel) {
    const struct mp_column *k = mp_relation_key(rel);
    return k ? k->name : NULL;
}

/* Can this relation be edited element by element? (mapping_validate refuses
 * area_update anywhere else; here it just falls back to whole documents.)
 * Not when the documents hold a value an element script would rewrite (a
 * script re-serialises the whole _source in the engine's own form): whole
 * rebuilds keep every document's bytes what the builder writes. */
static bool area_eligible(const struct mp_index *ix, size_t doctable, size_t nup,
                          const struct mp_relation *rel) {
    const struct mp_table *root = &ix->tables[0];
    return rel->area_update && doctable == 0 && nup == 0 && rel_key(rel) &&
           mp_relation_nested(rel, root->columns, root->ncolumns) && key_column(root) &&
           !strcmp(rel->column, key_column(root)) && !mp_index_rewritten_column(ix, NULL);
}

/* said once per mapping: which area_update relations rebuild whole documents */
static void say_area_whole(const struct mp_index *ix, const struct mp_relation *rels, size_t n,
                           const char *col, const char *type) {
    for (size_t i = 0; i < n; i++)
        if (rels[i].area_update)
            log_info("run",
                     "%s: area_update on %s.%s rebuilds whole documents: they hold %s column %s, "
                     "which an element script would rewrite in the engine's own form (only a "
                     "whole write keeps it as stored)",
                     ix->alias, rels[i].db, rels[i].table, type ? type : "?", col);
}

/* Relations under an owner: `out` is the owner's column wanted by the steps
 * above it (`up`, nup of them). area/adepth: the area-update relation above
 * (-1 none) and how many levels below it the owner is. */
static void walk(struct router *r, size_t index, size_t doctable, const char *odb,
                 const char *otable, const char *out, const struct router_step *up, size_t nup,
                 const struct mp_relation *rels, size_t nrels, int area, size_t adepth) {
    for (size_t i = 0; i < nrels; i++) {
        const struct mp_relation *rel = &rels[i];
        struct router_step *steps = xmalloc((nup + 1) * sizeof *steps);
        steps[0] = (struct router_step){odb, otable, rel->column, out};
        if (nup) memcpy(steps + 1, up, nup * sizeof *up);
        /* refresh_parent false: this relation's own rows route nowhere (the
         * documents keep what they embed until something else rebuilds
         * them); the relations below it still lead up through it.
         * area_update takes precedence. */
        struct rnode *n = NULL;
        if (rel->refresh_parent || rel->area_update)
            n = add_node(r, index, doctable, rel->db, rel->table, rel->join_column, steps, nup + 1);
        else /* still a path for the delayed run (router_paths) */
            add_node(r, index, doctable, rel->db, rel->table, rel->join_column, steps, nup + 1)
                ->dormant = true;
        int sub_area = area;
        size_t sub_depth = adepth + 1;
        if (area >= 0) {
            if (n) n->area = area, n->area_depth = adepth;
        } else if (n && area_eligible(&r->m->indices[index], doctable, nup, rel)) {
            r->areas = xrealloc(r->areas, (r->nareas + 1) * sizeof *r->areas);
            r->areas[r->nareas] = (struct area){index, rel, rel_key(rel)};
            n->area = sub_area = (int)r->nareas++;
            n->area_depth = 0;
            sub_depth = 1;
        }
        walk(r, index, doctable, rel->db, rel->table, rel->join_column, steps, nup + 1,
             rel->relations, rel->nrelations, sub_area, sub_depth);
        free(steps);
    }
}

static int table_pos(const struct mp_index *ix, const char *db, const char *table) {
    for (size_t i = 0; i < ix->ntables; i++)
        if (!strcmp(ix->tables[i].db, db) && !strcmp(ix->tables[i].table, table)) return (int)i;
    return -1;
}

/* Parent/child: the documents of child table t are routed by the root above
 * them and exist only while their chain of parents does. So a row of each
 * ancestor A that appears, goes, or changes its key or parent column
 * reaches the t documents below it: A.key = B.parent_column -> B.key = ...
 * = t.parent_column -> t.key. */
static void add_descendant_nodes(struct router *r, size_t index, size_t t) {
    const struct mp_index *ix = &r->m->indices[index];
    struct router_step steps[64];
    size_t n = 0;
    size_t cur = t;
    while (n < 64) {
        const struct mp_table *ct = &ix->tables[cur];
        if (!ct->parent_table || !ct->parent_column) return;
        int p = table_pos(ix, ct->parent_db, ct->parent_table);
        if (p < 0 || (size_t)p == cur) return;
        const char *ck = key_column(ct), *pk = key_column(&ix->tables[p]);
        if (!ck || !pk) return;
        /* the steps from the ancestor down: prepend this level */
        memmove(steps + 1, steps, n * sizeof *steps);
        steps[0] = (struct router_step){ct->db, ct->table, ct->parent_column, ck};
        n++;
        const struct mp_table *pt = &ix->tables[p];
        struct rnode *nd = add_node(r, index, t, pt->db, pt->table, pk, steps, n);
        nd->watch[0] = pk;
        nd->watch[1] = pt->parent_column; /* NULL at the root */
        nd->filtered = pt->where ? pt : NULL;
        cur = (size_t)p;
    }
}

struct router *router_new(const struct mapping *m) {
    struct router *r = xcalloc(1, sizeof *r);
    r->m = m;
    r->targets = xcalloc(1, sizeof *r->targets);
    for (size_t i = 0; i < m->nindices; i++) {
        const struct mp_index *ix = &m->indices[i];
        if (ix->unusable) continue; /* stopped: the source no longer fits its mapping */
        const char *type = NULL;
        const char *col = mp_index_rewritten_column(ix, &type);
        if (col && ix->ntables)
            say_area_whole(ix, ix->tables[0].relations, ix->tables[0].nrelations, col, type);
        for (size_t t = 0; t < ix->ntables; t++) {
            const struct mp_table *tb = &ix->tables[t];
            const char *key = key_column(tb);
            if (t > 0 && !tb->parent_table) continue; /* settings-only entry */
            if (!key) continue;                       /* validation refuses this */
            r->targets = xrealloc(r->targets, (r->ntargets + 1) * sizeof *r->targets);
            r->targets[r->ntargets++] = (struct target){i, t, {NULL, 0, 0}};
            add_node(r, i, t, tb->db, tb->table, key, NULL, 0);
            walk(r, i, t, tb->db, tb->table, key, NULL, 0, tb->relations, tb->nrelations, -1, 0);
            if (t > 0) add_descendant_nodes(r, i, t);
        }
    }
    return r;
}

void router_free(struct router *r) {
    if (!r) return;
    for (size_t i = 0; i < r->nnodes; i++) {
        free(r->nodes[i].steps);
    }
    for (size_t i = 0; i < r->ntargets; i++) strset_clear(&r->targets[i].keys);
    free(r->nodes);
    free(r->targets);
    free(r->areas);
    free(r);
}

static bool same_table(const char *db, const char *table, const char *db2, const char *table2) {
    return !strcmp(db, db2) && !strcmp(table, table2);
}

void router_set_area(struct router *r, router_area_fn fn) { r->area_fn = fn; }

void router_set_slice(struct router *r, router_slice_fn fn, size_t slice) {
    r->slice_fn = fn;
    r->slice = slice ? slice : 1;
}

static void add_pair(struct strset *pairs, const char *doc, size_t dl, const char *el,
                     size_t el_len) {
    sbuf p = SBUF_INIT;
    sbuf_add(&p, doc, dl);
    sbuf_addc(&p, '\x1f');
    sbuf_add(&p, el, el_len);
    strset_add(pairs, p.data, p.len);
    sbuf_free(&p);
}

bool router_wants(const struct router *r, const char *db, const char *table) {
    for (size_t i = 0; i < r->nnodes; i++)
        if (!r->nodes[i].dormant && same_table(r->nodes[i].db, r->nodes[i].table, db, table))
            return true;
    return router_delayed(r, db, table);
}

bool router_delayed(const struct router *r, const char *db, const char *table) {
    for (size_t i = 0; i < r->m->nindices; i++)
        for (size_t t = 0; t < r->m->indices[i].ntables && !r->m->indices[i].unusable; t++) {
            const struct mp_table *tb = &r->m->indices[i].tables[t];
            if (tb->delay_effect && same_table(tb->db, tb->table, db, table)) return true;
        }
    return false;
}

/* the seeds sized for r (a change set's first row, or a new router) */
static void seeds_fit(const struct router *r, struct route_seeds *sd) {
    if (sd->nnodes < r->nnodes) {
        sd->nodes = xrealloc(sd->nodes, r->nnodes * sizeof *sd->nodes);
        memset(sd->nodes + sd->nnodes, 0, (r->nnodes - sd->nnodes) * sizeof *sd->nodes);
        sd->nnodes = r->nnodes;
    }
    if (sd->npairs < r->nareas) {
        sd->pairs = xrealloc(sd->pairs, r->nareas * sizeof *sd->pairs);
        memset(sd->pairs + sd->npairs, 0, (r->nareas - sd->npairs) * sizeof *sd->pairs);
        sd->npairs = r->nareas;
    }
}

void route_seeds_clear(struct route_seeds *sd) {
    for (size_t i = 0; i < sd->nnodes; i++) strset_clear(&sd->nodes[i]);
    for (size_t i = 0; i < sd->npairs; i++) strset_clear(&sd->pairs[i]);
}

void route_seeds_free(struct route_seeds *sd) {
    route_seeds_clear(sd);
    free(sd->nodes);
    free(sd->pairs);
    memset(sd, 0, sizeof *sd);
}

int router_add(struct router *r, struct route_seeds *sd, const char *db, const char *table,
               router_value_fn get, void *before, void *after, char *err, size_t errlen) {
    if (router_delayed(r, db, table)) return 0;
    seeds_fit(r, sd);
    for (size_t i = 0; i < r->nnodes; i++) {
        struct rnode *n = &r->nodes[i];
        if (n->dormant || !same_table(n->db, n->table, db, table)) continue;
        void *imgs[2] = {before, after};
        if (n->watch[0] && before && after) { /* only when the routing below can change */
            bool same = true;
            for (int w = 0; w < 2 && same && n->watch[w]; w++) {
                size_t l1 = 0, l2 = 0;
                bool a1 = false, a2 = false;
                const char *v1 = get(before, n->watch[w], &l1, &a1);
                char *c1 = v1 ? xstrndup(v1, l1) : NULL; /* get may reuse its buffer */
                const char *v2 = get(after, n->watch[w], &l2, &a2);
                if (a1 || a2)
                    same = false; /* not in the image: assume it changed */
                else
                    same = (!c1 && !v2) || (c1 && v2 && l1 == l2 && !memcmp(c1, v2, l1));
                free(c1);
            }
            if (same && n->filtered)
                same = !row_filter_moved(n->filtered->filter, get, before, after);
            if (same) continue;
        }
        if (r->area_fn && n->area >= 0 && n->area_depth == 0) {
            /* the element's own row: (its document, its key) from each image */
            struct area *a = &r->areas[n->area];
            for (int k = 0; k < 2; k++) {
                if (!imgs[k]) continue;
                size_t dl = 0, kl = 0;
                bool da = false, ka = false;
                const char *dv = get(imgs[k], n->seed, &dl, &da);
                char *doc = dv ? xstrndup(dv, dl) : NULL;
                const char *kv = get(imgs[k], a->key, &kl, &ka);
                if (da || ka) {
                    free(doc);
                    return errf(err, errlen,
                                "%s.%s: column %s is not in the row image, so the element this "
                                "row is cannot be found; set binlog_row_image=FULL (or NOBLOB) "
                                "on the source",
                                db, table, da ? n->seed : a->key);
                }
                if (doc && kv) add_pair(&sd->pairs[n->area], doc, dl, kv, kl);
                free(doc);
            }
            continue;
        }
        int seen = 0;
        for (int k = 0; k < 2; k++) {
            if (!imgs[k]) continue;
            size_t len = 0;
            bool absent = false;
            const char *v = get(imgs[k], n->seed, &len, &absent);
            if (absent) continue;
            seen++;
            if (v) strset_add(&sd->nodes[i], v, len);
        }
        if (!seen)
            return errf(err, errlen,
                        "%s.%s: column %s is not in the row image, so the documents this row "
                        "belongs to cannot be found; set binlog_row_image=FULL (or NOBLOB) on "
                        "the source",
                        db, table, n->seed);
    }
    return 0;
}

/* The queries of a path's steps, one per IN_CHUNK values: select_where
 * writes `SELECT [DISTINCT] c1[, c2] FROM db.table WHERE match`, in_list
 * the ` IN (...)` of the next chunk, run_rows runs it. */
typedef void (*in_row_fn)(void *ctx, MYSQL_ROW row, const unsigned long *len);

static void select_where(sbuf *q, bool distinct, const char *c1, const char *c2, const char *db,
                         const char *table, const char *match) {
    sbuf_reset(q);
    sbuf_adds(q, distinct ? "SELECT DISTINCT " : "SELECT ");
    db_ident(q, c1);
    if (c2) {
        sbuf_addc(q, ',');
        db_ident(q, c2);
    }
    sbuf_adds(q, " FROM ");
    db_ident(q, db);
    sbuf_addc(q, '.');
    db_ident(q, table);
    sbuf_adds(q, " WHERE ");
    db_ident(q, match);
}

/* ` IN (...)` of the next IN_CHUNK values of `in` from *i on, appended to q
 * (each value also into vals, unless NULL): how many (0: none left) */
static size_t in_list(MYSQL *src, sbuf *q, const struct strset *in, size_t *i,
                      const char **vals) {
    size_t k = 0;
    sbuf_adds(q, " IN (");
    for (; *i < in->cap && k < IN_CHUNK; (*i)++) {
        const char *v = in->slot[*i];
        if (!v) continue;
        if (k) sbuf_addc(q, ',');
        if (vals) vals[k] = v;
        k++;
        db_quote(src, q, v, strlen(v));
    }
    sbuf_addc(q, ')');
    return k;
}

/* q on the source, row_fn(ctx, row, lengths) for every row: 0, or -1 with
 * err ("finding the <what> of db.table"). Streamed, not db_query: a chunk
 * of values can match a large part of the table (one tag on every
 * product); each row goes to row_fn's set as read, never a second copy of
 * them all in a stored result. */
static int run_rows(struct router *r, MYSQL *src, const sbuf *q, in_row_fn row_fn, void *ctx,
                    const char *what, const char *db, const char *table, char *err,
                    size_t errlen) {
    r->queries++;
    if (mysql_real_query(src, q->data, q->len) != 0)
        return errf(err, errlen, "finding the %s of %s.%s: %s (%u)", what, db, table,
                    mysql_error(src), mysql_errno(src));
    MYSQL_RES *res = mysql_use_result(src);
    MYSQL_ROW row;
    while (res && (row = mysql_fetch_row(res))) row_fn(ctx, row, mysql_fetch_lengths(res));
    if (res) mysql_free_result(res);
    if (mysql_errno(src))
        return errf(err, errlen, "finding the %s of %s.%s: %s (%u)", what, db, table,
                    mysql_error(src), mysql_errno(src));
    return 0;
}

/* `SELECT [DISTINCT] c1[, c2] FROM db.table WHERE match IN (...)`, one query
 * per IN_CHUNK values of `in`; row(ctx, row, lengths) for every result row. */
static int in_query(struct router *r, MYSQL *src, bool distinct, const char *c1, const char *c2,
                    const char *db, const char *table, const char *match, struct strset *in,
                    in_row_fn row_fn, void *ctx, const char *what, char *err, size_t errlen) {
    sbuf q = SBUF_INIT;
    int rc = 0;
    size_t i = 0;
    while (rc == 0) {
        select_where(&q, distinct, c1, c2, db, table, match);
        if (!in_list(src, &q, in, &i, NULL)) break;
        rc = run_rows(r, src, &q, row_fn, ctx, what, db, table, err, errlen);
    }
    sbuf_free(&q);
    return rc;
}

static void add_value(void *ctx, MYSQL_ROW row, const unsigned long *len) {
    if (row[0]) strset_add(ctx, row[0], len[0]);
}

/* values of `out` for owner rows whose `match` is in `in` */
static int step_query(struct router *r, MYSQL *src, const struct router_step *s, struct strset *in,
                      struct strset *outv, char *err, size_t errlen) {
    return in_query(r, src, true, s->out, NULL, s->db, s->table, s->match, in, add_value, outv,
                    "documents", err, errlen);
}

/* ---------- a large fan-out, in slices ----------
 * The last query step of a path (the one that yields the document keys)
 * when the router slices (router_set_slice): the keys go straight into the
 * target's set, and once that holds `slice` of them they are emitted and
 * handed to slice_fn, which builds and delivers them while the rest is
 * read, so one renamed row under a million documents never holds a
 * million keys. Each chunk of values is asked first for at most slice + 1
 * keys (`LIMIT`): a chunk under that (every usual transaction) costs the
 * one query it always did. A chunk over it is read again value by value,
 * in keyset pages of `slice` keys ordered by the key column
 * (`match = v AND out > last ORDER BY out LIMIT slice`), which an index on
 * the match column reads in order: pages cost what they return, so the
 * whole walk is linear in the documents. Keys are then unique within a
 * slice; a document reached from two values or two paths in different
 * slices is built twice, with the same snapshot and version (the second
 * write changes nothing). */

/* emit the target's keys collected so far and hand them to slice_fn */
static int spill(struct router *r, struct target *t, router_emit_fn emit, void *ctx, char *err,
                 size_t errlen) {
    for (size_t k = 0; k < t->keys.cap; k++)
        if (t->keys.slot[k] &&
            emit(ctx, t->index, t->doctable, t->keys.slot[k], strlen(t->keys.slot[k])) != 0) {
            strset_clear(&t->keys);
            return errf(err, errlen, "the document sink refused a routed document");
        }
    strset_clear(&t->keys);
    if (r->slice_fn(ctx, t->index, t->doctable) != 0)
        return errf(err, errlen, "building a slice of the routed documents failed");
    return 0;
}

static int add_keys(struct router *r, struct target *t, struct strset *got, router_emit_fn emit,
                    void *ctx, char *err, size_t errlen) {
    for (size_t k = 0; k < got->cap; k++)
        if (got->slot[k]) strset_add(&t->keys, got->slot[k], strlen(got->slot[k]));
    strset_clear(got);
    return t->keys.n >= r->slice ? spill(r, t, emit, ctx, err, errlen) : 0;
}

/* one value's keys, page by page (its chunk had more than a slice) */
struct page_rows {
    struct strset got;
    sbuf last; /* the page's last key: the next page starts after it */
    bool have_last;
    size_t n;
};

static void add_page_row(void *ctx, MYSQL_ROW row, const unsigned long *len) {
    struct page_rows *pg = ctx;
    if (!row[0]) return;
    strset_add(&pg->got, row[0], len[0]);
    sbuf_reset(&pg->last);
    sbuf_add(&pg->last, row[0], len[0]);
    pg->have_last = true;
    pg->n++;
}

static int value_pages(struct router *r, MYSQL *src, const struct router_step *st,
                       const char *v, struct target *t, router_emit_fn emit, void *ctx,
                       char *err, size_t errlen) {
    sbuf q = SBUF_INIT;
    struct page_rows pg = {{NULL, 0, 0}, SBUF_INIT, false, 0};
    int rc = 0;
    for (;;) {
        select_where(&q, true, st->out, NULL, st->db, st->table, st->match);
        sbuf_addc(&q, '=');
        db_quote(src, &q, v, strlen(v));
        if (pg.have_last) {
            sbuf_adds(&q, " AND ");
            db_ident(&q, st->out);
            sbuf_addc(&q, '>');
            db_quote(src, &q, pg.last.data, pg.last.len);
        }
        sbuf_adds(&q, " ORDER BY ");
        db_ident(&q, st->out);
        sbuf_printf(&q, " LIMIT %zu", r->slice);
        pg.n = 0;
        rc = run_rows(r, src, &q, add_page_row, &pg, "documents", st->db, st->table, err, errlen);
        if (rc != 0) {
            strset_clear(&pg.got);
            break;
        }
        rc = add_keys(r, t, &pg.got, emit, ctx, err, errlen);
        if (rc != 0 || pg.n < r->slice) break;
    }
    sbuf_free(&q);
    sbuf_free(&pg.last);
    return rc;
}

static int sliced_step(struct router *r, MYSQL *src, const struct router_step *st,
                       struct strset *in, struct target *t, router_emit_fn emit, void *ctx,
                       char *err, size_t errlen) {
    sbuf q = SBUF_INIT;
    int rc = 0;
    const char **vals = xmalloc(IN_CHUNK * sizeof *vals);
    size_t i = 0;
    while (rc == 0) {
        select_where(&q, true, st->out, NULL, st->db, st->table, st->match);
        size_t k = in_list(src, &q, in, &i, vals);
        if (!k) break;
        sbuf_printf(&q, " LIMIT %zu", r->slice + 1);
        struct strset got = {NULL, 0, 0};
        rc = run_rows(r, src, &q, add_value, &got, "documents", st->db, st->table, err, errlen);
        if (rc != 0) {
            strset_clear(&got);
            break;
        }
        if (got.n <= r->slice) {
            rc = add_keys(r, t, &got, emit, ctx, err, errlen);
            continue;
        }
        strset_clear(&got); /* more than a slice: value by value, in pages */
        for (size_t j = 0; j < k && rc == 0; j++)
            rc = value_pages(r, src, st, vals[j], t, emit, ctx, err, errlen);
    }
    free(vals);
    sbuf_free(&q);
    return rc;
}

static void add_area_pair(void *ctx, MYSQL_ROW row, const unsigned long *len) {
    if (row[0] && row[1]) add_pair(ctx, row[0], len[0], row[1], len[1]);
}

/* (document, element) pairs of area a for element rows whose `match` column
 * is in `in`: SELECT join_column, key FROM area table WHERE match IN (...).
 * The relation's WHERE is not applied: a row that stops matching must still
 * be removed from its document. */
static int pair_query(struct router *r, MYSQL *src, struct area *a, struct strset *pairs,
                      const char *match, struct strset *in, char *err, size_t errlen) {
    return in_query(r, src, false, a->rel->join_column, a->key, a->rel->db, a->rel->table, match,
                    in, add_area_pair, pairs, "elements", err, errlen);
}

static struct target *target_of(struct router *r, size_t index, size_t doctable) {
    for (size_t i = 0; i < r->ntargets; i++)
        if (r->targets[i].index == index && r->targets[i].doctable == doctable)
            return &r->targets[i];
    return NULL;
}

bool router_pending(const struct router *r, const struct route_seeds *sd) {
    (void)r;
    for (size_t i = 0; i < sd->nnodes; i++)
        if (sd->nodes[i].n) return true;
    /* changed elements are read too: the element for its script, or the
     * whole document while a version is built */
    for (size_t i = 0; i < sd->npairs; i++)
        if (sd->pairs[i].n) return true;
    return false;
}

void router_seeded_indices(const struct router *r, const struct route_seeds *sd, bool *mark,
                           size_t n) {
    for (size_t i = 0; i < sd->nnodes && i < r->nnodes; i++)
        if (sd->nodes[i].n && r->nodes[i].index < n) mark[r->nodes[i].index] = true;
    for (size_t i = 0; i < sd->npairs && i < r->nareas; i++)
        if (sd->pairs[i].n && r->areas[i].index < n) mark[r->areas[i].index] = true;
}

int router_flush(struct router *r, struct route_seeds *sd, MYSQL *src, router_emit_fn emit,
                 void *ctx, char *err, size_t errlen) {
    int rc = 0;
    seeds_fit(r, sd);
    for (size_t i = 0; i < r->nnodes && rc == 0; i++) {
        struct rnode *n = &r->nodes[i];
        if (!sd->nodes[i].n) continue;
        struct strset cur = sd->nodes[i];
        sd->nodes[i] = (struct strset){NULL, 0, 0};
        if (r->area_fn && n->area >= 0 && n->area_depth > 0) {
            /* up to the element level, then the elements' (document, key) */
            for (size_t s = 0; s + 1 < n->area_depth && rc == 0 && cur.n; s++) {
                const struct router_step *st = &n->steps[s];
                if (!strcmp(st->match, st->out)) continue;
                struct strset next = {NULL, 0, 0};
                rc = step_query(r, src, st, &cur, &next, err, errlen);
                strset_clear(&cur);
                cur = next;
            }
            if (rc == 0 && cur.n)
                rc = pair_query(r, src, &r->areas[n->area], &sd->pairs[n->area],
                                n->steps[n->area_depth - 1].match,
                                &cur, err, errlen);
            strset_clear(&cur);
            continue;
        }
        struct target *t = target_of(r, n->index, n->doctable);
        size_t last_q = n->nsteps; /* the last step that queries (yields the keys) */
        for (size_t s = 0; s < n->nsteps; s++)
            if (strcmp(n->steps[s].match, n->steps[s].out)) last_q = s;
        for (size_t s = 0; s < n->nsteps && rc == 0 && cur.n; s++) {
            const struct router_step *st = &n->steps[s];
            if (!strcmp(st->match, st->out)) continue; /* the values pass through */
            if (s == last_q && r->slice_fn && t) {
                rc = sliced_step(r, src, st, &cur, t, emit, ctx, err, errlen);
                strset_clear(&cur);
                break;
            }
            struct strset next = {NULL, 0, 0};
            rc = step_query(r, src, st, &cur, &next, err, errlen);
            strset_clear(&cur);
            cur = next;
        }
        for (size_t k = 0; rc == 0 && t && k < cur.cap; k++)
            if (cur.slot[k]) strset_add(&t->keys, cur.slot[k], strlen(cur.slot[k]));
        strset_clear(&cur);
    }
    for (size_t i = 0; i < r->ntargets; i++) {
        struct target *t = &r->targets[i];
        for (size_t k = 0; rc == 0 && k < t->keys.cap; k++)
            if (t->keys.slot[k] &&
                emit(ctx, t->index, t->doctable, t->keys.slot[k], strlen(t->keys.slot[k])) != 0)
                rc = errf(err, errlen, "the document sink refused a routed document");
        strset_clear(&t->keys);
    }
    for (size_t i = 0; i < r->nareas; i++) {
        struct area *a = &r->areas[i];
        struct strset *pairs = &sd->pairs[i];
        for (size_t k = 0; rc == 0 && k < pairs->cap; k++) {
            char *p = pairs->slot[k];
            if (!p) continue;
            char *sep = strchr(p, '\x1f');
            *sep = '\0';
            if (r->area_fn(ctx, a->index, a->rel, p, sep + 1) != 0)
                rc = errf(err, errlen, "the document sink refused a routed element");
            *sep = '\x1f';
        }
        strset_clear(pairs);
    }
    if (rc != 0) route_seeds_clear(sd);
    return rc;
}

unsigned long router_queries(const struct router *r) { return r->queries; }

int router_paths(const struct router *r, size_t index, const char *db, const char *table,
                 router_path_fn fn, void *ctx) {
    int n = 0;
    for (size_t i = 0; i < r->nnodes; i++) {
        const struct rnode *nd = &r->nodes[i];
        if (nd->index != index || nd->watch[0] || !nd->nsteps ||
            !same_table(nd->db, nd->table, db, table))
            continue;
        if (fn(ctx, nd->index, nd->doctable, nd->seed, nd->steps, nd->nsteps) != 0) return -1;
        n++;
    }
    return n;
}

void router_describe(const struct router *r, sbuf *out) {
    for (size_t i = 0; i < r->nnodes; i++) {
        const struct rnode *n = &r->nodes[i];
        if (n->dormant) continue;
        const struct mp_index *ix = &r->m->indices[n->index];
        sbuf_printf(out, "%s.%s.%s", n->db, n->table, n->seed);
        for (size_t s = 0; s < n->nsteps; s++) {
            const struct router_step *st = &n->steps[s];
            if (!strcmp(st->match, st->out))
                sbuf_printf(out, " = %s.%s.%s", st->db, st->table, st->match);
            else
                sbuf_printf(out, " = %s.%s.%s -> %s", st->db, st->table, st->match, st->out);
        }
        const struct mp_table *dt = &ix->tables[n->doctable];
        sbuf_printf(out, " => %s %s.%s\n", ix->alias, dt->db, dt->table);
    }
}
