/* cluster_jobs: a node's part in the rebalances (see cluster_jobs.h). */
#include "sync/cluster/cluster_jobs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sync/cluster/cluster_delayed.h"
#include "sync/delayed/delayed.h"
#include "jsonw.h"
#include "sync/cluster/leadership.h"
#include "log.h"
#include "sync/mapping/mapping_gen.h"
#include "rebalance/rebalance.h"
#include "rebalance/zk.h"
#include "monotime.h"
#include "sync/reindex/reindex.h"

#define TICK_MS 200        /* at most; a write of the coordinator's znode wakes it */
#define CHECK_MS 250       /* the reader's look for work to rebalance */
#define RETRY_MAX_MS 30000 /* the longest pause after failed rebalances */

/* stop every job at its saved cursor */
static void runs_stop(struct cluster_jobs *cj) {
    for (size_t i = 0; i < cj->nruns; i++) {
        reindex_runner_free(cj->runs[i].r);
        free(cj->runs[i].alias);
    }
    free(cj->runs);
    cj->runs = NULL;
    cj->nruns = 0;
    delayed_worker_free(cj->delayed);
    cj->delayed = NULL;
}

/* the rest of "... WHERE j.source = ": this node's jobs of type (job,
 * index) of session not done yet */
static void mine_in_session(struct cluster_jobs *cj, sbuf *q, const char *type,
                            const char *session) {
    db_quote(cj->meta, q, cj->cfg->source.name, strlen(cj->cfg->source.name));
    sbuf_printf(q, " AND j.type = '%s' AND j.status IN ('init', 'running') AND j.owner_node = ",
                type);
    db_quote(cj->meta, q, cj->lead->node_id, strlen(cj->lead->node_id));
    sbuf_adds(q, " AND j.rebalance_session = ");
    db_quote(cj->meta, q, session, strlen(session));
}

/* The delayed runs' jobs of session given to this node: appended to the
 * entity's jobs (w) and ids, their worker started. 0 (none, or started),
 * -1 not yet (cj->err). */
static int delayed_start(struct cluster_jobs *cj, const char *session, jsonw *w, sbuf *ids,
                         size_t *njobs) {
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT j.id, r.id, j.index_id, j.bucket, j.data_cursor, c.alias, "
                  "COALESCE(r.page, 0), COALESCE(r.max_attempts, 0) FROM jobs j "
                  "JOIN index_configs c ON c.id = j.index_id JOIN delayed_runs r ON r.status = "
                  "'running' AND r.resolved = 1 AND j.params = CONCAT('{\"delayed_run\":', "
                  "r.id, '}') WHERE j.source = ");
    mine_in_session(cj, &q, "job", session);
    sbuf_adds(&q, " ORDER BY r.id, j.id");
    MYSQL_RES *res = db_query(cj->meta, q.data, q.len, cj->err, sizeof cj->err);
    sbuf_free(&q);
    if (!res) return -1;
    struct delayed_job *jobs = NULL;
    size_t n = 0;
    MYSQL_ROW row;
    while ((row = mysql_fetch_row(res))) {
        jobs = xrealloc(jobs, (n + 1) * sizeof *jobs);
        jobs[n++] = (struct delayed_job){strtoull(row[0], NULL, 10), strtoull(row[1], NULL, 10),
                                         strtoull(row[2], NULL, 10),
                                         (unsigned)strtoul(row[3], NULL, 10),
                                         row[4] ? xstrdup(row[4]) : NULL, atoi(row[6]),
                                         atoi(row[7])};
        sbuf_printf(ids, "%s%s", ids->len ? "," : "", row[0]);
        jw_obj_open(w);
        jw_key(w, "id");
        jw_raw(w, row[0], strlen(row[0]));
        jw_key(w, "type");
        jw_str(w, "job");
        jw_key(w, "index");
        jw_str(w, row[5]);
        jw_key(w, "delayed_run");
        jw_raw(w, row[1], strlen(row[1]));
        jw_key(w, "bucket");
        jw_raw(w, row[3], strlen(row[3]));
        jw_obj_close(w);
    }
    mysql_free_result(res);
    *njobs += n;
    if (!n) return 0;
    cj->delayed = delayed_worker_start(cj->cfg, cj->hub, cj->lead->node_id, session, jobs, n,
                                       cj->err, sizeof cj->err);
    if (cj->delayed) return 0;
    for (size_t i = 0; i < n; i++) free(jobs[i].cursor);
    free(jobs);
    return -1;
}

/* The mapping as stored, checked against the source: the generation the
 * jobs' pages are built from. A build whose index config was edited since
 * it started is cancelled and queued again by the reader
 * (builds_mapping_changed), so the stored one is the build's. */
static struct mapping_gen *load_gen(struct cluster_jobs *cj) {
    struct mapping m = {0};
    db_params sp = db_params_source(cj->cfg);
    MYSQL *src = db_connect(&sp, cj->err, sizeof cj->err);
    int rc = src ? mapping_db_load_for(cj->meta, config_mapping_name(cj->cfg),
                                       cj->cfg->source.name, &m, cj->err, sizeof cj->err)
                 : -1;
    if (rc == 0 && mapping_check_source(src, &m, cj->err, sizeof cj->err) != 0) rc = -1;
    db_close(src);
    if (rc < 0) {
        mapping_free(&m);
        return NULL;
    }
    return mapping_gen_new(&m);
}

/* INIT of session: run this node's jobs of it. 0 started (or none), -1 not
 * yet (cj->err; tried again at the next tick). */
static int runs_start(struct cluster_jobs *cj, const char *session) {
    if (db_ensure(&cj->meta, &cj->metap, cj->err, sizeof cj->err) < 0) return -1;
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT c.alias, j.version, j.id, j.bucket FROM jobs j JOIN index_configs c ON "
                  "c.id = j.index_id WHERE j.source = ");
    mine_in_session(cj, &q, "index", session);
    sbuf_adds(&q, " ORDER BY c.alias, j.version, j.bucket");
    MYSQL_RES *res = db_query(cj->meta, q.data, q.len, cj->err, sizeof cj->err);
    sbuf_free(&q);
    if (!res) return -1;
    sbuf jobs = SBUF_INIT, ids = SBUF_INIT;
    jsonw w;
    jw_init(&w, &jobs);
    jw_arr_open(&w);
    struct { char *alias; unsigned version; } *want = NULL;
    size_t nwant = 0, njobs = 0;
    MYSQL_ROW row;
    while ((row = mysql_fetch_row(res))) {
        unsigned v = (unsigned)strtoul(row[1], NULL, 10);
        if (!nwant || strcmp(want[nwant - 1].alias, row[0]) || want[nwant - 1].version != v) {
            want = xrealloc(want, (nwant + 1) * sizeof *want);
            want[nwant].alias = xstrdup(row[0]);
            want[nwant++].version = v;
        }
        sbuf_printf(&ids, "%s%s", ids.len ? "," : "", row[2]);
        jw_obj_open(&w);
        jw_key(&w, "id");
        jw_raw(&w, row[2], strlen(row[2]));
        jw_key(&w, "type");
        jw_str(&w, "index");
        jw_key(&w, "index");
        jw_str(&w, row[0]);
        jw_key(&w, "version");
        jw_uint(&w, v);
        jw_key(&w, "bucket");
        jw_raw(&w, row[3], strlen(row[3]));
        jw_obj_close(&w);
        njobs++;
    }
    mysql_free_result(res);
    int rc = delayed_start(cj, session, &w, &ids, &njobs);
    jw_arr_close(&w);
    struct mapping_gen *gen = nwant ? load_gen(cj) : NULL;
    if (nwant && !gen) rc = -1;
    for (size_t i = 0; rc == 0 && i < nwant; i++) {
        struct reindex_runner *r =
            reindex_runner_start_owned(cj->cfg, cj->client, cj->hub, gen, want[i].alias,
                                       want[i].version, cj->lead->node_id, session, cj->err,
                                       sizeof cj->err);
        if (!r) {
            rc = -1;
            break;
        }
        cj->runs = xrealloc(cj->runs, (cj->nruns + 1) * sizeof *cj->runs);
        cj->runs[cj->nruns++] = (struct cluster_run){xstrdup(want[i].alias), want[i].version, r};
    }
    if (rc < 0) runs_stop(cj); /* all or none: tried again whole */
    mapping_gen_unref(gen);
    for (size_t i = 0; i < nwant; i++) free(want[i].alias);
    free(want);
    if (rc == 0) {
        snprintf(cj->session, sizeof cj->session, "%s", session);
        cj->working = njobs > 0;
        sbuf_reset(&cj->job_ids);
        if (ids.len) sbuf_add(&cj->job_ids, ids.data, ids.len);
        leadership_set_work(cj->lead, "NORMAL", njobs ? "INIT" : "FINISH", session, jobs.data,
                            (int)cj->nruns + (cj->delayed != NULL));
        if (njobs)
            log_info("cluster", "rebalance %s: node %s runs %zu job(s): %s", session,
                     cj->lead->node_id, njobs, jobs.data);
    }
    sbuf_free(&jobs);
    sbuf_free(&ids);
    return rc;
}

/* How many of this node's jobs a later rebalance gave to another node or
 * session (its writes to them were refused: fenced). -1 unknown. */
static long jobs_taken(struct cluster_jobs *cj) {
    if (!cj->job_ids.len || db_ensure(&cj->meta, &cj->metap, cj->err, sizeof cj->err) < 0)
        return -1;
    sbuf q = SBUF_INIT;
    sbuf_printf(&q, "SELECT COUNT(*) FROM jobs WHERE id IN (%.*s) AND (owner_node <> ",
                (int)cj->job_ids.len, cj->job_ids.data);
    db_quote(cj->meta, &q, cj->lead->node_id, strlen(cj->lead->node_id));
    sbuf_adds(&q, " OR owner_node IS NULL OR rebalance_session <> ");
    db_quote(cj->meta, &q, cj->session, strlen(cj->session));
    sbuf_addc(&q, ')');
    char *n = db_scalar(cj->meta, q.data, cj->err, sizeof cj->err);
    sbuf_free(&q);
    long taken = n ? atol(n) : -1;
    free(n);
    return taken;
}

/* runners whose jobs all ended are freed; FINISH once none is left */
static void runs_reap(struct cluster_jobs *cj) {
    for (size_t i = cj->nruns; i-- > 0;) {
        if (!reindex_runner_done(cj->runs[i].r)) continue;
        reindex_runner_free(cj->runs[i].r);
        free(cj->runs[i].alias);
        cj->runs[i] = cj->runs[--cj->nruns];
    }
    if (cj->delayed && delayed_worker_done(cj->delayed)) {
        delayed_worker_free(cj->delayed);
        cj->delayed = NULL;
    }
    if (cj->working && !cj->nruns && !cj->delayed) {
        cj->working = false;
        leadership_set_work(cj->lead, "NORMAL", "FINISH", cj->session, NULL, 0);
        long taken = jobs_taken(cj);
        if (taken > 0)
            log_warn("cluster", "rebalance %s: node %s stopped: %ld of its jobs were given to "
                     "other nodes by a later rebalance (its writes to them were refused)",
                     cj->session, cj->lead->node_id, taken);
        else
            log_info("cluster", "rebalance %s: node %s finished its jobs", cj->session,
                     cj->lead->node_id);
    }
}

static void *coord_main(void *arg) {
    struct cluster_jobs *cj = arg;
    struct job_assign_ctx ctx = {.source = cj->cfg->source.name, .metap = cj->metap};
    char err[1024];
    int to = cj->cfg->cluster.session_timeout_ms * 2;
    int rc = rebalance_coordinate(cj->lead->zk, cj->cfg->cluster.name, cj->cfg->source.name,
                                  cj->lead->node_id, to > 10000 ? to : 10000, &cj->stop,
                                  job_assign, &ctx, NULL, err, sizeof err);
    db_close(ctx.meta);
    if (rc < 0) {
        cj->retry_ms = cj->retry_ms ? cj->retry_ms * 2 : 1000;
        if (cj->retry_ms > RETRY_MAX_MS) cj->retry_ms = RETRY_MAX_MS;
        cj->retry_at_ms = mono_ms() + cj->retry_ms;
        log_warn("cluster", "rebalance of source %s failed: %s (tried again in %lld ms)",
                 cj->cfg->source.name, err, (long long)cj->retry_ms);
    } else {
        cj->retry_ms = 0;
    }
    atomic_store(&cj->coord_running, false);
    return NULL;
}

static void coord_start(struct cluster_jobs *cj) {
    if (cj->coord_joinable) pthread_join(cj->coord_th, NULL);
    cj->coord_joinable = false;
    atomic_store(&cj->coord_running, true);
    if (pthread_create(&cj->coord_th, NULL, coord_main, cj) != 0) {
        atomic_store(&cj->coord_running, false);
        log_warn("cluster", "the rebalance thread could not start: tried again");
        return;
    }
    cj->coord_joinable = true;
}

/* The reader's look: does the work need a rebalance? Jobs of running builds
 * that no live node owns under the current session, or a node of the
 * source that joined (the same for two looks in a row: nodes starting
 * together are rebalanced once) while jobs are left. */
static bool needs_rebalance(struct cluster_jobs *cj, const struct rebalance_state *st) {
    struct rebalance_node *rn = NULL;
    size_t n = 0;
    char err[512];
    if (rebalance_nodes(cj->lead->zk, cj->cfg->cluster.name, cj->cfg->source.name, &rn, &n, err,
                        sizeof err) < 0)
        return false;
    sbuf live = SBUF_INIT;
    for (size_t i = 0; i < n; i++) sbuf_printf(&live, "%s\n", rn[i].id);
    bool stable = cj->live_prev.len == live.len &&
                  (!live.len || !memcmp(cj->live_prev.data, live.data, live.len));
    sbuf_reset(&cj->live_prev);
    if (live.len) sbuf_add(&cj->live_prev, live.data, live.len);
    bool need = false;
    if (db_ensure(&cj->meta, &cj->metap, cj->err, sizeof cj->err) == 0) {
        sbuf q = SBUF_INIT;
        sbuf_adds(&q, "SELECT j.owner_node, j.rebalance_session FROM jobs j JOIN index_configs c "
                      "ON c.id = j.index_id AND c.state = 'changing' AND c.building_version = "
                      "j.version JOIN reindex_parts v ON v.index_id = j.index_id AND v.version "
                      "= j.version AND v.source = j.source WHERE j.source = ");
        db_quote(cj->meta, &q, cj->cfg->source.name, strlen(cj->cfg->source.name));
        sbuf_adds(&q, " AND j.type = 'index' AND j.status IN ('init', 'running') AND "
                      "v.start_position IS NOT NULL UNION SELECT j.owner_node, "
                      "j.rebalance_session FROM jobs j JOIN delayed_runs r ON r.status = "
                      "'running' AND r.resolved = 1 AND j.params = CONCAT('{\"delayed_run\":', "
                      "r.id, '}') WHERE j.source = ");
        db_quote(cj->meta, &q, cj->cfg->source.name, strlen(cj->cfg->source.name));
        sbuf_adds(&q, " AND j.type = 'job' AND j.status IN ('init', 'running')");
        MYSQL_RES *res = db_query(cj->meta, q.data, q.len, cj->err, sizeof cj->err);
        sbuf_free(&q);
        bool any = false;
        MYSQL_ROW row;
        while (res && (row = mysql_fetch_row(res))) {
            any = true;
            bool owner_live = false;
            for (size_t i = 0; row[0] && i < n; i++) owner_live |= !strcmp(rn[i].id, row[0]);
            if (!owner_live || !row[1] || strcmp(row[1], st->session)) need = true;
        }
        if (res) mysql_free_result(res);
        for (size_t i = 0; any && !need && stable && i < n; i++)
            if (!rebalance_state_has(st, rn[i].id)) need = true; /* joined */
    }
    sbuf_free(&live);
    free(rn);
    return need;
}

/* A switch left halfway (its node died between the last job and the alias
 * moved: the state stays 'switching' with every job done) is finished by
 * the reader once it has been left for STUCK_SWITCH_S: a runner without
 * jobs resumes it where the state says (sync/reindex/reindex_version.c). Not
 * sooner: a switch under way on another node (a flush of a large version)
 * must not be run twice at once. */
#define STUCK_SWITCH_S 60
static void resume_stuck_switches(struct cluster_jobs *cj) {
    if (db_ensure(&cj->meta, &cj->metap, cj->err, sizeof cj->err) < 0) return;
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT c.alias, c.building_version FROM index_configs c WHERE c.source = ");
    db_quote(cj->meta, &q, config_mapping_name(cj->cfg), strlen(config_mapping_name(cj->cfg)));
    sbuf_printf(&q, " AND c.state = 'switching' AND c.updated_at < NOW(3) - INTERVAL %d SECOND "
                    "AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.index_id = c.id AND j.version "
                    "= c.building_version AND j.type = 'index' AND j.status <> 'done')",
                STUCK_SWITCH_S);
    MYSQL_RES *res = db_query(cj->meta, q.data, q.len, cj->err, sizeof cj->err);
    sbuf_free(&q);
    MYSQL_ROW row;
    while (res && (row = mysql_fetch_row(res))) {
        unsigned v = (unsigned)strtoul(row[1], NULL, 10);
        bool running = false;
        for (size_t i = 0; i < cj->nruns; i++)
            running |= !strcmp(cj->runs[i].alias, row[0]) && cj->runs[i].version == v;
        if (running) continue;
        struct mapping_gen *gen = load_gen(cj);
        struct reindex_runner *r =
            gen ? reindex_runner_start(cj->cfg, cj->client, cj->hub, gen, row[0], v, cj->err,
                                       sizeof cj->err)
                : NULL;
        mapping_gen_unref(gen);
        if (!r) continue;
        log_warn("cluster", "%s: the switch to version %u was left halfway for %d s (the node "
                 "doing it went?): node %s finishes it", row[0], v, STUCK_SWITCH_S,
                 cj->lead->node_id);
        cj->runs = xrealloc(cj->runs, (cj->nruns + 1) * sizeof *cj->runs);
        cj->runs[cj->nruns++] = (struct cluster_run){xstrdup(row[0]), v, r};
    }
    if (res) mysql_free_result(res);
}

/* A delayed run whose last job ended on a node that died before settling
 * it: settled by the reader (delayed_run_finish: once, whoever comes
 * first). */
static void finish_delayed_runs(struct cluster_jobs *cj) {
    if (db_ensure(&cj->meta, &cj->metap, cj->err, sizeof cj->err) < 0) return;
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT r.id, COALESCE(r.max_attempts, 3) FROM delayed_runs r WHERE "
                  "r.source = ");
    db_quote(cj->meta, &q, cj->cfg->source.name, strlen(cj->cfg->source.name));
    sbuf_adds(&q, " AND r.status = 'running' AND r.resolved = 1 AND NOT EXISTS (SELECT 1 FROM "
                  "jobs j WHERE j.type = 'job' AND j.params = CONCAT('{\"delayed_run\":', "
                  "r.id, '}') AND j.status IN ('init', 'running'))");
    MYSQL_RES *res = db_query(cj->meta, q.data, q.len, cj->err, sizeof cj->err);
    sbuf_free(&q);
    unsigned long long *ids = NULL;
    int *attempts = NULL; /* each run's --max-attempts */
    size_t n = 0;
    MYSQL_ROW row;
    while (res && (row = mysql_fetch_row(res))) {
        ids = xrealloc(ids, (n + 1) * sizeof *ids);
        attempts = xrealloc(attempts, (n + 1) * sizeof *attempts);
        ids[n] = strtoull(row[0], NULL, 10);
        attempts[n++] = atoi(row[1]) > 0 ? atoi(row[1]) : 3;
    }
    if (res) mysql_free_result(res);
    for (size_t i = 0; i < n; i++) {
        char err[512];
        int rc = delayed_run_finish(cj->meta, cj->cfg->source.name, cj->lead->node_id, ids[i],
                                    attempts[i], err, sizeof err);
        if (rc < 0) log_warn("delayed", "run %llu: not settled: %s", ids[i], err);
        else if (rc > 0)
            log_info("delayed", "run %llu: every job ended: settled by node %s (the reader)",
                     ids[i], cj->lead->node_id);
    }
    free(ids);
    free(attempts);
}

/* the coordinator's znode changed (the client's thread): wake the tick */
static void state_watch(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
    (void)zh, (void)type, (void)state, (void)path;
    struct cluster_jobs *cj = ctx;
    pthread_mutex_lock(&cj->wake_mu);
    cj->woken = true;
    pthread_cond_signal(&cj->wake_cv);
    pthread_mutex_unlock(&cj->wake_mu);
}

/* TICK_MS, or less when woken */
static void tick_wait(struct cluster_jobs *cj) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_nsec += TICK_MS * 1000000L;
    if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    pthread_mutex_lock(&cj->wake_mu);
    while (!cj->woken && !cj->stop)
        if (pthread_cond_timedwait(&cj->wake_cv, &cj->wake_mu, &ts) != 0) break;
    cj->woken = false;
    pthread_mutex_unlock(&cj->wake_mu);
}

static void *cluster_main(void *arg) {
    struct cluster_jobs *cj = arg;
    bool lost_said = false;
    while (!cj->stop) {
        liveness_beat(&cj->live);
        struct zk *z = cj->lead->zk; /* (a new one after a standby registered again) */
        if (!zk_usable(z)) { /* whatever it held may be another's now */
            liveness_wait(&cj->live, "ZooKeeper cannot be reached");
            if (!lost_said && cj->nruns)
                log_warn("cluster", "node %s lost its ZooKeeper session: its jobs stop (they "
                         "resume from their cursors where the next rebalance puts them)",
                         cj->lead->node_id);
            lost_said = true;
            runs_stop(cj);
            cj->working = false;
            sleep_ms(TICK_MS);
            continue;
        }
        lost_said = false;
        liveness_wait(&cj->live, NULL);
        struct rebalance_state st;
        char err[512];
        int got = rebalance_state_read(z, cj->cfg->cluster.name, cj->cfg->source.name, &st,
                                       state_watch, cj, err, sizeof err);
        if (got < 0) log_debug("cluster", "%s", err);
        if (got == 1 && !strcmp(st.phase, "CLEAN") && strcmp(st.session, cj->clean_seen)) {
            snprintf(cj->clean_seen, sizeof cj->clean_seen, "%s", st.session);
            leadership_set_work(cj->lead, "REBALANCING", "CLEAN", st.session, NULL,
                                (int)cj->nruns);
            if (cj->nruns)
                log_info("cluster", "rebalance %s: node %s stops its jobs at their cursors",
                         st.session, cj->lead->node_id);
            runs_stop(cj);
            cj->working = false;
            leadership_set_work(cj->lead, "REBALANCING", "CLEAN_OK", st.session, NULL, 0);
        } else if (got == 1 && !strcmp(st.phase, "INIT") &&
                   (strcmp(st.session, cj->init_seen) || cj->init_pending)) {
            if (strcmp(st.session, cj->session)) runs_stop(cj); /* another session's */
            snprintf(cj->init_seen, sizeof cj->init_seen, "%s", st.session);
            cj->init_pending = runs_start(cj, st.session) < 0;
            if (cj->init_pending) log_debug("cluster", "jobs not started yet: %s", cj->err);
        }
        runs_reap(cj);
        int64_t now = mono_ms();
        if (!atomic_load(&cj->coord_running) && now >= cj->retry_at_ms) {
            bool asked = atomic_exchange(&cj->requested, false);
            bool leads = atomic_load(&cj->lead->fence) != 0;
            if (asked) {
                coord_start(cj);
            } else if (leads && now >= cj->next_check_ms) {
                cj->next_check_ms = now + CHECK_MS;
                struct rebalance_state none = {0};
                if (needs_rebalance(cj, got == 1 ? &st : &none)) coord_start(cj);
                else resume_stuck_switches(cj), finish_delayed_runs(cj);
            }
        }
        if (got == 1) rebalance_state_free(&st);
        tick_wait(cj);
    }
    runs_stop(cj);
    liveness_end(&cj->live, true); /* it returns only when stopped */
    return NULL;
}

int cluster_jobs_start(struct cluster_jobs *cj, const struct ss_config *cfg,
                       struct search_client *client, struct deliver_hub *hub,
                       struct leadership *lead) {
    memset(cj, 0, sizeof *cj);
    if (!lead->zk) return 0;
    cj->cfg = cfg;
    cj->client = client;
    cj->hub = hub;
    cj->lead = lead;
    cj->metap = db_params_metadata(cfg);
    cj->metap.database = cfg->metadata.database;
    pthread_mutex_init(&cj->wake_mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&cj->wake_cv, &ca);
    pthread_condattr_destroy(&ca);
    sbuf_init(&cj->live_prev);
    sbuf_init(&cj->job_ids);
    liveness_start(&cj->live);
    if (pthread_create(&cj->th, NULL, cluster_main, cj) != 0) {
        snprintf(cj->err, sizeof cj->err, "the cluster jobs thread could not start");
        return -1;
    }
    cj->started = true;
    return 0;
}

void cluster_jobs_request(struct cluster_jobs *cj) {
    if (cj && cj->started) atomic_store(&cj->requested, true);
}

void cluster_jobs_stop(struct cluster_jobs *cj) {
    if (!cj || !cj->started) return;
    pthread_mutex_lock(&cj->wake_mu);
    cj->stop = 1;
    pthread_cond_signal(&cj->wake_cv);
    pthread_mutex_unlock(&cj->wake_mu);
    pthread_join(cj->th, NULL);
    if (cj->coord_joinable) pthread_join(cj->coord_th, NULL);
    cj->coord_joinable = false;
    db_close(cj->meta);
    cj->meta = NULL;
    sbuf_free(&cj->live_prev);
    sbuf_free(&cj->job_ids);
    /* (wake_mu and wake_cv stay: a watch set on the session may still fire
     * until leadership_free closes it) */
    cj->started = false;
}

bool cluster_jobs_healthy(struct cluster_jobs *cj, int64_t bound_ms, char *why, size_t whylen) {
    if (!cj || !cj->started) return true;
    int64_t now = mono_ms();
    if (!liveness_check(&cj->live, "cluster jobs", now, bound_ms, why, whylen)) return false;
    /* the session handle is replaced, never freed, while the node runs */
    struct zk *z = cj->lead->zk;
    int64_t seen = atomic_load(&cj->expired_seen_ms);
    if (!z || !zk_expired(z)) {
        if (seen) atomic_store(&cj->expired_seen_ms, 0);
        return true;
    }
    if (!seen) atomic_store(&cj->expired_seen_ms, seen = now);
    if (now - seen <= bound_ms) return true;
    snprintf(why, whylen, "this node's ZooKeeper session expired more than %lld ms ago and "
             "was not replaced (a standby registers again, a reader stops)",
             (long long)bound_ms);
    return false;
}
