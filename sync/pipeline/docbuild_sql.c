/* docbuild_sql: the SQL text of the document builder's queries (see
 * docbuild.h): the selection of a level, its IN list of link values (or one
 * BETWEEN range for integers dense in their span), the relation's WHERE and
 * ORDER BY; one unit's part of a UNION ALL over shard units. Identifiers
 * quoted, string literals escaped by the connection. */
#include <string.h>

#include "db.h"
#include "sync/pipeline/docbuild_int.h"

bool docbuild_is_integer(const char *s) {
    const char *p = s;
    if (*p == '-') p++;
    size_t n = strspn(p, "0123456789");
    if (n == 0 || n > 20 || p[n] != '\0') return false;
    if (n > 1 && p[0] == '0') return false;
    return true;
}


/* `col IN (...)`; a list of integers that covers at least half of its span
 * (max - min + 1 <= DOCBUILD_RANGE_SPAN x count) is read as `col BETWEEN min
 * AND max` instead: MariaDB reads such a range for about half the CPU of the
 * literal list, even with the rows in between (a page's child keys are
 * mostly close together). Those extra rows are harmless: a level's rows are
 * only ever looked up by exact link value (dbl_level_find), so a row that no
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

void dbl_select_from(sbuf *sql, const char *db, const char *table, const char *const *cols,
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

void dbl_where_order(sbuf *sql, const char *where, const char *const *order) {
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
    dbl_select_from(sql, db, table, cols, ncols, distinct);
    sbuf_adds(sql, " WHERE ");
    in_list(sql, m, in_col, lits, numeric, nlits);
    dbl_where_order(sql, where, order);
}

void dbl_union_part(sbuf *sql, MYSQL *m, size_t part, const struct level *l, bool distinct,
                    const char *const *lits, const bool *numeric, size_t nlits, const char *lo,
                    const char *hi, const char *where) {
    sbuf_printf(sql, "SELECT %s%zu", distinct ? "DISTINCT " : "", part);
    for (size_t i = 0; i < l->nsel; i++) {
        sbuf_addc(sql, ',');
        db_ident(sql, l->sel[i]);
    }
    sbuf_adds(sql, " FROM ");
    if (l->db && *l->db) {
        db_ident(sql, l->db);
        sbuf_addc(sql, '.');
    }
    db_ident(sql, l->table);
    sbuf_adds(sql, " WHERE ");
    if (lo) {
        db_ident(sql, l->sel[l->link]);
        sbuf_printf(sql, " BETWEEN %s AND %s", lo, hi);
    } else {
        in_list(sql, m, l->sel[l->link], lits, numeric, nlits);
    }
    dbl_where_order(sql, where, NULL);
}
