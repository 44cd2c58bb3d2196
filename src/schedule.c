/* schedule: a task on a timetable of its own, on one thread (see schedule.h). */
#include "schedule.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "monotime.h"

int schedule_parse(const char *spec, long *every_s, int *at_min) {
    *every_s = 0;
    *at_min = -1;
    static const char every[] = "every ";
    if (!strncmp(spec, every, sizeof every - 1))
        return (*every_s = config_parse_duration(spec + sizeof every - 1)) > 0 ? 0 : -1;
    return (*at_min = config_parse_hhmm(spec)) >= 0 ? 0 : -1;
}

/* seconds from now to the next run */
static long next_in(const struct schedule *s) {
    if (s->every_s > 0) return s->every_s;
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    long d = s->at_min * 60L - (tm.tm_hour * 3600L + tm.tm_min * 60L + tm.tm_sec);
    return d > 0 ? d : d + 86400;
}

bool schedule_stopping(const struct schedule *s) {
    return s->stop || (s->daemon_stop && *s->daemon_stop);
}

#define SCHEDULE_RUNNING "running its task"

static void run_task(struct schedule *s) {
    liveness_wait(&s->live, SCHEDULE_RUNNING);
    s->run(s, s->ud);
    liveness_wait(&s->live, NULL);
}

static void *schedule_main(void *arg) {
    struct schedule *s = arg;
    if (s->at_start && !schedule_stopping(s)) run_task(s);
    for (;;) {
        long wait = next_in(s);
        for (long i = 0; i < wait * 10 && !schedule_stopping(s); i++) {
            liveness_beat(&s->live);
            usleep(100000);
        }
        if (schedule_stopping(s)) break;
        run_task(s);
    }
    liveness_end(&s->live, true);
    return NULL;
}

int64_t schedule_running_since(const struct schedule *s) {
    return s->started && liveness_waiting(&s->live) ? atomic_load(&s->live.wait_ms) : 0;
}

bool schedule_healthy(const struct schedule *s, const char *name, int64_t task_bound_ms,
                      int64_t bound_ms, char *why, size_t whylen) {
    if (!s->started) return true;
    int64_t now = mono_ms(), since = schedule_running_since(s);
    if (since && task_bound_ms > 0 && now - since > task_bound_ms) {
        snprintf(why, whylen, "the %s thread's run has lasted more than %lld ms (wedged)", name,
                 (long long)task_bound_ms);
        return false;
    }
    return liveness_check(&s->live, name, now, bound_ms, why, whylen);
}

int schedule_start(struct schedule *s, const char *spec, volatile sig_atomic_t *daemon_stop,
                   void (*run)(struct schedule *s, void *ud), void *ud) {
    memset(s, 0, sizeof *s);
    s->daemon_stop = daemon_stop;
    s->run = run;
    s->ud = ud;
    if (!spec || !*spec) return 0;
    if (schedule_parse(spec, &s->every_s, &s->at_min) < 0) return -1;
    liveness_start(&s->live);
    if (pthread_create(&s->th, NULL, schedule_main, s) != 0) return -1;
    s->started = true;
    return 0;
}

int schedule_start_every(struct schedule *s, long every_s, volatile sig_atomic_t *daemon_stop,
                         void (*run)(struct schedule *s, void *ud), void *ud) {
    memset(s, 0, sizeof *s);
    s->daemon_stop = daemon_stop;
    s->run = run;
    s->ud = ud;
    s->every_s = every_s;
    s->at_start = true;
    liveness_start(&s->live);
    if (pthread_create(&s->th, NULL, schedule_main, s) != 0) return -1;
    s->started = true;
    return 0;
}

void schedule_stop(struct schedule *s) {
    if (!s->started) return;
    s->stop = 1;
    pthread_join(s->th, NULL);
    s->started = false;
}
