/* job_assign: step 3 of a rebalance (rebalance/rebalance.h) in the
 * metadata — the unfinished jobs of a source's running builds split over
 * the nodes that answered, owner and session recorded in one transaction.
 *
 * Which jobs: those of versions being built (index_configs 'changing' with
 * that building_version) whose dual writes are on (index_versions.
 * start_position recorded by the reader), so no node reads a page before
 * live changes reach the version. Each weighs the rows it has left, as far
 * as known: every bucket of a build holds about the same rows (the key's
 * quantiles), so a job's weight is the build's largest rows_read plus one
 * page's worth minus its own (a job nearly done is light, rebalance/split.c).
 * A job that had an owner and a cursor and moves to another node is marked
 * broken_by_rebalance; it resumes from its cursor there. Every job gets the
 * new session, also the ones that stay: the old session fences whatever a
 * node that did not answer still writes (sync/reindex/reindex_runner.c).
 *
 * The jobs of the source's resolved delayed runs (jobs.type 'job', sync/
 * delayed.h) are split in the same session, on their own (each kind evenly
 * over the nodes, whatever the other's weights): each weighs the ids of its
 * bucket it has not read yet. Their writes are fenced the same way
 * (delayed_job_run). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sync/cluster/job_assign.h"
#include "jsonw.h"
#include "log.h"
#include "rebalance/rebalance.h"
#include "rebalance/split.h"
#include "rebalance/zk.h"

struct ajob {
    unsigned long long id;
    char *owner;
    unsigned long long rows_read, left; /* left: ids not read (delayed jobs) */
    bool has_cursor, delayed;
};

/* the jobs of one query (id, owner, rows read, has a cursor, ids left)
 * appended to *jobs; -1 err */
static int load_jobs(MYSQL *m, const sbuf *q, bool delayed, struct ajob **jobs, size_t *nj,
                     char *err, size_t errlen) {
    MYSQL_RES *res = db_query(m, q->data, q->len, err, errlen);
    if (!res) return -1;
    MYSQL_ROW row;
    while ((row = mysql_fetch_row(res))) {
        *jobs = xrealloc(*jobs, (*nj + 1) * sizeof **jobs);
        struct ajob *a = &(*jobs)[(*nj)++];
        a->id = strtoull(row[0], NULL, 10);
        a->owner = row[1] ? xstrdup(row[1]) : NULL;
        a->rows_read = strtoull(row[2], NULL, 10);
        a->has_cursor = row[3] && row[3][0] == '1';
        a->left = delayed && row[4] ? strtoull(row[4], NULL, 10) : 0;
        a->delayed = delayed;
    }
    mysql_free_result(res);
    return 0;
}

int job_assign(void *ud, const char *session, const char *const *nodes, size_t n, sbuf *assign,
               char *err, size_t errlen) {
    struct job_assign_ctx *ctx = ud;
    if (db_ensure(&ctx->meta, &ctx->metap, err, errlen) < 0) return -1;
    MYSQL *m = ctx->meta;
    if (db_exec(m, "START TRANSACTION", err, errlen) < 0) return -1;
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT j.id, j.owner_node, j.rows_read, j.data_cursor IS NOT NULL FROM jobs j "
                  "JOIN index_configs c ON c.id = j.index_id AND c.state = 'changing' AND "
                  "c.building_version = j.version JOIN index_versions v ON v.index_id = "
                  "j.index_id AND v.version = j.version WHERE j.source = ");
    db_quote(m, &q, ctx->source, strlen(ctx->source));
    sbuf_adds(&q, " AND j.type = 'index' AND j.status IN ('init', 'running') AND "
                  "v.start_position IS NOT NULL ORDER BY j.index_id, j.version, j.bucket FOR "
                  "UPDATE");
    struct ajob *jobs = NULL;
    size_t nj = 0;
    int rc = load_jobs(m, &q, false, &jobs, &nj, err, errlen);
    size_t nindex = nj;
    sbuf_reset(&q);
    sbuf_adds(&q, "SELECT j.id, j.owner_node, j.rows_read, j.data_cursor IS NOT NULL, (SELECT "
                  "COUNT(*) FROM delayed_run_ids i WHERE i.run_id = r.id AND i.index_id = "
                  "j.index_id AND i.bucket = j.bucket) FROM jobs j JOIN delayed_runs r ON "
                  "r.status = 'running' AND r.resolved = 1 AND j.params = CONCAT("
                  "'{\"delayed_run\":', r.id, '}') WHERE j.source = ");
    db_quote(m, &q, ctx->source, strlen(ctx->source));
    sbuf_adds(&q, " AND j.type = 'job' AND j.status IN ('init', 'running') ORDER BY r.id, j.id "
                  "FOR UPDATE");
    if (rc == 0) rc = load_jobs(m, &q, true, &jobs, &nj, err, errlen);
    unsigned long long most = 0;
    for (size_t i = 0; i < nindex; i++)
        if (jobs[i].rows_read > most) most = jobs[i].rows_read;
    struct split_job *sj = xcalloc(nj + 1, sizeof *sj);
    for (size_t i = 0; i < nj; i++) {
        uint64_t wgt = jobs[i].delayed ? (jobs[i].left > jobs[i].rows_read
                                              ? jobs[i].left - jobs[i].rows_read : 0) + 1
                                       : most + 1000 - jobs[i].rows_read;
        sj[i] = (struct split_job){.weight = wgt, .previous = jobs[i].owner,
                                   .kind = jobs[i].delayed};
    }
    if (n && rc == 0) split_jobs(sj, nj, nodes, n); /* each kind evenly on its own */
    jsonw w;
    jw_init(&w, assign);
    jw_obj_open(&w);
    /* one statement per node (and one for none answering: the session
     * alone, owner cleared, so the next rebalance finds them) */
    for (size_t k = 0; rc == 0 && k < (n ? n : 1); k++) {
        sbuf ids = SBUF_INIT, broken = SBUF_INIT;
        if (n) {
            jw_key(&w, nodes[k]);
            jw_arr_open(&w);
        }
        for (size_t i = 0; i < nj; i++) {
            if (n && sj[i].node != k) continue;
            sbuf_printf(&ids, "%s%llu", ids.len ? "," : "", jobs[i].id);
            if (n) jw_uint(&w, jobs[i].id);
            if (n && jobs[i].owner && jobs[i].has_cursor && strcmp(jobs[i].owner, nodes[k]))
                sbuf_printf(&broken, "%s%llu", broken.len ? "," : "", jobs[i].id);
        }
        if (n) jw_arr_close(&w);
        if (ids.len) {
            sbuf_reset(&q);
            sbuf_adds(&q, "UPDATE jobs SET owner_node = ");
            if (n) db_quote(m, &q, nodes[k], strlen(nodes[k]));
            else sbuf_adds(&q, "NULL");
            sbuf_adds(&q, ", rebalance_session = ");
            db_quote(m, &q, session, strlen(session));
            sbuf_printf(&q, " WHERE id IN (%s)", ids.data);
            if (db_exec(m, q.data, err, errlen) < 0) rc = -1;
        }
        if (rc == 0 && broken.len) {
            sbuf_reset(&q);
            sbuf_printf(&q, "UPDATE jobs SET broken_by_rebalance = 1 WHERE id IN (%s)",
                        broken.data);
            if (db_exec(m, q.data, err, errlen) < 0) rc = -1;
        }
        sbuf_free(&ids);
        sbuf_free(&broken);
    }
    jw_obj_close(&w);
    if (rc == 0 && db_exec(m, "COMMIT", err, errlen) < 0) rc = -1;
    if (rc < 0) {
        char e2[128];
        db_exec(m, "ROLLBACK", e2, sizeof e2);
    }
    for (size_t i = 0; i < nj; i++) free(jobs[i].owner);
    free(jobs);
    free(sj);
    sbuf_free(&q);
    return rc;
}
