/* docbuild_units: the levels of several shard units of one index config
 * (sync/mapping/mapping_shard.h) read together, so that the statements a
 * build costs do not grow with the number of shards its keys fall on.
 *
 * A unit is a copy of the index config with one shard's table names. Keys
 * of a change set spread over 16 shards would otherwise cost 16 statements
 * per level (a prepare, an execute and a close each) where one table costs
 * one. Here each level is one statement for every unit:
 *
 *   SELECT 0,cols FROM shop.orders_03 WHERE id IN (...)
 *   UNION ALL SELECT 1,cols FROM shop.orders_11 WHERE id IN (...)
 *   [ORDER BY the level's order, by position]
 *
 * and the leading literal sends each row back to its unit's level
 * (dbl_run_query_split), which is then exactly what the unit's own query
 * would have filled: its rows, in its order (a UNION's ORDER BY sorts the
 * units' rows together; those of one unit keep the relative order a query of
 * its own gives them).
 *
 * A UNION gives a column one type over all its parts. Where the parts'
 * types are the same it is that type, with its metadata, with two
 * exceptions: ENUM and SET come back as VARCHAR without ENUM_FLAG/SET_FLAG
 * (a SET would become a string, not an array). So the units are read
 * together only when every output column has the same known MySQL type in
 * every unit and none is an ENUM or a SET (dbl_units_union_ok); otherwise
 * one unit after the other, as before — and so also when the server refuses
 * the UNION for string columns of different collations (mixed_collations). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "db.h"
#include "sync/pipeline/docbuild_int.h"

/* parts of one UNION at most (each is a table the statement opens) */
#define UNITS_MAX_PARTS 64

static bool enum_or_set(const char *t) {
    return !strncasecmp(t, "enum", 4) || !strncasecmp(t, "set", 3);
}

bool dbl_units_union_ok(struct level *const *ls, size_t n, const char *const *order,
                               size_t *pos) {
    const struct level *a = ls[0];
    for (size_t i = 0; i < a->ncols; i++)
        if (!a->cols[i].mysql_type || !*a->cols[i].mysql_type ||
            enum_or_set(a->cols[i].mysql_type))
            return false;
    for (size_t u = 1; u < n; u++) {
        const struct level *b = ls[u];
        if (b->nsel != a->nsel || b->ncols != a->ncols || b->link != a->link) return false;
        for (size_t i = 0; i < a->nsel; i++)
            if (strcmp(a->sel[i], b->sel[i]) || a->json_text[i] != b->json_text[i]) return false;
        for (size_t i = 0; i < a->ncols; i++)
            if (!b->cols[i].mysql_type || strcasecmp(a->cols[i].mysql_type, b->cols[i].mysql_type))
                return false;
    }
    for (size_t k = 0; order && order[k]; k++) {
        size_t i = 0;
        while (i < a->nsel && strcmp(a->sel[i], order[k])) i++;
        if (i == a->nsel) return false;
        pos[k] = i + 2;
    }
    return true;
}

static int cmp_lkey(const void *x, const void *y) { return lkey_cmp(x, y); }

/* A UNION of string columns whose collations differ (shards created under
 * different defaults: utf8mb4_general_ci beside utf8mb4_unicode_ci) is
 * refused — "Illegal mix of collations for operation 'UNION'" — where each
 * shard's own query is not: ER_CANT_AGGREGATE_2COLLATIONS, _3COLLATIONS,
 * _NCOLLATIONS. The type in the mapping does not say the collation. */
static bool mixed_collations(unsigned e) { return e == 1267 || e == 1270 || e == 1271; }

/* one UNION ALL being written: its parts, literals, and the ORDER BY */
struct uq {
    sbuf sql;
    size_t parts, lits;
    const size_t *pos;
    size_t npos;
};

static int uq_run(struct docbuild *b, struct uq *q, struct level *const *ls, size_t n, char *err,
                  size_t errlen) {
    if (!q->parts) return 0;
    for (size_t k = 0; k < q->npos; k++)
        sbuf_printf(&q->sql, "%s%zu", k ? "," : " ORDER BY ", q->pos[k]);
    int rc = dbl_run_query_split(b, ls, n, true, q->sql.data, q->sql.len, err, errlen);
    sbuf_reset(&q->sql);
    q->parts = q->lits = 0;
    return rc;
}

/* room for a part of nlits literals: the statement so far is run first
 * when it would pass the builder's chunk of literals or UNITS_MAX_PARTS */
static int uq_room(struct docbuild *b, struct uq *q, size_t nlits, size_t chunk,
                   struct level *const *ls, size_t n, char *err, size_t errlen) {
    if (q->parts && (q->lits + nlits > chunk || q->parts >= UNITS_MAX_PARTS)) {
        int rc = uq_run(b, q, ls, n, err, errlen);
        if (rc) return rc;
    }
    if (q->parts) sbuf_adds(&q->sql, " UNION ALL ");
    q->parts++;
    q->lits += nlits;
    return 0;
}

int dbl_fetch_by_units(struct docbuild *b, struct level *const *ls, size_t n,
                       struct val *const *vals, const size_t *nv, const char *const *where,
                       bool distinct, const char *const *order, char *err, size_t errlen) {
    size_t norder = 0;
    while (order && order[norder]) norder++;
    size_t *pos = xcalloc(norder + 1, sizeof *pos);
    if (n < 2 || !dbl_units_union_ok(ls, n, order, pos)) {
        free(pos);
        for (size_t u = 0; u < n; u++) {
            int rc = dbl_fetch_by(b, ls[u], vals[u], nv[u], where[u], distinct, order, err,
                                  errlen);
            if (rc) return rc;
        }
        return 0;
    }
    size_t chunk = b->chunk ? b->chunk : DOCBUILD_CHUNK;
    struct uq q = {SBUF_INIT, 0, 0, pos, norder};
    const char **lits = xcalloc(chunk, sizeof *lits);
    bool *num = xcalloc(chunk, sizeof *num);
    int rc = 0;
    for (size_t u = 0; u < n && rc == 0; u++) {
        /* the values as dbl_fetch_by takes them: sorted, each once, a list
         * of integers dense in its span as one range */
        struct lkey *ks = xcalloc(nv[u] ? nv[u] : 1, sizeof *ks);
        bool ints = true;
        for (size_t i = 0; i < nv[u]; i++) {
            ks[i] = lkey_of(vals[u][i].s, vals[u][i].n, i);
            ints = ints && ks[i].num && vals[u][i].numeric;
        }
        qsort(ks, nv[u], sizeof *ks, cmp_lkey);
        size_t m = 0;
        for (size_t i = 0; i < nv[u]; i++)
            if (!m || lkey_cmp(&ks[m - 1], &ks[i])) ks[m++] = ks[i];
        if (ints && m >= 2 && ks[m - 1].v - ks[0].v < (__int128)m * DOCBUILD_RANGE_SPAN) {
            rc = uq_room(b, &q, 2, chunk, ls, n, err, errlen);
            if (rc == 0)
                dbl_union_part(&q.sql, b->db, u, ls[u], distinct, NULL, NULL, 0,
                               vals[u][ks[0].row].s, vals[u][ks[m - 1].row].s, where[u]);
        } else {
            for (size_t at = 0; at < m && rc == 0; at += chunk) {
                size_t k = m - at < chunk ? m - at : chunk;
                for (size_t i = 0; i < k; i++) {
                    const struct val *v = &vals[u][ks[at + i].row];
                    lits[i] = v->s;
                    num[i] = v->numeric && docbuild_is_integer(lits[i]);
                }
                rc = uq_room(b, &q, k, chunk, ls, n, err, errlen);
                if (rc == 0)
                    dbl_union_part(&q.sql, b->db, u, ls[u], distinct, lits, num, k, NULL, NULL,
                                   where[u]);
            }
        }
        free(ks);
    }
    if (rc == 0) rc = uq_run(b, &q, ls, n, err, errlen);
    sbuf_free(&q.sql);
    free(lits);
    free(num);
    free(pos);
    if (rc != 0 && mixed_collations(b->sql_errno)) {
        /* the units' rows read so far are dropped, and each unit is read
         * by a statement of its own */
        b->sql_errno = 0;
        rc = 0;
        for (size_t u = 0; u < n && rc == 0; u++) {
            ls[u]->nrows = 0;
            sbuf_reset(&ls[u]->json);
            sbuf_reset(&ls[u]->raw);
            rc = dbl_fetch_by(b, ls[u], vals[u], nv[u], where[u], distinct, order, err, errlen);
        }
        return rc;
    }
    for (size_t u = 0; u < n && rc == 0; u++) dbl_level_sort(ls[u]);
    return rc;
}

/* Do the units' relations agree (the same table shapes below)? Else each
 * unit fetches its own. */
static bool same_rels(struct level *const *ls, size_t n) {
    for (size_t u = 1; u < n; u++) {
        if (ls[u]->nrels != ls[0]->nrels) return false;
        for (size_t k = 0; k < ls[0]->nrels; k++)
            if (ls[u]->rels[k].distinct != ls[0]->rels[k].distinct) return false;
    }
    return true;
}

int dbl_fetch_subs_units(struct docbuild *b, struct level *const *ls, size_t n, int depth,
                         char *err, size_t errlen) {
    if (!n) return 0;
    if (n == 1 || !same_rels(ls, n)) {
        for (size_t u = 0; u < n; u++) {
            int rc = dbl_fetch_subs(b, ls[u], depth, NULL, err, errlen);
            if (rc) return rc;
        }
        return 0;
    }
    if (depth >= DOCBUILD_MAX_DEPTH) { /* each level takes 2 of jsonw's depths */
        snprintf(err, errlen, "docbuild: relations nest deeper than %d levels",
                 DOCBUILD_MAX_DEPTH);
        return -1;
    }
    struct level **subs = xcalloc(n, sizeof *subs);
    struct val **vals = xcalloc(n, sizeof *vals);
    size_t *nv = xcalloc(n, sizeof *nv);
    const char **where = xcalloc(n, sizeof *where);
    const char ***orders = xcalloc(n, sizeof *orders);
    int rc = 0;
    for (size_t k = 0; k < ls[0]->nrels && rc == 0; k++) {
        /* the units with values to look up, in unit order */
        size_t m = 0;
        bool same_order = true;
        for (size_t u = 0; u < n; u++) {
            struct level *l = ls[u];
            const struct mp_relation *r = &l->rels[k];
            struct level *s = &l->sub[k];
            dbl_level_init(s, r->db, r->table, r->columns, r->ncolumns, r->relations,
                           r->nrelations, r->join_column);
            struct val *v = xcalloc(l->nrows ? l->nrows : 1, sizeof *v);
            size_t c = dbl_rel_vals(l, k, v);
            if (!c) {
                free(v);
                dbl_level_sort(s);
                continue;
            }
            const char **order = xcalloc(r->ncolumns + 2, sizeof *order);
            docbuild_relation_order(r, order);
            for (size_t i = 0; m && same_order && (order[i] || orders[0][i]); i++)
                same_order = order[i] && orders[0][i] && !strcmp(order[i], orders[0][i]);
            subs[m] = s;
            vals[m] = v;
            nv[m] = c;
            where[m] = r->where;
            orders[m] = order;
            m++;
        }
        if (same_order) {
            rc = dbl_fetch_by_units(b, subs, m, vals, nv, where, ls[0]->rels[k].distinct,
                                    m ? orders[0] : NULL, err, errlen);
        } else { /* each unit its own order */
            for (size_t u = 0; u < m && rc == 0; u++)
                rc = dbl_fetch_by(b, subs[u], vals[u], nv[u], where[u],
                                  ls[0]->rels[k].distinct, orders[u], err, errlen);
        }
        for (size_t u = 0; u < m; u++) {
            free(vals[u]);
            free(orders[u]);
        }
        /* then the relations below, for the units that found rows */
        size_t f = 0;
        for (size_t u = 0; u < m; u++)
            if (subs[u]->nrows) subs[f++] = subs[u];
        if (rc == 0 && f) rc = dbl_fetch_subs_units(b, subs, f, depth + 1, err, errlen);
    }
    free(subs);
    free(vals);
    free(nv);
    free(where);
    free(orders);
    return rc;
}
