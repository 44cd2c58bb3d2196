/* router_sql: the queries that walk a row change up a path to the
 * documents it affects — one per IN_CHUNK values of a step, a large fan-out
 * in slices of pages (the documents emitted as they come), the element
 * pairs of an area update (router_int.h). */
#include "sync/pipeline/router_int.h"

#include <mysql.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "log.h"
#include "sbuf.h"
#include "strset.h"
#include "sync/mapping/row_filter.h"

/* The queries of a path's steps, one per IN_CHUNK values: select_where
 * writes `SELECT [DISTINCT] c1[, c2] FROM db.table WHERE match`, in_list
 * the ` IN (...)` of the next chunk, run_rows runs it. */
typedef void (*in_row_fn)(void *ctx, MYSQL_ROW row, const unsigned long *len);

static void select_where(sbuf *q, bool distinct, const char *c1, const char *c2, const char *db,
                         const char *table, const char *match) {
    sbuf_reset(q);
    sbuf_adds(q, distinct ? "SELECT DISTINCT " : "SELECT ");
    db_ident(q, c1);
    if (c2) {
        sbuf_addc(q, ',');
        db_ident(q, c2);
    }
    sbuf_adds(q, " FROM ");
    db_ident(q, db);
    sbuf_addc(q, '.');
    db_ident(q, table);
    sbuf_adds(q, " WHERE ");
    db_ident(q, match);
}

/* ` IN (...)` of the next IN_CHUNK values of `in` from *i on, appended to q
 * (each value also into vals, unless NULL): how many (0: none left) */
static size_t in_list(MYSQL *src, sbuf *q, const struct strset *in, size_t *i,
                      const char **vals) {
    size_t k = 0;
    sbuf_adds(q, " IN (");
    for (; *i < in->cap && k < IN_CHUNK; (*i)++) {
        const char *v = in->slot[*i];
        if (!v) continue;
        if (k) sbuf_addc(q, ',');
        if (vals) vals[k] = v;
        k++;
        db_quote(src, q, v, strlen(v));
    }
    sbuf_addc(q, ')');
    return k;
}

/* q on the source, row_fn(ctx, row, lengths) for every row: 0, or -1 with
 * err ("finding the <what> of db.table"). Streamed, not db_query: a chunk
 * of values can match a large part of the table (one tag on every
 * product); each row goes to row_fn's set as read, never a second copy of
 * them all in a stored result. */
static int run_rows(struct router *r, MYSQL *src, const sbuf *q, in_row_fn row_fn, void *ctx,
                    const char *what, const char *db, const char *table, char *err,
                    size_t errlen) {
    r->queries++;
    if (mysql_real_query(src, q->data, q->len) != 0)
        return errf(err, errlen, "finding the %s of %s.%s: %s (%u)", what, db, table,
                    mysql_error(src), mysql_errno(src));
    MYSQL_RES *res = mysql_use_result(src);
    MYSQL_ROW row;
    while (res && (row = mysql_fetch_row(res))) row_fn(ctx, row, mysql_fetch_lengths(res));
    if (res) mysql_free_result(res);
    if (mysql_errno(src))
        return errf(err, errlen, "finding the %s of %s.%s: %s (%u)", what, db, table,
                    mysql_error(src), mysql_errno(src));
    return 0;
}

/* `SELECT [DISTINCT] c1[, c2] FROM db.table WHERE match IN (...)`, one query
 * per IN_CHUNK values of `in`; row(ctx, row, lengths) for every result row. */
static int in_query(struct router *r, MYSQL *src, bool distinct, const char *c1, const char *c2,
                    const char *db, const char *table, const char *match, struct strset *in,
                    in_row_fn row_fn, void *ctx, const char *what, char *err, size_t errlen) {
    sbuf q = SBUF_INIT;
    int rc = 0;
    size_t i = 0;
    while (rc == 0) {
        select_where(&q, distinct, c1, c2, db, table, match);
        if (!in_list(src, &q, in, &i, NULL)) break;
        rc = run_rows(r, src, &q, row_fn, ctx, what, db, table, err, errlen);
    }
    sbuf_free(&q);
    return rc;
}

static void add_value(void *ctx, MYSQL_ROW row, const unsigned long *len) {
    if (row[0]) strset_add(ctx, row[0], len[0]);
}

/* values of `out` for owner rows whose `match` is in `in` */
int rt_step_query(struct router *r, MYSQL *src, const struct router_step *s, struct strset *in,
                  struct strset *outv, char *err, size_t errlen) {
    return in_query(r, src, true, s->out, NULL, s->db, s->table, s->match, in, add_value, outv,
                    "documents", err, errlen);
}

/* ---------- a large fan-out, in slices ----------
 * The last query step of a path (the one that yields the document keys)
 * when the router slices (router_set_slice): the keys go straight into the
 * target's set, and once that holds `slice` of them they are emitted and
 * handed to slice_fn, which builds and delivers them while the rest is
 * read, so one renamed row under a million documents never holds a
 * million keys. Each chunk of values is asked first for at most slice + 1
 * keys (`LIMIT`): a chunk under that (every usual transaction) costs the
 * one query it always did. A chunk over it is read again value by value,
 * in keyset pages of `slice` keys ordered by the key column
 * (`match = v AND out > last ORDER BY out LIMIT slice`), which an index on
 * the match column reads in order: pages cost what they return, so the
 * whole walk is linear in the documents. Keys are then unique within a
 * slice; a document reached from two values or two paths in different
 * slices is built twice, with the same snapshot and version (the second
 * write changes nothing). */

/* emit the target's keys collected so far and hand them to slice_fn */
static int spill(struct router *r, struct target *t, router_emit_fn emit, void *ctx, char *err,
                 size_t errlen) {
    for (size_t k = 0; k < t->keys.cap; k++)
        if (t->keys.slot[k] &&
            emit(ctx, t->index, t->doctable, t->keys.slot[k], strlen(t->keys.slot[k])) != 0) {
            strset_clear(&t->keys);
            return errf(err, errlen, "the document sink refused a routed document");
        }
    strset_clear(&t->keys);
    if (r->slice_fn(ctx, t->index, t->doctable) != 0)
        return errf(err, errlen, "building a slice of the routed documents failed");
    return 0;
}

static int add_keys(struct router *r, struct target *t, struct strset *got, router_emit_fn emit,
                    void *ctx, char *err, size_t errlen) {
    for (size_t k = 0; k < got->cap; k++)
        if (got->slot[k]) strset_add(&t->keys, got->slot[k], strlen(got->slot[k]));
    strset_clear(got);
    return t->keys.n >= r->slice ? spill(r, t, emit, ctx, err, errlen) : 0;
}

/* one value's keys, page by page (its chunk had more than a slice) */
struct page_rows {
    struct strset got;
    sbuf last; /* the page's last key: the next page starts after it */
    bool have_last;
    size_t n;
};

static void add_page_row(void *ctx, MYSQL_ROW row, const unsigned long *len) {
    struct page_rows *pg = ctx;
    if (!row[0]) return;
    strset_add(&pg->got, row[0], len[0]);
    sbuf_reset(&pg->last);
    sbuf_add(&pg->last, row[0], len[0]);
    pg->have_last = true;
    pg->n++;
}

static int value_pages(struct router *r, MYSQL *src, const struct router_step *st,
                       const char *v, struct target *t, router_emit_fn emit, void *ctx,
                       char *err, size_t errlen) {
    sbuf q = SBUF_INIT;
    struct page_rows pg = {{NULL, 0, 0}, SBUF_INIT, false, 0};
    int rc = 0;
    for (;;) {
        select_where(&q, true, st->out, NULL, st->db, st->table, st->match);
        sbuf_addc(&q, '=');
        db_quote(src, &q, v, strlen(v));
        if (pg.have_last) {
            sbuf_adds(&q, " AND ");
            db_ident(&q, st->out);
            sbuf_addc(&q, '>');
            db_quote(src, &q, pg.last.data, pg.last.len);
        }
        sbuf_adds(&q, " ORDER BY ");
        db_ident(&q, st->out);
        sbuf_printf(&q, " LIMIT %zu", r->slice);
        pg.n = 0;
        rc = run_rows(r, src, &q, add_page_row, &pg, "documents", st->db, st->table, err, errlen);
        if (rc != 0) {
            strset_clear(&pg.got);
            break;
        }
        rc = add_keys(r, t, &pg.got, emit, ctx, err, errlen);
        if (rc != 0 || pg.n < r->slice) break;
    }
    sbuf_free(&q);
    sbuf_free(&pg.last);
    return rc;
}

int rt_sliced_step(struct router *r, MYSQL *src, const struct router_step *st,
                   struct strset *in, struct target *t, router_emit_fn emit, void *ctx,
                   char *err, size_t errlen) {
    sbuf q = SBUF_INIT;
    int rc = 0;
    const char **vals = xmalloc(IN_CHUNK * sizeof *vals);
    size_t i = 0;
    while (rc == 0) {
        select_where(&q, true, st->out, NULL, st->db, st->table, st->match);
        size_t k = in_list(src, &q, in, &i, vals);
        if (!k) break;
        sbuf_printf(&q, " LIMIT %zu", r->slice + 1);
        struct strset got = {NULL, 0, 0};
        rc = run_rows(r, src, &q, add_value, &got, "documents", st->db, st->table, err, errlen);
        if (rc != 0) {
            strset_clear(&got);
            break;
        }
        if (got.n <= r->slice) {
            rc = add_keys(r, t, &got, emit, ctx, err, errlen);
            continue;
        }
        strset_clear(&got); /* more than a slice: value by value, in pages */
        for (size_t j = 0; j < k && rc == 0; j++)
            rc = value_pages(r, src, st, vals[j], t, emit, ctx, err, errlen);
    }
    free(vals);
    sbuf_free(&q);
    return rc;
}

static void add_area_pair(void *ctx, MYSQL_ROW row, const unsigned long *len) {
    if (row[0] && row[1]) rt_add_pair(ctx, row[0], len[0], row[1], len[1]);
}

/* (document, element) pairs of area a for element rows whose `match` column
 * is in `in`: SELECT join_column, key FROM area table WHERE match IN (...).
 * The relation's WHERE is not applied: a row that stops matching must still
 * be removed from its document. */
int rt_pair_query(struct router *r, MYSQL *src, struct area *a, struct strset *pairs,
                  const char *match, struct strset *in, char *err, size_t errlen) {
    return in_query(r, src, false, a->rel->join_column, a->key, a->rel->db, a->rel->table, match,
                    in, add_area_pair, pairs, "elements", err, errlen);
}
