/* reindex_page_read: a reindex job's next page read from the source and
 * built into documents (struct page), inside a consistent snapshot whose
 * binlog position becomes the page's version. Owns the snapshot a job's
 * pages share (SNAPSHOT_REUSE_MS), the wait for the binlog's transactions
 * to commit where the server does not say the snapshot's position, the end
 * of a job's reading of a table (table_end) and the ramp of a job's first
 * pages. The page is delivered and its cursor saved by
 * sync/reindex/reindex_runner.c. */
#include "monotime.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binlog/binlog.h"
#include "db.h"
#include "sync/pipeline/docbuild.h"
#include "log.h"
#include "sync/pipeline/pipeline.h"
#include "sync/reindex/reindex_int.h"
#include "sync/reindex/reindex_runner_int.h"
#include "sbuf.h"

/* the builder's sink: a document of the page, its strings kept in p->text */
static int page_doc(void *ctx, const char *id, const char *routing, const char *body,
                    size_t len) {
    struct page *p = ctx;
    if (p->ndocs == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 256;
        p->docs = xrealloc(p->docs, sizeof *p->docs * p->cap);
    }
    struct page_doc *pd = &p->docs[p->ndocs++];
    pd->id = p->text.len;
    sbuf_add(&p->text, id, strlen(id) + 1);
    pd->routing = SIZE_MAX;
    if (routing) {
        pd->routing = p->text.len;
        sbuf_add(&p->text, routing, strlen(routing) + 1);
    }
    pd->body = p->text.len;
    pd->body_len = len;
    sbuf_add(&p->text, body, len);
    sbuf_addc(&p->text, '\0');
    return 0;
}

/* The version of the source's binlog position now (targets_version_at, as
 * the pipeline's writes); 0 with w->err. */
static uint64_t binlog_version(struct worker *w, const struct mp_index *ix) {
    char file[BL_FILE_MAX];
    unsigned long long pos = 0;
    if (db_binlog_status(w->src, file, sizeof file, &pos, w->err, sizeof w->err) != 1) return 0;
    return targets_version_at(w->r->cfg, w->src, ix, file, pos, w->err, sizeof w->err);
}

/* A job's first pages are smaller: 1/8, 1/4 and 1/2 of [reindex] page_size,
 * then page_size. The engine gets the job's first batch while a full page
 * would still be read, and each page is built while the one before it is
 * indexed, so the ramp leaves no gap. */
#define RAMP_PAGES 3
#define RAMP_MIN_ROWS 10

static int read_page_in(struct worker *w, size_t t, const char *cond, char **after);

void rx_snapshot_end(struct worker *w) {
    if (w->snap_open && w->src) db_snapshot_end(w->src);
    w->snap_open = false;
}

/* MySQL: before the snapshot, every transaction the binlog holds up to the
 * page's position committed (db_wait_binlogged_committed), so that the
 * position is never past what the snapshot sees. A GTID owned for over 5 s
 * (a session holding gtid_next) is said once, and the build's pages stop
 * waiting. 0, or -1 with w->err. */
static int wait_committed(struct worker *w) {
    struct reindex_runner *r = w->r;
    if (atomic_load(&r->no_commit_wait)) return 0;
    sbuf owned = SBUF_INIT;
    int c = db_wait_binlogged_committed(w->src, 5, &owned, w->err, sizeof w->err);
    if (c == 0 && !atomic_exchange(&r->no_commit_wait, 1))
        log_warn("reindex", "%s v%u: GTID(s) %.300s owned for over 5 s and not executed (a "
                 "session holding gtid_next?); this build's pages no longer wait for the "
                 "transactions of the binlog to commit before their snapshot, so a page may "
                 "miss one that commits just after it (docs/delivery.md, \"Pages without a "
                 "snapshot position\"): check the index after the build",
                 r->alias, r->version, owned.data ? owned.data : "");
    sbuf_free(&owned);
    return c < 0 ? -1 : 0;
}

int rx_read_page(struct worker *w, size_t t, const char *cond, char **after) {
    struct reindex_runner *r = w->r;
    const struct mp_index *ix = w->job->ix;
    struct page *p = &w->next;
    if (w->snap_open && mono_ms() - w->snap_ms < SNAPSHOT_REUSE_MS) {
        p->version = w->snap_version;
        p->snap_ms = w->snap_ms;
        int rc = read_page_in(w, t, cond, after);
        if (rc < 0) rx_snapshot_end(w);
        return rc;
    }
    rx_snapshot_end(w);
    /* The page's version is the binlog position its snapshot matches: every
     * change before it is in the page, every change after it comes as a
     * dual write with a greater version. Without a server that reports that
     * position (MySQL), the position read just before the snapshot is used:
     * a transaction binlogged but not yet visible at that instant is then
     * missed (see docs/operations.md). */
    if (w->snap == 0) {
        p->version = binlog_version(w, ix);
        if (!p->version) return -1;
        if (wait_committed(w) < 0) return -1;
    }
    char file[512];
    unsigned long long pos = 0;
    int64_t began = mono_ms();
    /* every table of the unit opened first: a table an online schema change
     * swaps in while the snapshot begins is never read as it was then
     * (sync/pipeline/read_view.h) */
    if (w->rv_ix != ix) {
        rv_tables_clear(&w->rv);
        rv_tables_add_index(&w->rv, ix);
        w->rv_ix = ix;
    }
    enum rv_kind kind = w->snap < 0 ? RV_UNKNOWN : w->snap ? RV_POSITION : RV_NO_POSITION;
    unsigned srcerr = 0;
    int s = read_view_begin(w->src, &w->rv, &kind, file, sizeof file, &pos, &srcerr, w->err,
                            sizeof w->err);
    if (s < 0) return -1;
    if (s == 1) {
        p->version = targets_version_at(r->cfg, w->src, ix, file, pos, w->err, sizeof w->err);
        if (!p->version) {
            db_snapshot_end(w->src);
            return -1;
        }
        w->snap = 1;
    } else if (w->snap != 0) { /* first page on a server without it: learn, start again */
        db_snapshot_end(w->src);
        w->snap = 0;
        if (!atomic_exchange(&r->no_snap_said, 1))
            log_info("reindex", "%s v%u: the source does not report the binlog position of a "
                     "consistent snapshot (Binlog_snapshot_position: MariaDB and Percona Server "
                     "do; MySQL does not); pages use the binlog position read just before their "
                     "snapshot, once every transaction binlogged up to it is committed (GTIDs; "
                     "docs/delivery.md, \"Pages without a snapshot position\")",
                     r->alias, r->version);
        return rx_read_page(w, t, cond, after);
    }
    w->snap_open = true;
    w->snap_ms = began;
    p->snap_ms = began;
    w->snap_version = p->version;
    int rc = read_page_in(w, t, cond, after);
    if (rc < 0) rx_snapshot_end(w);
    return rc;
}

/* Where a job's reading of table t ends: the largest key the table holds in
 * the snapshot of the job's first page of t in this run (w->end_*). The
 * whole table's, one index seek, where its bucket's own would scan the
 * table for a MOD bucket: a larger end only lets the job read rows it reads
 * anyway. Every row committed after that snapshot reaches the version as a
 * dual write: the runner starts only once the reader writes the build's
 * version too (sync/node/daemon_builds.c; in a cluster, jobs are handed out
 * once the reader recorded that position), and the reader builds every
 * transaction after it with dual writes. Without an end, a bucket that
 * takes new rows (the last key range, open upwards, or any MOD bucket)
 * under steady inserts read them a few at a time, one page per round trip
 * to the engine, and ended only when a page found none: that needs the
 * next page read in the same snapshot, so with pages acknowledged slower
 * than SNAPSHOT_REUSE_MS the job chased the inserts and the build never
 * finished. 0, or -1 with w->err. */
static int table_end(struct worker *w, size_t t) {
    const struct mp_table *tb = &w->job->ix->tables[t]; /* its shard's table, over shards */
    const struct mp_column *k = mp_table_key(tb);
    if (!k) return errf(w->err, sizeof w->err, "%s.%s has no key column", tb->db, tb->table);
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT MAX(");
    db_ident(&q, k->name);
    sbuf_adds(&q, ") FROM ");
    db_ident(&q, tb->db);
    sbuf_addc(&q, '.');
    db_ident(&q, tb->table);
    char *v[1] = {NULL};
    int rc = db_row1(w->src, q.data, q.len, v, 1, w->err, sizeof w->err);
    sbuf_free(&q);
    if (rc < 0) return -1;
    free(w->end_key);
    w->end_key = rc == 1 && v[0] ? xstrdup(v[0]) : NULL;
    w->end_state = w->end_key ? 1 : 2;
    w->end_t = t;
    db_row_free(v, 1);
    return 0;
}

/* rx_read_page inside the page's snapshot: one keyset query reads the page's
 * rows whole (sync/pipeline/docbuild.c docbuild_page), up to the job's end
 * in the table (table_end). */
static int read_page_in(struct worker *w, size_t t, const char *cond, char **after) {
    struct reindex_runner *r = w->r;
    const struct mp_index *ix = w->job->ix;
    struct page *p = &w->next;
    if ((w->end_state == 0 || w->end_t != t) && table_end(w, t) < 0) return -1;
    if (w->end_state == 2) return 0; /* its rows all came after the dual writes began */
    const struct mp_column *k = mp_table_key(&ix->tables[t]);
    sbuf bounded = SBUF_INIT; /* (cond) AND key <= end, compared as the key's type */
    if (cond && *cond) sbuf_printf(&bounded, "(%s) AND ", cond);
    db_ident(&bounded, k->name);
    sbuf_adds(&bounded, " <= ");
    if (mapping_is_integer_type(k->mysql_type) && docbuild_is_integer(w->end_key))
        sbuf_adds(&bounded, w->end_key);
    else
        rx_sq(w->src, &bounded, w->end_key);
    struct docbuild b;
    docbuild_init(&b, w->src, ix);
    struct docbuild_sink sink = {page_doc, NULL, p};
    sbuf_reset(&p->text);
    p->ndocs = 0;
    char *last = NULL;
    size_t rows = 0;
    size_t size = (size_t)r->cfg->reindex.page_size;
    if (w->pages < RAMP_PAGES) size >>= RAMP_PAGES - w->pages;
    if (size < RAMP_MIN_ROWS) size = RAMP_MIN_ROWS;
    int rc = docbuild_page(&b, t, bounded.data, *after, size,
                           rx_bucket_is_key_interval(cond ? cond : ""), &sink, &last, &rows,
                           w->err, sizeof w->err);
    sbuf_free(&bounded);
    if (rc == 1) {
        w->pages++;
        p->t = t;
        p->rows = rows;
        free(p->last);
        p->last = last;
        free(*after);
        *after = xstrdup(last);
    }
    return rc;
}
