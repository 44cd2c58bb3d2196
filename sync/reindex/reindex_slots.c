/* reindex_slots: how many jobs of one version run at once across the
 * daemons of every source of its index config.
 *
 * Each source's daemon runs its part of a build with [reindex]
 * parallel_jobs workers. With several sources on one box, that many bulk
 * streams per source reach the same shards together: the engine's CPU a
 * document rose 12-17% with 2 or 4 sources, and the build per document ran
 * at 87-91% of one source's (docs/sizing.md). So a standalone worker takes
 * one of [reindex] index_parallel_jobs slots (default: parallel_jobs) before
 * it runs a job, and gives it back after: the index's build keeps the
 * concurrency of one source, whichever sources' jobs hold the slots.
 *
 * A slot is a named lock of the metadata server (GET_LOCK, held on the
 * worker's metadata connection), so a daemon that dies gives its slots back
 * with its connections, and daemons of other processes see them. In a
 * cluster the rebalance places the jobs over the nodes: no slots there. A
 * slot that cannot be taken because the metadata server errs is not waited
 * for: the slots pace the engine, they guard nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sync/reindex/reindex_int.h"
#include "sync/reindex/reindex_runner_int.h"
#include "log.h"

int rx_slots_of(const struct reindex_runner *r) {
    if (r->owned[0] || !r->ix || r->ix->nsources < 2) return 0;
    int n = r->cfg->reindex.index_parallel_jobs;
    return n > 0 ? n : r->cfg->reindex.parallel_jobs;
}

/* the lock name of slot k of r's index: short enough for GET_LOCK's 64
 * characters whatever the metadata database is called */
static void slot_sql(const struct reindex_runner *r, int k, bool take, char *q, size_t qlen) {
    snprintf(q, qlen,
             "SELECT %s(CONCAT('ssbuild.', LEFT(SHA2(CONCAT(DATABASE(), '.', %s), 256), 24), "
             "'.', %d)%s)",
             take ? "GET_LOCK" : "RELEASE_LOCK", r->id, k, take ? ", 0" : "");
}

/* the slots' wait, as the node's health sees it: the other sources' jobs
 * hold them for as long as their tables need, so it is a named wait */
static bool slot_take(struct worker *w, int n);

bool rx_slot_take(struct worker *w) {
    bool got = slot_take(w, rx_slots_of(w->r));
    if (liveness_waiting(&w->live)) liveness_wait(&w->live, NULL);
    return got;
}

static bool slot_take(struct worker *w, int n) {
    struct reindex_runner *r = w->r;
    w->slot = -1;
    if (n == 0) return true;
    bool said = false;
    for (;;) {
        for (int k = 0; k < n; k++) {
            char q[300], err[256];
            slot_sql(r, k, true, q, sizeof q);
            char *got = w->meta ? db_scalar(w->meta, q, err, sizeof err) : NULL;
            if (!got) return true; /* not paced, not held */
            bool held = !strcmp(got, "1");
            free(got);
            if (held) {
                w->slot = k;
                return true;
            }
        }
        liveness_wait(&w->live, RX_WAIT_SLOT);
        if (!said) {
            log_info("reindex", "%s v%u: a job waits for one of the index's %d build slots "
                     "(jobs of the other sources' parts hold them: [reindex] "
                     "index_parallel_jobs)", r->alias, r->version, n);
            said = true;
        }
        if (!rx_nap_unless(&r->stop, 100)) return false;
    }
}

void rx_slot_give(struct worker *w) {
    if (w->slot < 0) return;
    char q[300], err[256];
    slot_sql(w->r, w->slot, false, q, sizeof q);
    free(w->meta ? db_scalar(w->meta, q, err, sizeof err) : NULL);
    w->slot = -1;
}
