/* stmt: prepared statements with text parameters (see stmt.h). */
#include "stmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"
#include "sbuf.h"

void stmt_rows_free(struct stmt_rows *t) {
    if (!t) return;
    for (size_t i = 0; i < t->nrows * t->ncols; i++) free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof *t);
}

long stmt_query(MYSQL *m, const char *sql, const char *const *params, size_t nparams,
                struct stmt_rows *out, char *err, size_t errlen) {
    if (out) memset(out, 0, sizeof *out);
    MYSQL_STMT *st = mysql_stmt_init(m);
    if (!st) return errf(err, errlen, "out of memory preparing a statement");
    long rc = -1;
    MYSQL_BIND *pb = NULL, *rb = NULL;
    MYSQL_RES *meta = NULL;
    unsigned long *plens = NULL, *lens = NULL;
    my_bool *pnull = NULL, *nulls = NULL, *errs = NULL;
    char **bufs = NULL;
    unsigned nf = 0;
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
    nf = mysql_num_fields(meta);
    MYSQL_FIELD *fields = mysql_fetch_fields(meta);
    rb = xcalloc(nf, sizeof *rb);
    lens = xcalloc(nf, sizeof *lens);
    nulls = xcalloc(nf, sizeof *nulls);
    errs = xcalloc(nf, sizeof *errs);
    bufs = xcalloc(nf, sizeof *bufs);
    for (unsigned i = 0; i < nf; i++) {
        unsigned long sz = fields[i].max_length > 64 ? fields[i].max_length + 1 : 65;
        bufs[i] = xmalloc(sz);
        rb[i].buffer_type = MYSQL_TYPE_STRING;
        rb[i].buffer = bufs[i];
        rb[i].buffer_length = sz;
        rb[i].length = &lens[i];
        rb[i].is_null = &nulls[i];
        rb[i].error = &errs[i];
    }
    if (mysql_stmt_bind_result(st, rb)) goto fail;
    size_t cap = 0, n = 0;
    char **cells = NULL;
    for (;;) {
        int fr = mysql_stmt_fetch(st);
        if (fr == MYSQL_NO_DATA) break;
        if (fr == 1) {
            for (size_t i = 0; i < n * nf; i++) free(cells[i]);
            free(cells);
            goto fail;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            cells = xrealloc(cells, cap * nf * sizeof *cells);
        }
        for (unsigned i = 0; i < nf; i++) {
            char *c = NULL;
            if (!nulls[i]) {
                c = xmalloc(lens[i] + 1);
                if (lens[i] < rb[i].buffer_length) {
                    memcpy(c, bufs[i], lens[i]);
                } else { /* truncated (MYSQL_DATA_TRUNCATED): fetch it whole */
                    MYSQL_BIND one = {0};
                    unsigned long l = 0;
                    one.buffer_type = MYSQL_TYPE_STRING;
                    one.buffer = c;
                    one.buffer_length = lens[i] + 1;
                    one.length = &l;
                    mysql_stmt_fetch_column(st, &one, i, 0);
                }
                c[lens[i]] = '\0';
            }
            cells[n * nf + i] = c;
        }
        n++;
    }
    if (out) {
        out->nrows = n, out->ncols = nf, out->cells = cells;
    } else {
        for (size_t i = 0; i < n * nf; i++) free(cells[i]);
        free(cells);
    }
    rc = (long)n;
    goto out;
fail:
    errf(err, errlen, "%s (%u)", mysql_stmt_error(st), mysql_stmt_errno(st));
out:
    if (meta) mysql_free_result(meta);
    mysql_stmt_close(st);
    free(pb), free(plens), free(pnull);
    free(rb), free(lens), free(nulls), free(errs);
    for (unsigned i = 0; bufs && i < nf; i++) free(bufs[i]);
    free(bufs);
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
