/* ops_assign: the unfinished reindex jobs of the source's builds assigned
 * again over the live nodes of its ZooKeeper cluster, as an operation
 * (sync/ops/ops.h): the caller coordinates the rebalance
 * (rebalance/rebalance.h) and the split is sync/cluster/job_assign.c's.
 * Answered once every node got its jobs. */
#ifndef SS_OPS_ASSIGN_H
#define SS_OPS_ASSIGN_H
#include <signal.h>

#include "sbuf.h"
#include "sync/ops/ops.h"

struct ops_assign_req {
    const char *me;         /* the coordinator's name in the cluster's lock */
    int connect_ms;         /* how long ZooKeeper may take to connect */
    volatile sig_atomic_t *stop; /* set: give up (NULL: never) */
};

/* assign: the assignment as a JSON object {node: [job ids]}. OPS_REFUSED:
 * the daemon runs standalone (no [cluster] zookeeper); OPS_DOWN at
 * OPS_AT_ZOOKEEPER: ZooKeeper did not answer; OPS_FAILED: the rebalance did
 * not complete, or was stopped (e->msg "interrupted"). */
enum ops_status ops_assign(const struct ops_env *env, const struct ops_assign_req *rq,
                           sbuf *assign, struct ops_err *e);

#endif
