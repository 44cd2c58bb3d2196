/* delayed_schedule: the delayed refresh run by the daemon itself ([delayed]
 * schedule; see delayed_schedule.c). */
#ifndef SS_DELAYED_SCHEDULE_H
#define SS_DELAYED_SCHEDULE_H
#include <signal.h>

#include "config.h"
#include "schedule.h"

struct deliver_hub;

struct delayed_schedule {
    const struct ss_config *cfg;
    struct deliver_hub *hub; /* the node's delivery: the runs write through it */
    struct schedule sch;
};

/* Start it when [delayed] schedule is set (nothing otherwise). 0 or -1. */
int delayed_schedule_start(struct delayed_schedule *s, const struct ss_config *cfg,
                           struct deliver_hub *hub, volatile sig_atomic_t *daemon_stop);
void delayed_schedule_stop(struct delayed_schedule *s);

#endif
