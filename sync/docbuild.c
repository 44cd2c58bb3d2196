/* docbuild: the document builder (see docbuild.h).
 *
 * A build works on one chunk of keys at a time:
 *   fetch_level(root)  one IN query per chunk of keys
 *   fetch_subs(level)  per relation: the distinct owner values of all the
 *                      level's rows, one IN query per chunk of them, then the
 *                      same for the relation's own relations (depth first)
 *   write_row()        serialises a row with everything below it, finding
 *                      related rows by binary search in each sub-level's
 *                      rows sorted by their link value
 * Every level keeps its rows' cells as JSON text (what goes into documents)
 * and, for the columns that link levels, as raw text (what goes into IN lists
 * and is matched). Levels are freed after each chunk. */
#include "docbuild.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binlog/binlog.h"
#include "db.h"

/* ------------------------------------------------------------------ values */

static void put2(sbuf *o, unsigned v) {
    char b[2] = {(char)('0' + v / 10 % 10), (char)('0' + v % 10)};
    sbuf_add(o, b, 2);
}

static void put_frac(sbuf *o, unsigned long usec, unsigned fsp) {
    if (fsp == 0) return;
    if (fsp > 6) fsp = 6;
    char d[7];
    d[0] = '.';
    for (int i = 6; i >= 1; i--) {
        d[i] = (char)('0' + usec % 10);
        usec /= 10;
    }
    sbuf_add(o, d, fsp + 1);
}

void docbuild_time_json(sbuf *out, enum enum_field_types type, const MYSQL_TIME *t,
                        unsigned fsp) {
    if (type == MYSQL_TYPE_TIME) {
        /* Connector/C folds the days into hour (and leaves day set); a
         * MYSQL_TIME filled otherwise may keep them apart */
        unsigned long h = t->hour >= 24 ? t->hour : (unsigned long)t->day * 24 + t->hour;
        sbuf_addc(out, '"');
        if (t->neg) sbuf_addc(out, '-');
        if (h >= 100) sbuf_addc(out, (char)('0' + h / 100 % 10));
        put2(out, (unsigned)(h % 100));
        sbuf_addc(out, ':');
        put2(out, t->minute);
        sbuf_addc(out, ':');
        put2(out, t->second);
        put_frac(out, t->second_part, fsp);
        sbuf_addc(out, '"');
        return;
    }
    if (!t->year || !t->month || !t->day) {
        sbuf_adds(out, "null");
        return;
    }
    sbuf_addc(out, '"');
    put2(out, t->year / 100);
    put2(out, t->year % 100);
    sbuf_addc(out, '-');
    put2(out, t->month);
    sbuf_addc(out, '-');
    put2(out, t->day);
    if (type != MYSQL_TYPE_DATE && type != MYSQL_TYPE_NEWDATE) {
        sbuf_addc(out, 'T');
        put2(out, t->hour);
        sbuf_addc(out, ':');
        put2(out, t->minute);
        sbuf_addc(out, ':');
        put2(out, t->second);
        put_frac(out, t->second_part, fsp);
        if (type == MYSQL_TYPE_TIMESTAMP) sbuf_addc(out, 'Z');
    }
    sbuf_addc(out, '"');
}

enum enum_field_types docbuild_bind_type(const MYSQL_FIELD *f) {
    switch (f->type) {
    case MYSQL_TYPE_TINY: case MYSQL_TYPE_SHORT: case MYSQL_TYPE_INT24: case MYSQL_TYPE_LONG:
    case MYSQL_TYPE_LONGLONG: case MYSQL_TYPE_YEAR:
        return MYSQL_TYPE_LONGLONG;
    case MYSQL_TYPE_FLOAT:
        return MYSQL_TYPE_FLOAT;
    case MYSQL_TYPE_DOUBLE:
        return MYSQL_TYPE_DOUBLE;
    case MYSQL_TYPE_DATE: case MYSQL_TYPE_NEWDATE: case MYSQL_TYPE_TIME: case MYSQL_TYPE_DATETIME:
    case MYSQL_TYPE_TIMESTAMP:
        return MYSQL_TYPE_DATETIME; /* into a MYSQL_TIME */
    default:
        return MYSQL_TYPE_STRING; /* DECIMAL text, strings, BIT and BLOB bytes, JSON */
    }
}

static bool valid_json(const char *s, size_t n) {
    cJSON *j = cJSON_ParseWithLength(s, n);
    if (!j) return false;
    cJSON_Delete(j);
    return true;
}

void docbuild_value_json(jsonw *w, const MYSQL_FIELD *f, const MYSQL_BIND *b, bool json_text) {
    if (b->is_null && *b->is_null) {
        jw_null(w);
        return;
    }
    switch (b->buffer_type) {
    case MYSQL_TYPE_LONGLONG: {
        int64_t v;
        memcpy(&v, b->buffer, 8);
        if (f->flags & UNSIGNED_FLAG)
            jw_uint(w, (uint64_t)v);
        else
            jw_int(w, v);
        return;
    }
    case MYSQL_TYPE_FLOAT: {
        float v;
        memcpy(&v, b->buffer, 4);
        jw_float(w, v);
        return;
    }
    case MYSQL_TYPE_DOUBLE: {
        double v;
        memcpy(&v, b->buffer, 8);
        jw_double(w, v);
        return;
    }
    case MYSQL_TYPE_DATETIME: {
        sbuf t;
        sbuf_init(&t);
        unsigned fsp = f->decimals > 6 ? 6 : f->decimals;
        docbuild_time_json(&t, f->type, (const MYSQL_TIME *)b->buffer, fsp);
        jw_raw(w, t.data, t.len);
        sbuf_free(&t);
        return;
    }
    default:
        break;
    }
    const char *s = b->buffer;
    size_t n = b->length ? *b->length : 0;
    if (n > b->buffer_length) n = b->buffer_length; /* truncated fetch: never read past */
    switch (f->type) {
    case MYSQL_TYPE_DECIMAL: case MYSQL_TYPE_NEWDECIMAL:
        jw_strn(w, s, n);
        return;
    case MYSQL_TYPE_BIT: {
        uint64_t x = 0;
        for (size_t i = 0; i < n && i < 8; i++) x = x << 8 | (unsigned char)s[i];
        jw_uint(w, x);
        return;
    }
    case MYSQL_TYPE_JSON:
        if (valid_json(s, n)) jw_raw(w, s, n); else jw_strn(w, s, n);
        return;
    case MYSQL_TYPE_GEOMETRY:
        jw_null(w); /* not supported by the builder (the decoder writes GeoJSON) */
        return;
    default:
        break;
    }
    if (f->flags & SET_FLAG) {
        jw_arr_open(w);
        size_t i = 0;
        while (n > 0 && i <= n) {
            size_t j = i;
            while (j < n && s[j] != ',') j++;
            jw_strn(w, s + i, j - i);
            i = j + 1;
        }
        jw_arr_close(w);
        return;
    }
    if (f->charsetnr == 63 && !(f->flags & ENUM_FLAG)) { /* binary string: base64 */
        sbuf t;
        sbuf_init(&t);
        bl_base64(&t, (const uint8_t *)s, n);
        jw_raw(w, t.data, t.len);
        sbuf_free(&t);
        return;
    }
    if (json_text && valid_json(s, n)) {
        jw_raw(w, s, n);
        return;
    }
    jw_strn(w, s, n);
}

/* ------------------------------------------------------------------ SQL */

bool docbuild_is_integer(const char *s) {
    const char *p = s;
    if (*p == '-') p++;
    size_t n = strspn(p, "0123456789");
    if (n == 0 || n > 20 || p[n] != '\0') return false;
    if (n > 1 && p[0] == '0') return false;
    return true;
}

void docbuild_sql_quote(sbuf *sql, const char *s, size_t n) {
    sbuf_addc(sql, '\'');
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        switch (c) {
        case '\0': sbuf_add(sql, "\\0", 2); break;
        case '\n': sbuf_add(sql, "\\n", 2); break;
        case '\r': sbuf_add(sql, "\\r", 2); break;
        case '\\': sbuf_add(sql, "\\\\", 2); break;
        case '\'': sbuf_add(sql, "\\'", 2); break;
        case '"': sbuf_add(sql, "\\\"", 2); break;
        case '\032': sbuf_add(sql, "\\Z", 2); break;
        default: sbuf_addc(sql, c);
        }
    }
    sbuf_addc(sql, '\'');
}

static void ident(sbuf *sql, const char *name) {
    sbuf_addc(sql, '`');
    for (const char *p = name; *p; p++) {
        if (*p == '`') sbuf_addc(sql, '`');
        sbuf_addc(sql, *p);
    }
    sbuf_addc(sql, '`');
}

void docbuild_sql_select(sbuf *sql, MYSQL *m, const char *db, const char *table,
                         const char *const *cols, size_t ncols, bool distinct, const char *in_col,
                         const char *const *lits, const bool *numeric, size_t nlits,
                         const char *where, const char *const *order) {
    sbuf_adds(sql, distinct ? "SELECT DISTINCT " : "SELECT ");
    for (size_t i = 0; i < ncols; i++) {
        if (i) sbuf_addc(sql, ',');
        ident(sql, cols[i]);
    }
    sbuf_adds(sql, " FROM ");
    if (db && *db) {
        ident(sql, db);
        sbuf_addc(sql, '.');
    }
    ident(sql, table);
    sbuf_adds(sql, " WHERE ");
    ident(sql, in_col);
    sbuf_adds(sql, " IN (");
    for (size_t i = 0; i < nlits; i++) {
        if (i) sbuf_addc(sql, ',');
        if (numeric[i])
            sbuf_adds(sql, lits[i]);
        else if (m) /* the connection knows NO_BACKSLASH_ESCAPES */
            db_quote(m, sql, lits[i], strlen(lits[i]));
        else
            docbuild_sql_quote(sql, lits[i], strlen(lits[i]));
    }
    sbuf_addc(sql, ')');
    if (where && *where) {
        sbuf_adds(sql, " AND (");
        sbuf_adds(sql, where);
        sbuf_addc(sql, ')');
    }
    if (order && order[0]) {
        sbuf_adds(sql, " ORDER BY ");
        for (size_t i = 0; order[i]; i++) {
            if (i) sbuf_addc(sql, ',');
            ident(sql, order[i]);
        }
    }
}

/* ------------------------------------------------------------------ levels */

struct cell {
    size_t jo, jl; /* JSON text in level.json */
    size_t ro, rl; /* raw text in level.raw */
    signed char raw; /* -1 NULL/none, 0 string, 1 integer */
};

struct level {
    const char *db, *table;
    const struct mp_column *cols; /* output columns (cols[0..ncols)) */
    size_t ncols;
    const struct mp_relation *rels;
    size_t nrels;
    const char **sel; /* selected column names: outputs first, then link columns */
    bool *needraw;
    bool *json_text;
    size_t nsel;
    int link;      /* selection index of the column this level is looked up by */
    int *rel_col;  /* per relation: selection index of the owning column */
    size_t nrows, cap;
    struct cell *cells; /* nrows * nsel */
    sbuf json, raw;
    size_t *order; /* rows sorted by the link column's raw text */
    struct level *sub; /* per relation */
};

static int sel_add(struct level *l, const char *name, bool json_text) {
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

static void level_init(struct level *l, const char *db, const char *table,
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
    for (size_t i = 0; i < ncols; i++) sel_add(l, cols[i].name, is_json_type(cols[i].mysql_type));
    l->link = -1;
    if (link) {
        l->link = sel_add(l, link, false);
        l->needraw[l->link] = true;
    }
    if (nrels) {
        l->rel_col = xcalloc(nrels, sizeof *l->rel_col);
        l->sub = xcalloc(nrels, sizeof *l->sub);
    }
    for (size_t k = 0; k < nrels; k++) {
        l->rel_col[k] = sel_add(l, rels[k].column, false);
        l->needraw[l->rel_col[k]] = true;
    }
}

static void level_free(struct level *l) {
    if (!l) return;
    for (size_t k = 0; k < l->nrels; k++) level_free(&l->sub[k]);
    free(l->sub);
    free(l->rel_col);
    free(l->sel);
    free(l->needraw);
    free(l->json_text);
    free(l->cells);
    free(l->order);
    sbuf_free(&l->json);
    sbuf_free(&l->raw);
    memset(l, 0, sizeof *l);
}

static const struct cell *cell_at(const struct level *l, size_t row, size_t col) {
    return &l->cells[row * l->nsel + col];
}
static const char *raw_of(const struct level *l, const struct cell *c) {
    return l->raw.data + c->ro;
}

/* Run one query; append its rows to l (the selection order of l). */
static int run_query(struct docbuild *b, struct level *l, const char *sql, size_t sqllen,
                     char *err, size_t errlen) {
    MYSQL_STMT *st = mysql_stmt_init(b->db);
    if (!st) {
        snprintf(err, errlen, "docbuild: out of memory preparing a statement");
        return -1;
    }
    int rc = -1;
    MYSQL_RES *meta = NULL;
    MYSQL_BIND *bind = NULL;
    unsigned long *lens = NULL;
    my_bool *nulls = NULL, *errs = NULL;
    void **bufs = NULL;
    unsigned nf = 0;
    my_bool on = 1;
    b->stats.queries++;
    if (mysql_stmt_prepare(st, sql, (unsigned long)sqllen) ||
        mysql_stmt_attr_set(st, STMT_ATTR_UPDATE_MAX_LENGTH, &on) || mysql_stmt_execute(st) ||
        mysql_stmt_store_result(st)) {
        snprintf(err, errlen, "docbuild: %s (query: %.300s%s)", mysql_stmt_error(st), sql,
                 sqllen > 300 ? "..." : "");
        goto out;
    }
    meta = mysql_stmt_result_metadata(st);
    nf = meta ? mysql_num_fields(meta) : 0;
    if (nf != l->nsel) {
        snprintf(err, errlen, "docbuild: %u columns returned, %zu expected (query: %.200s)", nf,
                 l->nsel, sql);
        goto out;
    }
    MYSQL_FIELD *fields = mysql_fetch_fields(meta);
    bind = xcalloc(nf, sizeof *bind);
    lens = xcalloc(nf, sizeof *lens);
    nulls = xcalloc(nf, sizeof *nulls);
    errs = xcalloc(nf, sizeof *errs);
    bufs = xcalloc(nf, sizeof *bufs);
    bool *jt = xcalloc(nf, sizeof *jt);
    for (unsigned i = 0; i < nf; i++) {
        MYSQL_FIELD *f = &fields[i];
        enum enum_field_types bt = docbuild_bind_type(f);
        size_t sz = bt == MYSQL_TYPE_LONGLONG || bt == MYSQL_TYPE_DOUBLE ? 8
                    : bt == MYSQL_TYPE_FLOAT                            ? 4
                    : bt == MYSQL_TYPE_DATETIME                         ? sizeof(MYSQL_TIME)
                                                                        : f->max_length + 1;
        bufs[i] = xcalloc(1, sz);
        bind[i].buffer_type = bt;
        bind[i].buffer = bufs[i];
        bind[i].buffer_length = (unsigned long)sz;
        bind[i].length = &lens[i];
        bind[i].is_null = &nulls[i];
        bind[i].error = &errs[i];
        bind[i].is_unsigned = (f->flags & UNSIGNED_FLAG) != 0;
        jt[i] = l->json_text[i];
#ifdef MARIADB_FIELD_ATTR_LAST
        MARIADB_CONST_STRING fmt = {NULL, 0};
        if (f->extension && !mariadb_field_attr(&fmt, f, MARIADB_FIELD_ATTR_FORMAT_NAME) &&
            fmt.length == 4 && !memcmp(fmt.str, "json", 4))
            jt[i] = true;
#endif
    }
    if (mysql_stmt_bind_result(st, bind)) {
        snprintf(err, errlen, "docbuild: bind: %s", mysql_stmt_error(st));
        free(jt);
        goto out;
    }
    for (;;) {
        int fr = mysql_stmt_fetch(st);
        if (fr == MYSQL_NO_DATA) break;
        if (fr == 1) {
            snprintf(err, errlen, "docbuild: fetch: %s", mysql_stmt_error(st));
            free(jt);
            goto out;
        }
        /* MYSQL_DATA_TRUNCATED cannot happen for strings (max_length sized);
         * numeric conversions are exact by construction */
        if (l->nrows == l->cap) {
            l->cap = l->cap ? l->cap * 2 : 64;
            l->cells = xrealloc(l->cells, l->cap * l->nsel * sizeof *l->cells);
        }
        struct cell *row = &l->cells[l->nrows * l->nsel];
        for (unsigned i = 0; i < nf; i++) {
            struct cell *c = &row[i];
            jsonw w;
            jw_init(&w, &l->json);
            c->jo = l->json.len;
            docbuild_value_json(&w, &fields[i], &bind[i], jt[i]);
            c->jl = l->json.len - c->jo;
            c->raw = -1;
            c->ro = l->raw.len;
            c->rl = 0;
            if (!l->needraw[i] || nulls[i]) continue;
            if (bind[i].buffer_type == MYSQL_TYPE_LONGLONG) {
                char t[32];
                int64_t v;
                memcpy(&v, bufs[i], 8);
                int n = (fields[i].flags & UNSIGNED_FLAG) ? fmt_u64(t, (uint64_t)v) : fmt_i64(t, v);
                sbuf_add(&l->raw, t, (size_t)n);
                c->raw = 1;
            } else if (bind[i].buffer_type == MYSQL_TYPE_STRING) {
                sbuf_add(&l->raw, bufs[i], lens[i] < bind[i].buffer_length ? lens[i] : bind[i].buffer_length);
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
        b->stats.rows++;
    }
    free(jt);
    rc = 0;
out:
    for (unsigned i = 0; bufs && i < nf; i++) free(bufs[i]);
    free(bufs);
    free(bind);
    free(lens);
    free(nulls);
    free(errs);
    if (meta) mysql_free_result(meta);
    mysql_stmt_close(st);
    return rc;
}

/* sorting rows / values by raw text */
static int cmp_raw(const char *a, size_t al, const char *b, size_t bl) {
    size_t n = al < bl ? al : bl;
    int c = memcmp(a, b, n);
    return c ? c : (al > bl) - (al < bl);
}

struct sortkey {
    const char *s;
    size_t n, row;
};
static int cmp_sortkey(const void *x, const void *y) {
    const struct sortkey *a = x, *b = y;
    int r = cmp_raw(a->s, a->n, b->s, b->n);
    return r ? r : (a->row > b->row) - (a->row < b->row); /* stable: the query's order */
}

static void level_sort(struct level *l) {
    free(l->order);
    l->order = xcalloc(l->nrows ? l->nrows : 1, sizeof *l->order);
    struct sortkey *k = xcalloc(l->nrows ? l->nrows : 1, sizeof *k);
    for (size_t i = 0; i < l->nrows; i++) {
        const struct cell *c = cell_at(l, i, (size_t)l->link);
        k[i] = (struct sortkey){raw_of(l, c), c->rl, i};
    }
    qsort(k, l->nrows, sizeof *k, cmp_sortkey);
    for (size_t i = 0; i < l->nrows; i++) l->order[i] = k[i].row;
    free(k);
}

/* [*lo, *hi) in l->order: rows whose link raw equals (s, n) */
static void level_find(const struct level *l, const char *s, size_t n, size_t *lo, size_t *hi) {
    size_t a = 0, z = l->nrows;
    while (a < z) {
        size_t m = a + (z - a) / 2;
        const struct cell *c = cell_at(l, l->order[m], (size_t)l->link);
        if (cmp_raw(raw_of(l, c), c->rl, s, n) < 0) a = m + 1; else z = m;
    }
    *lo = a;
    z = l->nrows;
    while (a < z) {
        size_t m = a + (z - a) / 2;
        const struct cell *c = cell_at(l, l->order[m], (size_t)l->link);
        if (cmp_raw(raw_of(l, c), c->rl, s, n) <= 0) a = m + 1; else z = m;
    }
    *hi = a;
}

struct val {
    const char *s;
    size_t n;
    bool numeric;
};
static int cmp_val(const void *x, const void *y) {
    const struct val *a = x, *b = y;
    return cmp_raw(a->s, a->n, b->s, b->n);
}

/* Query l for the values vals[0..n) of its link column, chunk by chunk. */
static int fetch_by(struct docbuild *b, struct level *l, struct val *vals, size_t n,
                    const char *where, bool distinct, const char *const *order, char *err,
                    size_t errlen) {
    qsort(vals, n, sizeof *vals, cmp_val);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (!u || cmp_val(&vals[u - 1], &vals[i])) vals[u++] = vals[i];
    size_t chunk = b->chunk ? b->chunk : DOCBUILD_CHUNK;
    const char **lits = xcalloc(chunk, sizeof *lits);
    bool *num = xcalloc(chunk, sizeof *num);
    sbuf sql;
    sbuf_init(&sql);
    int rc = 0;
    for (size_t at = 0; at < u && rc == 0; at += chunk) {
        size_t k = u - at < chunk ? u - at : chunk;
        for (size_t i = 0; i < k; i++) {
            lits[i] = vals[at + i].s;
            num[i] = vals[at + i].numeric && docbuild_is_integer(vals[at + i].s);
        }
        sbuf_reset(&sql);
        docbuild_sql_select(&sql, b->db, l->db, l->table, l->sel, l->nsel, distinct, l->sel[l->link],
                            lits, num, k, where, order);
        rc = run_query(b, l, sql.data, sql.len, err, errlen);
    }
    sbuf_free(&sql);
    free(lits);
    free(num);
    if (rc == 0) level_sort(l);
    return rc;
}

static int fetch_subs(struct docbuild *b, struct level *l, int depth, char *err, size_t errlen) {
    if (depth >= DOCBUILD_MAX_DEPTH) { /* each level takes 2 of jsonw's depths */
        snprintf(err, errlen, "docbuild: relations nest deeper than %d levels",
                 DOCBUILD_MAX_DEPTH);
        return -1;
    }
    for (size_t k = 0; k < l->nrels; k++) {
        const struct mp_relation *r = &l->rels[k];
        struct level *s = &l->sub[k];
        level_init(s, r->db, r->table, r->columns, r->ncolumns, r->relations, r->nrelations,
                   r->join_column);
        struct val *vals = xcalloc(l->nrows ? l->nrows : 1, sizeof *vals);
        size_t nv = 0;
        for (size_t i = 0; i < l->nrows; i++) {
            const struct cell *c = cell_at(l, i, (size_t)l->rel_col[k]);
            if (c->raw < 0) continue;
            vals[nv++] = (struct val){raw_of(l, c), c->rl, c->raw == 1};
        }
        /* order: by the link column, then the relation's key (or all columns) */
        const char **order = xcalloc(r->ncolumns + 2, sizeof *order);
        size_t no = 0;
        order[no++] = r->join_column;
        for (size_t i = 0; i < r->ncolumns; i++)
            if (r->columns[i].is_key) order[no++] = r->columns[i].name;
        if (no == 1)
            for (size_t i = 0; i < r->ncolumns; i++) order[no++] = r->columns[i].name;
        int rc = 0;
        if (nv)
            rc = fetch_by(b, s, vals, nv, r->where, r->distinct, order, err, errlen);
        else
            level_sort(s);
        free(order);
        free(vals);
        if (rc == 0 && s->nrows) rc = fetch_subs(b, s, depth + 1, err, errlen);
        if (rc) return rc;
    }
    return 0;
}

static void write_row(jsonw *w, const struct level *l, size_t row);
/* a row's object, left open (the caller may add fields, then closes it) */
static void write_row_open(jsonw *w, const struct level *l, size_t row) {
    jw_obj_open(w);
    for (size_t i = 0; i < l->ncols; i++) {
        const struct cell *c = cell_at(l, row, i);
        jw_key(w, l->cols[i].name);
        jw_raw(w, l->json.data + c->jo, c->jl);
    }
    for (size_t k = 0; k < l->nrels; k++) {
        const struct mp_relation *r = &l->rels[k];
        const char *name = mp_relation_name(r, l->cols, l->ncols);
        bool nested = mp_relation_nested(r, l->cols, l->ncols);
        if (!name) continue;
        jw_key(w, name);
        const struct cell *c = cell_at(l, row, (size_t)l->rel_col[k]);
        const struct level *s = &l->sub[k];
        size_t lo = 0, hi = 0;
        if (c->raw >= 0) level_find(s, raw_of(l, c), c->rl, &lo, &hi);
        if (nested) {
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
    write_row_open(w, l, row);
    jw_obj_close(w);
}

static bool has_children(const struct mp_index *ix) {
    for (size_t i = 1; i < ix->ntables; i++)
        if (ix->tables[i].parent_table) return true;
    return false;
}

static const char *key_column(const struct mp_table *t) {
    for (size_t i = 0; i < t->ncolumns; i++)
        if (t->columns[i].is_key) return t->columns[i].name;
    return NULL;
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

/* Find rows of l for each requested key (in request order). */
static int emit_chunk(struct docbuild *b, struct level *l, const char *const *keys, size_t n,
                      const char *id_prefix, char **parent_ids, char **routings,
                      const char *join_name, const struct docbuild_sink *sink) {
    const struct mp_index *ix = b->ix;
    sbuf body, id;
    sbuf_init(&body);
    sbuf_init(&id);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        size_t lo, hi;
        level_find(l, keys[i], strlen(keys[i]), &lo, &hi);
        sbuf_reset(&id);
        if (id_prefix) sbuf_printf(&id, "%s-", id_prefix);
        sbuf_adds(&id, keys[i]);
        size_t row = lo < hi ? l->order[lo] : 0;
        if (lo == hi || (routings && !routings[row])) {
            b->stats.absent++;
            if (sink->absent) rc = sink->absent(sink->ctx, id.data);
            continue;
        }
        sbuf_reset(&body);
        jsonw w;
        jw_init(&w, &body);
        write_row_open(&w, l, row);
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
        jw_obj_close(&w);
        b->stats.docs++;
        rc = sink->doc(sink->ctx, id.data, routings ? routings[row] : NULL, body.data, body.len);
    }
    sbuf_free(&body);
    sbuf_free(&id);
    return rc;
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
    const char *jn = has_children(ix) ? (t->join_name ? t->join_name : t->table) : NULL;
    size_t chunk = b->chunk ? b->chunk : DOCBUILD_CHUNK;
    struct val *vals = xcalloc(chunk, sizeof *vals);
    int rc = 0;
    for (size_t at = 0; at < n && rc == 0; at += chunk) {
        size_t k = n - at < chunk ? n - at : chunk;
        for (size_t i = 0; i < k; i++)
            vals[i] = (struct val){keys[at + i], strlen(keys[at + i]), true};
        struct level l;
        level_init(&l, t->db, t->table, t->columns, t->ncolumns, t->relations, t->nrelations,
                   key);
        rc = fetch_by(b, &l, vals, k, NULL, false, NULL, err, errlen);
        if (rc == 0) rc = fetch_subs(b, &l, 0, err, errlen);
        if (rc == 0) rc = emit_chunk(b, &l, keys + at, k, NULL, NULL, NULL, jn, sink);
        level_free(&l);
    }
    free(vals);
    return rc;
}

static int table_index(const struct mp_index *ix, const char *db, const char *table) {
    for (size_t i = 0; i < ix->ntables; i++)
        if (!strcmp(ix->tables[i].table, table) &&
            !strcmp(ix->tables[i].db ? ix->tables[i].db : "", db ? db : ""))
            return (int)i;
    return -1;
}

int docbuild_children(struct docbuild *b, size_t ti, const char *const *keys, size_t n,
                      const struct docbuild_sink *sink, char *err, size_t errlen) {
    const struct mp_index *ix = b->ix;
    if (ti == 0 || ti >= ix->ntables || !ix->tables[ti].parent_table ||
        !ix->tables[ti].parent_column) {
        snprintf(err, errlen, "docbuild: index %s: table #%zu is not a parent/child table",
                 ix->alias, ti);
        return -1;
    }
    const struct mp_table *t = &ix->tables[ti];
    const char *key = key_column(t);
    int pi = table_index(ix, t->parent_db, t->parent_table);
    if (!key || pi < 0) {
        snprintf(err, errlen, "docbuild: index %s table %s.%s: no key column or unknown parent",
                 ix->alias, t->db, t->table);
        return -1;
    }
    const char *jn = t->join_name ? t->join_name : t->table;
    size_t chunk = b->chunk ? b->chunk : DOCBUILD_CHUNK;
    struct val *vals = xcalloc(chunk, sizeof *vals);
    int rc = 0;
    for (size_t at = 0; at < n && rc == 0; at += chunk) {
        size_t k = n - at < chunk ? n - at : chunk;
        for (size_t i = 0; i < k; i++)
            vals[i] = (struct val){keys[at + i], strlen(keys[at + i]), true};
        struct level l;
        level_init(&l, t->db, t->table, t->columns, t->ncolumns, t->relations, t->nrelations,
                   key);
        int pcol = sel_add(&l, t->parent_column, false);
        l.needraw[pcol] = true;
        rc = fetch_by(b, &l, vals, k, NULL, false, NULL, err, errlen);
        if (rc == 0) rc = fetch_subs(b, &l, 0, err, errlen);
        char **pids = xcalloc(l.nrows + 1, sizeof *pids);
        char **route = xcalloc(l.nrows + 1, sizeof *route);
        const struct mp_table *p = &ix->tables[pi];
        for (size_t i = 0; i < l.nrows && rc == 0; i++) {
            const struct cell *c = cell_at(&l, i, (size_t)pcol);
            if (c->raw < 0) continue;
            sbuf s;
            sbuf_init(&s);
            if (pi != 0) sbuf_printf(&s, "%s-", p->join_name ? p->join_name : p->table);
            sbuf_add(&s, raw_of(&l, c), c->rl);
            pids[i] = sbuf_detach(&s);
            route[i] = xstrndup(raw_of(&l, c), c->rl); /* the parent's key, for now */
        }
        /* walk up: replace each parent key by its parent's, until the root */
        int cur = pi, guard = 0;
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
            struct level q;
            level_init(&q, u->db, u->table, NULL, 0, NULL, 0, ukey);
            int qp = sel_add(&q, u->parent_column, false);
            q.needraw[qp] = true;
            struct val *pv = xcalloc(l.nrows + 1, sizeof *pv);
            size_t np = 0;
            for (size_t i = 0; i < l.nrows; i++)
                if (route[i]) pv[np++] = (struct val){route[i], strlen(route[i]), true};
            if (np) rc = fetch_by(b, &q, pv, np, NULL, false, NULL, err, errlen);
            else level_sort(&q);
            for (size_t i = 0; i < l.nrows && rc == 0; i++) {
                if (!route[i]) continue;
                size_t lo, hi;
                level_find(&q, route[i], strlen(route[i]), &lo, &hi);
                free(route[i]);
                route[i] = NULL;
                if (lo == hi) continue;
                const struct cell *c = cell_at(&q, q.order[lo], (size_t)qp);
                if (c->raw >= 0) route[i] = xstrndup(raw_of(&q, c), c->rl);
            }
            free(pv);
            level_free(&q);
            cur = up;
        }
        if (rc == 0) rc = emit_chunk(b, &l, keys + at, k, jn, pids, route, jn, sink);
        for (size_t i = 0; i < l.nrows; i++) {
            free(pids[i]);
            free(route[i]);
        }
        free(pids);
        free(route);
        level_free(&l);
    }
    free(vals);
    return rc;
}
