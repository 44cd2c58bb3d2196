/* ops_resync: given documents of one index config rebuilt from MySQL now,
 * as an operation (sync/ops/ops.h). The producer is sync/pipeline/resync.c;
 * this owns what a caller asks and gets. */
#ifndef SS_OPS_RESYNC_H
#define SS_OPS_RESYNC_H
#include <stddef.h>

#include "sync/ops/ops.h"
#include "sync/pipeline/resync.h"

/* ids: root keys (42) or child ids (review-7). OPS_UNKNOWN: no such index
 * config; OPS_REFUSED: it has no version yet, or an id is of none of its
 * documents; OPS_FAILED: a server failed (the engine waited for). */
enum ops_status ops_resync(const struct ops_env *env, const char *alias, const char *const *ids,
                           size_t n, struct resync_result *res, struct ops_err *e);

#endif
