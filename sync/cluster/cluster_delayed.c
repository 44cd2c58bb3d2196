/* cluster_delayed: a node's delayed-run jobs (see cluster_delayed.h). */
#include "sync/cluster/cluster_delayed.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exit_codes.h"
#include "log.h"
#include "monotime.h"
#include "sync/pipeline/producer.h"

#define MAX_ATTEMPTS 3 /* a snapshot failing this often stays in error (as delayed-run's default) */

struct delayed_worker {
    pthread_t th;
    struct producer pr;
    unsigned long long *index_ids;
    char node[256], session[32];
    struct delayed_job *jobs;
    size_t njobs;
    struct delayed_opts o;
    bool test_page; /* SEARCHSYNC_TEST_DELAYED_PAGE set it */
    atomic_bool stop, done;
};

static bool asked_stop(void *ud) {
    struct delayed_worker *w = ud;
    return atomic_load(&w->stop);
}

/* Sleep ms, in slices, unless asked to stop: false when asked. */
static bool nap(struct delayed_worker *w, long ms) {
    for (long t = 0; t < ms && !atomic_load(&w->stop); t += 100) sleep_ms(100);
    return !atomic_load(&w->stop);
}

/* The source's server went away under job j (delayed_job_run's 3): wait
 * until it answers again (and the metadata server, often the same one),
 * then j's cursor as saved. The node keeps the job meanwhile: it is its
 * own under the current session, so no rebalance would hand it out again
 * and a run is only settled once each of its jobs ended; if the node
 * stops or a rebalance comes first, the job is unfinished with its
 * cursor and the rebalance hands it out. 1 run it again, 0 not ours any
 * more (taken by a later rebalance), -1 asked to stop. */
static int source_wait(struct delayed_worker *w, struct delayed_job *j, const char *why) {
    struct pipeline *p = &w->pr.p;
    log_warn("delayed", "run %llu: job %llu (bucket %u) on node %s: the server of source %s went "
             "away (%s): the job waits at its last acknowledged page, not counted as an "
             "attempt, and node %s goes on with it once the server answers", j->run, j->id,
             j->bucket, w->node, p->cfg->source.name, why, w->node);
    long pause = 500;
    char err[1024] = "";
    for (int tries = 1;; tries++) {
        if (!nap(w, pause)) return -1;
        if (db_ensure(&p->src, &p->srcp, err, sizeof err) == 0 &&
            db_ensure(&p->meta, &p->metap, err, sizeof err) == 0) {
            int got = delayed_job_reload(p->meta, j, w->node, w->session, err, sizeof err);
            if (got > 0)
                log_info("delayed", "run %llu: job %llu (bucket %u): the server of source %s "
                         "answers again: node %s goes on from the job's cursor", j->run, j->id,
                         j->bucket, p->cfg->source.name, w->node);
            if (got >= 0) return got;
        }
        if (tries % 20 == 0) /* (said again every 20 tries: 100 s apart at the longest pause) */
            log_warn("delayed", "run %llu: job %llu still waits for the server of source %s: %s",
                     j->run, j->id, p->cfg->source.name, err);
        if (pause < 5000) pause *= 2;
    }
}

static void *worker_main(void *arg) {
    struct delayed_worker *w = arg;
    struct pipeline *p = &w->pr.p;
    struct delayed_stats st;
    memset(&st, 0, sizeof st);
    size_t done = 0, taken = 0, failed = 0;
    for (size_t i = 0; i < w->njobs && !atomic_load(&w->stop); i++) {
        struct delayed_job *j = &w->jobs[i];
        char err[1024] = "";
        /* the run's own --page and --max-attempts (a test's page wins) */
        struct delayed_opts o = w->o;
        if (j->page > 0 && !w->test_page) o.page = j->page;
        if (j->max_attempts > 0) o.max_attempts = j->max_attempts;
        int rc;
        for (;;) { /* the source going away: the same job again once it is back */
            rc = delayed_job_run(p, w->index_ids, &o, j, w->node, w->session, &st, err,
                                 sizeof err);
            if (rc != 3) break;
            int again = source_wait(w, j, err);
            if (again <= 0) {
                rc = again < 0 ? 1 : 2;
                break;
            }
        }
        if (rc == 1) break; /* stopped at its cursor: a rebalance moves it on */
        if (rc == 2) {
            taken++;
            log_warn("cluster", "rebalance %s: delayed run %llu, job %llu (bucket %u) was given "
                     "to another node by a later rebalance: node %s stops it", w->session,
                     j->run, j->id, j->bucket, w->node);
            continue;
        }
        if (rc < 0) {
            failed++;
            log_error("delayed", "run %llu: job %llu (bucket %u) failed on node %s: %s (the "
                      "run's snapshots are tried again by the next run)", j->run, j->id,
                      j->bucket, w->node, err);
        } else {
            done++;
        }
        /* the last job of its run ended here: the run is settled, once */
        if (delayed_run_finish(p->meta, p->cfg->source.name, w->node, j->run, o.max_attempts,
                               err, sizeof err) < 0)
            log_warn("delayed", "run %llu: not settled yet (%s): the reader settles it at its "
                     "next look", j->run, err);
    }
    if (p->d) deliver_drain(p->d, p->cfg->delivery.drain_timeout_ms);
    log_info("delayed", "node %s: %zu delayed job(s) done, %zu failed, %zu taken by a later "
             "rebalance; %llu document(s) rebuilt, %llu deleted, %llu stale", w->node, done,
             failed, taken, st.docs, st.deletes, st.stale);
    atomic_store(&w->done, true);
    return NULL;
}

struct delayed_worker *delayed_worker_start(const struct ss_config *cfg,
                                            struct deliver_hub *hub, const char *node,
                                            const char *session, struct delayed_job *jobs,
                                            size_t n, char *err, size_t errlen) {
    struct delayed_worker *w = xcalloc(1, sizeof *w);
    struct producer_opts po = {.engine = true, .flush_interval_ms = 5, .stream = "delayed",
                               .hub = hub};
    if (producer_open(&w->pr, cfg, &po) != EXIT_OK) {
        errf(err, errlen, "delayed-run jobs: %s", w->pr.err);
        producer_close(&w->pr);
        free(w);
        return NULL;
    }
    w->index_ids = delayed_index_ids(w->pr.p.meta, config_mapping_name(cfg), &w->pr.m, err, errlen);
    if (!w->index_ids) {
        producer_close(&w->pr);
        free(w);
        return NULL;
    }
    snprintf(w->node, sizeof w->node, "%s", node);
    snprintf(w->session, sizeof w->session, "%s", session);
    w->jobs = jobs;
    w->njobs = n;
    w->o = (struct delayed_opts){.buckets = 1, .page = 5000, .max_attempts = MAX_ATTEMPTS,
                                 .stopping = asked_stop, .stopping_ud = w, .cluster = true};
    /* tests only: small pages, held at each page's position */
    const char *page = getenv("SEARCHSYNC_TEST_DELAYED_PAGE");
    if (page && atoi(page) > 0) w->o.page = atoi(page), w->test_page = true;
    const char *pause = getenv("SEARCHSYNC_TEST_DELAYED_PAUSE_MS");
    if (pause) w->o.pause_ms = atoi(pause);
    if (pthread_create(&w->th, NULL, worker_main, w) != 0) {
        errf(err, errlen, "delayed-run jobs: the thread could not start");
        free(w->index_ids);
        producer_close(&w->pr);
        free(w);
        return NULL;
    }
    return w;
}

bool delayed_worker_done(struct delayed_worker *w) { return atomic_load(&w->done); }

void delayed_worker_free(struct delayed_worker *w) {
    if (!w) return;
    atomic_store(&w->stop, true);
    pthread_join(w->th, NULL);
    for (size_t i = 0; i < w->njobs; i++) free(w->jobs[i].cursor);
    free(w->jobs);
    free(w->index_ids);
    producer_close(&w->pr);
    free(w);
}
