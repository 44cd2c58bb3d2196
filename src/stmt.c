/* stmt: prepared statements with text parameters (see stmt.h). */
#include "stmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"
#include "sbuf.h"
#include "stmt_binds.h"

void stmt_rows_free(struct stmt_rows *t) {
    if (!t) return;
    for (size_t i = 0; i < t->nrows * t->ncols; i++) free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof *t);
}

/* One row's cells as text (NULL for SQL NULL); a cell longer than its
 * buffer is fetched again whole. */
static void row_cells(MYSQL_STMT *st, const struct stmt_binds *sb, char **cells) {
    for (unsigned i = 0; i < sb->n; i++) {
        char *c = NULL;
        if (!sb->nulls[i]) {
            c = xmalloc(sb->lens[i] + 1);
            if (sb->lens[i] < sb->bind[i].buffer_length) {
                memcpy(c, sb->bufs[i], sb->lens[i]);
            } else { /* truncated (MYSQL_DATA_TRUNCATED): fetch it whole */
                MYSQL_BIND one = {0};
                unsigned long l = 0;
                one.buffer_type = MYSQL_TYPE_STRING;
                one.buffer = c;
                one.buffer_length = sb->lens[i] + 1;
                one.length = &l;
                mysql_stmt_fetch_column(st, &one, i, 0);
            }
            c[sb->lens[i]] = '\0';
        }
        cells[i] = c;
    }
}

/* Every row of an executed statement with a result set, as text into out
 * (or dropped when out is NULL). Returns the number of rows or -1. */
static long fetch_rows(MYSQL_STMT *st, MYSQL_RES *meta, struct stmt_rows *out) {
    unsigned nf = mysql_num_fields(meta);
    MYSQL_FIELD *fields = mysql_fetch_fields(meta);
    struct stmt_binds sb;
    stmt_binds_init(&sb, nf);
    for (unsigned i = 0; i < nf; i++)
        stmt_binds_set(&sb, i, MYSQL_TYPE_STRING,
                       fields[i].max_length > 64 ? fields[i].max_length + 1 : 65, false);
    long rc = -1;
    size_t cap = 0, n = 0;
    char **cells = NULL;
    if (mysql_stmt_bind_result(st, sb.bind)) goto out;
    for (;;) {
        int fr = mysql_stmt_fetch(st);
        if (fr == MYSQL_NO_DATA) break;
        if (fr == 1) goto out;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            cells = xrealloc(cells, cap * nf * sizeof *cells);
        }
        row_cells(st, &sb, &cells[n * nf]);
        n++;
    }
    rc = (long)n;
    if (out) {
        out->nrows = n, out->ncols = nf, out->cells = cells;
        cells = NULL;
    }
out:
    for (size_t i = 0; cells && i < n * nf; i++) free(cells[i]);
    free(cells);
    stmt_binds_free(&sb);
    return rc;
}

long stmt_query(MYSQL *m, const char *sql, const char *const *params, size_t nparams,
                struct stmt_rows *out, char *err, size_t errlen) {
    if (out) memset(out, 0, sizeof *out);
    MYSQL_STMT *st = mysql_stmt_init(m);
    if (!st) return errf(err, errlen, "out of memory preparing a statement");
    long rc = -1;
    MYSQL_BIND *pb = NULL;
    MYSQL_RES *meta = NULL;
    unsigned long *plens = NULL;
    my_bool *pnull = NULL;
    if (mysql_stmt_prepare(st, sql, (unsigned long)strlen(sql))) goto fail;
    if (mysql_stmt_param_count(st) != nparams) {
        errf(err, errlen, "statement takes %lu parameter(s), %zu given",
             mysql_stmt_param_count(st), nparams);
        goto out;
    }
    if (nparams) {
        pb = xcalloc(nparams, sizeof *pb);
        plens = xcalloc(nparams, sizeof *plens);
        pnull = xcalloc(nparams, sizeof *pnull);
        for (size_t i = 0; i < nparams; i++) {
            pnull[i] = params[i] == NULL;
            plens[i] = params[i] ? (unsigned long)strlen(params[i]) : 0;
            pb[i].buffer_type = MYSQL_TYPE_STRING;
            pb[i].buffer = (void *)(params[i] ? params[i] : "");
            pb[i].buffer_length = plens[i];
            pb[i].length = &plens[i];
            pb[i].is_null = &pnull[i];
        }
        if (mysql_stmt_bind_param(st, pb)) goto fail;
    }
    my_bool on = 1;
    if (mysql_stmt_attr_set(st, STMT_ATTR_UPDATE_MAX_LENGTH, &on) || mysql_stmt_execute(st) ||
        mysql_stmt_store_result(st))
        goto fail;
    meta = mysql_stmt_result_metadata(st);
    if (!meta) { /* no result set: the rows it changed */
        my_ulonglong n = mysql_stmt_affected_rows(st);
        rc = n == (my_ulonglong)-1 ? 0 : (long)n;
        goto out;
    }
    rc = fetch_rows(st, meta, out);
    if (rc >= 0) goto out;
fail:
    errf(err, errlen, "%s (%u)", mysql_stmt_error(st), mysql_stmt_errno(st));
out:
    if (meta) mysql_free_result(meta);
    mysql_stmt_close(st);
    free(pb), free(plens), free(pnull);
    return rc;
}

void stmt_rows_json(jsonw *w, const struct stmt_rows *t, const char *const *names,
                    const bool *num, size_t n) {
    jw_arr_open(w);
    for (size_t i = 0; i < t->nrows; i++) {
        jw_obj_open(w);
        for (size_t k = 0; k < n && k < t->ncols; k++) {
            const char *v = STMT_CELL(t, i, k);
            jw_key(w, names[k]);
            if (!v) jw_null(w);
            else if (num[k]) jw_raw(w, v, strlen(v));
            else jw_str(w, v);
        }
        jw_obj_close(w);
    }
    jw_arr_close(w);
}
