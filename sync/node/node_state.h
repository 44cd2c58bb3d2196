/* node_state: this daemon's role and health (its subsystems') written to the metadata when
 * they change (node_states, migration 0011) for `searchsync status` (see
 * node_state.c). */
#ifndef SS_SYNC_NODE_STATE_H
#define SS_SYNC_NODE_STATE_H
#include <signal.h>

#include "config.h"
#include "sbuf.h"
#include "schedule.h"

struct deliver;
struct reader_stats;
struct leadership;
struct node;

struct node_state {
    struct schedule sch;
    const struct ss_config *cfg;
    struct deliver *d;
    struct reader_stats *rs;
    struct leadership *lead;
    struct node *nd; /* its subsystems' health (node_health_json) */
    void *conn;      /* MYSQL *: the thread's own metadata connection */
    bool warned;     /* a failed write said (once until one goes through) */
    sbuf last;       /* the state last written, and its role */
    char last_role[16];
};

/* Start looking every second (a thread of its own; the first write at
 * once). 0 or -1. */
int node_state_start(struct node_state *ns, const struct ss_config *cfg, struct deliver *d,
                     struct reader_stats *rs, struct leadership *lead, struct node *nd,
                     volatile sig_atomic_t *daemon_stop);
/* Stop the thread, and write the row once more with role "stopped". */
void node_state_stop(struct node_state *ns);

#endif
