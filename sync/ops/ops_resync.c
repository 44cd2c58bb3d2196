/* ops_resync: given documents rebuilt, as an operation (see ops_resync.h).
 * Writes the engine refused as stale are looked at again: a document
 * edited in the engine by hand over the source binlog's last transaction
 * holds a version no read snapshot outranks, and is written over it the
 * way check --repair writes (sync/check/check.h). */
#include "sync/ops/ops_resync.h"

#include <stdio.h>
#include <string.h>

#include "exit_codes.h"
#include "sync/check/check.h"
#include "sync/pipeline/producer.h"

#define RESYNC_SETTLE_S 10 /* the daemon's checkpoint waited for before the last comparison */

/* the ids compared with MySQL and those that differ written again */
static int rewrite_stale(const struct ops_env *env, const char *alias, const char *const *ids,
                         size_t n, struct resync_result *res, struct ops_err *e) {
    struct producer pr;
    int rc = check_producer_open(&pr, env->cfg, env->hub, "resync");
    struct check_opts o = {.alias = alias, .settle_s = RESYNC_SETTLE_S};
    struct check_result cr = {0};
    if (rc == EXIT_OK) rc = check_rewrite_ids(&pr, &o, ids, n, &cr);
    if (rc != EXIT_OK)
        snprintf(e->msg, sizeof e->msg, "the documents refused as stale: %.1900s", pr.err);
    res->forced = cr.repair_forced;
    res->left = cr.nrepair_left;
    check_result_free(&cr);
    producer_close(&pr);
    return rc;
}

enum ops_status ops_resync(const struct ops_env *env, const char *alias, const char *const *ids,
                           size_t n, struct resync_result *res, struct ops_err *e) {
    int rc = resync_ids(env->cfg, env->hub, alias, ids, n, res, e->msg, sizeof e->msg);
    if (rc == EXIT_OK && res->stale) rc = rewrite_stale(env, alias, ids, n, res, e);
    e->at = OPS_AT_NONE;
    if (rc == EXIT_OK) e->st = OPS_OK;
    else if (rc == EXIT_USAGE) e->st = strstr(e->msg, "no index config") ? OPS_UNKNOWN : OPS_REFUSED;
    else e->st = OPS_FAILED;
    return e->st;
}
