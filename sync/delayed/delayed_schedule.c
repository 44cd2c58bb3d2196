/* delayed_schedule: the delayed refresh of change snapshots (sync/delayed/delayed.h)
 * run by the daemon that reads the source, on the timetable of [delayed]
 * schedule (schedule.c) — what cron runs with `searchsync delayed-run`
 * otherwise, on connections, a delivery and a mapping of its own (the
 * producer set-up a resync uses). The run's lock keeps it from overlapping
 * a cron run; its figures go to the log, delayed_runs and sync_log as the
 * command's do. */
#include "sync/delayed/delayed_schedule.h"

#include <stdlib.h>
#include <string.h>

#include "exit_codes.h"
#include "sync/delayed/delayed.h"
#include "log.h"
#include "sync/pipeline/producer.h"

static bool schedule_asks_stop(void *ud) {
    return schedule_stopping(ud);
}

static void run_once(struct schedule *sch, void *ud) {
    struct delayed_schedule *s = ud;
    const struct ss_config *cfg = s->cfg;
    struct producer pr;
    struct producer_opts po = {.engine = true, .flush_interval_ms = 5, .stream = "delayed",
                               .hub = s->hub};
    unsigned long long *ids = NULL;
    int rc = producer_open(&pr, cfg, &po);
    struct delayed_stats st;
    memset(&st, 0, sizeof st);
    if (rc == EXIT_OK) {
        ids = delayed_index_ids(pr.p.meta, config_mapping_name(cfg), &pr.m, pr.err, sizeof pr.err);
        rc = ids ? EXIT_OK : EXIT_RUNTIME;
    }
    if (rc == EXIT_OK) {
        /* the daemon stopping stops the run between two pages */
        struct delayed_opts o = {NULL, false, cfg->delayed.buckets, cfg->delayed.page,
                                 cfg->delayed.max_attempts, 0, schedule_asks_stop, sch,
                                 cfg->cluster.zookeeper && cfg->cluster.zookeeper[0]};
        rc = delayed_run(&pr.p, ids, &o, &st, NULL, pr.err, sizeof pr.err);
        if (pr.p.d && deliver_drain(pr.p.d, cfg->delivery.drain_timeout_ms) != DELIVER_OK &&
            rc == EXIT_OK) {
            snprintf(pr.err, sizeof pr.err,
                     "delivery did not finish within [delivery] drain_timeout_ms");
            rc = EXIT_RUNTIME;
        }
    }
    if (st.stopped)
        log_info("delayed", "scheduled delayed run stopped with the daemon: the next run (or "
                 "searchsync delayed-run) takes it over");
    else if (rc == EXIT_OK && !st.lock_busy && st.snapshots)
        log_info("delayed", "scheduled delayed run: %llu snapshot(s), %llu id(s), %llu document(s) "
                 "rebuilt, %llu deleted", st.snapshots, st.ids, st.docs, st.deletes);
    else if (rc == EXIT_FOUND)
        log_warn("delayed", "scheduled delayed run: %llu snapshot(s) left in error after their "
                 "last attempt: see change_snapshots.error_text (searchsync status)",
                 st.left_error);
    else if (rc != EXIT_OK)
        log_warn("delayed", "scheduled delayed run failed: %s (its snapshots are tried again "
                 "at the next run)", pr.err);
    free(ids);
    producer_close(&pr);
}

int delayed_schedule_start(struct delayed_schedule *s, const struct ss_config *cfg,
                           struct deliver_hub *hub, volatile sig_atomic_t *daemon_stop) {
    memset(s, 0, sizeof *s);
    s->cfg = cfg;
    s->hub = hub;
    if (schedule_start(&s->sch, cfg->delayed.schedule, daemon_stop, run_once, s) < 0) return -1;
    if (s->sch.started)
        log_info("delayed", "scheduled delayed run %s", cfg->delayed.schedule);
    return 0;
}

void delayed_schedule_stop(struct delayed_schedule *s) { schedule_stop(&s->sch); }
