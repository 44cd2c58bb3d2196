/* replay_schedule: the source's dead letters replayed by the daemon that
 * reads the source, on the timetable of [delivery] replay_schedule
 * (schedule.c) — what `searchsync dead-letters replay` does by hand, the
 * node's operation (sync/ops/ops_replay.h) through a stream of its own on
 * the node's delivery. For changes that failed for a passing reason (a
 * purge while the engine was down, a limit raised since): one that fails
 * again is a dead letter again, and the next run tries it again.
 *
 * One of the node's subsystems (sync/node/daemon_subsystems.c): this file
 * and one line in the table; its state is the node's to allocate. */
#include <stdbool.h>

#include "log.h"
#include "sync/node/daemon.h"
#include "sync/ops/ops_replay.h"

struct replay_schedule {
    struct ops_env env;
    struct schedule sch;
    bool warned; /* a failed run said (once until one goes through) */
};

static void run_once(struct schedule *sch, void *ud) {
    (void)sch;
    struct replay_schedule *r = ud;
    struct ops_replay_req rq = {0}; /* every dead letter of the source */
    struct ops_replay_res res;
    struct ops_err e;
    if (ops_replay(&r->env, &rq, &res, &e) != OPS_OK) {
        if (!r->warned)
            log_warn("run", "scheduled replay of dead letters: %s (the dead letters are kept; "
                     "tried again at the next run)", e.msg);
        r->warned = true;
        return;
    }
    r->warned = false;
    if (res.replayed)
        log_info("run", "scheduled replay: %ld dead letter(s) resubmitted, %ld left (failed "
                 "again: searchsync dead-letters list says why)", res.replayed, res.left);
}

static int replay_start(void *st, void *ctx) {
    struct replay_schedule *r = st;
    struct daemon *dm = ctx;
    const char *spec = dm->cfg->delivery.replay_schedule;
    r->env = (struct ops_env){.cfg = dm->cfg, .client = dm->client, .hub = dm->hub,
                              .by = "scheduled replay"};
    if (schedule_start(&r->sch, spec, &daemon_stop_requested, run_once, r) < 0)
        log_warn("run", "the scheduled replay of dead letters could not start: replay them with "
                 "searchsync dead-letters replay");
    else if (r->sch.started)
        log_info("run", "scheduled replay of dead letters %s", spec);
    return 0;
}

static void replay_stop(void *st) { schedule_stop(&((struct replay_schedule *)st)->sch); }

/* a replay resubmits every dead letter: as long as they need, a named wait */
static bool replay_healthy(void *st, char *why, size_t whylen) {
    struct replay_schedule *r = st;
    return !r->env.cfg || schedule_healthy(&r->sch, "scheduled replays", 0,
                                           node_wedged_after_ms(r->env.cfg), why, whylen);
}

const struct node_subsystem replay_schedule_subsystem = {
    .name = "scheduled replays", .drain = NODE_DRAIN_SCHEDULES,
    .state_size = sizeof(struct replay_schedule), .start = replay_start, .stop = replay_stop,
    .healthy = replay_healthy};
