/* reindex_health: whether the build workers of this process make progress,
 * for the node's health (the "build workers" row: systemd's watchdog,
 * status). Owns the registry of the runners that run (a daemon's builds and,
 * in a cluster, the jobs rebalances gave the node: both start runners
 * through reindex.h) and the predicate over their workers.
 *
 * A worker beats (src/liveness.h) when a page is read, when a page is
 * handed to delivery, at each turn of its wait for a page's
 * acknowledgement, after each statement on its job row and at each step of
 * the alias switch. Between two beats it runs one of those steps, each
 * bounded by a timeout of the configuration (the source's read timeout,
 * the engine's request timeout), so the node's bound (twice the longest,
 * plus 10 s) is never reached by a long table: only by a step that does not
 * return, or by a page read that fails again and again without an outage
 * (a lock held on a table it reads: each try ends at the read timeout and
 * is not progress). Its named waits, well however long they last: the
 * source or the metadata server away (no connection can be made), delivery
 * full (the engine slow or away), a build slot the other sources' jobs
 * hold (reindex_slots.c). A worker whose jobs are done has ended:
 * a build waiting on another source's part, or for its switch elsewhere,
 * runs no worker here. The registry's lock is held only to add, remove and
 * ask: a runner is removed before it is freed, so the predicate never reads
 * a freed one. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>

#include "deliver/deliver.h"
#include "liveness.h"
#include "monotime.h"
#include "sync/reindex/reindex.h"
#include "sync/reindex/reindex_runner_int.h"

static pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;
static struct reindex_runner *registry; /* linked by health_next */

void rx_health_add(struct reindex_runner *r) {
    pthread_mutex_lock(&registry_mu);
    r->health_next = registry;
    registry = r;
    pthread_mutex_unlock(&registry_mu);
}

void rx_health_remove(struct reindex_runner *r) {
    pthread_mutex_lock(&registry_mu);
    for (struct reindex_runner **p = &registry; *p; p = &(*p)->health_next)
        if (*p == r) {
            *p = r->health_next;
            break;
        }
    r->health_next = NULL;
    pthread_mutex_unlock(&registry_mu);
}

bool rx_runner_healthy(struct reindex_runner *r, int64_t now_ms, int64_t bound_ms, char *why,
                       size_t whylen) {
    for (int i = 0; i < r->nw; i++) {
        struct worker *w = &r->w[i];
        char w2[256];
        /* the submit of a page waits for room in the node's delivery */
        if (deliver_waiting_for_space(w->d)) continue;
        if (liveness_check(&w->live, "build worker", now_ms, bound_ms, w2, sizeof w2)) continue;
        const struct job *j = atomic_load(&w->job);
        char bucket[32] = "";
        if (j) snprintf(bucket, sizeof bucket, ", bucket %d", j->bucket);
        /* the bound, not the time: the node's state is written when it changes */
        snprintf(why, whylen, "%s v%u (worker %d%s): has read, delivered or waited on no page "
                 "for more than %" PRId64 " ms (stalled: a page read, an acknowledgement wait "
                 "or a statement on its job that does not end; the build waits with it)",
                 r->alias, r->version, i + 1, bucket, bound_ms);
        return false;
    }
    return true;
}

bool reindex_runners_healthy(int64_t bound_ms, char *why, size_t whylen) {
    int64_t now = mono_ms();
    bool well = true;
    pthread_mutex_lock(&registry_mu);
    for (struct reindex_runner *r = registry; r && well; r = r->health_next)
        well = rx_runner_healthy(r, now, bound_ms, why, whylen);
    pthread_mutex_unlock(&registry_mu);
    return well;
}
