/* delayed_run: one pass of the delayed run (design in sync/delayed/delayed.h): the
 * lock, the runs and their snapshots, the jobs and the pages they build
 * through the pipeline; the snapshots are resolved into ids and jobs in
 * delayed_resolve.c.
 *
 * At most one run works per source and metadata schema at a time
 * (GET_LOCK; a second one started meanwhile finds it held and does
 * nothing). A run whose process died keeps status 'running' with its
 * snapshots, ids and jobs; the next holder of the lock resumes it where its
 * jobs' cursors stand, before it claims anything new. So a document is
 * refreshed at most once per run, and at most the last unacknowledged page
 * of a job twice after a crash.
 *
 * Versions: each page's documents are written with the version of the
 * binlog position read before their rows are (as resync does):
 * the rows hold every change up to that position, and a live change made
 * after it carries a greater version, so whichever reaches the engine
 * first, the live value stays (the engine refuses the older version). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "exit_codes.h"
#include "sync/delayed/delayed.h"
#include "jsonw.h"
#include "log.h"
#include "sync/pipeline/pipeline.h"

#include "sync/delayed/delayed_run_int.h"
#include "sync/mapping/mapping_shard.h"

/* ---------- one run ---------- */

static void sync_log(struct run *R, const char *event, const char *detail) {
    sbuf q = SBUF_INIT;
    char e[256];
    sbuf_adds(&q, "INSERT INTO sync_log (source, index_id, event, detail, node) VALUES (");
    qs(R->meta, &q, R->source);
    sbuf_adds(&q, ", NULL, ");
    qs(R->meta, &q, event);
    sbuf_adds(&q, ", ");
    qs(R->meta, &q, detail);
    sbuf_adds(&q, ", ");
    qs(R->meta, &q, R->node);
    sbuf_addc(&q, ')');
    if (db_exec(R->meta, q.data, e, sizeof e) < 0) log_warn("delayed", "sync_log not written: %s", e);
    sbuf_free(&q);
}

/* Resolve (unless done before a crash), build every job not done, settle
 * the snapshots and the run's row. 0 done, 1 failed (snapshots back to
 * init or in error), -1 the metadata or source failed. */
/* ---------- the bucket jobs ---------- */

struct job_ref {
    unsigned long long id, index_id;
    unsigned bucket;
    char *cursor;
};

/* Run every job in turn; true when asked to stop midway. One after another
 * on purpose: on the 2-core box of the benchmark, jobs run at once on
 * pipelines of their own made the run slower (2,951 against 3,720 products/s
 * for 100k products) and held the binlog reader back (worst lag 1.9 s
 * against 0.4 s): its pages are already built while the engine takes the
 * previous ones (PAGES_IN_FLIGHT). docs/benchmarks.md, "Delayed runs". */
static bool run_jobs(struct run *R, struct job_ref *jobs, size_t nj, char *failure,
                     size_t failure_len) {
    bool stopped = false;
    for (size_t i = 0; i < nj && !stopped; i++) {
        int jr = delayed_run_job(R, jobs[i].id, jobs[i].index_id, jobs[i].bucket, jobs[i].cursor);
        if (jr > 0) stopped = true;
        if (jr < 0 && R->source_gone) break; /* the next run goes on with this job and the rest */
        if (jr < 0) {
            if (!*failure) snprintf(failure, failure_len, "%s", R->err);
            log_error("delayed", "run %llu: job %llu (bucket %u) failed: %s", R->id, jobs[i].id,
                      jobs[i].bucket, R->err);
            R->st->errors++;
            if (db_conn_lost(R->meta)) break;
        }
    }
    return stopped;
}

/* The run's row: ids, error_text (why a table was not resolved, kept for a
 * run taken over), docs_written, docs_deleted (every process's pages). */
static int run_row(struct run *R, char *c[4]) {
    char q[128];
    snprintf(q, sizeof q, "SELECT ids, error_text, docs_written, docs_deleted FROM delayed_runs "
                          "WHERE id = %llu", R->id);
    int got = db_row1(R->meta, q, 0, c, 4, R->err, R->errlen);
    if (got == 0) errf(R->err, R->errlen, "delayed run %llu: its row is gone", R->id);
    if (got < 1) db_row_free(c, 4);
    return got == 1 ? 0 : -1;
}

/* A run in a cluster: its jobs go to the cluster's nodes (the reader's next
 * look), and a run without any (nothing to refresh) is settled now. What
 * process returns. */
static int hand_to_cluster(struct run *R) {
    sbuf q = SBUF_INIT;
    sbuf_printf(&q, "SELECT COUNT(*) FROM jobs WHERE type = 'job' AND params = "
                    "'{\"delayed_run\":%llu}'", R->id);
    char *n = scalar(R, &q);
    sbuf_free(&q);
    if (!n) return -1;
    log_info("delayed", "run %llu: %s job(s) handed to the nodes of cluster %s (a rebalance "
             "splits them; progress: searchsync status)", R->id, n, R->p->cfg->cluster.name);
    if (R->out)
        fprintf(R->out, "delayed run %llu: %s job(s) handed to the nodes of cluster %s "
                "(progress: searchsync status)\n", R->id, n, R->p->cfg->cluster.name);
    free(n);
    if (delayed_run_finish(R->meta, R->source, R->node, R->id, R->o->max_attempts, R->err,
                           R->errlen) < 0)
        return -1;
    if (*R->unresolved) snprintf(R->err, R->errlen, "%s", R->unresolved);
    return *R->unresolved ? 1 : 0;
}

/* The run's jobs not done yet, in order, into *jobs (*nj of them; the
 * caller frees them and their cursors). 0, or -1 with R->err. */
static int jobs_left(struct run *R, struct job_ref **jobs, size_t *nj) {
    sbuf q = SBUF_INIT;
    sbuf_printf(&q, "SELECT id, index_id, bucket, data_cursor FROM jobs WHERE type = 'job' AND "
                    "params = '{\"delayed_run\":%llu}' AND status <> 'done' ORDER BY id", R->id);
    MYSQL_RES *res = db_query(R->meta, q.data, q.len, R->err, R->errlen);
    sbuf_free(&q);
    if (!res) return -1;
    size_t n = (size_t)mysql_num_rows(res), j = 0;
    struct job_ref *v = xcalloc(n ? n : 1, sizeof *v);
    MYSQL_ROW row;
    while ((row = mysql_fetch_row(res))) {
        v[j].id = strtoull(row[0], NULL, 10);
        v[j].index_id = strtoull(row[1], NULL, 10);
        v[j].bucket = (unsigned)strtoul(row[2], NULL, 10);
        v[j++].cursor = row[3] ? xstrdup(row[3]) : NULL;
    }
    mysql_free_result(res);
    *jobs = v;
    *nj = n;
    return 0;
}

/* The run's end (failure, or "" when done) and its numbers in its row, its
 * ids deleted, the sync log told; run only while rc is 0 (the sync log
 * always). The outcome: rc, or -1. */
static int record_run(struct run *R, const struct delayed_stats *mine, const char *failure,
                      int rc) {
    sbuf q = SBUF_INIT, js = SBUF_INIT;
    delayed_stats_json(mine, &js);
    sbuf_printf(&q, "UPDATE delayed_runs SET status = '%s', finished_at = NOW(3), "
                    "errors = errors + %llu, stats = ", *failure ? "failed" : "done", mine->errors);
    qs(R->meta, &q, js.data);
    sbuf_adds(&q, ", error_text = ");
    qs(R->meta, &q, *failure ? failure : NULL);
    sbuf_printf(&q, " WHERE id = %llu", R->id);
    if (rc == 0) rc = exec(R, &q);
    sbuf_reset(&q);
    sbuf_printf(&q, "DELETE FROM delayed_run_ids WHERE run_id = %llu", R->id);
    if (rc == 0) rc = exec(R, &q);
    sbuf s = SBUF_INIT;
    sbuf_printf(&s, "{\"run\":%llu,\"status\":\"%s\",\"stats\":%s}", R->id,
                *failure ? "failed" : "done", js.data);
    sync_log(R, "delayed_run", s.data);
    sbuf_free(&s);
    sbuf_free(&js);
    sbuf_free(&q);
    return rc;
}

/* A run that failed before it was settled: -1. When that was its source's
 * server going away, the run is left as it is (running, its snapshots with
 * it, each job at its cursor) and the error says who goes on with it (the
 * command prints it, the daemon's schedule logs it). */
static int left_for_next(struct run *R) {
    if (R->source_gone || source_lost(R)) {
        char why[768];
        snprintf(why, sizeof why, "%s", R->err);
        errf(R->err, R->errlen, "the server of source %s went away during delayed run %llu "
             "(%s): the run stays running with its snapshots, which do not count this as an "
             "attempt, and the next delayed run takes it over from its jobs' cursors once the "
             "server answers", R->source, R->id, why);
    }
    return -1;
}

static int process(struct run *R, bool resolved, unsigned long long nsnap) {
    struct delayed_stats *st = R->st;
    struct delayed_stats before = *st;
    double t0 = now_ms();
    *R->unresolved = 0;
    char *rr[4];
    if ((!resolved && dr_resolve_run(R) < 0) || run_row(R, rr) < 0) return left_for_next(R);
    st->ids += strtoull(rr[0], NULL, 10);
    snprintf(R->unresolved, sizeof R->unresolved, "%s", rr[1] ? rr[1] : "");
    db_row_free(rr, 4);
    double t1 = now_ms();
    st->ms_resolve += t1 - t0;
    if (R->o->cluster) return hand_to_cluster(R);
    struct job_ref *jobs;
    size_t nj;
    if (jobs_left(R, &jobs, &nj) < 0) return -1;
    char failure[1024] = "";
    bool stopped = run_jobs(R, jobs, nj, failure, sizeof failure);
    for (size_t i = 0; i < nj; i++) free(jobs[i].cursor);
    free(jobs);
    double t2 = now_ms();
    st->ms_build += t2 - t1;
    if (R->source_gone) return left_for_next(R); /* its snapshots stay running, with the run */
    if (stopped) { /* its snapshots stay running, with the run: the next run takes over */
        log_info("delayed", "run %llu stopped midway (asked to stop): the next run takes it "
                 "over from its jobs' cursors", R->id);
        return 0;
    }
    int rc = *failure ? dr_snaps_failed(R, NULL, NULL, failure) : dr_snaps_done(R, NULL, NULL, NULL);
    /* a table whose snapshots could not be resolved fails the run too (they
     * are tried again, or left in error: done by resolve_run) */
    if (!*failure && *R->unresolved) snprintf(failure, sizeof failure, "%s", R->unresolved);
    /* the run's numbers: its row, the sync log */
    struct delayed_stats mine = *st;
    for (size_t l = 0; l <= DELAYED_MAX_LEVELS; l++) mine.level_ids[l] -= before.level_ids[l];
    mine.snapshots = nsnap, mine.docs -= before.docs, mine.deletes -= before.deletes;
    mine.errors -= before.errors, mine.stale -= before.stale;
    mine.dead_letters -= before.dead_letters, mine.pages -= before.pages;
    mine.left_error -= before.left_error, mine.retried -= before.retried;
    mine.ms_resolve = t1 - t0, mine.ms_build = t2 - t1, mine.ms_claim = 0;
    if (rc == 0 && (rc = run_row(R, rr)) == 0) { /* its documents: every process's */
        mine.docs = strtoull(rr[2], NULL, 10), mine.deletes = strtoull(rr[3], NULL, 10);
        db_row_free(rr, 4);
    }
    rc = record_run(R, &mine, failure, rc);
    st->ms_finish += now_ms() - t2;
    st->runs++;
    log_info("delayed", "run %llu %s: %llu document(s) rebuilt, %llu deleted, %llu error(s)%s%s",
             R->id, *failure ? "failed" : "done", mine.docs, mine.deletes, mine.errors,
             *failure ? ": " : "", failure);
    if (rc < 0) return -1;
    if (*failure) snprintf(R->err, R->errlen, "%s", failure);
    return *failure ? 1 : 0;
}

/* the tables the --index filter limits the claim to: `AND (db, table) IN (..)` */
static bool filter_tables(struct run *R, sbuf *q) {
    if (R->only < 0) return true;
    const struct mp_index *ix = &R->p->m->indices[R->only];
    int n = 0;
    for (size_t t = 0; t < ix->ntables; t++) {
        if (!ix->tables[t].delay_effect) continue;
        sbuf_adds(q, n++ ? ", (" : " AND (db_name, table_name) IN ((");
        qs(R->meta, q, ix->tables[t].db);
        sbuf_addc(q, ',');
        qs(R->meta, q, ix->tables[t].table);
        sbuf_addc(q, ')');
    }
    if (n) sbuf_addc(q, ')');
    return n > 0;
}

/* A new run holding every init snapshot (of the filter's tables): its id,
 * 0 when there is nothing to claim, -1 on error. */
static long long claim(struct run *R) {
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "INSERT INTO delayed_runs (source, index_alias, node, buckets, page, "
                  "max_attempts) VALUES (");
    qs(R->meta, &q, R->source);
    sbuf_addc(&q, ',');
    qs(R->meta, &q, R->only >= 0 ? R->p->m->indices[R->only].alias : NULL);
    sbuf_addc(&q, ',');
    qs(R->meta, &q, R->node);
    /* page and attempts: what a cluster's nodes run its jobs with */
    sbuf_printf(&q, ", %d, %d, %d)", R->buckets, R->o->page, R->o->max_attempts);
    if (exec(R, &q) < 0) return sbuf_free(&q), -1;
    R->id = mysql_insert_id(R->meta);
    /* an init snapshot whose twin is running (a run that failed to settle
     * it): the running one is taken over below with it */
    sbuf_reset(&q);
    sbuf_adds(&q, "UPDATE change_snapshots SET status = 'init', run_id = NULL WHERE status = "
                  "'running' AND source = ");
    qs(R->meta, &q, R->source);
    sbuf_adds(&q, " AND (run_id IS NULL OR run_id NOT IN (SELECT id FROM delayed_runs WHERE "
                  "status = 'running'))");
    /* (ignored on a collision: such a row is then claimed by the next run) */
    char e[256];
    db_exec(R->meta, q.data, e, sizeof e);
    sbuf_reset(&q);
    sbuf_printf(&q, "UPDATE change_snapshots SET status = 'running', run_id = %llu WHERE "
                    "status = 'init' AND source = ", R->id);
    qs(R->meta, &q, R->source);
    long long n = filter_tables(R, &q) ? exec_rows(R, &q) : 0;
    sbuf_reset(&q);
    if (n > 0) {
        sbuf_printf(&q, "UPDATE delayed_runs SET snapshots = %lld WHERE id = %llu", n, R->id);
        if (exec(R, &q) < 0) n = -1;
        else R->st->snapshots += (unsigned long long)n;
    } else {
        sbuf_printf(&q, "DELETE FROM delayed_runs WHERE id = %llu", R->id);
        char e2[256];
        db_exec(R->meta, q.data, e2, sizeof e2);
    }
    sbuf_free(&q);
    return n < 0 ? -1 : n > 0 ? (long long)R->id : 0;
}

/* ---------- the dry run ---------- */

static int dry_run(struct run *R) {
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT id, db_name, table_name, operation, business_id, status, attach_date, "
                  "attempts FROM change_snapshots WHERE status IN ('init', 'running') AND "
                  "source = ");
    qs(R->meta, &q, R->source);
    if (!filter_tables(R, &q)) sbuf_adds(&q, " AND FALSE");
    sbuf_adds(&q, " ORDER BY db_name, table_name, id LIMIT 1000");
    MYSQL_RES *res = db_query(R->meta, q.data, q.len, R->err, R->errlen);
    sbuf_free(&q);
    if (!res) return -1;
    MYSQL_ROW row;
    struct rt_plan plan = {0};
    int rc = 0;
    unsigned long long nsnap = 0;
    while (rc == 0 && (row = mysql_fetch_row(res))) {
        nsnap++;
        if (!plan.db || strcmp(plan.db, row[1]) || strcmp(plan.table, row[2])) {
            rt_plan_free(&plan);
            rc = rt_plan_build(R->src, R->p->m, R->p->router, row[1], row[2], R->only, &plan,
                               R->err, R->errlen);
            if (rc < 0) break;
            sbuf d = SBUF_INIT;
            rt_plan_describe(&plan, R->p->m, &d);
            fprintf(R->out, "relation top of %s.%s:\n%s", row[1], row[2],
                    d.len ? d.data : "  (no index config reads it)\n");
            sbuf_free(&d);
        }
        strset_clear(&R->dry_one);
        rc = dr_resolve_table(R, &plan, strtoull(row[0], NULL, 10));
        fprintf(R->out, "snapshot %s: %s.%s %s %s (%s, %s, %s attempt(s)) -> %zu document(s)",
                row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7], R->dry_one.n);
        size_t shown = 0;
        for (size_t i = 0; i < R->dry_one.cap && shown < 10; i++) {
            const char *k = R->dry_one.slot[i];
            if (!k) continue;
            const char *key = strrchr(k, '\x1f');
            fprintf(R->out, "%s%s", shown++ ? "," : ": ", key ? key + 1 : k);
        }
        fprintf(R->out, "%s\n", R->dry_one.n > shown ? ",..." : "");
    }
    mysql_free_result(res);
    rt_plan_free(&plan);
    strset_clear(&R->dry_one);
    if (rc < 0) return -1;
    unsigned long long n = R->dry_all.n;
    fprintf(R->out,
            "estimated work: %llu snapshot(s), %llu document(s) to rebuild (each once), %llu "
            "page(s) of %d, in %d bucket(s); nothing was changed (--dry-run)\n",
            nsnap, n, (n + (unsigned)R->o->page - 1) / (unsigned)R->o->page, R->o->page,
            R->buckets);
    strset_clear(&R->dry_all);
    return 0;
}

/* ---------- the pass ---------- */

/* The runs left 'running' by a process that is gone, taken over one after
 * another (the lock is held, so nobody else runs them): resolved again, or
 * from their jobs' cursors. EXIT_OK or EXIT_RUNTIME. */
static int take_over(struct run *R) {
    int rc = EXIT_OK;
    sbuf q = SBUF_INIT;
    for (;;) {
        if (stopping(R)) break;
        sbuf_reset(&q);
        sbuf_adds(&q, "SELECT id, buckets, resolved, index_alias, snapshots FROM delayed_runs WHERE "
                      "status = 'running' AND source = ");
        qs(R->meta, &q, R->source);
        if (R->o->cluster) sbuf_adds(&q, " AND resolved = 0"); /* resolved: the nodes run its jobs */
        sbuf_adds(&q, " ORDER BY id LIMIT 1");
        MYSQL_RES *res = db_query(R->meta, q.data, q.len, R->err, R->errlen);
        if (!res) {
            rc = EXIT_RUNTIME;
            break;
        }
        MYSQL_ROW row = mysql_fetch_row(res);
        if (!row) {
            mysql_free_result(res);
            break;
        }
        R->id = strtoull(row[0], NULL, 10);
        R->buckets = atoi(row[1]);
        bool resolved = row[2][0] == '1';
        unsigned long long nsnap = strtoull(row[4], NULL, 10);
        R->st->snapshots += nsnap;
        R->only = -1;
        for (size_t i = 0; row[3] && i < R->p->m->nindices; i++)
            if (!strcmp(R->p->m->indices[i].alias, row[3])) R->only = (long)i;
        mysql_free_result(res);
        log_info("delayed", "taking over delayed run %llu (its process is gone), %s", R->id,
                 resolved ? "from its jobs' cursors" : "resolving its ids again");
        if (R->out) fprintf(R->out, "taking over delayed run %llu (its process is gone)\n", R->id);
        sbuf_reset(&q);
        sbuf_adds(&q, "UPDATE delayed_runs SET node = ");
        qs(R->meta, &q, R->node);
        sbuf_printf(&q, " WHERE id = %llu", R->id);
        int prc = exec(R, &q) < 0 ? -1 : process(R, resolved, nsnap);
        if (prc < 0) {
            rc = EXIT_RUNTIME;
            break;
        }
        if (prc > 0) rc = EXIT_RUNTIME;
        if (R->st->stopped) break;
    }
    sbuf_free(&q);
    return rc;
}

int delayed_run(struct pipeline *p, const unsigned long long *index_ids,
                const struct delayed_opts *o, struct delayed_stats *st, FILE *out, char *err,
                size_t errlen) {
    struct run R = {.p = p, .meta = p->meta, .src = p->src, .o = o, .st = st,
                    .index_ids = index_ids, .out = out, .err = err, .errlen = errlen,
                    .source = p->cfg->source.name, .buckets = o->buckets, .only = -1};
    char host[128] = "";
    gethostname(host, sizeof host - 1);
    snprintf(R.node, sizeof R.node, "%s", p->cfg->cluster.node_id && *p->cfg->cluster.node_id
                                              ? p->cfg->cluster.node_id
                                              : host);
    snprintf(R.node + strlen(R.node), sizeof R.node - strlen(R.node), ":%d", (int)getpid());
    if (o->alias) {
        for (size_t i = 0; i < p->m->nindices; i++)
            if (!strcmp(p->m->indices[i].alias, o->alias)) R.only = (long)i;
        if (R.only < 0) {
            errf(err, errlen, "source %s has no index config \"%s\"", R.source, o->alias);
            return EXIT_USAGE;
        }
    }
    if (o->dry_run) return dry_run(&R) < 0 ? EXIT_RUNTIME : EXIT_OK;
    /* one run at a time per source and metadata schema */
    double t0 = now_ms();
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT GET_LOCK(CONCAT('searchsync.delayed.', LEFT(SHA1(CONCAT(DATABASE(), "
                  "'.', ");
    qs(R.meta, &q, R.source);
    sbuf_adds(&q, ")), 24)), 0)");
    char *got = scalar(&R, &q);
    sbuf_free(&q);
    if (!got) return EXIT_RUNTIME;
    bool locked = !strcmp(got, "1");
    free(got);
    if (!locked) {
        st->lock_busy = true;
        if (out) /* (the daemon's scheduled run has no out) */
            fprintf(out, "another delayed run of source %s holds the lock: nothing done (its "
                         "progress: searchsync status)\n", R.source);
        return EXIT_OK;
    }
    /* first the runs whose process is gone: we hold the lock, so no one
     * else is running them */
    int rc = take_over(&R);
    sbuf_free(&q);
    /* then the init snapshots, in one new run */
    if (!st->stopped && !R.source_gone && (rc == EXIT_OK || !db_conn_lost(R.meta))) {
        R.buckets = o->buckets;
        R.only = -1;
        if (o->alias)
            for (size_t i = 0; i < p->m->nindices; i++)
                if (!strcmp(p->m->indices[i].alias, o->alias)) R.only = (long)i;
        t0 = now_ms();
        unsigned long long before_claim = st->snapshots;
        long long id = claim(&R);
        unsigned long long claimed = st->snapshots - before_claim;
        st->ms_claim += now_ms() - t0;
        if (id < 0) {
            rc = EXIT_RUNTIME;
        } else if (id > 0) {
            log_info("delayed", "run %llu: %llu snapshot(s) claimed, %d bucket(s)", R.id,
                     st->snapshots, R.buckets);
            int prc = process(&R, false, (unsigned long long)claimed);
            if (prc != 0) rc = EXIT_RUNTIME;
        }
    }
    sbuf_free(&R.stage);
    if (rc == EXIT_OK && st->left_error) rc = EXIT_FOUND;
    if (st->left_error && rc == EXIT_RUNTIME && !db_conn_lost(R.meta)) rc = EXIT_FOUND;
    char e[256];
    db_exec(R.meta, "DO RELEASE_ALL_LOCKS()", e, sizeof e);
    return rc;
}

/* ---------- a run's jobs on the nodes of a cluster ---------- */

int delayed_job_run(struct pipeline *p, const unsigned long long *index_ids,
                    const struct delayed_opts *o, const struct delayed_job *j, const char *owner,
                    const char *session, struct delayed_stats *st, char *err, size_t errlen) {
    struct run R = {.p = p, .meta = p->meta, .src = p->src, .o = o, .st = st,
                    .index_ids = index_ids, .err = err, .errlen = errlen,
                    .source = p->cfg->source.name, .id = j->run, .only = -1};
    snprintf(R.node, sizeof R.node, "%s", owner);
    sbuf own = SBUF_INIT;
    sbuf_adds(&own, " AND owner_node = ");
    qs(R.meta, &own, owner);
    sbuf_adds(&own, " AND rebalance_session = ");
    qs(R.meta, &own, session);
    R.owned = own.data;
    int rc = delayed_run_job(&R, j->id, j->index_id, j->bucket, j->cursor);
    sbuf_free(&own);
    if (R.fenced) return 2;
    if (rc < 0 && R.source_gone) return 3;
    return rc;
}

int delayed_job_reload(MYSQL *meta, struct delayed_job *j, const char *owner,
                       const char *session, char *err, size_t errlen) {
    sbuf q = SBUF_INIT;
    sbuf_printf(&q, "SELECT data_cursor FROM jobs WHERE id = %llu AND status IN ('init', "
                    "'running') AND owner_node = ", j->id);
    db_quote(meta, &q, owner, strlen(owner));
    sbuf_adds(&q, " AND rebalance_session = ");
    db_quote(meta, &q, session, strlen(session));
    char *cursor = NULL;
    int got = db_row1(meta, q.data, q.len, &cursor, 1, err, errlen);
    sbuf_free(&q);
    if (got == 1) {
        free(j->cursor);
        j->cursor = cursor;
    }
    return got;
}

int delayed_run_finish(MYSQL *meta, const char *source, const char *node,
                       unsigned long long run, int max_attempts, char *err, size_t errlen) {
    struct delayed_opts o = {.max_attempts = max_attempts};
    struct delayed_stats st = {0};
    struct run R = {.meta = meta, .o = &o, .st = &st, .err = err, .errlen = errlen,
                    .source = source, .id = run, .only = -1};
    snprintf(R.node, sizeof R.node, "%s", node);
    if (db_exec(meta, "START TRANSACTION", err, errlen) < 0) return -1;
    sbuf q = SBUF_INIT;
    /* the run's row locked: one node settles it, the others find it done */
    sbuf_printf(&q, "SELECT error_text FROM delayed_runs WHERE id = %llu AND status = "
                    "'running' AND resolved = 1 FOR UPDATE", run);
    char *unresolved = NULL; /* a table's snapshots not resolved (process) */
    int got = db_row1(meta, q.data, q.len, &unresolved, 1, err, errlen);
    int rc = got < 0 ? -1 : 0;
    bool go = got == 1;
    MYSQL_RES *res = NULL;
    MYSQL_ROW row = NULL;
    if (go) {
        sbuf_reset(&q);
        sbuf_printf(&q, "SELECT COUNT(*), COALESCE(SUM(status IN ('init', 'running')), 0), "
                        "COALESCE(SUM(docs_written), 0), COALESCE(SUM(status = 'error'), 0), "
                        "MIN(CASE WHEN status = 'error' THEN error_text END) FROM jobs WHERE "
                        "type = 'job' AND params = '{\"delayed_run\":%llu}'", run);
        res = db_query(meta, q.data, q.len, err, errlen);
        row = res ? mysql_fetch_row(res) : NULL;
        if (!row) rc = -1;
        go = row && !strcmp(row[1], "0");
    }
    char failure[1024] = "";
    unsigned long long docs = 0, errors = 0, njobs = 0;
    if (go) {
        njobs = strtoull(row[0], NULL, 10);
        docs = strtoull(row[2], NULL, 10);
        errors = strtoull(row[3], NULL, 10);
        if (errors)
            snprintf(failure, sizeof failure, "%llu job(s) failed: %s", errors,
                     row[4] ? row[4] : "see jobs.error_text");
    }
    if (res) mysql_free_result(res);
    if (go) {
        rc = *failure ? dr_snaps_failed(&R, NULL, NULL, failure) : dr_snaps_done(&R, NULL, NULL, NULL);
        if (!*failure && unresolved) snprintf(failure, sizeof failure, "%s", unresolved);
        sbuf js = SBUF_INIT;
        sbuf_printf(&js, "{\"jobs\":%llu,\"documents_rebuilt\":%llu,\"errors\":%llu,"
                         "\"left_in_error\":%llu,\"retried\":%llu,\"cluster\":true}",
                    njobs, docs, errors, st.left_error, st.retried);
        sbuf_reset(&q);
        /* (docs_written, docs_deleted: added up page by page, page_ack) */
        sbuf_printf(&q, "UPDATE delayed_runs SET status = '%s', finished_at = NOW(3), "
                        "errors = %llu, stats = ", *failure ? "failed" : "done", errors);
        qs(meta, &q, js.data);
        sbuf_adds(&q, ", error_text = ");
        qs(meta, &q, *failure ? failure : NULL);
        sbuf_printf(&q, " WHERE id = %llu", run);
        if (rc == 0) rc = exec(&R, &q);
        sbuf_reset(&q);
        sbuf_printf(&q, "DELETE FROM delayed_run_ids WHERE run_id = %llu", run);
        if (rc == 0) rc = exec(&R, &q);
        sbuf s = SBUF_INIT;
        sbuf_printf(&s, "{\"run\":%llu,\"status\":\"%s\",\"stats\":%s}", run,
                    *failure ? "failed" : "done", js.data);
        if (rc == 0) sync_log(&R, "delayed_run", s.data);
        sbuf_free(&s);
        sbuf_free(&js);
    }
    sbuf_free(&q);
    free(unresolved);
    if (rc == 0 && go) rc = db_exec(meta, "COMMIT", err, errlen);
    else mysql_query(meta, "ROLLBACK");
    if (rc < 0) return -1;
    if (go)
        log_info("delayed", "run %llu %s on node %s: %llu job(s), %llu document(s) rebuilt, "
                 "%llu error(s)%s%s", run, *failure ? "failed" : "done", node, njobs, docs,
                 errors, *failure ? ": " : "", failure);
    return go ? 1 : 0;
}
