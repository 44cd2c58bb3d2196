/* reindex_runner: the jobs of a build, inside `searchsync run` (see
 * reindex.h; the requests that create them are in sync/reindex/reindex.c).
 *
 * Job rows (metadata table jobs, type 'index'):
 *   params       one line per document table of the index config:
 *                "<table position>\t<SQL condition of this bucket>" ("" = all
 *                rows, "0=1" = none: a key that is not an integer puts the
 *                whole table into bucket 0)
 *   data_cursor  "<table position>" (start of that table) or
 *                "<table position>\t<last key delivered>"
 * A job reads each table with
 *   SELECT columns FROM t WHERE (cond) AND key > cursor ORDER BY key LIMIT page
 * (keyset pagination, never OFFSET: across all buckets the rows examined
 * stay close to the table's size; with --by-mod each bucket examines the
 * whole table, as MOD buckets must), builds the page's documents
 * whole from those rows (sync/pipeline/docbuild.c docbuild_page: relations joined on
 * the key of a range bucket's page read that key range) with the index
 * config of the mapping generation the build pinned when it started
 * (sync/mapping/mapping_gen.h), delivers them through its own delivery instance
 * and saves a page's cursor once the engine acknowledged it, while its next
 * page is already in flight — so a crash reads again at most those two
 * pages.
 *
 * Why a page does not pass through sync/pipeline/pipeline.c. Live sync, resync, the
 * delayed run, TTL and check repair hand a change set (keys to rebuild) to
 * pipeline_build, which reads the rows by key (docbuild_roots: IN lists)
 * and writes each document to every target of its index. A reindex page is
 * a bulk producer that calls the builder and delivery stages directly:
 *   - a page is a key range, not a list of keys: docbuild_page reads its
 *     rows in the keyset query itself and its relations by that range. As a
 *     change set of root ids its keys would be read first, then the rows
 *     again by IN list. Measured (20,000 demo products = 72,541
 *     documents, page_size 1000, one run each): the builder alone 0.36 s
 *     (201k docs/s, 261 queries) as a page, 0.45 s (163k docs/s, 472
 *     queries) as change sets: +24%. The whole reindex (bash
 *     tests/bench/run.sh reindex, engine-bound on 2 shared CPUs) stayed
 *     within its round-to-round noise (median 82-96% of the plain load
 *     either way) while MariaDB's CPU went from 0.3 to 0.4 s; where the
 *     engine has CPUs of its own, reading is the bound and the +24% shows.
 *   - its one target is the version being built (never the alias), with
 *     the version of its read snapshot, through a stream of its own on the
 *     process's delivery (a bulk stream: src/deliver/stream.c): one
 *     transaction per page, acknowledged before the cursor is saved, the
 *     next page built meanwhile and held back (struct page). The pipeline
 *     delivers as it builds, into the reader's stream.
 * What it shares with the pipeline: the builder (sync/pipeline/docbuild.c), the
 * target and version helpers (sync/pipeline/targets.c: targets_version_at,
 * targets_submit_page, beside the dual writes' targets_submit_build) and
 * delivery (src/deliver).
 *
 * The worker that finishes the last job switches the alias
 * (sync/reindex/reindex_version.c, which also refreshes the version once midway and
 * watches it for writes the engine lost); a worker that fails, or
 * rejections past max_rejected, roll the build back (runner_fail). */
#include "monotime.h"
#include "sync/reindex/reindex.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "binlog/binlog.h"
#include "db.h"
#include "deliver/deliver.h"
#include "sync/pipeline/docbuild.h"
#include "log.h"
#include "sync/mapping/mapping_gen.h"
#include "sync/pipeline/pipeline.h"
#include "sync/reindex/reindex_int.h"
#include "sync/reindex/reindex_runner_int.h"
#include "sync/pipeline/streams.h"
#include "sbuf.h"
#include "search/search.h"
#include "search/index_version.h"

static void runner_fail(struct reindex_runner *r, struct worker *w, const char *reason);

/* delivery's dead letters of a reindex: job_errors rows, and the count */
static int reindex_dead_letter(void *ud, const struct dead_letter *dl) {
    struct worker *w = ud;
    struct reindex_runner *r = w->r;
    struct job *job = w->job; /* the page in flight belongs to it (settled before it changes) */
    char err[512];
    sbuf q = SBUF_INIT;
    pthread_mutex_lock(&r->errmu);
    int rc = db_ensure(&r->errdb, &r->metap, err, sizeof err);
    if (rc == 0) {
        sbuf_printf(&q, "INSERT INTO job_errors (job_id, run_id, business_id, error_text) SELECT "
                        "%llu, id, ",
                    job ? job->id : 0ULL);
        rx_sq(r->errdb, &q, dl->doc_id);
        sbuf_adds(&q, ", ");
        rx_sq(r->errdb, &q, dl->error ? dl->error : "");
        sbuf_printf(&q, " FROM reindex_runs WHERE index_id = %s AND version = %u", r->id,
                    r->version);
        rc = db_exec(r->errdb, q.data, err, sizeof err);
    }
    pthread_mutex_unlock(&r->errmu);
    sbuf_free(&q);
    if (rc < 0) {
        log_warn("reindex", "job error not recorded (will retry): %s", err);
        return -1;
    }
    w->rejected++;
    unsigned long long total = ++r->rejected_total;
    if (total > (unsigned long long)r->cfg->reindex.max_rejected && !r->stop) {
        char why[600];
        snprintf(why, sizeof why,
                 "%llu documents rejected by the engine (more than [reindex] max_rejected = %d); "
                 "the first errors are in job_errors, e.g. %s: %.300s",
                 total, r->cfg->reindex.max_rejected, dl->doc_id, dl->error ? dl->error : "");
        pthread_mutex_lock(&r->errmu);
        snprintf(r->why, sizeof r->why, "%s", why);
        pthread_mutex_unlock(&r->errmu);
        r->stop = 2; /* the worker that sees it fails the build */
    }
    return 0;
}

static void page_free(struct page *p) {
    free(p->last);
    sbuf_free(&p->text);
    free(p->docs);
    memset(p, 0, sizeof *p);
}

/* A statement on the job's metadata row that a restart of the metadata
 * server must not fail: a lost connection is waited out (backing off to
 * 5 s, said every minute or so) until the server is back or the build stops.
 * Rows changed, or -1 (an error that is not a lost connection, a statement
 * that dropped a fresh connection 6 times, or a stop; w->err). An UPDATE
 * whose commit went through but whose answer was lost runs twice: a page's
 * rows can then be counted twice in the run's statistics (not in the
 * cursor). */
static long long meta_exec_wait(struct worker *w, const char *sql) {
    struct reindex_runner *r = w->r;
    long delay_ms = 250;
    for (int attempt = 0, drops = 0;; attempt++) {
        if (db_ensure(&w->meta, &r->metap, w->err, sizeof w->err) == 0) {
            if (liveness_waiting(&w->live)) liveness_wait(&w->live, NULL);
            long long n = rx_exec_retry(w->meta, sql, w->err, sizeof w->err);
            if (n >= 0) liveness_beat(&w->live);
            if (n >= 0 || !db_conn_lost(w->meta)) return n;
            if (++drops > 5) return -1; /* dropped every time, the server answering */
        } else {
            liveness_wait(&w->live, RX_WAIT_META_AWAY); /* an outage: well while it lasts */
        }
        if (attempt % 12 == 0)
            log_warn("reindex", "%s v%u: %s; waiting for the metadata server (the build goes "
                     "on when it is back)", r->alias, r->version, w->err);
        if (!rx_nap_unless(&r->stop, delay_ms)) return -1;
        delay_ms = delay_ms * 2 > 5000 ? 5000 : delay_ms * 2;
    }
}

/* rv_try_finish once the metadata server answers: a restarting one is
 * waited out, as for the pages */
static int try_finish(struct worker *w, bool may_resume) {
    if (meta_exec_wait(w, "DO 0") < 0) return -1;
    return rv_try_finish(w, may_resume);
}

/* Wait for the page in flight to be acknowledged (engine outages are waited
 * out); it is then w->acked, its cursor not saved yet (record_page). 0
 * (also when none was in flight), -2 shutting down (the cursor stays before
 * that page). */
static int page_acked(struct worker *w) {
    struct reindex_runner *r = w->r;
    struct sent_page *sp = &w->sent;
    if (!sp->on) return 0;
    /* a wait longer than a snapshot is kept (an engine that is slow, or
     * down) does not keep the job's snapshot open */
    if (deliver_wait_txn(w->d, sp->seq, SNAPSHOT_REUSE_MS) != DELIVER_OK) {
        rx_snapshot_end(w);
        for (;;) {
            /* each turn is progress for the node's health: an engine away is
             * waited out here, and delivery's own health watches its senders */
            liveness_beat(&w->live);
            if (deliver_wait_txn(w->d, sp->seq, 1000) == DELIVER_OK) break;
            if (r->stop == 1) return -2;
        }
    }
    liveness_beat(&w->live);
    /* A delete newer than the page's snapshot may have reached the version
     * before the page did (a dual write: sync/pipeline/targets.c). The page then
     * loses to it (409) while the engine remembers the delete: the version
     * is created with index.gc_deletes = [reindex] gc_deletes_s. A page
     * acknowledged later than 90% of that after its snapshot (an engine
     * down for most of it) may have brought back a document deleted since:
     * the build is not switched to, but rolled back and queued again. */
    int64_t age = mono_ms() - sp->snap_ms;
    if (age > (int64_t)r->cfg->reindex.gc_deletes_s * 900 && !r->lost) {
        pthread_mutex_lock(&r->errmu);
        snprintf(r->why, sizeof r->why,
                 "a page of v%u was acknowledged %lld s after it was read, later than the "
                 "version keeps deleted documents' versions ([reindex] gc_deletes_s = %d): it "
                 "may have brought back a document deleted meanwhile",
                 r->version, (long long)(age / 1000), r->cfg->reindex.gc_deletes_s);
        pthread_mutex_unlock(&r->errmu);
        r->lost = 2;
        r->stop = 2;
    }
    free(w->acked.last);
    w->acked = *sp;
    sp->on = false;
    sp->last = NULL;
    return 0;
}

/* The acknowledged page's cursor and counters saved (w->acked). 0 (also
 * when there is none), -1 error (w->err), -2 shutting down (the page is read
 * again after the restart), -3 the job is gone (cancelled). */
static int record_page(struct worker *w) {
    struct reindex_runner *r = w->r;
    struct sent_page *sp = &w->acked;
    if (!sp->on) return 0;
    int rc = 0;
    sbuf c = SBUF_INIT;
    sbuf_printf(&c, "UPDATE jobs SET status = 'running', data_cursor = ");
    sbuf cur = SBUF_INIT;
    sbuf_printf(&cur, "%zu\t%s", sp->t, sp->last);
    db_quote(w->meta, &c, cur.data, cur.len); /* w->meta may be NULL: then as utf8mb4 */
    sbuf_printf(&c, ", rows_read = rows_read + %zu, docs_written = docs_written + %llu, "
                    "rejected = %llu, started_at = COALESCE(started_at, NOW(3)) WHERE id = %llu%s",
                sp->rows, sp->docs, (unsigned long long)w->rejected, w->job->id, r->owned);
    long long changed = meta_exec_wait(w, c.data);
    if (changed > 0) {
        rv_mid_refresh_maybe(r, sp->rows);
        rv_lost_check_maybe(w);
    }
    if (changed < 0)
        rc = r->stop == 1 ? -2 : -1; /* stopped: the page is read again after the restart */
    else if (changed == 0)
        rc = -3; /* the job is gone: cancelled, or given to another node by a rebalance */
    sbuf_free(&c);
    sbuf_free(&cur);
    sp->on = false;
    free(sp->last);
    sp->last = NULL;
    return rc;
}

/* The page in flight acknowledged and its cursor saved. 0, or what
 * page_acked / record_page return. */
static int settle_page(struct worker *w) {
    int rc = page_acked(w);
    return rc == 0 ? record_page(w) : rc;
}

/* Hand w->next to delivery as one transaction; it becomes the page in
 * flight. Its documents go to the version being built only (the alias still
 * serves the old one), through the pipeline's target helper, as dual writes
 * do. */
static int send_page(struct worker *w) {
    struct page *p = &w->next;
    const struct job *j = atomic_load(&w->job);
    for (size_t i = 0; i < p->ndocs; i++) {
        const struct page_doc *pd = &p->docs[i];
        if (j && j->ix) targets_source_check(w->r->cfg->source.name, j->ix, p->text.data + pd->id);
        struct change c = {.doc_id = p->text.data + pd->id,
                           .routing = pd->routing == SIZE_MAX ? NULL : p->text.data + pd->routing,
                           .version = p->version,
                           .op = CHANGE_INDEX,
                           .body = p->text.data + pd->body,
                           .body_len = pd->body_len};
        if (targets_submit_page(w->d, w->r->phys, &c) < 0) {
            errf(w->err, sizeof w->err, "delivery is shutting down");
            return -2;
        }
    }
    struct sent_page *sp = &w->sent;
    sp->seq = deliver_txn_end(w->d, "page");
    sp->t = p->t;
    sp->rows = p->rows;
    sp->docs = p->ndocs;
    sp->snap_ms = p->snap_ms;
    free(sp->last);
    sp->last = p->last;
    p->last = NULL;
    sp->on = true;
    return 0;
}

/* The next page of table t of job j read (rx_read_page), its failures
 * waited out or retried. A lost source connection (a restart, a KILL) is
 * waited out until the server answers again, backing off to 30 s; w->src is
 * NULL while it does not. Any other error is tried 5 times, and so is a
 * read that loses a connection made just before (a statement running past
 * read_timeout_ms drops it every time: no outage to wait for). What
 * rx_read_page returns, or -2 when the runner stops meanwhile. For the
 * node's health, only a page read (or the table's end) is progress: a try
 * that fails is not, so a read that fails again and again with the server
 * answering (a lock held on a table the page reads) stalls the worker; a
 * server that takes no connection is a named wait. */
static int read_page_retrying(struct worker *w, const struct job *j, size_t t, const char *cond,
                              char **after) {
    struct reindex_runner *r = w->r;
    int tries = 0, drops = 0, pr;
    long delay_ms = 1000;
    for (int attempt = 0;; attempt++) {
        bool had_conn = w->src != NULL;
        pr = had_conn ? rx_read_page(w, t, cond, after) : -1;
        if (pr != -1 || r->stop) break;
        bool lost = !had_conn || db_conn_lost(w->src);
        if (!lost && ++tries > 5) break;
        if (lost && had_conn && ++drops > 5) {
            errf(w->err + strlen(w->err), sizeof w->err - strlen(w->err),
                 " (the connection dropped at this page 6 times, the server answering "
                 "in between: a query running past [source] read_timeout_ms?)");
            break;
        }
        if (!lost || attempt % 6 == 0)
            log_warn("reindex", "%s v%u bucket %d: %s (%s)", r->alias, r->version, j->bucket,
                     w->err,
                     lost ? "waiting for the source; the job goes on from its cursor"
                          : "retrying");
        if (!rx_nap_unless(&r->stop, delay_ms)) break;
        delay_ms = delay_ms * 2 > 30000 ? 30000 : delay_ms * 2;
        char e2[256];
        if (db_ensure(&w->src, &r->srcp, e2, sizeof e2) < 0) {
            snprintf(w->err, sizeof w->err, "%s", e2);
            liveness_wait(&w->live, RX_WAIT_SOURCE_AWAY);
        } else if (liveness_waiting(&w->live)) {
            liveness_wait(&w->live, NULL);
        }
    }
    if (liveness_waiting(&w->live)) liveness_wait(&w->live, NULL);
    if (pr >= 0) liveness_beat(&w->live);
    if (pr == -1 && r->stop) pr = r->stop == 1 ? -2 : -1;
    return pr;
}

/* Job j's end in its metadata row, after run_job's outcome rc: a failure
 * (init -> running -> error) kept in the run's bookkeeping with w->err, a
 * job done marked so (a restarting metadata server waited out). The
 * outcome: rc, or -1/-2 when marking it done failed or the runner stopped. */
static int record_job_end(struct worker *w, const struct job *j, int rc) {
    struct reindex_runner *r = w->r;
    if (rc == -1 && w->err[0]) {
        sbuf q = SBUF_INIT;
        char e2[256];
        sbuf_adds(&q, "UPDATE jobs SET status = 'error', finished_at = NOW(3), error_text = ");
        if (db_ensure(&w->meta, &r->metap, e2, sizeof e2) == 0) {
            rx_sq(w->meta, &q, w->err);
            sbuf_printf(&q, " WHERE id = %llu%s", j->id, r->owned);
            rx_exec_retry(w->meta, q.data, e2, sizeof e2);
        }
        sbuf_free(&q);
    }
    if (rc == 0) {
        sbuf q = SBUF_INIT;
        sbuf_printf(&q, "UPDATE jobs SET status = 'done', finished_at = NOW(3), rejected = %llu, "
                        "started_at = COALESCE(started_at, NOW(3)) WHERE id = %llu%s",
                    (unsigned long long)w->rejected, j->id, r->owned);
        if (meta_exec_wait(w, q.data) < 0) rc = r->stop == 1 ? -2 : -1;
        sbuf_free(&q);
    }
    return rc;
}

/* 0 done, -1 failed (w->err), -2 stopped, -3 cancelled */
static int run_job(struct worker *w, struct job *j) {
    struct reindex_runner *r = w->r;
    w->job = j;
    w->rejected = 0;
    size_t start_t = (size_t)strtoul(j->cursor ? j->cursor : "0", NULL, 10);
    const char *tab = j->cursor ? strchr(j->cursor, '\t') : NULL;
    char *after = tab ? xstrdup(tab + 1) : NULL;
    size_t cur_t = start_t;
    int rc = 0;
    w->pages = 0;
    w->end_state = 0; /* read again for this job (table_end, in reindex_page_read.c) */
    const char *p = j->params ? j->params : "";
    while (*p && rc == 0) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char *line = xstrndup(p, len);
        p += len + (nl ? 1 : 0);
        char *t_tab = strchr(line, '\t');
        size_t t = (size_t)strtoul(line, NULL, 10);
        const char *cond = t_tab ? t_tab + 1 : "";
        if (!strncmp(line, RX_UNIT_LINE, strlen(RX_UNIT_LINE)) || !j->ix ||
            t < start_t || t >= j->ix->ntables) {
            free(line);
            continue;
        }
        if (t != cur_t) { /* the cursor's key belongs to the table it was saved in */
            free(after), after = NULL;
            cur_t = t;
        }
        for (;;) {
            if (r->stop) {
                rc = r->stop == 1 ? -2 : -1;
                break;
            }
            int pr = read_page_retrying(w, j, t, cond, &after);
            if (pr == 0) break;
            if (pr < 0) {
                rc = pr;
                break;
            }
            /* this page is built: it goes as soon as the one before it is
             * acknowledged, and that one's cursor is saved while the engine
             * indexes it. Saved first, the metadata server's commit (a
             * binlogged write, often an fsync) was a gap in every job's
             * stream of requests, and the engine idled in it while the
             * other jobs' requests were too few to fill it. The cursor
             * still moves only past acknowledged pages: a crash reads again
             * the page whose cursor was not saved and the one in flight. */
            rc = page_acked(w);
            if (rc == 0) rc = send_page(w);
            if (rc == 0) rc = record_page(w);
            if (rc != 0) break;
            liveness_beat(&w->live);
        }
        free(line);
    }
    rx_snapshot_end(w);
    if (rc == 0) rc = settle_page(w);
    w->sent.on = w->acked.on = false; /* what was not settled is read again after a restart */
    free(w->sent.last);
    free(w->acked.last);
    w->sent.last = w->acked.last = NULL;
    free(after);
    rc = record_job_end(w, j, rc);
    w->job = NULL;
    return rc;
}

static void runner_fail(struct reindex_runner *r, struct worker *w, const char *reason) {
    struct search_conn *k = search_conn_new(r->client);
    char err[512];
    if (db_ensure(&w->meta, &r->metap, err, sizeof err) < 0) {
        search_conn_free(k);
        return;
    }
    bool again = r->lost && !rv_lost_too_often(r, w->meta);
    char why[1400];
    snprintf(why, sizeof why, "%s%s", reason,
             !r->lost ? ""
             : again  ? "; queued again"
                      : "; not queued again: the third build in a row the engine lost writes "
                        "of (run searchsync reindex once it is stable)");
    if (rx_undo_build(r->cfg, k, w->meta, r->alias, r->id, r->version, "failed", why, false,
                      err, sizeof err) == REINDEX_OK) {
        log_error("reindex", "%s: version %u failed and was rolled back: %s", r->alias,
                  r->version, why);
        MYSQL *src = again ? db_connect(&r->srcp, err, sizeof err) : NULL;
        char reason2[100];
        snprintf(reason2, sizeof reason2, r->lost == 2 ? "again: a page of v%u was acknowledged "
                 "too late" : "again: the engine restarted while v%u was built", r->version);
        struct reindex_request req = {r->alias, r->buckets, r->by_mod, reason2, 0};
        unsigned v = 0;
        if (again && (!src || reindex_request(r->cfg, r->client, k, w->meta, src, &req, &v, err,
                                              sizeof err) != REINDEX_OK))
            log_error("reindex", "%s: not queued again (%s): run searchsync reindex %s",
                      r->alias, err, r->alias);
        db_close(src);
    }
    search_conn_free(k);
}

static void *worker_main(void *arg) {
    struct worker *w = arg;
    struct reindex_runner *r = w->r;
    int rc = 0;
    bool ran = false;
    liveness_start(&w->live);
    for (;;) {
        pthread_mutex_lock(&r->mu);
        struct job *j = NULL;
        while (r->next < r->njobs && !j) {
            if (!r->jobs[r->next].done) j = &r->jobs[r->next];
            r->next++;
        }
        pthread_mutex_unlock(&r->mu);
        if (!j) break;
        if (!rx_slot_take(w)) { /* stopped while it waited: the job is left for the next start */
            rc = r->stop == 1 ? -2 : -1;
            break;
        }
        rc = run_job(w, j);
        rx_slot_give(w);
        ran = true;
        if (rc == -3) r->gone = 1;
        if (rc != 0) break;
        int f = try_finish(w, false);
        /* the metadata server lost in the middle of the switch: once it is
         * back, the switch goes on where the state says (its UPDATE to
         * 'switching' may have gone through unanswered); not a failure */
        for (int again = 0; f < 0 && !r->stop && again < 10 && (!w->meta || db_conn_lost(w->meta));
             again++) {
            log_warn("reindex", "%s v%u: %s; the switch goes on when the metadata server is back",
                     r->alias, r->version, w->err);
            if (!rx_nap_unless(&r->stop, 1000)) break;
            liveness_beat(&w->live);
            f = try_finish(w, true);
        }
        if (f < 0) {
            rc = -1;
            break;
        }
    }
    /* every job was done before: a switch to finish (standalone only: in a
     * cluster a node without jobs left may see another node's switch) */
    if (rc == 0 && !ran && w == &r->w[0] && !r->owned[0]) {
        if (try_finish(w, true) < 0) rc = -1;
    }
    if (rc == -1 && w->err[0] && r->stop != 2)
        log_error("reindex", "%s v%u: %s", r->alias, r->version, w->err);
    if ((rc == -1 && r->stop != 1) || r->stop == 2) {
        char reason[1200];
        if (rc == -1 && r->stop != 2 && w->err[0]) { /* this worker's own failure */
            pthread_mutex_lock(&r->errmu);
            if (!r->why[0]) snprintf(r->why, sizeof r->why, "%s", w->err);
            pthread_mutex_unlock(&r->errmu);
        }
        r->stop = 2;
        pthread_mutex_lock(&r->errmu);
        snprintf(reason, sizeof reason, "%s", r->why[0] ? r->why : "a reindex job failed");
        pthread_mutex_unlock(&r->errmu);
        int unclaimed = 0;
        liveness_beat(&w->live); /* the rollback's steps, bounded as a page's are */
        if (atomic_compare_exchange_strong(&r->failing, &unclaimed, 1)) runner_fail(r, w, reason);
    }
    /* its jobs are done, failed or stopped: an end by design, never a death */
    liveness_end(&w->live, true);
    r->running--;
    return NULL;
}

/* nw workers (r->w allocated for them), each with its connections and its
 * stream on hub, started. 1, or 0 with err (the workers started stop in
 * reindex_runner_free). */
static int start_workers(struct reindex_runner *r, struct deliver_hub *hub, int nw, char *err,
                         size_t errlen) {
    struct deliver_opts o;
    deliver_opts_from_config(&o, r->cfg);
    /* the pages stream on the delivery handed (a daemon's node's), or on one
     * of the build's own: [delivery] helpers bulk requests in flight for all
     * the jobs together. More would only queue at the engine's write threads;
     * a job's next page is read and built meanwhile. Full requests: a page's
     * documents leave in batches of batch_max, the rest once it is closed.
     * A page as one request of page_size documents was tried: with as many
     * jobs as helpers no request then waited at the hub for a helper to
     * free, and on a loaded box builds were as often slower as faster (6
     * paired 500k builds, 2 shared CPUs). */
    if (!hub) hub = r->own_hub = deliver_hub_new(&o, r->client, err, errlen);
    int ok = hub != NULL;
    o.batch_min = o.batch_max;
    o.flush_interval_ms = 1000;
    o.flush_on_txn_end = true;
    o.linger_ms = 0; /* a closed page's rest goes at once */
    o.linger_refresh_percent = 0;
    o.checkpoint = NULL;
    o.dead_letter = reindex_dead_letter;
    for (int i = 0; i < nw && ok; i++) {
        struct worker *w = &r->w[i];
        w->r = r;
        w->snap = -1;
        w->slot = -1;
        o.dead_letter_ud = w;
        w->src = db_connect(&r->srcp, err, errlen);
        w->meta = w->src ? db_connect(&r->metap, err, errlen) : NULL;
        char name[300];
        snprintf(name, sizeof name, "reindex:%s:%u", r->alias, r->version);
        o.ordered_versions = stream_ordered(name); /* I5 asserted at submit */
        w->d = w->meta ? deliver_stream_open(hub, &o, name, DELIVER_BULK, err, errlen) : NULL;
        ok = w->d != NULL;
        if (ok) r->nw++;
    }
    for (int i = 0; ok && i < r->nw; i++) {
        r->running++;
        if (pthread_create(&r->w[i].th, NULL, worker_main, &r->w[i]) != 0) {
            r->running--;
            r->nw = i;
            errf(err, errlen, "cannot start reindex threads");
            ok = 0;
        }
    }
    return ok;
}

struct reindex_runner *reindex_runner_start(const struct ss_config *cfg,
                                            struct search_client *client, struct deliver_hub *hub,
                                            struct mapping_gen *gen, const char *alias,
                                            unsigned version, char *err, size_t errlen) {
    return reindex_runner_start_owned(cfg, client, hub, gen, alias, version, NULL, NULL, err,
                                      errlen);
}

struct reindex_runner *reindex_runner_start_owned(const struct ss_config *cfg,
                                                  struct search_client *client,
                                                  struct deliver_hub *hub,
                                                  struct mapping_gen *gen, const char *alias,
                                                  unsigned version, const char *owner_node,
                                                  const char *session, char *err,
                                                  size_t errlen) {
    struct reindex_runner *r =
        rx_runner_new(cfg, client, gen, alias, version, owner_node, session);
    if (!rx_runner_open(r, err, errlen)) {
        reindex_runner_free(r);
        return NULL;
    }
    int nw = cfg->reindex.parallel_jobs;
    size_t left = 0;
    for (size_t i = 0; i < r->njobs; i++) left += !r->jobs[i].done;
    if ((size_t)nw > left) nw = left ? (int)left : 1;
    r->w = xcalloc((size_t)nw, sizeof *r->w);
    r->wcap = nw;
    int ok = start_workers(r, hub, nw, err, errlen);
    if (!ok) {
        reindex_runner_free(r);
        return NULL;
    }
    rx_health_add(r);
    if (left)
        log_info("reindex", "%s: building version %u: %zu job(s) left, %d at a time", alias,
                 version, left, r->nw);
    else
        log_info("reindex", "%s: version %u: no job of source %s left (the switch is done by "
                 "whichever part ends last)", alias, version, cfg->source.name);
    return r;
}

bool reindex_runner_done(struct reindex_runner *r) { return r->running == 0; }

static void runner_free(struct reindex_runner *r, bool cancelled) {
    if (!r) return;
    rx_health_remove(r); /* its stop is the node's drain, not a stall */
    if (r->stop == 0) r->stop = 1;
    for (int i = 0; i < r->nw; i++) pthread_join(r->w[i].th, NULL);
    if (r->mid_refresh) pthread_join(r->mid_th, NULL);
    /* a build that will not go live (cancelled, failed, its jobs gone):
     * its pages are neither drained nor waited for at the engine (a hung
     * one would hold the caller for its timeout); they complete unreported */
    bool abandon = cancelled || r->stop == 2 || r->gone;
    for (int i = 0; i < r->wcap; i++) {
        struct worker *w = &r->w[i];
        if (w->d && !abandon) deliver_drain(w->d, 5000);
        if (abandon)
            deliver_abandon(w->d);
        else
            deliver_free(w->d);
        w->d = NULL;
        page_free(&w->next);
        rv_tables_clear(&w->rv);
        free(w->end_key);
        db_close(w->src);
        db_close(w->meta);
    }
    free(r->w);
    deliver_hub_free(r->own_hub);
    for (size_t i = 0; i < r->njobs; i++) free(r->jobs[i].params), free(r->jobs[i].cursor);
    free(r->jobs);
    mapping_gen_unref(r->gen);
    db_close(r->errdb);
    pthread_mutex_destroy(&r->mu);
    pthread_mutex_destroy(&r->errmu);
    free(r->alias);
    free(r->owned);
    free(r->phys);
    free(r->id);
    free(r->build_terms);
    free(r);
}

void reindex_runner_free(struct reindex_runner *r) { runner_free(r, false); }
void reindex_runner_cancel_free(struct reindex_runner *r) { runner_free(r, true); }
