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


/* A canonical integer: what an integer column gives as text ("0", "-5",
 * "18446744073709551615"; no sign on 0, no leading zeros). */
static bool canon_int(const char *s, size_t n) {
    size_t i = n && s[0] == '-' ? 1 : 0;
    if (i == n || n - i > 20) return false;
    if (s[i] == '0') return n - i == 1 && i == 0;
    for (size_t k = i; k < n; k++)
        if (s[k] < '0' || s[k] > '9') return false;
    return true;
}

/* A link value parsed once. Values compare as numbers when both are
 * canonical integers, else as bytes, integers first: for an integer column
 * this is SQL's ORDER BY, so rows arrive already sorted, and an integer
 * list's span is known. */
struct lkey {
    __int128 v;
    const char *s;
    size_t n, row;
    bool num;
};

static struct lkey lkey_of(const char *s, size_t n, size_t row) {
    struct lkey k = {0, s, n, row, canon_int(s, n)};
    if (k.num) {
        bool neg = s[0] == '-';
        for (size_t i = neg; i < n; i++) k.v = k.v * 10 + (s[i] - '0');
        if (neg) k.v = -k.v;
    }
    return k;
}

static int lkey_cmp(const struct lkey *a, const struct lkey *b) {
    if (a->num != b->num) return a->num ? -1 : 1;
    if (a->num) return (a->v > b->v) - (a->v < b->v);
    size_t n = a->n < b->n ? a->n : b->n;
    int c = n ? memcmp(a->s, b->s, n) : 0;
    return c ? c : (a->n > b->n) - (a->n < b->n);
}

/* `col IN (...)`; a list of integers that covers at least half of its span
 * (max - min + 1 <= DOCBUILD_RANGE_SPAN x count) is read as `col BETWEEN min
 * AND max` instead: MariaDB reads such a range for about half the CPU of the
 * literal list, even with the rows in between (a page's child keys are
 * mostly close together). Those extra rows are harmless: a level's rows are
 * only ever looked up by exact link value (level_find), so a row that no
 * parent asked for is never used. */
static void in_list(sbuf *sql, MYSQL *m, const char *col, const char *const *lits,
                    const bool *numeric, size_t n) {
    __int128 lo = 0, hi = 0, v;
    size_t imin = 0, imax = 0;
    bool ints = n >= 2;
    for (size_t i = 0; ints && i < n; i++) {
        struct lkey k = lkey_of(lits[i], strlen(lits[i]), i);
        ints = numeric[i] && k.num;
        if (!ints) break;
        v = k.v;
        if (i == 0 || v < lo) lo = v, imin = i;
        if (i == 0 || v > hi) hi = v, imax = i;
    }
    if (ints && hi - lo < (__int128)n * DOCBUILD_RANGE_SPAN) {
        db_ident(sql, col);
        sbuf_printf(sql, " BETWEEN %s AND %s", lits[imin], lits[imax]);
        return;
    }
    db_ident(sql, col);
    sbuf_adds(sql, " IN (");
    for (size_t k = 0; k < n; k++) {
        if (k) sbuf_addc(sql, ',');
        if (numeric[k])
            sbuf_adds(sql, lits[k]);
        else /* the connection, if any, knows NO_BACKSLASH_ESCAPES */
            db_quote(m, sql, lits[k], strlen(lits[k]));
    }
    sbuf_addc(sql, ')');
}

static void select_from(sbuf *sql, const char *db, const char *table, const char *const *cols,
                        size_t ncols, bool distinct) {
    sbuf_adds(sql, distinct ? "SELECT DISTINCT " : "SELECT ");
    for (size_t i = 0; i < ncols; i++) {
        if (i) sbuf_addc(sql, ',');
        db_ident(sql, cols[i]);
    }
    sbuf_adds(sql, " FROM ");
    if (db && *db) {
        db_ident(sql, db);
        sbuf_addc(sql, '.');
    }
    db_ident(sql, table);
}

static void where_order(sbuf *sql, const char *where, const char *const *order) {
    if (where && *where) {
        sbuf_adds(sql, " AND (");
        sbuf_adds(sql, where);
        sbuf_addc(sql, ')');
    }
    if (order && order[0]) {
        sbuf_adds(sql, " ORDER BY ");
        for (size_t i = 0; order[i]; i++) {
            if (i) sbuf_addc(sql, ',');
            db_ident(sql, order[i]);
        }
    }
}

void docbuild_sql_select(sbuf *sql, MYSQL *m, const char *db, const char *table,
                         const char *const *cols, size_t ncols, bool distinct, const char *in_col,
                         const char *const *lits, const bool *numeric, size_t nlits,
                         const char *where, const char *const *order) {
    select_from(sql, db, table, cols, ncols, distinct);
    sbuf_adds(sql, " WHERE ");
    in_list(sql, m, in_col, lits, numeric, nlits);
    where_order(sql, where, order);
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
    sbuf names;    /* the JSON names of the output columns, then of the relations */
    size_t *name_at; /* ncols + nrels + 1 offsets into names (a relation without a name: empty) */
    size_t *order; /* rows sorted by the link column (level_sort) */
    struct lkey *keys; /* their link values, in that order */
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

/* the escaped name of output column i (or relation ncols + k): *n bytes */
static const char *level_name(const struct level *l, size_t i, size_t *n) {
    *n = l->name_at[i + 1] - l->name_at[i];
    return l->names.data + l->name_at[i];
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
    free(l->keys);
    free(l->name_at);
    sbuf_free(&l->names);
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
        b->sql_errno = mysql_stmt_errno(st) ? mysql_stmt_errno(st) : mysql_errno(b->db);
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

static int cmp_lkey_row(const void *x, const void *y) {
    const struct lkey *a = x, *b = y;
    int r = lkey_cmp(a, b);
    return r ? r : (a->row > b->row) - (a->row < b->row); /* stable: the query's order */
}

/* l->order (rows by link value, ties in query order) and l->keys, the link
 * values in that order, for level_find */
static void level_sort(struct level *l) {
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
static void level_find(const struct level *l, const char *s, size_t n, size_t *lo, size_t *hi) {
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

struct val { /* a link value to look up: its text (NUL-terminated) */
    const char *s;
    size_t n;
    bool numeric; /* from an integer column: a literal without quotes */
};

static int cmp_lkey(const void *x, const void *y) { return lkey_cmp(x, y); }

/* Query l for the link values in [lo, hi] (integers, their text). */
static int fetch_range(struct docbuild *b, struct level *l, const char *lo, size_t lon,
                       const char *hi, size_t hin, const char *where, bool distinct,
                       const char *const *order, char *err, size_t errlen) {
    sbuf sql;
    sbuf_init(&sql);
    select_from(&sql, l->db, l->table, l->sel, l->nsel, distinct);
    sbuf_adds(&sql, " WHERE ");
    db_ident(&sql, l->sel[l->link]);
    sbuf_printf(&sql, " BETWEEN %.*s AND %.*s", (int)lon, lo, (int)hin, hi);
    where_order(&sql, where, order);
    int rc = run_query(b, l, sql.data, sql.len, err, errlen);
    sbuf_free(&sql);
    if (rc == 0) level_sort(l);
    return rc;
}

/* Query l for the values vals[0..n) of its link column. Integers covering at
 * least 1/DOCBUILD_RANGE_SPAN of their span are read as one BETWEEN, however
 * many (see in_list); other lists chunk by chunk. The values are parsed once
 * (struct lkey) for sorting and removing duplicates. */
static int fetch_by(struct docbuild *b, struct level *l, struct val *vals, size_t n,
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
        rc = run_query(b, l, sql.data, sql.len, err, errlen);
    }
    sbuf_free(&sql);
    free(lits);
    free(num);
    free(ks);
    if (rc == 0) level_sort(l);
    return rc;
}

/* The key range of a dense page (docbuild_page): every row of the table with
 * a key in [lo, hi] is in the page, so a relation joined on that key can read
 * `join_column BETWEEN lo AND hi` — one range instead of a literal per row.
 * A child row in a gap of the keys has no parent in the page and is never
 * looked up. Not for a join column that is no integer: a number range
 * against a VARCHAR column scans the table. */
struct key_range {
    const char *col, *lo, *hi;
};

static int fetch_subs(struct docbuild *b, struct level *l, int depth, const struct key_range *kr,
                      char *err, size_t errlen) {
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
        /* the literals' kind follows the join column's type where validation
         * knew it (a number against a VARCHAR join column would scan the
         * table), else the owning column's; fetch_by writes a literal
         * unquoted only if it is an integer's text */
        struct val *vals = xcalloc(l->nrows ? l->nrows : 1, sizeof *vals);
        size_t nv = 0;
        for (size_t i = 0; i < l->nrows; i++) {
            const struct cell *c = cell_at(l, i, (size_t)l->rel_col[k]);
            if (c->raw < 0) continue;
            bool numeric = r->join_kind == MP_JOIN_INTEGER ? true
                           : r->join_kind == MP_JOIN_OTHER ? false
                                                           : c->raw == 1;
            vals[nv++] = (struct val){raw_of(l, c), c->rl, numeric};
        }
        const char **order = xcalloc(r->ncolumns + 2, sizeof *order);
        docbuild_relation_order(r, order);
        int rc = 0;
        if (kr && nv && !strcmp(r->column, kr->col) && r->join_kind != MP_JOIN_OTHER)
            rc = fetch_range(b, s, kr->lo, strlen(kr->lo), kr->hi, strlen(kr->hi), r->where,
                             r->distinct, order, err, errlen);
        else if (nv)
            rc = fetch_by(b, s, vals, nv, r->where, r->distinct, order, err, errlen);
        else
            level_sort(s);
        free(order);
        free(vals);
        if (rc == 0 && s->nrows) rc = fetch_subs(b, s, depth + 1, NULL, err, errlen);
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
static void write_row_open(jsonw *w, const struct level *l, size_t row) {
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
        if (c->raw >= 0) level_find(s, raw_of(l, c), c->rl, &lo, &hi);
        if (nested && r->flatten && s->nrels == 1) {
            /* many-to-many: each link row gives its linked row (none when
             * the link points at no row, as an inner join does) */
            const struct level *t = &s->sub[0];
            jw_arr_open(w);
            for (size_t j = lo; j < hi; j++) {
                const struct cell *lc = cell_at(s, s->order[j], (size_t)s->rel_col[0]);
                size_t tlo = 0, thi = 0;
                if (lc->raw >= 0) level_find(t, raw_of(s, lc), lc->rl, &tlo, &thi);
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
    write_row_open(w, l, row);
    jw_obj_close(w);
}

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

void docbuild_unexpired(const struct mp_table *t, sbuf *out) {
    if (!t->expiry_column) return;
    sbuf_adds(out, "(");
    db_ident(out, t->expiry_column);
    sbuf_adds(out, " IS NULL OR ");
    db_ident(out, t->expiry_column);
    sbuf_adds(out, " > NOW(6))");
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
    /* keys of a string column are quoted, so the server can use its index */
    bool int_key = mapping_is_integer_type(key_type(t));
    size_t chunk = b->chunk ? b->chunk : DOCBUILD_CHUNK;
    struct val *vals = xcalloc(chunk, sizeof *vals);
    sbuf unexpired = SBUF_INIT; /* a row past its expiry has no document */
    docbuild_unexpired(t, &unexpired);
    int rc = 0;
    for (size_t at = 0; at < n && rc == 0; at += chunk) {
        size_t k = n - at < chunk ? n - at : chunk;
        for (size_t i = 0; i < k; i++)
            vals[i] = (struct val){keys[at + i], strlen(keys[at + i]), int_key};
        struct level l;
        level_init(&l, t->db, t->table, t->columns, t->ncolumns, t->relations, t->nrelations,
                   key);
        rc = fetch_by(b, &l, vals, k, unexpired.len ? unexpired.data : NULL, false, NULL, err,
                      errlen);
        if (rc == 0) rc = fetch_subs(b, &l, 0, NULL, err, errlen);
        if (rc == 0) rc = emit_chunk(b, &l, keys + at, k, NULL, NULL, NULL, jn, sink);
        level_free(&l);
    }
    free(vals);
    sbuf_free(&unexpired);
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
    const struct mp_table *p = &ix->tables[pi];
    for (size_t i = 0; i < l->nrows; i++) {
        const struct cell *c = cell_at(l, i, (size_t)pcol);
        if (c->raw < 0) continue;
        sbuf s;
        sbuf_init(&s);
        if (pi != 0) sbuf_printf(&s, "%s-", p->join_name ? p->join_name : p->table);
        sbuf_add(&s, raw_of(l, c), c->rl);
        pids[i] = sbuf_detach(&s);
        route[i] = xstrndup(raw_of(l, c), c->rl); /* the parent's key, for now */
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
        bool up_int_key = mapping_is_integer_type(key_type(u));
        struct level q;
        level_init(&q, u->db, u->table, NULL, 0, NULL, 0, ukey);
        int qp = sel_add(&q, u->parent_column, false);
        q.needraw[qp] = true;
        struct val *pv = xcalloc(l->nrows + 1, sizeof *pv);
        size_t np = 0;
        for (size_t i = 0; i < l->nrows; i++)
            if (route[i]) pv[np++] = (struct val){route[i], strlen(route[i]), up_int_key};
        if (np) rc = fetch_by(b, &q, pv, np, NULL, false, NULL, err, errlen);
        else level_sort(&q);
        for (size_t i = 0; i < l->nrows && rc == 0; i++) {
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
    if (rc == 0) rc = emit_chunk(b, l, keys, k, jn, pids, route, jn, sink);
    for (size_t i = 0; i < l->nrows; i++) {
        free(pids[i]);
        free(route[i]);
    }
    free(pids);
    free(route);
    return rc;
}

int docbuild_children(struct docbuild *b, size_t ti, const char *const *keys, size_t n,
                      const struct docbuild_sink *sink, char *err, size_t errlen) {
    const char *key;
    int pi;
    if (child_table(b, ti, &key, &pi, err, errlen) < 0) return -1;
    const struct mp_table *t = &b->ix->tables[ti];
    bool int_key = mapping_is_integer_type(key_type(t));
    size_t chunk = b->chunk ? b->chunk : DOCBUILD_CHUNK;
    struct val *vals = xcalloc(chunk, sizeof *vals);
    sbuf unexpired = SBUF_INIT; /* a row past its expiry has no document */
    docbuild_unexpired(t, &unexpired);
    int rc = 0;
    for (size_t at = 0; at < n && rc == 0; at += chunk) {
        size_t k = n - at < chunk ? n - at : chunk;
        for (size_t i = 0; i < k; i++)
            vals[i] = (struct val){keys[at + i], strlen(keys[at + i]), int_key};
        struct level l;
        level_init(&l, t->db, t->table, t->columns, t->ncolumns, t->relations, t->nrelations,
                   key);
        int pcol = sel_add(&l, t->parent_column, false);
        l.needraw[pcol] = true;
        rc = fetch_by(b, &l, vals, k, NULL, false, NULL, err, errlen);
        if (rc == 0) rc = fetch_subs(b, &l, 0, NULL, err, errlen);
        if (rc == 0) rc = emit_children(b, ti, pi, &l, pcol, keys + at, k, sink, err, errlen);
        level_free(&l);
    }
    free(vals);
    return rc;
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
    level_init(&l, t->db, t->table, t->columns, t->ncolumns, t->relations, t->nrelations, key);
    int pcol = -1;
    if (ti != 0) {
        pcol = sel_add(&l, t->parent_column, false);
        l.needraw[pcol] = true;
    }
    sbuf sql;
    sbuf_init(&sql);
    select_from(&sql, t->db, t->table, l.sel, l.nsel, false);
    sbuf_adds(&sql, " WHERE 1=1");
    if (cond && *cond) sbuf_printf(&sql, " AND (%s)", cond);
    if (t->expiry_column) { /* expired rows are no documents: keyed lookups below, not ranges */
        sbuf_adds(&sql, " AND ");
        docbuild_unexpired(t, &sql);
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
    int rc = run_query(b, &l, sql.data, sql.len, err, errlen);
    sbuf_free(&sql);
    const char **keys = NULL;
    size_t n = l.nrows;
    if (rc == 0 && n) {
        level_sort(&l);
        keys = xcalloc(n, sizeof *keys);
        for (size_t i = 0; i < n; i++) keys[i] = raw_of(&l, cell_at(&l, i, (size_t)l.link));
        /* keys come in SQL's order: for an integer column (only: SQL orders a
         * string column's "10" before "2") the first and last are the range */
        struct key_range kr = {key, keys[0], keys[n - 1]};
        bool ranged = dense && int_key &&
                      canon_int(keys[0], strlen(keys[0])) &&
                      canon_int(keys[n - 1], strlen(keys[n - 1]));
        rc = fetch_subs(b, &l, 0, ranged ? &kr : NULL, err, errlen);
        if (rc == 0 && ti == 0) {
            const char *jn = mp_index_has_children(ix) ? (t->join_name ? t->join_name : t->table) : NULL;
            rc = emit_chunk(b, &l, keys, n, NULL, NULL, NULL, jn, sink);
        } else if (rc == 0) {
            rc = emit_children(b, ti, pi, &l, pcol, keys, n, sink, err, errlen);
        }
        if (rc == 0) {
            *last = xstrdup(keys[n - 1]);
            *nrows = n;
        }
    }
    free(keys);
    level_free(&l);
    if (rc > 0) snprintf(err, errlen, "docbuild: the page was stopped by its sink (%d)", rc);
    return rc ? -1 : (int)(n > 0);
}
