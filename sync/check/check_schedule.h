/* check_schedule: the daemon's scheduled consistency check ([check]
 * schedule; see check_schedule.c). */
#ifndef SS_CHECK_SCHEDULE_H
#define SS_CHECK_SCHEDULE_H
#include <signal.h>

#include "config.h"
#include "schedule.h"

struct deliver_hub;

struct check_schedule {
    const struct ss_config *cfg;
    struct deliver_hub *hub; /* the node's delivery: repairs are written through it */
    struct schedule sch;
    char node[256];
};

/* Start the thread when [check] schedule is set (nothing otherwise). 0, or
 * -1 when it could not start. */
int check_schedule_start(struct check_schedule *s, const struct ss_config *cfg,
                         struct deliver_hub *hub, volatile sig_atomic_t *daemon_stop,
                         const char *node);
/* Stop it (a check under way gives up at its next page or poll); NULL-safe
 * to call twice. */
void check_schedule_stop(struct check_schedule *s);

#endif
