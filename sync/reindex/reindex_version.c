/* reindex_version: the version a build writes, in the engine — refreshed
 * beside its jobs, watched for lost writes, switched live behind the alias (the
 * jobs that fill it are sync/reindex/reindex_runner.c's).
 *
 * The mid-build refreshes (rv_mid_refresh_maybe): the version is built with
 * refreshes off, and the switch's refresh writes out everything the engine
 * indexed since its last one, on its refresh thread pool (half the node's
 * CPUs: one thread, shard after shard, on 2 CPUs) while nothing else runs.
 * Once the acknowledged rows pass the first of MID_REFRESH_PCTS of the
 * document tables' estimated rows, a thread refreshes the version beside
 * the jobs, and again at each next mark it finds passed: what they write is
 * written while the engine still indexes, and the switch's refresh has only
 * what came after the last. An index fed by several sources has one build
 * part per source, each counting its own rows: the marks are dealt out over
 * the sources in their listed order (mark m to source m mod n), so the
 * version is refreshed MID_REFRESHES times in all, not that many times per
 * source (each refresh writes every shard's new segment: 4 sources making
 * 3 each cost the engine up to 31% more CPU a document than one source).
 *
 * Lost writes (lost_check): a version is built with its translog written
 * asynchronously (sync/mapping/index_mapping.c), so the engine acknowledges a batch
 * before it is on disk and does not fsync once per request. A node that
 * restarts then loses what it acknowledged in its last seconds, and the
 * jobs' cursors are past it. It also assigns the shard's primary again, with
 * a greater primary term: the terms recorded when the version was created
 * (index_versions.build_terms) are compared with the engine's every
 * LOST_CHECK_MS while the jobs run, and once more at the switch after the
 * settings are restored and the version flushed (from then on everything is
 * on disk). A version whose terms moved is never switched to: it is rolled
 * back and queued again (the runner's runner_fail; not after
 * MAX_LOST_IN_A_ROW such builds in a row).
 *
 * The switch (rv_try_finish): the worker whose job was the last to finish
 * refreshes the version, restores its settings, flushes it, checks its
 * terms, gives it its replicas and moves the alias in one _aliases call,
 * then records it live in one metadata transaction and deletes history
 * beyond history_retention (switch_claim, switch_prepare, switch_alias,
 * switch_record, switch_after: one step each). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json_exact.h"
#include "jsonw.h"
#include "log.h"
#include "monotime.h"
#include "sync/reindex/reindex.h"
#include "sync/reindex/reindex_int.h"
#include "sync/reindex/reindex_runner_int.h"

#define MAX_LOST_IN_A_ROW 3

/* Of the rows: a root table's documents, with their nested parts, are
 * usually the heaviest and read first, so by bytes the engine is further on
 * than by rows, and a refresh must be over before the jobs are (20k demo,
 * 2 shared CPUs, 6 builds each, one refresh: 35-45% 2.14-2.20 s, 50%
 * 2.18-2.34 s, none 2.29-2.58 s). With one at 40%, the switch's refresh of
 * the other 60% of 200k flat rows took 1.6 s of a 12.7 s build (OpenSearch
 * 2.19, 2 shared CPUs), its one refresh thread busy and the write threads
 * idle: later marks leave it the last tenth. */
static const unsigned MID_REFRESH_PCTS[] = {40, 70, 90};
#define MID_REFRESHES (sizeof MID_REFRESH_PCTS / sizeof MID_REFRESH_PCTS[0])

static unsigned long long pct_of_rows(unsigned long long rows, unsigned pct) {
    return rows / 100 * pct + rows % 100 * pct / 100;
}

/* whether mark m is this part's to make (see the top of the file): every
 * mark with one source; with several, m mod n is the part's place among the
 * index config's sources (a source not listed, as a pattern's, makes them) */
static bool mark_mine(const struct reindex_runner *r, size_t m) {
    const struct mp_index *ix = r->ix;
    if (!ix || ix->nsources < 2 || !ix->source) return true;
    for (size_t i = 0; i < ix->nsources; i++)
        if (!strcmp(ix->sources[i], ix->source)) return m % ix->nsources == i;
    return true;
}

/* the first of the marks at or after m that is this part's; MID_REFRESHES: none */
static size_t next_mark(const struct reindex_runner *r, size_t m) {
    while (m < MID_REFRESHES && !mark_mine(r, m)) m++;
    return m;
}

static void *mid_refresh_main(void *arg) {
    struct reindex_runner *r = arg;
    struct search_conn *k = search_conn_new(r->client);
    struct search_resp resp;
    search_resp_init(&resp);
    char path[700];
    snprintf(path, sizeof path, "/%s/_refresh", r->phys);
    for (size_t m = next_mark(r, 0), first = 1; m < MID_REFRESHES;
         m = next_mark(r, m + 1), first = 0) {
        /* the next mark: waited for until the jobs end (the switch
         * refreshes then) or the build stops */
        unsigned long long due = pct_of_rows(r->rows_expected, MID_REFRESH_PCTS[m]);
        while (atomic_load(&r->rows_acked) < due) {
            if (r->running == 0 || r->switcher || !rx_nap_unless(&r->stop, 20)) goto out;
        }
        /* marks the last refresh overtook: skipped */
        for (size_t n = next_mark(r, m + 1);
             n < MID_REFRESHES &&
             atomic_load(&r->rows_acked) >= pct_of_rows(r->rows_expected, MID_REFRESH_PCTS[n]);
             n = next_mark(r, n + 1))
            m = n;
        /* the first: at the rows of the page that passed its mark */
        unsigned long long at = first ? r->mid_at : atomic_load(&r->rows_acked);
        char err[512] = "";
        int64_t t0 = mono_ms();
        int rc = rx_engine(k, "POST", path, NULL, &resp, err, sizeof err);
        if (rc == 0 && resp.status == 200) {
            log_info("reindex", "%s v%u: refreshed at %llu of about %llu rows in %.3f s (%s)",
                     r->alias, r->version, at, r->rows_expected, (double)(mono_ms() - t0) / 1e3,
                     next_mark(r, m + 1) < MID_REFRESHES ? "again later"
                                                         : "the switch's refresh writes the rest");
        } else { /* nothing depends on it: the switch refreshes the version anyway */
            log_info("reindex", "%s v%u: the mid-build refresh failed (%s); the switch refreshes "
                     "the version anyway", r->alias, r->version,
                     err[0] ? err : resp.body.data ? resp.body.data : "?");
            break;
        }
    }
out:
    search_resp_free(&resp);
    search_conn_free(k);
    return NULL;
}

/* rows more rows acknowledged: the one caller that passes the first of
 * this part's marks of the estimate starts the thread of the mid-build
 * refreshes (see the top of the file). */
void rv_mid_refresh_maybe(struct reindex_runner *r, size_t rows) {
    unsigned long long before = atomic_fetch_add(&r->rows_acked, rows);
    size_t m = next_mark(r, 0);
    if (m == MID_REFRESHES) return;
    unsigned long long due = pct_of_rows(r->rows_expected, MID_REFRESH_PCTS[m]);
    if (!due || before >= due || before + rows < due) return;
    int none = 0;
    if (!atomic_compare_exchange_strong(&r->mid_refresh, &none, 1)) return;
    r->mid_at = before + rows;
    if (pthread_create(&r->mid_th, NULL, mid_refresh_main, r) != 0) r->mid_refresh = 0;
}

#define MAX_LOST_IN_A_ROW 3

/* Compare the version's primary terms with those it was created with (see
 * the top of the file): 0 the same, 1 moved (r->why says so and the build
 * stops), -1 not known now (err; the next check, or the switch, tells). */
static int lost_check(struct reindex_runner *r, struct search_conn *k, char *err, size_t errlen) {
    if (!r->build_terms) return 0;
    sbuf now = SBUF_INIT;
    int rc = rx_primary_terms(k, r->phys, &now, err, errlen);
    if (rc == 0 && strcmp(now.data, r->build_terms) != 0) {
        pthread_mutex_lock(&r->errmu);
        snprintf(r->why, sizeof r->why,
                 "the engine restarted while v%u was built (primary terms %s, now %s): writes "
                 "it acknowledged but had not yet written to disk may be lost (a build writes "
                 "its translog asynchronously)",
                 r->version, r->build_terms, now.data);
        pthread_mutex_unlock(&r->errmu);
        r->lost = 1;
        r->stop = 2;
        rc = 1;
    }
    sbuf_free(&now);
    return rc;
}

/* lost_check every LOST_CHECK_MS while the jobs run, by the worker whose
 * page settles first after it is due */
void rv_lost_check_maybe(struct worker *w) {
    struct reindex_runner *r = w->r;
    int64_t due = r->lost_check_ms, now = mono_ms();
    if (!r->build_terms || now < due ||
        !atomic_compare_exchange_strong(&r->lost_check_ms, &due, now + LOST_CHECK_MS))
        return;
    struct search_conn *k = search_conn_new(r->client);
    char err[512];
    if (lost_check(r, k, err, sizeof err) < 0)
        log_info("reindex", "%s v%u: %s (checked again later)", r->alias, r->version, err);
    search_conn_free(k);
}

/* rx_engine() for the switch: a transport error, or an answer an engine gives
 * while it is busy or restarting (429, 502, 503, 504), is waited out, backing
 * off to 5 s and said about once a minute, until it answers or the build
 * stops: a finished build is not rolled back for a moment of unavailability.
 * Other answers are the caller's to judge. */
static int engine_wait(struct worker *w, struct search_conn *k, const char *method,
                       const char *path, const char *body, struct search_resp *resp, char *err,
                       size_t errlen) {
    struct reindex_runner *r = w->r;
    long delay_ms = 250;
    for (int attempt = 0;; attempt++) {
        liveness_beat(&w->live); /* each request is a step of the switch (node's health) */
        int rc = rx_engine(k, method, path, body, resp, err, errlen);
        long st = resp->status;
        if (rc == 0 && st != 429 && st != 502 && st != 503 && st != 504) return 0;
        if (rc == 0)
            errf(err, errlen, "engine: %s %s: HTTP %ld %.200s", method, path, st,
                 resp->body.data ? resp->body.data : "");
        if (attempt % 12 == 0)
            log_warn("reindex", "%s v%u: %s; the switch goes on when the engine answers",
                     r->alias, r->version, err);
        if (!rx_nap_unless(&r->stop, delay_ms)) return -1;
        delay_ms = delay_ms * 2 > 5000 ? 5000 : delay_ms * 2;
    }
}

/* A step of the switch that may fail without stopping it (POST
 * /<index>/<action>): a failure is logged with what follows from it. */
static void switch_step(struct search_conn *k, const char *phys, const char *action,
                        struct search_resp *resp, const char *consequence) {
    char path[700], err[512] = "";
    snprintf(path, sizeof path, "/%s/%s", phys, action);
    if (rx_engine(k, "POST", path, NULL, resp, err, sizeof err) == 0 && resp->status == 200) return;
    if (!err[0])
        snprintf(err, sizeof err, "HTTP %ld %.300s", resp->status,
                 resp->body.data ? resp->body.data : "");
    log_warn("reindex", "POST %s before the switch failed (%s); %s", path, err, consequence);
}

/* The switch's lock: a named lock of the metadata server held by the
 * switching worker's connection for the switch's length. A switch
 * interrupted by a crash leaves the state 'switching' and frees the lock
 * with the connection; one under way in another process (another source's
 * daemon, whose job was the last) holds it. take: try it now (1 held, 0
 * held by another, -1 error); !take: give it back. */
static int switch_lock(struct worker *w, bool take) {
    struct reindex_runner *r = w->r;
    char q[200], e2[256];
    snprintf(q, sizeof q, "SELECT %s(CONCAT('searchsync.switch.', DATABASE(), '.', %s)%s)",
             take ? "GET_LOCK" : "RELEASE_LOCK", r->id, take ? ", 0" : "");
    char *got = db_scalar(w->meta, q, take ? w->err : e2, take ? sizeof w->err : sizeof e2);
    int rc = got ? !strcmp(got, "1") : -1;
    free(got);
    return rc;
}

/* The switch's claim: the one caller whose UPDATE finds no job unfinished
 * sets the state 'switching' (or, with may_resume, takes over a switch a
 * crash interrupted: its switch lock free, and no other worker of this
 * process has it). 1 claimed (the switch lock held), 0 not the last, -1
 * error. */
static int switch_claim(struct worker *w, bool may_resume, int me) {
    struct reindex_runner *r = w->r;
    sbuf q = SBUF_INIT;
    int rc = -1;
    int held = 0;
    /* every source's part: planned (its jobs there), and none of its jobs
     * unfinished (docs/cluster.md, "A build across sources") */
    sbuf_printf(&q, "UPDATE index_configs SET state = 'switching' WHERE id = %s AND "
                    "building_version = %u AND state = 'changing' AND NOT EXISTS (SELECT 1 FROM "
                    "jobs WHERE index_id = %s AND version = %u AND type = 'index' AND status <> "
                    "'done') AND NOT EXISTS (SELECT 1 FROM reindex_parts WHERE index_id = %s AND "
                    "version = %u AND planned = 0)",
                r->id, r->version, r->id, r->version, r->id, r->version);
    long long changed = rx_exec_retry(w->meta, q.data, w->err, sizeof w->err);
    if (changed < 0) goto out;
    if (changed != 1) {
        char *st[2];
        sbuf_reset(&q);
        sbuf_printf(&q, "SELECT state, building_version FROM index_configs WHERE id = %s", r->id);
        if (db_row1(w->meta, q.data, q.len, st, 2, w->err, sizeof w->err) < 1) goto out;
        bool resume = may_resume && !strcmp(st[0], "switching") &&
                      strtoul(st[1], NULL, 10) == r->version; /* a crash mid-switch */
        db_row_free(st, 2);
        /* ... and not one under way elsewhere: its lock free, and the state
         * still 'switching' once this worker holds it */
        if (resume) {
            held = switch_lock(w, true);
            if (held < 0) goto out;
            resume = held == 1;
            if (resume) {
                sbuf_reset(&q);
                sbuf_printf(&q, "SELECT state, building_version FROM index_configs WHERE id = %s",
                            r->id);
                if (db_row1(w->meta, q.data, q.len, st, 2, w->err, sizeof w->err) < 1) goto out;
                resume = !strcmp(st[0], "switching") && strtoul(st[1], NULL, 10) == r->version;
                db_row_free(st, 2);
            }
        }
        /* and no other worker of this process is switching it */
        int none = 0;
        if (resume && !atomic_compare_exchange_strong(&r->switcher, &none, me))
            resume = none == me;
        if (!resume) {
            rc = 0;
            goto out;
        }
    }
    /* a fresh claim: nobody else switches (the state was 'changing'); the
     * lock tells a later resume that this switch is under way */
    if (held != 1 && (held = switch_lock(w, true)) < 0) goto out;
    rc = 1;
out:
    if (rc != 1 && held == 1) switch_lock(w, false);
    sbuf_free(&q);
    return rc;
}

/* The version made ready to go live: refreshed, its settings back, flushed
 * and its terms checked, its replicas given. 0, -1 error, -2 the engine may
 * have lost writes of it (the state is back to 'changing'). */
static int switch_prepare(struct worker *w, struct search_conn *k, struct search_resp *resp) {
    struct reindex_runner *r = w->r;
    const struct mp_index *ix = r->ix;
    /* refresh, settings back, then the alias in one atomic call. The refresh
     * runs while refresh_interval is still -1: restored first, the engine's
     * own scheduled refresh ran beside this one (12 refreshes of the version
     * where a plain bulk load has 9) */
    char path[700];
    int64_t t0 = mono_ms();
    switch_step(k, r->phys, "_refresh", resp,
                "its refresh interval, restored next, makes its documents searchable within a "
                "second");
    liveness_beat(&w->live);
    /* Every write from now on on disk before it is acknowledged, then
     * everything before on disk too (a flush commits it): only then can the
     * terms tell whether writes were lost while it was built. A version
     * about to get replicas is committed first in any case: without
     * refreshes the engine rarely flushed it, and a new replica copies the
     * last commit's files and then replays every operation after it from the
     * translog, that is, indexes most of the version once more. After the
     * flush it copies files only. */
    r->switch_ms[0] = mono_ms() - t0;
    t0 = mono_ms();
    snprintf(path, sizeof path, "/%s/_settings", r->phys);
    if (engine_wait(w, k, "PUT", path,
                    "{\"index\":{\"refresh_interval\":null,\"translog\":{\"durability\":null},"
                    "\"gc_deletes\":null}}",
                    resp, w->err, sizeof w->err) < 0 ||
        resp->status != 200) {
        if (resp->status)
            errf(w->err, sizeof w->err, "restoring the settings of %s: HTTP %ld %.300s", r->phys,
                 resp->status, resp->body.data ? resp->body.data : "");
        return -1;
    }
    r->switch_ms[1] = mono_ms() - t0;
    t0 = mono_ms();
    if (r->build_terms) {
        snprintf(path, sizeof path, "/%s/_flush", r->phys);
        if (engine_wait(w, k, "POST", path, NULL, resp, w->err, sizeof w->err) < 0 ||
            resp->status != 200) {
            if (resp->status) errf(w->err, sizeof w->err, "flushing %s: HTTP %ld %.300s", r->phys,
                                   resp->status, resp->body.data ? resp->body.data : "");
            return -1;
        }
        char terr[512];
        int lost = lost_check(r, k, terr, sizeof terr);
        if (lost < 0) {
            errf(w->err, sizeof w->err, "%s", terr);
            return -1;
        }
        if (lost == 1) { /* back to 'changing', for runner_fail's rollback */
            sbuf q = SBUF_INIT;
            sbuf_printf(&q, "UPDATE index_configs SET state = 'changing' WHERE id = %s AND "
                            "building_version = %u AND state = 'switching'",
                        r->id, r->version);
            int rc = rx_exec_retry(w->meta, q.data, w->err, sizeof w->err) >= 0 ? -2 : -1;
            sbuf_free(&q);
            return rc;
        }
    } else if (ix->replicas > 0) {
        switch_step(k, r->phys, "_flush", resp,
                    "its replicas recover by replaying its translog instead");
    }
    r->switch_ms[2] = mono_ms() - t0;
    if (ix->replicas > 0) {
        sbuf body = SBUF_INIT;
        snprintf(path, sizeof path, "/%s/_settings", r->phys);
        sbuf_printf(&body, "{\"index\":{\"number_of_replicas\":%d}}", ix->replicas);
        int rc = engine_wait(w, k, "PUT", path, body.data, resp, w->err, sizeof w->err);
        sbuf_free(&body);
        if (rc < 0 || resp->status != 200) {
            if (resp->status)
                errf(w->err, sizeof w->err, "restoring the replicas of %s: HTTP %ld %.300s",
                     r->phys, resp->status, resp->body.data ? resp->body.data : "");
            return -1;
        }
    }
    return 0;
}

/* The alias moved to the version in one _aliases call (off every other
 * index it was on). An index (not an alias) of the alias's name, such as
 * one another tool wrote, is deleted in that same call (remove_index):
 * searches see its documents up to the moment they see the version's, and
 * the name never answers 404 in between. 0 or -1. */
static int switch_alias(struct worker *w, struct search_conn *k, struct search_resp *resp) {
    struct reindex_runner *r = w->r;
    char path[700];
    snprintf(path, sizeof path, "/_alias/%s", r->alias);
    if (engine_wait(w, k, "GET", path, NULL, resp, w->err, sizeof w->err) < 0) return -1;
    bool is_alias = resp->status == 200, an_index = false;
    cJSON *on = is_alias ? json_exact_parse(resp->body.data, resp->body.len) : NULL;
    if (resp->status == 404) {
        snprintf(path, sizeof path, "/%s", r->alias);
        if (engine_wait(w, k, "HEAD", path, NULL, resp, w->err, sizeof w->err) < 0) return -1;
        an_index = resp->status == 200;
    }
    sbuf body = SBUF_INIT;
    sbuf_adds(&body, "{\"actions\":[");
    if (an_index) {
        sbuf_adds(&body, "{\"remove_index\":{\"index\":");
        json_escape(&body, r->alias, strlen(r->alias));
        sbuf_adds(&body, "}},");
    }
    cJSON *it;
    cJSON_ArrayForEach(it, on) {
        if (!strcmp(it->string, r->phys)) continue;
        sbuf_adds(&body, "{\"remove\":{\"index\":");
        json_escape(&body, it->string, strlen(it->string));
        sbuf_adds(&body, ",\"alias\":");
        json_escape(&body, r->alias, strlen(r->alias));
        sbuf_adds(&body, "}},");
    }
    cJSON_Delete(on);
    sbuf_adds(&body, "{\"add\":{\"index\":");
    json_escape(&body, r->phys, strlen(r->phys));
    sbuf_adds(&body, ",\"alias\":");
    json_escape(&body, r->alias, strlen(r->alias));
    sbuf_adds(&body, "}}]}");
    int rc = 0;
    if (engine_wait(w, k, "POST", "/_aliases", body.data, resp, w->err, sizeof w->err) < 0 ||
        resp->status != 200) {
        if (resp->status)
            errf(w->err, sizeof w->err, "moving alias %s to %s: HTTP %ld %.300s", r->alias,
                 r->phys, resp->status, resp->body.data ? resp->body.data : "");
        rc = -1;
    } else if (an_index) {
        log_warn("reindex", "%s: the index of this name (not an alias) is deleted and the name "
                 "made an alias of %s, in one step", r->alias, r->phys);
    }
    sbuf_free(&body);
    return rc;
}

/* The version recorded live in one metadata transaction (the one before it
 * history, the index config's state, the run closed). 0 or -1. */
static int switch_record(struct worker *w) {
    struct reindex_runner *r = w->r;
    MYSQL *meta = w->meta;
    if (db_exec(meta, "START TRANSACTION", w->err, sizeof w->err) < 0) return -1;
    sbuf q = SBUF_INIT;
    int rc = REINDEX_ERR;
    sbuf_printf(&q, "UPDATE index_versions SET state = 'history' WHERE index_id = %s AND state = "
                    "'available' AND version <> %u",
                r->id, r->version);
    if (db_exec(meta, q.data, w->err, sizeof w->err) < 0) goto end;
    sbuf_reset(&q);
    sbuf_printf(&q, "UPDATE index_versions SET state = 'available', switched_at = NOW(3) WHERE "
                    "index_id = %s AND version = %u",
                r->id, r->version);
    if (db_exec(meta, q.data, w->err, sizeof w->err) < 0) goto end;
    sbuf_reset(&q);
    /* a build going live lifts a stop (sync/node/index_stop.c): it was built with
     * a mapping the source fits */
    sbuf_printf(&q, "UPDATE index_configs SET state = 'available', current_version = %u, "
                    "building_version = 0, stopped_reason = NULL WHERE id = %s",
                r->version, r->id);
    if (db_exec(meta, q.data, w->err, sizeof w->err) < 0) goto end;
    if (rx_close_run(meta, r->cfg, r->id, r->version, "done", NULL, w->err, sizeof w->err) < 0)
        goto end;
    rc = REINDEX_OK;
end:
    sbuf_free(&q);
    return rx_txn_end(meta, rc, w->err, sizeof w->err);
}

/* After the switch: the run's figures logged, and history beyond
 * history_retention deleted (best effort: a failure leaves it). */
static void switch_after(struct worker *w, struct search_conn *k, struct search_resp *resp) {
    struct reindex_runner *r = w->r;
    MYSQL *meta = w->meta;
    char *tot[3];
    sbuf q = SBUF_INIT;
    sbuf_printf(&q, "SELECT rows_read, docs_written, TIMESTAMPDIFF(MICROSECOND, started_at, "
                    "finished_at) / 1e6 FROM reindex_runs WHERE index_id = %s AND version = %u",
                r->id, r->version);
    if (db_row1(meta, q.data, q.len, tot, 3, w->err, sizeof w->err) == 1) {
        char detail[600];
        /* the switch's steps timed: the part of a build's time that is
         * not its pages' */
        snprintf(detail, sizeof detail, "version %u live: %s rows read, %s documents written, "
                                        "%llu rejected, %s s (the switch %.3f s: refresh %.3f, "
                                        "settings %.3f, flush and terms %.3f, alias %.3f)",
                 r->version, tot[0], tot[1], (unsigned long long)r->rejected_total,
                 tot[2] ? tot[2] : "?", (double)(mono_ms() - r->switch_ms[4]) / 1e3,
                 (double)r->switch_ms[0] / 1e3, (double)r->switch_ms[1] / 1e3,
                 (double)r->switch_ms[2] / 1e3, (double)r->switch_ms[3] / 1e3);
        rx_sync_log(meta, r->cfg->source.name, r->id, "reindex done", detail);
        log_info("reindex", "%s: %s", r->alias, detail);
    }
    db_row_free(tot, 3);
    /* history beyond history_retention: deleted */
    sbuf_reset(&q);
    sbuf_printf(&q, "SELECT version, physical_name FROM index_versions WHERE index_id = %s AND "
                    "state = 'history' ORDER BY version DESC LIMIT 1000 OFFSET %d",
                r->id, r->ix->history_retention > 0 ? r->ix->history_retention : 0);
    char qerr[256], path[700];
    MYSQL_RES *res = db_query(meta, q.data, q.len, qerr, sizeof qerr);
    if (res) {
        MYSQL_ROW row;
        sbuf dels = SBUF_INIT;
        while ((row = mysql_fetch_row(res))) {
            snprintf(path, sizeof path, "/%s", row[1]);
            char e2[256];
            liveness_beat(&w->live);
            if (rx_engine(k, "DELETE", path, NULL, resp, e2, sizeof e2) == 0)
                sbuf_printf(&dels, "%s%s", dels.len ? "," : "", row[0]);
        }
        mysql_free_result(res);
        if (dels.len) {
            sbuf_reset(&q);
            sbuf_printf(&q, "DELETE FROM index_versions WHERE index_id = %s AND version IN (%s)",
                        r->id, dels.data);
            char e2[256];
            db_exec(meta, q.data, e2, sizeof e2);
        }
        sbuf_free(&dels);
    }
    sbuf_free(&q);
}

/* All jobs done: the one caller whose UPDATE finds none unfinished switches
 * the alias. 1 switched, 0 not the last, -1 error, -2 the engine may have
 * lost writes of the version (r->why; the state is back to 'changing'). */
int rv_try_finish(struct worker *w, bool may_resume) {
    struct reindex_runner *r = w->r;
    int me = (int)(w - r->w) + 1;
    int rc = switch_claim(w, may_resume, me);
    if (rc <= 0) return rc;
    r->switcher = me;
    struct search_resp resp;
    search_resp_init(&resp);
    struct search_conn *k = search_conn_new(r->client);
    r->switch_ms[4] = mono_ms();
    rc = switch_prepare(w, k, &resp);
    int64_t t0 = mono_ms();
    if (rc == 0) rc = switch_alias(w, k, &resp);
    r->switch_ms[3] = mono_ms() - t0;
    liveness_beat(&w->live);
    if (rc == 0) rc = switch_record(w);
    if (rc == 0) {
        liveness_beat(&w->live);
        switch_after(w, k, &resp);
        rc = 1;
    }
    switch_lock(w, false);
    search_resp_free(&resp);
    search_conn_free(k);
    return rc;
}

/* The builds before this one lost their writes to engine restarts too
 * (MAX_LOST_IN_A_ROW - 1 of them in a row): this one is not queued again. */
bool rv_lost_too_often(struct reindex_runner *r, MYSQL *meta) {
    sbuf q = SBUF_INIT;
    sbuf_printf(&q, "SELECT COUNT(*) FROM (SELECT error_text FROM reindex_runs WHERE index_id = "
                    "%s AND version <> %u ORDER BY id DESC LIMIT %d) t WHERE error_text LIKE "
                    "'the engine restarted while v%% was built%%'",
                r->id, r->version, MAX_LOST_IN_A_ROW - 1);
    char *n[1] = {NULL}, err[256];
    bool too = db_row1(meta, q.data, q.len, n, 1, err, sizeof err) == 1 && n[0] &&
               atoi(n[0]) >= MAX_LOST_IN_A_ROW - 1;
    db_row_free(n, 1);
    sbuf_free(&q);
    return too;
}
