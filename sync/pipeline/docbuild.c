/* docbuild: the document builder's builds (see docbuild.h): documents by
 * root key (docbuild_roots), parent/child documents by key with their parent
 * ids and routing (docbuild_children), and a keyset page of a table
 * (docbuild_page).
 *
 * A build works on one chunk of keys at a time: the root level is fetched,
 * then its relations (docbuild_level.c), then each requested key's document
 * is written, or reported absent. Levels are freed after each chunk.
 * Beside it: docbuild_level.c (levels of rows), docbuild_sql.c (their SQL),
 * docbuild_value.c (a column's JSON), docbuild_units.c (levels of several shard
 * units read together: docbuild_roots_units). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "sync/mapping/mapping_shard.h"
#include "sync/mapping/mapping_source.h"
#include "sync/pipeline/docbuild_int.h"

static const char *key_column(const struct mp_table *t) {
    const struct mp_column *k = mp_table_key(t);
    return k ? k->name : NULL;
}

static const char *key_type(const struct mp_table *t) {
    const struct mp_column *k = mp_table_key(t);
    return k ? k->mysql_type : NULL;
}

void docbuild_init(struct docbuild *b, MYSQL *db, const struct mp_index *ix) {
    memset(b, 0, sizeof *b);
    b->db = db;
    b->ix = ix;
    b->chunk = DOCBUILD_CHUNK;
}

static const char *join_field(const struct mp_index *ix) {
    return ix->join_field ? ix->join_field : "relation";
}

/* Find rows of l for each requested key (in request order). gone: per row,
 * the routing of a child whose root is outside the root's where (NULL:
 * none) */
static int emit_chunk(struct docbuild *b, struct level *l, const char *const *keys, size_t n,
                      const char *id_prefix, char **parent_ids, char **routings, char **gone,
                      const char *join_name, const struct docbuild_sink *sink) {
    const struct mp_index *ix = b->ix;
    sbuf body, id;
    sbuf_init(&body);
    sbuf_init(&id);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        size_t lo, hi;
        dbl_level_find(l, keys[i], strlen(keys[i]), &lo, &hi);
        sbuf_reset(&id);
        if (ix->id_pre) sbuf_adds(&id, ix->id_pre); /* a shard's (mapping_shard.h) */
        if (id_prefix) sbuf_printf(&id, "%s-", id_prefix);
        sbuf_adds(&id, keys[i]);
        if (ix->id_post) sbuf_adds(&id, ix->id_post);
        size_t row = lo < hi ? l->order[lo] : 0;
        if (lo == hi || (routings && !routings[row])) {
            b->stats.absent++;
            if (lo < hi && gone && gone[row] && b->gone)
                rc = b->gone(sink->ctx, id.data, gone[row]);
            else if (sink->absent)
                rc = sink->absent(sink->ctx, id.data);
            continue;
        }
        sbuf_reset(&body);
        jsonw w;
        jw_init(&w, &body);
        dbl_write_row_open(&w, l, row);
        if (join_name) {
            jw_key(&w, join_field(ix));
            jw_obj_open(&w);
            jw_key(&w, "name");
            jw_str(&w, join_name);
            if (parent_ids) {
                jw_key(&w, "parent");
                jw_str(&w, parent_ids[row]);
            }
            jw_obj_close(&w);
        }
        if (ix->unit) { /* which shard: its documents found again when it goes */
            jw_key(&w, MP_SHARD_FIELD);
            jw_str(&w, ix->unit);
        }
        if (ix->source) { /* which source (several feed the index): its check, its shards */
            jw_key(&w, MP_SOURCE_FIELD);
            jw_str(&w, ix->source);
        }
        jw_obj_close(&w);
        b->stats.docs++;
        rc = sink->doc(sink->ctx, id.data, routings ? routings[row] : NULL, body.data, body.len);
    }
    sbuf_free(&body);
    sbuf_free(&id);
    return rc;
}

void docbuild_unexpired(const struct mp_table *t, sbuf *out) {
    if (!t->expiry_column) return;
    sbuf_adds(out, "(");
    db_ident(out, t->expiry_column);
    sbuf_adds(out, " IS NULL OR ");
    db_ident(out, t->expiry_column);
    sbuf_adds(out, " > NOW(6))");
}

void docbuild_row_filter(const struct mp_table *t, bool root, sbuf *out) {
    if (root) docbuild_unexpired(t, out);
    if (!t->where) return;
    if (out->len) sbuf_adds(out, " AND ");
    sbuf_printf(out, "(%s)", t->where);
}

static int build_by_keys(struct docbuild *b, size_t ti, int pi, const char *key, const char *jn,
                         const char *const *keys, size_t n, const struct docbuild_sink *sink,
                         char *err, size_t errlen);

static int cmp_lkey_only(const void *x, const void *y) { return lkey_cmp(x, y); }

void docbuild_sort_keys(char **keys, size_t n) {
    if (n < 2) return;
    struct lkey *ks = xcalloc(n, sizeof *ks); /* each key parsed once */
    bool sorted = true;
    for (size_t i = 0; i < n; i++) {
        ks[i] = lkey_of(keys[i], strlen(keys[i]), i);
        if (i && sorted && lkey_cmp(&ks[i - 1], &ks[i]) > 0) sorted = false;
    }
    if (!sorted) {
        qsort(ks, n, sizeof *ks, cmp_lkey_only);
        char **was = xcalloc(n, sizeof *was);
        memcpy(was, keys, n * sizeof *keys);
        for (size_t i = 0; i < n; i++) keys[i] = was[ks[i].row];
        free(was);
    }
    free(ks);
}

int docbuild_roots(struct docbuild *b, const char *const *keys, size_t n,
                   const struct docbuild_sink *sink, char *err, size_t errlen) {
    const struct mp_index *ix = b->ix;
    if (!ix->ntables) {
        snprintf(err, errlen, "docbuild: index %s has no tables", ix->alias);
        return -1;
    }
    const struct mp_table *t = &ix->tables[0];
    const char *key = key_column(t);
    if (!key) {
        snprintf(err, errlen, "docbuild: index %s: root table %s.%s has no key column",
                 ix->alias, t->db, t->table);
        return -1;
    }
    const char *jn = mp_index_has_children(ix) ? (t->join_name ? t->join_name : t->table) : NULL;
    return build_by_keys(b, 0, -1, key, jn, keys, n, sink, err, errlen);
}

/* docbuild_roots over units: rounds of at most one chunk of keys over all
 * the units, each round's levels read together (dbl_fetch_by_units), then
 * each unit's documents written in the units' order. */
int docbuild_roots_units(struct docbuild_unit *us, size_t n, char *err, size_t errlen) {
    if (n == 1) return docbuild_roots(&us[0].b, us[0].keys, us[0].n, us[0].sink, err, errlen);
    for (size_t u = 0; u < n; u++) {
        const struct mp_index *ix = us[u].b.ix;
        if (!ix->ntables || !key_column(&ix->tables[0]))
            return docbuild_roots(&us[u].b, us[u].keys, us[u].n, us[u].sink, err, errlen);
    }
    struct docbuild *b = &us[0].b;
    size_t chunk = b->chunk ? b->chunk : DOCBUILD_CHUNK;
    struct level *ls = xcalloc(n, sizeof *ls);
    struct level **lp = xcalloc(n, sizeof *lp);
    struct val **vals = xcalloc(n, sizeof *vals);
    size_t *nv = xcalloc(n, sizeof *nv), *unit = xcalloc(n, sizeof *unit);
    size_t *from = xcalloc(n, sizeof *from);
    const char **where = xcalloc(n, sizeof *where);
    sbuf *filter = xcalloc(n, sizeof *filter); /* as build_by_keys: expiry and where */
    for (size_t u = 0; u < n; u++) {
        sbuf_init(&filter[u]);
        docbuild_row_filter(&us[u].b.ix->tables[0], true, &filter[u]);
    }
    int rc = 0;
    size_t u = 0, at = 0;
    while (u < n && rc == 0) {
        size_t m = 0, room = chunk; /* this round: m units' slices of keys */
        for (; u < n && room; at = 0, u++) {
            size_t k = us[u].n - at < room ? us[u].n - at : room;
            if (k) {
                const struct mp_table *t = &us[u].b.ix->tables[0];
                bool int_key = mapping_is_integer_type(key_type(t));
                dbl_level_init(&ls[m], t->db, t->table, t->columns, t->ncolumns, t->relations,
                               t->nrelations, key_column(t));
                lp[m] = &ls[m];
                vals[m] = xcalloc(k, sizeof **vals);
                for (size_t i = 0; i < k; i++)
                    vals[m][i] = (struct val){us[u].keys[at + i], strlen(us[u].keys[at + i]),
                                              int_key};
                nv[m] = k;
                unit[m] = u;
                from[m] = at;
                where[m] = filter[u].len ? filter[u].data : NULL;
                m++;
                room -= k;
            }
            if (at + k < us[u].n) { /* the rest of this unit in the next round */
                at += k;
                break;
            }
        }
        if (!m) break;
        rc = dbl_fetch_by_units(b, lp, m, vals, nv, where, false, NULL, err, errlen);
        if (rc == 0) rc = dbl_fetch_subs_units(b, lp, m, 0, err, errlen);
        for (size_t i = 0; i < m && rc == 0; i++) {
            struct docbuild_unit *x = &us[unit[i]];
            const struct mp_index *ix = x->b.ix;
            const struct mp_table *t = &ix->tables[0];
            const char *jn =
                mp_index_has_children(ix) ? (t->join_name ? t->join_name : t->table) : NULL;
            rc = emit_chunk(&x->b, &ls[i], x->keys + from[i], nv[i], NULL, NULL, NULL, NULL, jn,
                            x->sink);
        }
        for (size_t i = 0; i < m; i++) {
            dbl_level_free(&ls[i]);
            free(vals[i]);
        }
    }
    for (size_t i = 0; i < n; i++) sbuf_free(&filter[i]);
    free(filter);
    free(where);
    free(from);
    free(unit);
    free(nv);
    free(vals);
    free(lp);
    free(ls);
    return rc;
}

static int table_index(const struct mp_index *ix, const char *db, const char *table) {
    for (size_t i = 0; i < ix->ntables; i++)
        if (!strcmp(ix->tables[i].table, table) &&
            !strcmp(ix->tables[i].db ? ix->tables[i].db : "", db ? db : ""))
            return (int)i;
    return -1;
}

/* The table of a parent/child document: its key, join name and parent
 * table (pi). -1 with err when ti is not one. */
static int child_table(const struct docbuild *b, size_t ti, const char **key, int *pi, char *err,
                       size_t errlen) {
    const struct mp_index *ix = b->ix;
    if (ti == 0 || ti >= ix->ntables || !ix->tables[ti].parent_table ||
        !ix->tables[ti].parent_column) {
        snprintf(err, errlen, "docbuild: index %s: table #%zu is not a parent/child table",
                 ix->alias, ti);
        return -1;
    }
    const struct mp_table *t = &ix->tables[ti];
    *key = key_column(t);
    *pi = table_index(ix, t->parent_db, t->parent_table);
    if (!*key || *pi < 0) {
        snprintf(err, errlen, "docbuild: index %s table %s.%s: no key column or unknown parent",
                 ix->alias, t->db, t->table);
        return -1;
    }
    return 0;
}

/* route[0..n): root keys (NULL: none); those whose root row is outside the
 * root's where (or gone) become NULL: their children have no document. Such
 * a key moves to gone[i], the routing their documents had. */
static int roots_in_filter(struct docbuild *b, char **route, char **gone, size_t n, char *err,
                           size_t errlen) {
    const struct mp_table *r = &b->ix->tables[0];
    const char *key = key_column(r);
    if (!key) return 0; /* validation refuses a root without a key */
    struct val *pv = xcalloc(n + 1, sizeof *pv);
    size_t np = 0;
    bool int_key = mapping_is_integer_type(key_type(r));
    for (size_t i = 0; i < n; i++)
        if (route[i]) pv[np++] = (struct val){route[i], strlen(route[i]), int_key};
    int rc = 0;
    if (np) {
        struct level q;
        dbl_level_init(&q, r->db, r->table, NULL, 0, NULL, 0, key);
        sbuf cond = SBUF_INIT;
        docbuild_row_filter(r, false, &cond);
        rc = dbl_fetch_by(b, &q, pv, np, cond.data, false, NULL, err, errlen);
        for (size_t i = 0; i < n && rc == 0; i++) {
            if (!route[i]) continue;
            size_t lo, hi;
            dbl_level_find(&q, route[i], strlen(route[i]), &lo, &hi);
            if (lo == hi) {
                gone[i] = route[i];
                route[i] = NULL;
            }
        }
        sbuf_free(&cond);
        dbl_level_free(&q);
    }
    free(pv);
    return rc;
}

/* Child documents of the rows in l (fetched by key, parent column at pcol,
 * relations fetched): each one's parent id and the routing of the root it
 * descends from, found by walking up the parent tables; then keys[0..k)
 * are emitted. */
static int emit_children(struct docbuild *b, size_t ti, int pi, struct level *l, int pcol,
                         const char *const *keys, size_t k, const struct docbuild_sink *sink,
                         char *err, size_t errlen) {
    const struct mp_index *ix = b->ix;
    const struct mp_table *t = &ix->tables[ti];
    const char *jn = t->join_name ? t->join_name : t->table;
    int rc = 0;
    char **pids = xcalloc(l->nrows + 1, sizeof *pids);
    char **route = xcalloc(l->nrows + 1, sizeof *route);
    char **gone = xcalloc(l->nrows + 1, sizeof *gone);
    const struct mp_table *p = &ix->tables[pi];
    for (size_t i = 0; i < l->nrows; i++) {
        const struct cell *c = cell_at(l, i, (size_t)pcol);
        if (c->raw < 0) continue;
        sbuf s;
        sbuf_init(&s);
        if (pi != 0) sbuf_printf(&s, "%s-", p->join_name ? p->join_name : p->table);
        sbuf_add(&s, raw_of(l, c), c->rl);
        if (mp_ids_templated(ix)) { /* the parent's id, as its shard or source makes it */
            sbuf u = SBUF_INIT;
            mp_doc_id(ix, s.data, s.len, &u);
            sbuf_free(&s);
            s = u;
        }
        pids[i] = sbuf_detach(&s);
        route[i] = xstrndup(raw_of(l, c), c->rl); /* the parent's key, for now */
    }
    /* walk up: replace each parent key by its parent's, until the root */
    int cur = pi, guard = 0;
    /* a parent outside its where has no document, nor has anything below
     * it: the walk reads each parent table with its where, and the root
     * too when it has one */
    while (rc == 0 && cur != 0) {
        const struct mp_table *u = &ix->tables[cur];
        const char *ukey = key_column(u);
        int up = u->parent_table ? table_index(ix, u->parent_db, u->parent_table) : -1;
        if (!ukey || !u->parent_column || up < 0 || ++guard > 16) {
            snprintf(err, errlen, "docbuild: index %s: cannot route %s.%s to the root",
                     ix->alias, t->db, t->table);
            rc = -1;
            break;
        }
        bool up_int_key = mapping_is_integer_type(key_type(u));
        struct level q;
        dbl_level_init(&q, u->db, u->table, NULL, 0, NULL, 0, ukey);
        int qp = dbl_sel_add(&q, u->parent_column, false);
        q.needraw[qp] = true;
        struct val *pv = xcalloc(l->nrows + 1, sizeof *pv);
        size_t np = 0;
        for (size_t i = 0; i < l->nrows; i++)
            if (route[i]) pv[np++] = (struct val){route[i], strlen(route[i]), up_int_key};
        if (np) rc = dbl_fetch_by(b, &q, pv, np, u->where, false, NULL, err, errlen);
        else dbl_level_sort(&q);
        for (size_t i = 0; i < l->nrows && rc == 0; i++) {
            if (!route[i]) continue;
            size_t lo, hi;
            dbl_level_find(&q, route[i], strlen(route[i]), &lo, &hi);
            free(route[i]);
            route[i] = NULL;
            if (lo == hi) continue;
            const struct cell *c = cell_at(&q, q.order[lo], (size_t)qp);
            if (c->raw >= 0) route[i] = xstrndup(raw_of(&q, c), c->rl);
        }
        free(pv);
        dbl_level_free(&q);
        cur = up;
    }
    if (rc == 0 && ix->tables[0].where)
        rc = roots_in_filter(b, route, gone, l->nrows, err, errlen);
    for (size_t i = 0; rc == 0 && mp_ids_templated(ix) && i < l->nrows; i++) {
        char **r = route[i] ? &route[i] : gone[i] ? &gone[i] : NULL;
        if (r) { /* the routing is the root document's id */
            sbuf u = SBUF_INIT;
            mp_doc_id(ix, *r, strlen(*r), &u);
            free(*r);
            *r = sbuf_detach(&u);
        }
    }
    if (rc == 0) rc = emit_chunk(b, l, keys, k, jn, pids, route, gone, jn, sink);
    for (size_t i = 0; i < l->nrows; i++) {
        free(pids[i]);
        free(route[i]);
        free(gone[i]);
    }
    free(pids);
    free(route);
    free(gone);
    return rc;
}

/* The documents of keys[0..n) of table ti (its key column key), fetched a
 * chunk of keys at a time: the root table's (ti 0, join name jn, rows past
 * their expiry left out), or a parent/child table's (parent table pi); rows
 * outside the table's where left out. */
static int build_by_keys(struct docbuild *b, size_t ti, int pi, const char *key, const char *jn,
                         const char *const *keys, size_t n, const struct docbuild_sink *sink,
                         char *err, size_t errlen) {
    const struct mp_table *t = &b->ix->tables[ti];
    /* keys of a string column are quoted, so the server can use its index */
    bool int_key = mapping_is_integer_type(key_type(t));
    size_t chunk = b->chunk ? b->chunk : DOCBUILD_CHUNK;
    struct val *vals = xcalloc(chunk, sizeof *vals);
    sbuf filter = SBUF_INIT; /* a row past its expiry or outside its where: no document */
    docbuild_row_filter(t, ti == 0, &filter);
    int rc = 0;
    for (size_t at = 0; at < n && rc == 0; at += chunk) {
        size_t k = n - at < chunk ? n - at : chunk;
        for (size_t i = 0; i < k; i++)
            vals[i] = (struct val){keys[at + i], strlen(keys[at + i]), int_key};
        struct level l;
        dbl_level_init(&l, t->db, t->table, t->columns, t->ncolumns, t->relations, t->nrelations,
                       key);
        int pcol = -1;
        if (ti != 0) {
            pcol = dbl_sel_add(&l, t->parent_column, false);
            l.needraw[pcol] = true;
        }
        rc = dbl_fetch_by(b, &l, vals, k, filter.len ? filter.data : NULL, false, NULL, err,
                          errlen);
        if (rc == 0) rc = dbl_fetch_subs(b, &l, 0, NULL, err, errlen);
        if (rc == 0)
            rc = ti == 0 ? emit_chunk(b, &l, keys + at, k, NULL, NULL, NULL, NULL, jn, sink)
                         : emit_children(b, ti, pi, &l, pcol, keys + at, k, sink, err, errlen);
        dbl_level_free(&l);
    }
    free(vals);
    sbuf_free(&filter);
    return rc;
}

int docbuild_children(struct docbuild *b, size_t ti, const char *const *keys, size_t n,
                      const struct docbuild_sink *sink, char *err, size_t errlen) {
    const char *key;
    int pi;
    if (child_table(b, ti, &key, &pi, err, errlen) < 0) return -1;
    return build_by_keys(b, ti, pi, key, NULL, keys, n, sink, err, errlen);
}

int docbuild_page(struct docbuild *b, size_t ti, const char *cond, const char *after,
                  size_t limit, bool dense, const struct docbuild_sink *sink, char **last,
                  size_t *nrows, char *err, size_t errlen) {
    const struct mp_index *ix = b->ix;
    const char *key = NULL;
    int pi = -1;
    if (ti == 0) {
        key = ix->ntables ? key_column(&ix->tables[0]) : NULL;
        if (!key) {
            snprintf(err, errlen, "docbuild: index %s: the root table has no key column",
                     ix->alias);
            return -1;
        }
    } else if (child_table(b, ti, &key, &pi, err, errlen) < 0) {
        return -1;
    }
    const struct mp_table *t = &ix->tables[ti];
    struct level l;
    dbl_level_init(&l, t->db, t->table, t->columns, t->ncolumns, t->relations, t->nrelations, key);
    int pcol = -1;
    if (ti != 0) {
        pcol = dbl_sel_add(&l, t->parent_column, false);
        l.needraw[pcol] = true;
    }
    sbuf sql;
    sbuf_init(&sql);
    dbl_select_from(&sql, t->db, t->table, l.sel, l.nsel, false);
    sbuf_adds(&sql, " WHERE 1=1");
    if (cond && *cond) sbuf_printf(&sql, " AND (%s)", cond);
    if (t->expiry_column) { /* expired rows are no documents: keyed lookups below, not ranges */
        sbuf_adds(&sql, " AND ");
        docbuild_unexpired(t, &sql);
        dense = false;
    }
    if (t->where) { /* rows outside it are no documents: the page's keys have gaps */
        sbuf_printf(&sql, " AND (%s)", t->where);
        dense = false;
    }
    bool int_key = mapping_is_integer_type(key_type(t));
    if (after) { /* compared as the column's type: a string key "18" is no number */
        sbuf_adds(&sql, " AND ");
        db_ident(&sql, key);
        sbuf_adds(&sql, " > ");
        if (int_key && docbuild_is_integer(after)) sbuf_adds(&sql, after);
        else db_quote(b->db, &sql, after, strlen(after));
    }
    sbuf_adds(&sql, " ORDER BY ");
    db_ident(&sql, key);
    sbuf_printf(&sql, " LIMIT %zu", limit);
    int rc = dbl_run_query(b, &l, sql.data, sql.len, err, errlen);
    sbuf_free(&sql);
    const char **keys = NULL;
    size_t n = l.nrows;
    if (rc == 0 && n) {
        dbl_level_sort(&l);
        keys = xcalloc(n, sizeof *keys);
        for (size_t i = 0; i < n; i++) keys[i] = raw_of(&l, cell_at(&l, i, (size_t)l.link));
        /* keys come in SQL's order: for an integer column (only: SQL orders a
         * string column's "10" before "2") the first and last are the range */
        struct key_range kr = {key, keys[0], keys[n - 1]};
        bool ranged = dense && int_key &&
                      canon_int(keys[0], strlen(keys[0])) &&
                      canon_int(keys[n - 1], strlen(keys[n - 1]));
        rc = dbl_fetch_subs(b, &l, 0, ranged ? &kr : NULL, err, errlen);
        if (rc == 0 && ti == 0) {
            const char *jn = mp_index_has_children(ix) ? (t->join_name ? t->join_name : t->table) : NULL;
            rc = emit_chunk(b, &l, keys, n, NULL, NULL, NULL, NULL, jn, sink);
        } else if (rc == 0) {
            rc = emit_children(b, ti, pi, &l, pcol, keys, n, sink, err, errlen);
        }
        if (rc == 0) {
            *last = xstrdup(keys[n - 1]);
            *nrows = n;
        }
    }
    free(keys);
    dbl_level_free(&l);
    if (rc > 0) snprintf(err, errlen, "docbuild: the page was stopped by its sink (%d)", rc);
    return rc ? -1 : (int)(n > 0);
}
