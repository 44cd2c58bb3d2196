/* docbuild_level: the document builder's levels of rows (docbuild_int.h).
 *
 *   dbl_fetch_by       one IN query per chunk of link values (or a BETWEEN;
 *                      a relation's rows by primary key range: fetch_keyed)
 *   dbl_fetch_subs     per relation: the distinct owner values of all the
 *                      level's rows, one IN query per chunk of them, then the
 *                      same for the relation's own relations (depth first)
 *   dbl_write_row_open serialises a row with everything below it, finding
 *                      related rows by binary search in each sub-level's
 *                      rows sorted by their link value
 * Rows are read with prepared statements, each column bound by its type
 * (docbuild_value.c formats it). */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mysqld_error.h>

#include "db.h"
#include "stmt_binds.h"
#include "sync/pipeline/docbuild_int.h"

int dbl_sel_add(struct level *l, const char *name, bool json_text) {
    for (size_t i = 0; i < l->nsel; i++)
        if (!strcmp(l->sel[i], name)) return (int)i;
    l->sel = xrealloc(l->sel, (l->nsel + 1) * sizeof *l->sel);
    l->needraw = xrealloc(l->needraw, (l->nsel + 1) * sizeof *l->needraw);
    l->json_text = xrealloc(l->json_text, (l->nsel + 1) * sizeof *l->json_text);
    l->sel[l->nsel] = name;
    l->needraw[l->nsel] = false;
    l->json_text[l->nsel] = json_text;
    return (int)l->nsel++;
}

static bool is_json_type(const char *t) { return t && !strncmp(t, "json", 4); }

void dbl_level_init(struct level *l, const char *db, const char *table,
                    const struct mp_column *cols, size_t ncols, const struct mp_relation *rels,
                    size_t nrels, const char *link) {
    memset(l, 0, sizeof *l);
    l->db = db;
    l->table = table;
    l->cols = cols;
    l->ncols = ncols;
    l->rels = rels;
    l->nrels = nrels;
    sbuf_init(&l->json);
    sbuf_init(&l->raw);
    for (size_t i = 0; i < ncols; i++)
        dbl_sel_add(l, cols[i].name, is_json_type(cols[i].mysql_type));
    l->link = -1;
    if (link) {
        l->link = dbl_sel_add(l, link, false);
        l->needraw[l->link] = true;
    }
    if (nrels) {
        l->rel_col = xcalloc(nrels, sizeof *l->rel_col);
        l->sub = xcalloc(nrels, sizeof *l->sub);
    }
    for (size_t k = 0; k < nrels; k++) {
        l->rel_col[k] = dbl_sel_add(l, rels[k].column, false);
        l->needraw[l->rel_col[k]] = true;
    }
    /* every row writes the same names: escape them once */
    sbuf_init(&l->names);
    l->name_at = xcalloc(ncols + nrels + 1, sizeof *l->name_at);
    for (size_t i = 0; i < ncols; i++) {
        l->name_at[i] = l->names.len;
        json_escape(&l->names, cols[i].name, strlen(cols[i].name));
    }
    for (size_t k = 0; k < nrels; k++) {
        l->name_at[ncols + k] = l->names.len;
        const char *name = mp_relation_name(&rels[k], cols, ncols);
        if (name) json_escape(&l->names, name, strlen(name));
    }
    l->name_at[ncols + nrels] = l->names.len;
}


void dbl_level_free(struct level *l) {
    if (!l) return;
    for (size_t k = 0; k < l->nrels; k++) dbl_level_free(&l->sub[k]);
    free(l->sub);
    free(l->rel_col);
    free(l->sel);
    free(l->needraw);
    free(l->json_text);
    free(l->cells);
    free(l->order);
    free(l->keys);
    free(l->name_at);
    sbuf_free(&l->names);
    sbuf_free(&l->json);
    sbuf_free(&l->raw);
    memset(l, 0, sizeof *l);
}


/* One fetched row appended to l: each cell's JSON, and for the columns a
 * link or a key reads (needraw) its raw text. Columns from off on (a split
 * query's first column says the level: dbl_run_query_split). */
static void store_row(struct level *l, const MYSQL_FIELD *fields, const struct stmt_binds *sb,
                      const bool *jt, unsigned off) {
    if (l->nrows == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->cells = xrealloc(l->cells, l->cap * l->nsel * sizeof *l->cells);
    }
    struct cell *row = &l->cells[l->nrows * l->nsel];
    for (unsigned i = off; i < sb->n; i++) {
        struct cell *c = &row[i - off];
        jsonw w;
        jw_init(&w, &l->json);
        c->jo = l->json.len;
        docbuild_value_json(&w, &fields[i], &sb->bind[i], jt[i]);
        c->jl = l->json.len - c->jo;
        c->raw = -1;
        c->ro = l->raw.len;
        c->rl = 0;
        if (!l->needraw[i - off] || sb->nulls[i]) continue;
        if (sb->bind[i].buffer_type == MYSQL_TYPE_LONGLONG) {
            char t[32];
            int64_t v;
            memcpy(&v, sb->bufs[i], 8);
            int n = (fields[i].flags & UNSIGNED_FLAG) ? fmt_u64(t, (uint64_t)v) : fmt_i64(t, v);
            sbuf_add(&l->raw, t, (size_t)n);
            c->raw = 1;
        } else if (sb->bind[i].buffer_type == MYSQL_TYPE_STRING) {
            sbuf_add(&l->raw, sb->bufs[i],
                     sb->lens[i] < sb->bind[i].buffer_length ? sb->lens[i] : sb->bind[i].buffer_length);
            c->raw = 0;
        } else { /* dates, floats: their JSON text without quotes */
            const char *j = l->json.data + c->jo;
            size_t jl = c->jl;
            if (jl >= 2 && j[0] == '"') {
                j++;
                jl -= 2;
            }
            sbuf_add(&l->raw, j, jl);
            c->raw = 0;
        }
        c->rl = l->raw.len - c->ro;
        sbuf_addc(&l->raw, '\0');
    }
    l->nrows++;
}

/* Each column bound by its type (docbuild_bind_type); jt[i]: column i holds
 * JSON text (the mapping says so, or the server tags it json); l's
 * selection from column off on. */
static void bind_columns(const struct level *l, const MYSQL_FIELD *fields, struct stmt_binds *sb,
                         bool *jt, unsigned off) {
    for (unsigned i = 0; i < sb->n; i++) {
        const MYSQL_FIELD *f = &fields[i];
        enum enum_field_types bt = docbuild_bind_type(f);
        size_t sz = bt == MYSQL_TYPE_LONGLONG || bt == MYSQL_TYPE_DOUBLE ? 8
                    : bt == MYSQL_TYPE_FLOAT                            ? 4
                    : bt == MYSQL_TYPE_DATETIME                         ? sizeof(MYSQL_TIME)
                                                                        : f->max_length + 1;
        stmt_binds_set(sb, i, bt, sz, (f->flags & UNSIGNED_FLAG) != 0);
        jt[i] = i >= off && l->json_text[i - off];
#ifdef MARIADB_FIELD_ATTR_LAST
        MARIADB_CONST_STRING fmt = {NULL, 0};
        if (f->extension &&
            !mariadb_field_attr(&fmt, f, MARIADB_FIELD_ATTR_FORMAT_NAME) &&
            fmt.length == 4 && !memcmp(fmt.str, "json", 4))
            jt[i] = true;
#endif
    }
}

int dbl_run_query(struct docbuild *b, struct level *l, const char *sql, size_t sqllen,
                  char *err, size_t errlen) {
    return dbl_run_query_split(b, &l, 1, false, sql, sqllen, err, errlen);
}

/* The level of a split query's row: the number in its first column. */
static struct level *split_level(struct level *const *ls, size_t nls,
                                 const struct stmt_binds *sb) {
    int64_t part;
    if (sb->bind[0].buffer_type != MYSQL_TYPE_LONGLONG || sb->nulls[0]) return NULL;
    memcpy(&part, sb->bufs[0], 8);
    return part >= 0 && (uint64_t)part < nls ? ls[part] : NULL;
}

/* split: column 0 is the number of the level in ls a row belongs to (a
 * UNION ALL over units, docbuild_units.c); the other columns are that
 * level's selection, the same in every level of ls. */
int dbl_run_query_split(struct docbuild *b, struct level *const *ls, size_t nls, bool split,
                        const char *sql, size_t sqllen, char *err, size_t errlen) {
    struct level *l = ls[0];
    unsigned off = split ? 1 : 0;
    MYSQL_STMT *st = mysql_stmt_init(b->db);
    if (!st) {
        snprintf(err, errlen, "docbuild: out of memory preparing a statement");
        return -1;
    }
    int rc = -1;
    MYSQL_RES *meta = NULL;
    struct stmt_binds sb = {0};
    bool *jt = NULL;
    my_bool on = 1;
    b->stats.queries++;
    if (mysql_stmt_prepare(st, sql, (unsigned long)sqllen) ||
        mysql_stmt_attr_set(st, STMT_ATTR_UPDATE_MAX_LENGTH, &on) || mysql_stmt_execute(st) ||
        mysql_stmt_store_result(st)) {
        snprintf(err, errlen, "docbuild: %s (query: %.300s%s)", mysql_stmt_error(st), sql,
                 sqllen > 300 ? "..." : "");
        b->sql_errno = mysql_stmt_errno(st) ? mysql_stmt_errno(st) : mysql_errno(b->db);
        goto out;
    }
    meta = mysql_stmt_result_metadata(st);
    unsigned nf = meta ? mysql_num_fields(meta) : 0;
    if (nf != l->nsel + off) {
        snprintf(err, errlen, "docbuild: %u columns returned, %zu expected (query: %.200s)", nf,
                 l->nsel + off, sql);
        goto out;
    }
    MYSQL_FIELD *fields = mysql_fetch_fields(meta);
    stmt_binds_init(&sb, nf);
    jt = xcalloc(nf, sizeof *jt);
    bind_columns(l, fields, &sb, jt, off);
    if (mysql_stmt_bind_result(st, sb.bind)) {
        snprintf(err, errlen, "docbuild: bind: %s", mysql_stmt_error(st));
        goto out;
    }
    for (;;) {
        int fr = mysql_stmt_fetch(st);
        if (fr == MYSQL_NO_DATA) break;
        if (fr == 1) {
            snprintf(err, errlen, "docbuild: fetch: %s", mysql_stmt_error(st));
            goto out;
        }
        /* MYSQL_DATA_TRUNCATED cannot happen for strings (max_length sized);
         * numeric conversions are exact by construction */
        if (split && !(l = split_level(ls, nls, &sb))) {
            snprintf(err, errlen, "docbuild: a row of no unit (query: %.200s)", sql);
            goto out;
        }
        store_row(l, fields, &sb, jt, off);
        b->stats.rows++;
    }
    rc = 0;
out:
    free(jt);
    stmt_binds_free(&sb);
    if (meta) mysql_free_result(meta);
    mysql_stmt_close(st);
    return rc;
}

static int cmp_lkey_row(const void *x, const void *y) {
    const struct lkey *a = x, *b = y;
    int r = lkey_cmp(a, b);
    return r ? r : (a->row > b->row) - (a->row < b->row); /* stable: the query's order */
}

/* l->order (rows by link value, ties in query order) and l->keys, the link
 * values in that order, for dbl_level_find */
void dbl_level_sort(struct level *l) {
    free(l->order);
    free(l->keys);
    l->order = xcalloc(l->nrows ? l->nrows : 1, sizeof *l->order);
    l->keys = xcalloc(l->nrows ? l->nrows : 1, sizeof *l->keys);
    bool sorted = true;
    for (size_t i = 0; i < l->nrows; i++) {
        const struct cell *c = cell_at(l, i, (size_t)l->link);
        l->keys[i] = lkey_of(raw_of(l, c), c->rl, i);
        if (i && sorted && lkey_cmp(&l->keys[i - 1], &l->keys[i]) > 0) sorted = false;
    }
    /* rows ordered by the link column in SQL usually come in order already */
    if (!sorted) qsort(l->keys, l->nrows, sizeof *l->keys, cmp_lkey_row);
    for (size_t i = 0; i < l->nrows; i++) l->order[i] = l->keys[i].row;
}

/* [*lo, *hi) in l->order: rows whose link raw equals (s, n) */
void dbl_level_find(const struct level *l, const char *s, size_t n, size_t *lo, size_t *hi) {
    struct lkey k = lkey_of(s, n, 0);
    size_t a = 0, z = l->nrows;
    while (a < z) {
        size_t m = a + (z - a) / 2;
        if (lkey_cmp(&l->keys[m], &k) < 0) a = m + 1; else z = m;
    }
    *lo = a;
    z = l->nrows;
    while (a < z) {
        size_t m = a + (z - a) / 2;
        if (lkey_cmp(&l->keys[m], &k) <= 0) a = m + 1; else z = m;
    }
    *hi = a;
}


static int cmp_lkey(const void *x, const void *y) { return lkey_cmp(x, y); }

/* ---- related rows by primary key range
 *
 * Rows found through a secondary index cost the server one primary key
 * lookup each (InnoDB: a descent of the clustered index), most of the cost
 * of reading them: children of a range of 500 parents, 5 each, took
 * MariaDB 11-13 us a parent. Their keys alone come from the index itself
 * (about 2 us), and when those keys are dense in their span, as rows
 * inserted with their parent are, the rows are one range of the clustered
 * index (4-6 us): both reads together cost 40% less. So a level read by a
 * range of link values, whose table has a single integer primary key and
 * an index on the join column (mp_relation.join_indexed), reads the keys
 * first and, if they cover at least 1/DOCBUILD_RANGE_SPAN of their span,
 * the rows by that key range AND the link range (AND the relation's
 * condition): exactly the rows the plain query gives, but a row written
 * between the two reads, which a later change of that row rebuilds anyway.
 * Keys too spread fall back to the plain query, and the relation skips the
 * key read for its next KEYED_SKIP range reads (a hint shared by every
 * build of the relation: a collision of two relations' slots costs one key
 * read, or one plain read). */
#define KEYED_SKIP 32
#define KEYED_HINTS 64
static _Atomic unsigned keyed_skip[KEYED_HINTS];

/* the relation's slot: by its address, which is the same for every build
 * of one mapping generation */
static size_t keyed_slot(const struct mp_relation *r) {
    return (size_t)(((uintptr_t)r / sizeof *r) % KEYED_HINTS);
}

/* r's single integer primary key column among its selected columns (NULL:
 * none, or the rows cannot be read by key range) */
static const char *keyed_column(const struct level *l, const struct mp_relation *r) {
    if (!r || r->distinct || r->nprimary != 1 || r->join_primary || !r->join_indexed ||
        r->join_kind != MP_JOIN_INTEGER || l->link < 0)
        return NULL;
    for (size_t i = 0; i < r->ncolumns; i++)
        if (r->columns[i].primary)
            return mapping_is_integer_type(r->columns[i].mysql_type) ? r->columns[i].name : NULL;
    return NULL;
}

/* 1: l read by key range; 0: not (keys too spread, or no key to read by):
 * the caller reads it plainly; -1 error */
static int fetch_keyed(struct docbuild *b, struct level *l, const char *lo, size_t lon,
                       const char *hi, size_t hin, const char *where,
                       const char *const *order, char *err, size_t errlen) {
    const char *pk = keyed_column(l, l->rel);
    if (!pk) return 0;
    _Atomic unsigned *skip = &keyed_skip[keyed_slot(l->rel)];
    unsigned left = atomic_load_explicit(skip, memory_order_relaxed);
    if (left) {
        atomic_store_explicit(skip, left - 1, memory_order_relaxed);
        return 0;
    }
    sbuf sql;
    sbuf_init(&sql);
    dbl_select_from(&sql, l->db, l->table, &pk, 1, false);
    sbuf_adds(&sql, " WHERE ");
    db_ident(&sql, l->sel[l->link]);
    sbuf_printf(&sql, " BETWEEN %.*s AND %.*s", (int)lon, lo, (int)hin, hi);
    b->stats.queries++;
    MYSQL_RES *res = db_query(b->db, sql.data, sql.len, err, errlen);
    if (!res) {
        b->sql_errno = mysql_errno(b->db);
        sbuf_free(&sql);
        return -1;
    }
    struct lkey kmin = {0}, kmax = {0};
    char smin[24], smax[24];
    size_t nkeys = 0;
    bool ints = true;
    MYSQL_ROW row;
    while ((row = mysql_fetch_row(res))) {
        unsigned long *len = mysql_fetch_lengths(res);
        if (!row[0] || len[0] >= sizeof smin) { ints = false; continue; }
        struct lkey k = lkey_of(row[0], len[0], 0);
        if (!k.num) { ints = false; continue; }
        if (!nkeys || k.v < kmin.v) kmin = k, memcpy(smin, row[0], len[0] + 1);
        if (!nkeys || k.v > kmax.v) kmax = k, memcpy(smax, row[0], len[0] + 1);
        nkeys++;
    }
    mysql_free_result(res);
    if (ints && nkeys == 0) { /* no related rows: nothing to read */
        sbuf_free(&sql);
        dbl_level_sort(l);
        return 1;
    }
    if (!ints || kmax.v - kmin.v >= (__int128)nkeys * DOCBUILD_RANGE_SPAN) {
        b->stats.spread++;
        atomic_store_explicit(skip, KEYED_SKIP, memory_order_relaxed);
        sbuf_free(&sql);
        return 0;
    }
    /* the plain query's order is the link column then the key, which the
     * level's stable sort by link value gives rows read in key order: an
     * order the key range gives without sorting */
    const char *by_key[2] = {pk, NULL};
    if (order && order[0] && !strcmp(order[0], l->sel[l->link]) && order[1] &&
        !strcmp(order[1], pk) && !order[2])
        order = by_key;
    sbuf_reset(&sql);
    dbl_select_from(&sql, l->db, l->table, l->sel, l->nsel, false);
    sbuf_adds(&sql, " FORCE INDEX (PRIMARY) WHERE ");
    db_ident(&sql, pk);
    sbuf_printf(&sql, " BETWEEN %s AND %s AND ", smin, smax);
    db_ident(&sql, l->sel[l->link]);
    sbuf_printf(&sql, " BETWEEN %.*s AND %.*s", (int)lon, lo, (int)hin, hi);
    dbl_where_order(&sql, where, order);
    int rc = dbl_run_query(b, l, sql.data, sql.len, err, errlen);
    sbuf_free(&sql);
    if (rc && b->sql_errno == ER_KEY_DOES_NOT_EXISTS && !l->nrows) {
        /* the primary key dropped by a schema change the reader has not
         * read yet: the plain query reads the rows, as it would anyway
         * once the mapping is judged again */
        b->sql_errno = 0;
        atomic_store_explicit(skip, KEYED_SKIP, memory_order_relaxed);
        return 0;
    }
    if (rc) return -1;
    b->stats.keyed++;
    dbl_level_sort(l);
    return 1;
}

/* Query l for the link values in [lo, hi] (integers, their text). */
static int fetch_range(struct docbuild *b, struct level *l, const char *lo, size_t lon,
                       const char *hi, size_t hin, const char *where, bool distinct,
                       const char *const *order, char *err, size_t errlen) {
    if (!distinct) {
        int k = fetch_keyed(b, l, lo, lon, hi, hin, where, order, err, errlen);
        if (k) return k < 0 ? -1 : 0;
    }
    sbuf sql;
    sbuf_init(&sql);
    dbl_select_from(&sql, l->db, l->table, l->sel, l->nsel, distinct);
    sbuf_adds(&sql, " WHERE ");
    db_ident(&sql, l->sel[l->link]);
    sbuf_printf(&sql, " BETWEEN %.*s AND %.*s", (int)lon, lo, (int)hin, hi);
    dbl_where_order(&sql, where, order);
    int rc = dbl_run_query(b, l, sql.data, sql.len, err, errlen);
    sbuf_free(&sql);
    if (rc == 0) dbl_level_sort(l);
    return rc;
}

/* Query l for the values vals[0..n) of its link column. Integers covering at
 * least 1/DOCBUILD_RANGE_SPAN of their span are read as one BETWEEN, however
 * many (see in_list, docbuild_sql.c); other lists chunk by chunk. The
 * values are parsed once (struct lkey) for sorting and removing duplicates. */
int dbl_fetch_by(struct docbuild *b, struct level *l, struct val *vals, size_t n,
                 const char *where, bool distinct, const char *const *order, char *err,
                 size_t errlen) {
    struct lkey *ks = xcalloc(n ? n : 1, sizeof *ks);
    bool ints = true;
    for (size_t i = 0; i < n; i++) {
        ks[i] = lkey_of(vals[i].s, vals[i].n, i);
        ints = ints && ks[i].num && vals[i].numeric;
    }
    qsort(ks, n, sizeof *ks, cmp_lkey);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (!u || lkey_cmp(&ks[u - 1], &ks[i])) ks[u++] = ks[i];
    if (ints && u >= 2 && ks[u - 1].v - ks[0].v < (__int128)u * DOCBUILD_RANGE_SPAN) {
        int rc = fetch_range(b, l, ks[0].s, ks[0].n, ks[u - 1].s, ks[u - 1].n, where, distinct,
                             order, err, errlen);
        free(ks);
        return rc;
    }
    size_t chunk = b->chunk ? b->chunk : DOCBUILD_CHUNK;
    const char **lits = xcalloc(chunk, sizeof *lits);
    bool *num = xcalloc(chunk, sizeof *num);
    sbuf sql;
    sbuf_init(&sql);
    int rc = 0;
    for (size_t at = 0; at < u && rc == 0; at += chunk) {
        size_t k = u - at < chunk ? u - at : chunk;
        for (size_t i = 0; i < k; i++) {
            const struct val *v = &vals[ks[at + i].row]; /* NUL-terminated */
            lits[i] = v->s;
            num[i] = v->numeric && docbuild_is_integer(lits[i]);
        }
        sbuf_reset(&sql);
        docbuild_sql_select(&sql, b->db, l->db, l->table, l->sel, l->nsel, distinct, l->sel[l->link],
                            lits, num, k, where, order);
        rc = dbl_run_query(b, l, sql.data, sql.len, err, errlen);
    }
    sbuf_free(&sql);
    free(lits);
    free(num);
    free(ks);
    if (rc == 0) dbl_level_sort(l);
    return rc;
}


size_t dbl_rel_vals(const struct level *l, size_t k, struct val *vals) {
    const struct mp_relation *r = &l->rels[k];
    size_t nv = 0;
    /* the literals' kind follows the join column's type where validation
     * knew it (a number against a VARCHAR join column would scan the
     * table), else the owning column's; dbl_fetch_by writes a literal
     * unquoted only if it is an integer's text */
    for (size_t i = 0; i < l->nrows; i++) {
        const struct cell *c = cell_at(l, i, (size_t)l->rel_col[k]);
        if (c->raw < 0) continue;
        bool numeric = r->join_kind == MP_JOIN_INTEGER ? true
                       : r->join_kind == MP_JOIN_OTHER ? false
                                                       : c->raw == 1;
        vals[nv++] = (struct val){raw_of(l, c), c->rl, numeric};
    }
    return nv;
}

int dbl_fetch_subs(struct docbuild *b, struct level *l, int depth, const struct key_range *kr,
                   char *err, size_t errlen) {
    if (depth >= DOCBUILD_MAX_DEPTH) { /* each level takes 2 of jsonw's depths */
        snprintf(err, errlen, "docbuild: relations nest deeper than %d levels",
                 DOCBUILD_MAX_DEPTH);
        return -1;
    }
    for (size_t k = 0; k < l->nrels; k++) {
        const struct mp_relation *r = &l->rels[k];
        struct level *s = &l->sub[k];
        dbl_level_init(s, r->db, r->table, r->columns, r->ncolumns, r->relations, r->nrelations,
                       r->join_column);
        s->rel = r;
        struct val *vals = xcalloc(l->nrows ? l->nrows : 1, sizeof *vals);
        size_t nv = dbl_rel_vals(l, k, vals);
        const char **order = xcalloc(r->ncolumns + 2, sizeof *order);
        docbuild_relation_order(r, order);
        int rc = 0;
        if (kr && nv && !strcmp(r->column, kr->col) && r->join_kind != MP_JOIN_OTHER)
            rc = fetch_range(b, s, kr->lo, strlen(kr->lo), kr->hi, strlen(kr->hi), r->where,
                             r->distinct, order, err, errlen);
        else if (nv)
            rc = dbl_fetch_by(b, s, vals, nv, r->where, r->distinct, order, err, errlen);
        else
            dbl_level_sort(s);
        free(order);
        free(vals);
        if (rc == 0 && s->nrows) rc = dbl_fetch_subs(b, s, depth + 1, NULL, err, errlen);
        if (rc) return rc;
    }
    return 0;
}

void docbuild_relation_order(const struct mp_relation *r, const char **order) {
    size_t no = 0;
    order[no++] = r->join_column;
    for (size_t i = 0; i < r->ncolumns; i++)
        if (r->columns[i].is_key) order[no++] = r->columns[i].name;
    if (no == 1) {
        unsigned have = r->join_primary;
        for (size_t i = 0; i < r->ncolumns; i++) {
            if (r->nprimary && have == r->nprimary) break;
            if (!strcmp(r->columns[i].name, r->join_column)) continue;
            order[no++] = r->columns[i].name;
            have += r->columns[i].primary;
        }
    }
    order[no] = NULL;
}

static void write_row(jsonw *w, const struct level *l, size_t row);
/* a row's object, left open (the caller may add fields, then closes it) */
void dbl_write_row_open(jsonw *w, const struct level *l, size_t row) {
    jw_obj_open(w);
    size_t nn;
    for (size_t i = 0; i < l->ncols; i++) {
        const struct cell *c = cell_at(l, row, i);
        const char *name = level_name(l, i, &nn);
        jw_key_json(w, name, nn);
        jw_raw(w, l->json.data + c->jo, c->jl);
    }
    for (size_t k = 0; k < l->nrels; k++) {
        const struct mp_relation *r = &l->rels[k];
        const char *name = level_name(l, l->ncols + k, &nn);
        bool nested = mp_relation_nested(r, l->cols, l->ncols);
        if (!nn) continue;
        jw_key_json(w, name, nn);
        const struct cell *c = cell_at(l, row, (size_t)l->rel_col[k]);
        const struct level *s = &l->sub[k];
        size_t lo = 0, hi = 0;
        if (c->raw >= 0) dbl_level_find(s, raw_of(l, c), c->rl, &lo, &hi);
        if (nested && r->flatten && s->nrels == 1) {
            /* many-to-many: each link row gives its linked row (none when
             * the link points at no row, as an inner join does) */
            const struct level *t = &s->sub[0];
            jw_arr_open(w);
            for (size_t j = lo; j < hi; j++) {
                const struct cell *lc = cell_at(s, s->order[j], (size_t)s->rel_col[0]);
                size_t tlo = 0, thi = 0;
                if (lc->raw >= 0) dbl_level_find(t, raw_of(s, lc), lc->rl, &tlo, &thi);
                if (tlo < thi) write_row(w, t, t->order[tlo]);
            }
            jw_arr_close(w);
        } else if (nested) {
            jw_arr_open(w);
            for (size_t j = lo; j < hi; j++) write_row(w, s, s->order[j]);
            jw_arr_close(w);
        } else if (lo < hi) {
            write_row(w, s, s->order[lo]);
        } else {
            jw_null(w);
        }
    }
}

static void write_row(jsonw *w, const struct level *l, size_t row) {
    dbl_write_row_open(w, l, row);
    jw_obj_close(w);
}
