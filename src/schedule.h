/* schedule: a task the daemon runs on a timetable of its own — a daily time
 * of day (UTC, "HH:MM") or an interval ("every 6h") — on one thread,
 * stopped with the daemon. Used by the scheduled consistency check
 * (check_schedule.c, [check] schedule) and the scheduled delayed run
 * (delayed_schedule.c, [delayed] schedule); both start only once this node
 * reads the source, so one node of a cluster runs them. */
#ifndef SS_SCHEDULE_H
#define SS_SCHEDULE_H
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "liveness.h"

struct schedule {
    pthread_t th;
    bool started;
    long every_s;                       /* "every DUR"; 0: daily at at_min */
    bool at_start;                      /* run once at start too */
    int at_min;                         /* minutes after midnight, UTC */
    void (*run)(struct schedule *s, void *ud);
    void *ud;
    volatile sig_atomic_t stop;         /* schedule_stop */
    volatile sig_atomic_t *daemon_stop; /* the daemon's stop request */
    struct liveness live;               /* its thread's beats: schedule_healthy */
};

/* "HH:MM" or "every DUR": 0, or -1 when malformed (config check says why). */
int schedule_parse(const char *spec, long *every_s, int *at_min);
/* Start the thread running run(s, ud) at every scheduled time; nothing when
 * spec is NULL or empty. 0, or -1 (a malformed spec, no thread). */
int schedule_start(struct schedule *s, const char *spec, volatile sig_atomic_t *daemon_stop,
                   void (*run)(struct schedule *s, void *ud), void *ud);
/* The same for a fixed interval, run once at start too (the retention). */
int schedule_start_every(struct schedule *s, long every_s, volatile sig_atomic_t *daemon_stop,
                         void (*run)(struct schedule *s, void *ud), void *ud);
/* Stop it; a run under way is asked to stop (schedule_stopping) and waited
 * for. Safe to call twice, and on a schedule never started. */
void schedule_stop(struct schedule *s);
/* The task should give up now (the daemon stops). */
bool schedule_stopping(const struct schedule *s);
/* Its thread goes round between runs (it looks at the time every 100 ms),
 * and a run under way has lasted at most task_bound_ms (0: a run may last
 * as long as it needs, a check of a large table; the wait is named). false
 * with why otherwise: `name` is the schedule's, for why. */
bool schedule_healthy(const struct schedule *s, const char *name, int64_t task_bound_ms,
                      int64_t bound_ms, char *why, size_t whylen);
/* the run under way since (monotonic ms), 0: none */
int64_t schedule_running_since(const struct schedule *s);

#endif
