/* check_schedule: the consistency check run by the daemon itself ([check]
 * schedule, docs/check.md).
 *
 * A schedule (schedule.c: one thread, started once this node reads the
 * source, so one node of a cluster runs it). At each scheduled time — a
 * daily "HH:MM" (UTC) or "every DUR" — it checks every index config that has
 * a live version, one after another, through the same code as `searchsync check`
 * (sync/check/check.h) on connections of its own: the window of [check] since (or
 * the whole index), repaired when [check] repair says so. Each run is
 * recorded in check_runs (trigger "schedule") and said in the log: info
 * when clean, a warning naming the differences when not. A stop request
 * interrupts it between pages and between settle polls. */
#include "sync/check/check_schedule.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sync/check/check.h"
#include "exit_codes.h"
#include "log.h"

static void run_all(struct schedule *sch, void *ud) {
    struct check_schedule *s = ud;
    const struct ss_config *cfg = s->cfg;
    struct producer pr;
    int rc = check_producer_open(&pr, cfg, s->hub, "repair");
    if (rc != EXIT_OK) {
        log_warn("check", "scheduled check not run: %s (the next one is tried at its time)",
                 pr.err);
        producer_close(&pr);
        return;
    }
    long since = !cfg->check.since || !strcmp(cfg->check.since, "all")
                     ? 0 : config_parse_duration(cfg->check.since);
    for (size_t i = 0; i < pr.m.nindices && !schedule_stopping(sch); i++) {
        const struct mp_index *ix = &pr.m.indices[i];
        if (!ix->current_version) continue;
        if (i && !strcmp(pr.m.indices[i - 1].alias, ix->alias)) continue; /* its shards: once */
        struct check_opts o = {.alias = ix->alias, .since_s = since, .repair = cfg->check.repair,
                               .settle_s = cfg->check.settle_s, .trigger = "schedule",
                               .node = s->node, .stop = &sch->stop};
        /* a window check needs a daily_check_column: without one, the whole index */
        bool window = false;
        for (size_t t = 0; t < ix->ntables; t++)
            if ((t == 0 || ix->tables[t].parent_table) && ix->tables[t].daily_check_column)
                window = true;
        if (since > 0 && !window) o.since_s = 0;
        struct check_result res;
        int crc = check_run(&pr, &o, &res);
        size_t n[5] = {0};
        for (size_t k = 0; k < res.nitems; k++) n[res.items[k].kind]++;
        if (crc == EXIT_OK && !res.nitems)
            log_info("check", "%s: clean (%s; %llu rows, %llu documents fetched, %.1f s)",
                     ix->alias, o.since_s ? "window check" : "whole index", res.rows,
                     res.docs_fetched, res.seconds);
        else if (crc == EXIT_OK || crc == EXIT_FOUND)
            log_warn("check", "%s: %zu missing, %zu extra, %zu different, %zu duplicate "
                     "document(s)%s (%s; details: GET /api/v1/indices/%s/checks)", ix->alias,
                     n[CK_MISSING], n[CK_EXTRA], n[CK_DIFFERENT], n[CK_DUPLICATE],
                     crc == EXIT_OK ? ", repaired" : ", left as they are",
                     o.since_s ? "window check" : "whole index", ix->alias);
        else
            log_warn("check", "%s: the scheduled check failed: %s", ix->alias, pr.err);
        char e[512];
        if (check_record(pr.p.meta, cfg->source.name, config_mapping_name(cfg), &o, &res, crc,
                         crc == EXIT_RUNTIME || crc == EXIT_USAGE ? pr.err : NULL, e,
                         sizeof e) < 0)
            log_warn("check", "%s: the result was not recorded in check_runs: %s", ix->alias, e);
        check_result_free(&res);
    }
    producer_close(&pr);
}

int check_schedule_start(struct check_schedule *s, const struct ss_config *cfg,
                         struct deliver_hub *hub, volatile sig_atomic_t *daemon_stop,
                         const char *node) {
    memset(s, 0, sizeof *s);
    s->cfg = cfg;
    s->hub = hub;
    snprintf(s->node, sizeof s->node, "%s", node ? node : "");
    const char *sched = cfg->check.schedule;
    if (schedule_start(&s->sch, sched, daemon_stop, run_all, s) < 0) return -1;
    if (s->sch.started)
        log_info("check", "scheduled check %s: %s of every index config%s", sched,
                 !cfg->check.since || !strcmp(cfg->check.since, "all") ? "the whole"
                                                                        : "the window check",
                 cfg->check.repair ? ", repairing what it finds" : "");
    return 0;
}

void check_schedule_stop(struct check_schedule *s) { schedule_stop(&s->sch); }
