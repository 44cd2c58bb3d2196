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

#include "sync/pipeline/router_int.h"

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

void rt_add_pair(struct strset *pairs, const char *doc, size_t dl, const char *el,
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
                if (doc && kv) rt_add_pair(&sd->pairs[n->area], doc, dl, kv, kl);
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
                rc = rt_step_query(r, src, st, &cur, &next, err, errlen);
                strset_clear(&cur);
                cur = next;
            }
            if (rc == 0 && cur.n)
                rc = rt_pair_query(r, src, &r->areas[n->area], &sd->pairs[n->area],
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
                rc = rt_sliced_step(r, src, st, &cur, t, emit, ctx, err, errlen);
                strset_clear(&cur);
                break;
            }
            struct strset next = {NULL, 0, 0};
            rc = rt_step_query(r, src, st, &cur, &next, err, errlen);
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
