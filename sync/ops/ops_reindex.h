/* ops_reindex: an index config's builds, as an operation (sync/ops/ops.h):
 * a new version queued, the build in progress cancelled, every version
 * deleted. The work is sync/reindex/reindex.c's (a build's start) and
 * sync/reindex/reindex_end.c's (its end); this owns what a caller
 * asks and gets: the index config looked up first, the connections, the
 * outcome. */
#ifndef SS_OPS_REINDEX_H
#define SS_OPS_REINDEX_H
#include <stdbool.h>

#include "sync/ops/ops.h"

struct ops_reindex_req {
    const char *alias;
    int buckets; /* <= 0: [reindex] buckets */
    bool by_mod; /* MOD(bucket_column, buckets) instead of key ranges */
};

struct ops_reindex_res {
    unsigned version; /* queued */
    int buckets;      /* the build's jobs (the default filled in) */
};

/* Queue a build of a new version (its jobs run in `searchsync run`). Needs
 * the engine and the source (the mapping is checked against it). */
enum ops_status ops_reindex_request(const struct ops_env *env, const struct ops_reindex_req *rq,
                                    struct ops_reindex_res *res, struct ops_err *e);

struct ops_reset_res {
    unsigned cancelled; /* the version that was being built */
    char state[32];     /* the index config's state after ("" when not read back) */
};

/* Cancel the build in progress and delete its index. OPS_REFUSED when
 * nothing is being built. */
enum ops_status ops_reindex_reset(const struct ops_env *env, const char *alias,
                                  struct ops_reset_res *res, struct ops_err *e);

/* Delete every version of the index config (and so its alias); the config
 * stays, unavailable. OPS_REFUSED while a build runs. */
enum ops_status ops_reindex_delete_all(const struct ops_env *env, const char *alias,
                                       struct ops_err *e);

#endif
