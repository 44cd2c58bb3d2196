/* router: row change -> affected documents (see router.h for the design). */
#include "router.h"

#include <mysql.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "sbuf.h"

#define IN_CHUNK 500

/* ---------- a set of strings (open addressing, FNV-1a) ---------- */
struct vset {
    char **slot;
    size_t cap, n;
};

static uint64_t fnv(const char *s, size_t n) {
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static void vset_clear(struct vset *s) {
    for (size_t i = 0; i < s->cap; i++) free(s->slot[i]);
    free(s->slot);
    s->slot = NULL, s->cap = s->n = 0;
}

static void vset_add(struct vset *s, const char *v, size_t n);

static void vset_grow(struct vset *s) {
    struct vset t = {xcalloc(s->cap ? s->cap * 2 : 64, sizeof(char *)), s->cap ? s->cap * 2 : 64, 0};
    for (size_t i = 0; i < s->cap; i++)
        if (s->slot[i]) {
            vset_add(&t, s->slot[i], strlen(s->slot[i]));
            free(s->slot[i]);
        }
    free(s->slot);
    *s = t;
}

static void vset_add(struct vset *s, const char *v, size_t n) {
    if ((s->n + 1) * 2 > s->cap) vset_grow(s);
    size_t i = (size_t)fnv(v, n) & (s->cap - 1);
    while (s->slot[i]) {
        if (strlen(s->slot[i]) == n && memcmp(s->slot[i], v, n) == 0) return;
        i = (i + 1) & (s->cap - 1);
    }
    s->slot[i] = xstrndup(v, n);
    s->n++;
}

/* ---------- the paths ---------- */
struct rstep {
    const char *db, *table; /* the owner table */
    const char *match;      /* owner column equal to the values so far */
    const char *out;        /* owner column wanted above (its key at the top) */
};

struct rnode {
    size_t index, doctable;
    const char *db, *table;
    const char *seed;       /* column of this table whose values seed the path */
    struct rstep *steps;
    size_t nsteps;
    struct vset seeds;
};

struct target {
    size_t index, doctable;
    struct vset keys;
};

struct router {
    const struct mapping *m;
    struct rnode *nodes;
    size_t nnodes, capnodes;
    struct target *targets;
    size_t ntargets;
    unsigned long queries;
};

static const char *key_column(const struct mp_table *t) {
    for (size_t i = 0; i < t->ncolumns; i++)
        if (t->columns[i].is_key) return t->columns[i].name;
    return NULL;
}

static struct rnode *add_node(struct router *r, size_t index, size_t doctable, const char *db,
                              const char *table, const char *seed, const struct rstep *steps,
                              size_t nsteps) {
    if (r->nnodes == r->capnodes) {
        r->capnodes = r->capnodes ? r->capnodes * 2 : 16;
        r->nodes = xrealloc(r->nodes, r->capnodes * sizeof *r->nodes);
    }
    struct rnode *n = &r->nodes[r->nnodes++];
    memset(n, 0, sizeof *n);
    n->index = index, n->doctable = doctable, n->db = db, n->table = table, n->seed = seed;
    n->nsteps = nsteps;
    if (nsteps) {
        n->steps = xmalloc(nsteps * sizeof *steps);
        memcpy(n->steps, steps, nsteps * sizeof *steps);
    }
    return n;
}

/* Relations under an owner: `out` is the owner's column wanted by the steps
 * above it (`up`, nup of them). */
static void walk(struct router *r, size_t index, size_t doctable, const char *odb,
                 const char *otable, const char *out, const struct rstep *up, size_t nup,
                 const struct mp_relation *rels, size_t nrels) {
    for (size_t i = 0; i < nrels; i++) {
        const struct mp_relation *rel = &rels[i];
        struct rstep *steps = xmalloc((nup + 1) * sizeof *steps);
        steps[0] = (struct rstep){odb, otable, rel->column, out};
        if (nup) memcpy(steps + 1, up, nup * sizeof *up);
        add_node(r, index, doctable, rel->db, rel->table, rel->join_column, steps, nup + 1);
        walk(r, index, doctable, rel->db, rel->table, rel->join_column, steps, nup + 1,
             rel->relations, rel->nrelations);
        free(steps);
    }
}

struct router *router_new(const struct mapping *m) {
    struct router *r = xcalloc(1, sizeof *r);
    r->m = m;
    r->targets = xcalloc(1, sizeof *r->targets);
    for (size_t i = 0; i < m->nindices; i++) {
        const struct mp_index *ix = &m->indices[i];
        for (size_t t = 0; t < ix->ntables; t++) {
            const struct mp_table *tb = &ix->tables[t];
            const char *key = key_column(tb);
            if (t > 0 && !tb->parent_table) continue; /* settings-only entry */
            if (!key) continue;                       /* validation refuses this */
            r->targets = xrealloc(r->targets, (r->ntargets + 1) * sizeof *r->targets);
            r->targets[r->ntargets++] = (struct target){i, t, {NULL, 0, 0}};
            add_node(r, i, t, tb->db, tb->table, key, NULL, 0);
            walk(r, i, t, tb->db, tb->table, key, NULL, 0, tb->relations, tb->nrelations);
        }
    }
    return r;
}

void router_free(struct router *r) {
    if (!r) return;
    for (size_t i = 0; i < r->nnodes; i++) {
        free(r->nodes[i].steps);
        vset_clear(&r->nodes[i].seeds);
    }
    for (size_t i = 0; i < r->ntargets; i++) vset_clear(&r->targets[i].keys);
    free(r->nodes);
    free(r->targets);
    free(r);
}

static bool same_table(const char *db, const char *table, const char *db2, const char *table2) {
    return !strcmp(db, db2) && !strcmp(table, table2);
}

bool router_wants(const struct router *r, const char *db, const char *table) {
    for (size_t i = 0; i < r->nnodes; i++)
        if (same_table(r->nodes[i].db, r->nodes[i].table, db, table)) return true;
    return router_delayed(r, db, table);
}

bool router_delayed(const struct router *r, const char *db, const char *table) {
    for (size_t i = 0; i < r->m->nindices; i++)
        for (size_t t = 0; t < r->m->indices[i].ntables; t++) {
            const struct mp_table *tb = &r->m->indices[i].tables[t];
            if (tb->delay_effect && same_table(tb->db, tb->table, db, table)) return true;
        }
    return false;
}

int router_add(struct router *r, const char *db, const char *table, router_value_fn get,
               void *before, void *after, char *err, size_t errlen) {
    if (router_delayed(r, db, table)) return 0;
    for (size_t i = 0; i < r->nnodes; i++) {
        struct rnode *n = &r->nodes[i];
        if (!same_table(n->db, n->table, db, table)) continue;
        void *imgs[2] = {before, after};
        int seen = 0;
        for (int k = 0; k < 2; k++) {
            if (!imgs[k]) continue;
            size_t len = 0;
            bool absent = false;
            const char *v = get(imgs[k], n->seed, &len, &absent);
            if (absent) continue;
            seen++;
            if (v) vset_add(&n->seeds, v, len);
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

/* values of `out` for owner rows whose `match` is in `in` */
static int step_query(struct router *r, MYSQL *src, const struct rstep *s, struct vset *in,
                      struct vset *outv, char *err, size_t errlen) {
    sbuf q = SBUF_INIT;
    int rc = 0;
    size_t i = 0;
    while (i < in->cap && rc == 0) {
        sbuf_reset(&q);
        sbuf_adds(&q, "SELECT DISTINCT ");
        db_ident(&q, s->out);
        sbuf_adds(&q, " FROM ");
        db_ident(&q, s->db);
        sbuf_addc(&q, '.');
        db_ident(&q, s->table);
        sbuf_adds(&q, " WHERE ");
        db_ident(&q, s->match);
        sbuf_adds(&q, " IN (");
        int k = 0;
        for (; i < in->cap && k < IN_CHUNK; i++) {
            if (!in->slot[i]) continue;
            if (k++) sbuf_addc(&q, ',');
            db_quote(src, &q, in->slot[i], strlen(in->slot[i]));
        }
        sbuf_addc(&q, ')');
        if (!k) break;
        r->queries++;
        if (mysql_real_query(src, q.data, q.len) != 0) {
            rc = errf(err, errlen, "finding the documents of %s.%s: %s (%u)", s->db, s->table,
                      mysql_error(src), mysql_errno(src));
            break;
        }
        MYSQL_RES *res = mysql_use_result(src);
        MYSQL_ROW row;
        while (res && (row = mysql_fetch_row(res))) {
            unsigned long *len = mysql_fetch_lengths(res);
            if (row[0]) vset_add(outv, row[0], len[0]);
        }
        if (res) mysql_free_result(res);
        if (mysql_errno(src))
            rc = errf(err, errlen, "finding the documents of %s.%s: %s (%u)", s->db, s->table,
                      mysql_error(src), mysql_errno(src));
    }
    sbuf_free(&q);
    return rc;
}

static struct target *target_of(struct router *r, size_t index, size_t doctable) {
    for (size_t i = 0; i < r->ntargets; i++)
        if (r->targets[i].index == index && r->targets[i].doctable == doctable)
            return &r->targets[i];
    return NULL;
}

int router_flush(struct router *r, MYSQL *src, router_emit_fn emit, void *ctx, char *err,
                 size_t errlen) {
    int rc = 0;
    for (size_t i = 0; i < r->nnodes && rc == 0; i++) {
        struct rnode *n = &r->nodes[i];
        if (!n->seeds.n) continue;
        struct vset cur = n->seeds;
        n->seeds = (struct vset){NULL, 0, 0};
        for (size_t s = 0; s < n->nsteps && rc == 0 && cur.n; s++) {
            const struct rstep *st = &n->steps[s];
            if (!strcmp(st->match, st->out)) continue; /* the values pass through */
            struct vset next = {NULL, 0, 0};
            rc = step_query(r, src, st, &cur, &next, err, errlen);
            vset_clear(&cur);
            cur = next;
        }
        struct target *t = target_of(r, n->index, n->doctable);
        for (size_t k = 0; rc == 0 && t && k < cur.cap; k++)
            if (cur.slot[k]) vset_add(&t->keys, cur.slot[k], strlen(cur.slot[k]));
        vset_clear(&cur);
    }
    for (size_t i = 0; i < r->ntargets; i++) {
        struct target *t = &r->targets[i];
        for (size_t k = 0; rc == 0 && k < t->keys.cap; k++)
            if (t->keys.slot[k] &&
                emit(ctx, t->index, t->doctable, t->keys.slot[k], strlen(t->keys.slot[k])) != 0)
                rc = errf(err, errlen, "the document sink refused a routed document");
        vset_clear(&t->keys);
    }
    if (rc != 0)
        for (size_t i = 0; i < r->nnodes; i++) vset_clear(&r->nodes[i].seeds);
    return rc;
}

unsigned long router_queries(const struct router *r) { return r->queries; }

void router_describe(const struct router *r, sbuf *out) {
    for (size_t i = 0; i < r->nnodes; i++) {
        const struct rnode *n = &r->nodes[i];
        const struct mp_index *ix = &r->m->indices[n->index];
        sbuf_printf(out, "%s.%s.%s", n->db, n->table, n->seed);
        for (size_t s = 0; s < n->nsteps; s++) {
            const struct rstep *st = &n->steps[s];
            if (!strcmp(st->match, st->out))
                sbuf_printf(out, " = %s.%s.%s", st->db, st->table, st->match);
            else
                sbuf_printf(out, " = %s.%s.%s -> %s", st->db, st->table, st->match, st->out);
        }
        const struct mp_table *dt = &ix->tables[n->doctable];
        sbuf_printf(out, " => %s %s.%s\n", ix->alias, dt->db, dt->table);
    }
}
