/* ops_reindex: an index config's builds as operations (see ops_reindex.h). */
#include "sync/ops/ops_reindex.h"

#include <stdio.h>
#include <string.h>

#include "db.h"
#include "sbuf.h"
#include "search/search.h"
#include "sync/reindex/reindex.h"

static enum ops_status of_reindex(int rc, struct ops_err *e) {
    e->at = OPS_AT_NONE;
    e->st = rc == REINDEX_OK        ? OPS_OK
            : rc == REINDEX_REFUSED ? OPS_REFUSED
            : rc == REINDEX_UNKNOWN ? OPS_UNKNOWN
                                    : OPS_FAILED;
    return e->st;
}

enum ops_status ops_reindex_request(const struct ops_env *env, const struct ops_reindex_req *rq,
                                    struct ops_reindex_res *res, struct ops_err *e) {
    memset(res, 0, sizeof *res);
    bool owned;
    MYSQL *meta = ops_meta(env, &owned, e), *src = NULL;
    struct search_conn *k = NULL;
    struct ops_index ix;
    if (!meta) return e->st;
    /* the source first: a source it cannot read is what to fix before a
     * name (the configuration's fault, whatever alias was asked for) */
    if (!(src = ops_source(env, e))) goto out;
    if (ops_index_find(env, meta, rq->alias, &ix, e) != OPS_OK) goto out;
    if (!(k = ops_engine(env, e))) goto out;
    struct reindex_request req = {rq->alias, rq->buckets, rq->by_mod, env->by, 0};
    int rc = reindex_request(env->cfg, env->client, k, meta, src, &req, &res->version, e->msg,
                             sizeof e->msg);
    if (of_reindex(rc, e) == OPS_OK)
        res->buckets = rq->buckets > 0 ? rq->buckets : env->cfg->reindex.buckets;
out:
    search_conn_free(k);
    db_close(src);
    ops_meta_done(meta, owned);
    return e->st;
}

enum ops_status ops_reindex_reset(const struct ops_env *env, const char *alias,
                                  struct ops_reset_res *res, struct ops_err *e) {
    memset(res, 0, sizeof *res);
    bool owned;
    MYSQL *meta = ops_meta(env, &owned, e);
    struct search_conn *k = NULL;
    struct ops_index ix;
    if (!meta) return e->st;
    if (ops_index_find(env, meta, alias, &ix, e) != OPS_OK) goto out;
    if (!(k = ops_engine(env, e))) goto out;
    int rc = reindex_reset(env->cfg, k, meta, alias, env->by, e->msg, sizeof e->msg);
    if (of_reindex(rc, e) != OPS_OK) goto out;
    res->cancelled = ix.building;
    struct ops_index now;
    struct ops_err ignored;
    if (ops_index_find(env, meta, alias, &now, &ignored) == OPS_OK)
        snprintf(res->state, sizeof res->state, "%s", now.state);
out:
    search_conn_free(k);
    ops_meta_done(meta, owned);
    return e->st;
}

enum ops_status ops_reindex_delete_all(const struct ops_env *env, const char *alias,
                                       struct ops_err *e) {
    struct search_conn *k = ops_engine(env, e);
    if (!k) return e->st;
    bool owned;
    MYSQL *meta = ops_meta(env, &owned, e);
    if (meta) {
        int rc = reindex_delete_all(env->cfg, k, meta, alias, e->msg, sizeof e->msg);
        of_reindex(rc, e);
    }
    ops_meta_done(meta, owned);
    search_conn_free(k);
    return e->st;
}
