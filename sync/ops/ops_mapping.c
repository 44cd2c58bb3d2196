/* ops_mapping: a mapping imported, as an operation (see ops_mapping.h). */
#include "sync/ops/ops_mapping.h"

#include <stdio.h>

enum ops_status ops_mapping_import(const struct ops_env *env, struct mapping_import *mi,
                                   struct ops_err *e) {
    bool owned;
    MYSQL *meta = ops_meta(env, &owned, e);
    if (!meta) return e->st;
    int rc = mapping_import_run(env->cfg, meta, mi);
    ops_meta_done(meta, owned);
    e->at = OPS_AT_NONE;
    e->st = rc == MI_OK ? OPS_OK : rc == MI_INVALID ? OPS_INVALID : OPS_FAILED;
    snprintf(e->msg, sizeof e->msg, "%s", mi->err);
    return e->st;
}
