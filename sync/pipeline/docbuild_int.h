/* docbuild_int: what the document builder's files share (docbuild.c the
 * builds, docbuild_level.c the levels of rows, docbuild_sql.c their SQL,
 * docbuild_units.c the levels of several shard units at once) and nothing
 * else includes (but its unit test): the interface is docbuild.h.
 *
 * A level is one table's rows for one chunk of keys (a root level) or for
 * the distinct link values of the level above (a relation's): every cell as
 * JSON text (what goes into documents) and, for the columns that link
 * levels, as raw text (what goes into IN lists and is matched). */
#ifndef SS_DOCBUILD_INT_H
#define SS_DOCBUILD_INT_H
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "sync/pipeline/docbuild.h"

/* A canonical integer: what an integer column gives as text ("0", "-5",
 * "18446744073709551615"; no sign on 0, no leading zeros). */
static inline bool canon_int(const char *s, size_t n) {
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

static inline struct lkey lkey_of(const char *s, size_t n, size_t row) {
    struct lkey k = {0, s, n, row, canon_int(s, n)};
    if (k.num) {
        bool neg = s[0] == '-';
        for (size_t i = neg; i < n; i++) k.v = k.v * 10 + (s[i] - '0');
        if (neg) k.v = -k.v;
    }
    return k;
}

static inline int lkey_cmp(const struct lkey *a, const struct lkey *b) {
    if (a->num != b->num) return a->num ? -1 : 1;
    if (a->num) return (a->v > b->v) - (a->v < b->v);
    size_t n = a->n < b->n ? a->n : b->n;
    int c = n ? memcmp(a->s, b->s, n) : 0;
    return c ? c : (a->n > b->n) - (a->n < b->n);
}


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
    size_t *order; /* rows sorted by the link column (dbl_level_sort) */
    struct lkey *keys; /* their link values, in that order */
    struct level *sub; /* per relation */
    const struct mp_relation *rel; /* the relation this level reads (NULL: a root level) */
};


/* the escaped name of output column i (or relation ncols + k): *n bytes */
static inline const char *level_name(const struct level *l, size_t i, size_t *n) {
    *n = l->name_at[i + 1] - l->name_at[i];
    return l->names.data + l->name_at[i];
}

static inline const struct cell *cell_at(const struct level *l, size_t row, size_t col) {
    return &l->cells[row * l->nsel + col];
}
static inline const char *raw_of(const struct level *l, const struct cell *c) {
    return l->raw.data + c->ro;
}

struct val { /* a link value to look up: its text (NUL-terminated) */
    const char *s;
    size_t n;
    bool numeric; /* from an integer column: a literal without quotes */
};

/* The key range of a dense page (docbuild_page): every row of the table with
 * a key in [lo, hi] is in the page, so a relation joined on that key can read
 * `join_column BETWEEN lo AND hi` — one range instead of a literal per row.
 * A child row in a gap of the keys has no parent in the page and is never
 * looked up. Not for a join column that is no integer: a number range
 * against a VARCHAR column scans the table. */
struct key_range {
    const char *col, *lo, *hi;
};

/* ---- docbuild_sql.c: the SQL text of a level's query ---- */
/* SELECT [DISTINCT] cols FROM db.table */
void dbl_select_from(sbuf *sql, const char *db, const char *table, const char *const *cols,
                     size_t ncols, bool distinct);
/* AND (where) ORDER BY order... (either may be NULL) */
void dbl_where_order(sbuf *sql, const char *where, const char *const *order);

/* ---- docbuild_level.c: levels of rows ---- */
/* add a column to l's selection (once); its index */
int dbl_sel_add(struct level *l, const char *name, bool json_text);
/* a level of table's rows looked up by link (NULL: none), with output
 * columns cols and relations rels */
void dbl_level_init(struct level *l, const char *db, const char *table,
                    const struct mp_column *cols, size_t ncols, const struct mp_relation *rels,
                    size_t nrels, const char *link);
void dbl_level_free(struct level *l);
/* Run one query; append its rows to l (the selection order of l). */
int dbl_run_query(struct docbuild *b, struct level *l, const char *sql, size_t sqllen,
                  char *err, size_t errlen);
/* l->order and l->keys for dbl_level_find */
void dbl_level_sort(struct level *l);
/* [*lo, *hi) in l->order: rows whose link raw equals (s, n) */
void dbl_level_find(const struct level *l, const char *s, size_t n, size_t *lo, size_t *hi);
/* Query l for the values vals[0..n) of its link column (sorted after). */
int dbl_fetch_by(struct docbuild *b, struct level *l, struct val *vals, size_t n,
                 const char *where, bool distinct, const char *const *order, char *err,
                 size_t errlen);
/* Fetch the relations of l's rows, depth first (kr: a dense page's keys) */
int dbl_fetch_subs(struct docbuild *b, struct level *l, int depth, const struct key_range *kr,
                   char *err, size_t errlen);
/* The values relation k of l's rows is looked up by (vals: room for
 * l->nrows); their number. */
size_t dbl_rel_vals(const struct level *l, size_t k, struct val *vals);
/* dbl_run_query over several levels of the same selection: with split,
 * column 0 of each row is the number of its level in ls[0..nls). */
int dbl_run_query_split(struct docbuild *b, struct level *const *ls, size_t nls, bool split,
                        const char *sql, size_t sqllen, char *err, size_t errlen);

/* ---- docbuild_units.c: the levels of several shard units at once ---- */
/* One part of a UNION ALL: SELECT [DISTINCT] part, l's selection FROM l's
 * table WHERE link IN (lits) — or BETWEEN lo AND hi when lo is not NULL —
 * [AND (where)]. */
void dbl_union_part(sbuf *sql, MYSQL *m, size_t part, const struct level *l, bool distinct,
                    const char *const *lits, const bool *numeric, size_t nlits, const char *lo,
                    const char *hi, const char *where);
/* Can ls[0..n) be read in one UNION ALL, giving each unit what its own
 * query would? Their selections are the same names, every output column
 * has the same known type in each (not ENUM or SET: docbuild_units.c), and
 * the order (NULL-terminated, may be NULL) names selected columns only (a
 * UNION's ORDER BY refers to its columns by position: pos[k], 1-based, the
 * leading part number included). */
bool dbl_units_union_ok(struct level *const *ls, size_t n, const char *const *order,
                        size_t *pos);
/* dbl_fetch_by for ls[i] and its values vals[i][0..nv[i]) (where[i] its
 * condition), every i: the units' reads in UNION ALL statements when their
 * selections agree (dbl_units_union_ok), else one unit after the other. */
int dbl_fetch_by_units(struct docbuild *b, struct level *const *ls, size_t n,
                       struct val *const *vals, const size_t *nv, const char *const *where,
                       bool distinct, const char *const *order, char *err, size_t errlen);
/* dbl_fetch_subs for ls[0..n), the levels of one table in n units. */
int dbl_fetch_subs_units(struct docbuild *b, struct level *const *ls, size_t n, int depth,
                         char *err, size_t errlen);

/* a row's object with everything below it, left open (the caller may add
 * fields, then closes it) */
void dbl_write_row_open(jsonw *w, const struct level *l, size_t row);

#endif
