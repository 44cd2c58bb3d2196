/* delayed_job.c: one bucket job of a delayed run (sync/delayed/delayed_run.c
 * claims and drives the run): its ids page by page from its cursor, each
 * page built through the pipeline with the version of its read snapshot and
 * delivered on the producer's stream, at most PAGES_IN_FLIGHT pages in
 * flight; the cursor and the run's totals move in one statement once a
 * page is acknowledged, so a run taken over after a kill goes on from there
 * and counts everything once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "sync/delayed/delayed_run_int.h"
#include "sync/mapping/mapping_shard.h"


/* Build one page (its documents in one delivery transaction) and hand it to
 * delivery: *seq is that transaction, to be waited for (page_wait). */
static int page_build(struct run *R, long ix, char **tables, char **keys, size_t n,
                      uint64_t *seq) {
    struct pipeline *p = R->p;
    /* the version: the position of the snapshot the rows are read in */
    bl_pos end;
    if (pipeline_snapshot_begin(p, p->m->indices[ix].alias, NULL, &end) < 0)
        return errf(R->err, R->errlen, "%s", p->err);
    if (R->o->pause_ms > 0) { /* tests: said, so a test changes a row after this position */
        fprintf(stderr, "delayed-run: test pause of %d ms after position %s:%llu\n",
                R->o->pause_ms, end.file, (unsigned long long)end.pos);
        usleep((useconds_t)R->o->pause_ms * 1000);
    }
    struct changeset cs = {0};
    const struct mapping *m = p->m;
    for (size_t i = 0; i < n; i++) {
        size_t t = (size_t)strtoul(tables[i], NULL, 10);
        if (!mp_ids_templated(&m->indices[ix])) {
            changeset_add_doc(&cs, (size_t)ix, t, keys[i], strlen(keys[i]));
            continue;
        }
        /* over shard tables the staged key is the document's id: its shard's
         * unit (mapping_shard.h) builds it; a shard gone since has none */
        for (size_t u = (size_t)ix; u < m->nindices &&
                                    !strcmp(m->indices[u].alias, m->indices[ix].alias); u++) {
            size_t kl = 0;
            const char *k = mp_doc_key(&m->indices[u], keys[i], &kl);
            if (!k) continue;
            changeset_add_doc(&cs, u, t, k, kl);
            break;
        }
    }
    int rc = pipeline_build(p, &cs, &end);
    pipeline_snapshot_end(p);
    if (rc != 0) errf(R->err, R->errlen, "%s", p->err);
    *seq = pipeline_end(p, &cs, &end, NULL, false);
    changeset_free(&cs);
    return rc != 0 ? -1 : 0;
}

/* Pages handed to delivery and not yet acknowledged, oldest first: the
 * next page is built while the engine takes these (PAGES_IN_FLIGHT at most),
 * and a job's cursor moves to a page only once the engine acknowledged it,
 * so a run killed midway does again at most the pages that were in flight. */
#define PAGES_IN_FLIGHT 3
struct page_inflight {
    uint64_t seq;
    char *cursor; /* "doc_table:doc_key" of its last id */
    size_t rows;
    unsigned long long docs, deleted;
};

/* Wait for the oldest page in flight; record its cursor and counts. */
static int page_ack(struct run *R, unsigned long long job, struct page_inflight *v, size_t *n) {
    if (!*n) return 0;
    struct pipeline *p = R->p;
    if (deliver_wait_txn(p->d, v[0].seq, p->cfg->delivery.drain_timeout_ms) != DELIVER_OK)
        return errf(R->err, R->errlen, "the engine did not acknowledge a page within "
                    "[delivery] drain_timeout_ms (%d ms): see the delivery log lines",
                    p->cfg->delivery.drain_timeout_ms);
    sbuf q = SBUF_INIT;
    /* the run's figures move with the job's cursor, in one statement: a run
     * taken over after a kill counts every page acknowledged, once */
    sbuf_adds(&q, "UPDATE jobs j, delayed_runs r SET j.data_cursor = ");
    qs(R->meta, &q, v[0].cursor);
    sbuf_printf(&q, ", j.rows_read = j.rows_read + %zu, j.docs_written = j.docs_written + %llu, "
                    "r.docs_written = r.docs_written + %llu, r.docs_deleted = r.docs_deleted + "
                    "%llu WHERE j.id = %llu AND r.id = %llu%s", v[0].rows,
                v[0].docs + v[0].deleted, v[0].docs, v[0].deleted, job, R->id,
                R->owned ? R->owned : "");
    long long changed = exec_rows(R, &q); /* (rows_read grows: a row of ours always changes) */
    int rc = changed < 0 ? -1 : 0;
    if (changed == 0) {
        R->fenced = true;
        rc = errf(R->err, R->errlen, "job %llu was given to another node by a later rebalance: "
                  "this node's writes to it are refused", job);
    }
    sbuf_free(&q);
    free(v[0].cursor);
    memmove(v, v + 1, (*n - 1) * sizeof *v);
    (*n)--;
    return rc;
}

/* Job job marked running: by this node (its owner) standalone; in a
 * cluster the owner is the rebalance's word, and a job it gave elsewhere is
 * not touched. 0, or -1 with R->err. */
static int job_running(struct run *R, unsigned long long job) {
    sbuf q = SBUF_INIT;
    if (R->owned) {
        sbuf_printf(&q, "UPDATE jobs SET status = 'running', started_at = COALESCE(started_at, "
                        "NOW(3)) WHERE id = %llu%s", job, R->owned);
    } else {
        sbuf_adds(&q, "UPDATE jobs SET status = 'running', owner_node = ");
        qs(R->meta, &q, R->node);
        sbuf_printf(&q, ", started_at = COALESCE(started_at, NOW(3)) WHERE id = %llu", job);
    }
    int rc = exec(R, &q);
    sbuf_free(&q);
    return rc < 0 ? -1 : 0;
}

/* The next page of the run's ids of index_id's bucket after the cursor
 * (t_after, k_after; k_after NULL: from the start), in the order the
 * cursor follows: its doc tables into *tabs, its keys into *keys (*n of
 * each, *got filled, the caller frees both). 0, or -1 with R->err. */
static int read_ids(struct run *R, unsigned long long index_id, unsigned bucket,
                    unsigned long t_after, const char *k_after, char ***tabs, char ***keys,
                    size_t *n, size_t *got) {
    sbuf q = SBUF_INIT;
    sbuf_printf(&q, "SELECT doc_table, doc_key FROM delayed_run_ids WHERE run_id = %llu AND "
                    "index_id = %llu AND bucket = %u", R->id, index_id, bucket);
    if (k_after) {
        sbuf_printf(&q, " AND (doc_table > %lu OR (doc_table = %lu AND doc_key > ", t_after,
                    t_after);
        qs(R->meta, &q, k_after);
        sbuf_adds(&q, "))");
    }
    sbuf_printf(&q, " ORDER BY doc_table, doc_key LIMIT %d", R->o->page);
    MYSQL_RES *res = db_query(R->meta, q.data, q.len, R->err, R->errlen);
    sbuf_free(&q);
    if (!res) return -1;
    size_t rows = (size_t)mysql_num_rows(res), i = 0;
    *tabs = xcalloc(rows ? rows : 1, sizeof **tabs);
    *keys = xcalloc(rows ? rows : 1, sizeof **keys);
    MYSQL_ROW row;
    while ((row = mysql_fetch_row(res))) (*tabs)[i] = xstrdup(row[0]), (*keys)[i++] = xstrdup(row[1]);
    mysql_free_result(res);
    *n = rows;
    *got = i;
    return 0;
}

static int job_end(struct run *R, unsigned long long job, int rc);

int delayed_run_job(struct run *R, unsigned long long job, unsigned long long index_id,
                    unsigned bucket, const char *cursor) {
    long ix = index_pos(R, index_id);
    if (ix < 0) { /* the index config is gone from the mapping */
        sbuf q = SBUF_INIT;
        sbuf_printf(&q, "UPDATE jobs SET status = 'done', finished_at = NOW(3), error_text = "
                        "'index config no longer in the mapping' WHERE id = %llu%s", job,
                    R->owned ? R->owned : "");
        int rc = exec(R, &q);
        sbuf_free(&q);
        return rc;
    }
    if (job_running(R, job) < 0) return -1;
    /* the cursor: "doc_table:doc_key" of the last page acknowledged */
    unsigned long t_after = 0;
    char *k_after = NULL;
    if (cursor && strchr(cursor, ':')) {
        t_after = strtoul(cursor, NULL, 10);
        k_after = xstrdup(strchr(cursor, ':') + 1);
    }
    struct page_inflight fl[PAGES_IN_FLIGHT];
    size_t nfl = 0;
    struct deliver_stats before, after;
    deliver_get_stats(R->p->d, &before);
    int rc = 0;
    bool stopped = false;
    while (rc == 0) {
        if (stopping(R)) { /* the pages in flight acknowledged, their cursor kept */
            stopped = true;
            break;
        }
        char **tabs, **keys;
        size_t n, i;
        if (read_ids(R, index_id, bucket, t_after, k_after, &tabs, &keys, &n, &i) < 0) {
            rc = -1;
            break;
        }
        unsigned long long d0 = R->p->docs, x0 = R->p->deletes;
        uint64_t seq = 0;
        if (n && nfl == PAGES_IN_FLIGHT) rc = page_ack(R, job, fl, &nfl);
        if (rc == 0 && n) rc = page_build(R, ix, tabs, keys, n, &seq);
        if (rc == 0 && n) {
            R->st->docs += R->p->docs - d0;
            R->st->deletes += R->p->deletes - x0;
            t_after = strtoul(tabs[n - 1], NULL, 10);
            free(k_after);
            k_after = xstrdup(keys[n - 1]);
            sbuf c = SBUF_INIT;
            sbuf_printf(&c, "%lu:%s", t_after, k_after);
            fl[nfl++] = (struct page_inflight){seq, sbuf_detach(&c), n, R->p->docs - d0,
                                               R->p->deletes - x0};
        }
        for (size_t j = 0; j < i; j++) free(tabs[j]), free(keys[j]);
        free(tabs), free(keys);
        if (n < (size_t)R->o->page) break;
    }
    /* what is in flight: acknowledged (a failure keeps the cursor at the last
     * page acknowledged: the rest is done again by the next attempt) */
    while (rc == 0 && nfl) rc = page_ack(R, job, fl, &nfl);
    for (size_t j = 0; j < nfl; j++) free(fl[j].cursor);
    deliver_get_stats(R->p->d, &after);
    R->st->stale += after.stale - before.stale;
    R->st->dead_letters += after.dead_letters - before.dead_letters;
    R->st->errors += after.dead_letters - before.dead_letters;
    free(k_after);
    if (stopped && rc == 0) return 1; /* left running, at its cursor: taken over by the next run */
    return job_end(R, job, rc);
}

/* Job job's end in its row after its outcome rc: done (a job a later
 * rebalance gave to another node is refused: R->fenced), or its error
 * recorded, unless the job is not this node's any more. The outcome. */
static int job_end(struct run *R, unsigned long long job, int rc) {
    sbuf q = SBUF_INIT;
    if (rc == 0) {
        /* (error_text: a wait for the source's server that it came through) */
        sbuf_printf(&q, "UPDATE jobs SET status = 'done', finished_at = NOW(3), error_text = "
                        "NULL WHERE id = %llu%s", job, R->owned ? R->owned : "");
        long long changed = exec_rows(R, &q);
        rc = changed < 0 ? -1 : 0;
        if (changed == 0 && R->owned) {
            R->fenced = true;
            rc = errf(R->err, R->errlen, "job %llu was given to another node by a later "
                      "rebalance: this node's writes to it are refused", job);
        }
    } else if (R->fenced) { /* not ours any more: its new owner goes on from its cursor */
    } else if (source_lost(R)) { /* waits at its cursor: the run's next taker, or its node */
        char why[1024];
        snprintf(why, sizeof why, "%s", R->err);
        sbuf_adds(&q, "UPDATE jobs SET status = 'init', error_text = ");
        qs(R->meta, &q, why);
        sbuf_printf(&q, " WHERE id = %llu%s", job, R->owned ? R->owned : "");
        char e[256];
        /* (a metadata server gone too leaves it running: it is still ours
         * to go on with, and its cursor is where it was) */
        if (db_exec_rows(R->meta, q.data, e, sizeof e) == 0 && R->owned)
            R->fenced = true; /* a later rebalance gave it away meanwhile: its new owner's */
        snprintf(R->err, R->errlen, "%s", why);
    } else {
        char why[1024];
        snprintf(why, sizeof why, "%s", R->err);
        sbuf_adds(&q, "UPDATE jobs SET status = 'error', errors = errors + 1, finished_at = "
                      "NOW(3), error_text = ");
        qs(R->meta, &q, why);
        sbuf_printf(&q, " WHERE id = %llu%s", job, R->owned ? R->owned : "");
        char e[256];
        db_exec(R->meta, q.data, e, sizeof e);
        snprintf(R->err, R->errlen, "%s", why);
    }
    sbuf_free(&q);
    return rc;
}

