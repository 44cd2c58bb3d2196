/* ops_assign: a rebalance of the cluster's reindex jobs, as an operation
 * (see ops_assign.h). */
#include "sync/ops/ops_assign.h"

#include <stdio.h>

#include "db.h"
#include "sync/cluster/job_assign.h"
#include "rebalance/rebalance.h"
#include "rebalance/zk.h"

enum ops_status ops_assign(const struct ops_env *env, const struct ops_assign_req *rq,
                           sbuf *assign, struct ops_err *e) {
    const struct ss_config *cfg = env->cfg;
    if (!cfg->cluster.zookeeper || !cfg->cluster.zookeeper[0])
        return ops_fail(e, OPS_REFUSED, OPS_AT_NONE,
                        "this daemon runs standalone (no [cluster] zookeeper)");
    struct zk *z = zk_open(cfg->cluster.zookeeper, cfg->cluster.session_timeout_ms,
                           rq->connect_ms, e->msg, sizeof e->msg);
    if (!z) {
        e->st = OPS_DOWN, e->at = OPS_AT_ZOOKEEPER;
        return e->st;
    }
    /* the split's own metadata connection (job_assign connects it) */
    struct job_assign_ctx ja = {.source = cfg->source.name, .metap = db_params_metadata(cfg)};
    ja.metap.database = cfg->metadata.database;
    /* the nodes are given twice their session to stop their jobs */
    int to = cfg->cluster.session_timeout_ms * 2;
    int rc = rebalance_coordinate(z, cfg->cluster.name, cfg->source.name, rq->me,
                                  to > 10000 ? to : 10000, rq->stop, job_assign, &ja, assign,
                                  e->msg, sizeof e->msg);
    db_close(ja.meta);
    zk_close(z);
    if (rc == 1) {
        e->st = OPS_OK, e->at = OPS_AT_NONE;
        return OPS_OK;
    }
    if (rc == 0) snprintf(e->msg, sizeof e->msg, "interrupted");
    e->st = OPS_FAILED, e->at = OPS_AT_ZOOKEEPER;
    return e->st;
}
