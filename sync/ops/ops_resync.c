/* ops_resync: given documents rebuilt, as an operation (see ops_resync.h). */
#include "sync/ops/ops_resync.h"

#include <string.h>

#include "exit_codes.h"

enum ops_status ops_resync(const struct ops_env *env, const char *alias, const char *const *ids,
                           size_t n, struct resync_result *res, struct ops_err *e) {
    int rc = resync_ids(env->cfg, env->hub, alias, ids, n, res, e->msg, sizeof e->msg);
    e->at = OPS_AT_NONE;
    if (rc == EXIT_OK) e->st = OPS_OK;
    else if (rc == EXIT_USAGE) e->st = strstr(e->msg, "no index config") ? OPS_UNKNOWN : OPS_REFUSED;
    else e->st = OPS_FAILED;
    return e->st;
}
