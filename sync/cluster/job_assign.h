/* job_assign: the metadata side of a rebalance (rebalance/rebalance.h step
 * 3) and the cluster's live node count; used by the daemon's nodes
 * (sync/cluster/cluster_jobs.c), `searchsync rebalance`, POST /api/v1/rebalance and
 * reindex requests. See job_assign.c for which jobs are split and how. */
#ifndef SS_JOB_ASSIGN_H
#define SS_JOB_ASSIGN_H
#include <stddef.h>

#include "config.h"
#include "db.h"
#include "sbuf.h"

/* Step 3 of a rebalance: job_assign is a
 * rebalance_assign_fn with a struct job_assign_ctx as ud */
struct job_assign_ctx {
    const char *source;
    MYSQL *meta;
    db_params metap;
};
int job_assign(void *ud, const char *session, const char *const *nodes, size_t n, sbuf *assign,
               char *err, size_t errlen);

#endif
