/* ops_replay: dead letters replayed or discarded (see ops_replay.h). */
#include "sync/ops/ops_replay.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "deliver/deliver.h"
#include "deliver/store.h"
#include "sync/pipeline/streams.h"

static long count_left(MYSQL *m, const char *source, const char *index) {
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT COUNT(*) FROM dead_letters WHERE source = ");
    db_quote(m, &q, source, strlen(source));
    if (index) {
        sbuf_adds(&q, " AND index_name = ");
        db_quote(m, &q, index, strlen(index));
    }
    char err[256];
    char *v = db_scalar(m, q.data, err, sizeof err);
    sbuf_free(&q);
    long n = v ? atol(v) : -1;
    free(v);
    return n;
}

enum ops_status ops_replay(const struct ops_env *env, const struct ops_replay_req *rq,
                           struct ops_replay_res *res, struct ops_err *e) {
    const struct ss_config *cfg = env->cfg;
    memset(res, 0, sizeof *res);
    res->left = -1;
    if (!env->client)
        return ops_fail(e, OPS_STARTING, OPS_AT_ENGINE,
                        "the daemon is still starting: the engine is not detected yet");
    bool owned;
    MYSQL *m = ops_meta(env, &owned, e);
    if (!m) return e->st;
    db_params p = db_params_metadata(cfg);
    p.database = cfg->metadata.database;
    struct dl_store *store = dl_store_new(&p, cfg->source.name, e->msg, sizeof e->msg);
    struct deliver *d = NULL;
    if (store) {
        struct deliver_opts o;
        deliver_opts_from_config(&o, cfg);
        o.dead_letter = dl_store_put; /* what fails again is a dead letter again */
        o.dead_letter_ud = store;
        o.linger_ms = 0; /* a replay goes as fast as it can */
        o.linger_refresh_percent = 0;
        o.ordered_versions = stream_ordered("dead-letters"); /* no: in the order they died */
        d = deliver_open(env->hub, &o, env->client, "dead-letters", DELIVER_BULK, e->msg,
                         sizeof e->msg);
    }
    res->replayed = d ? dl_replay(m, cfg->source.name, rq->index, rq->id, d,
                                  cfg->delivery.drain_timeout_ms, e->msg, sizeof e->msg)
                      : -1;
    deliver_free(d);
    dl_store_free(store);
    if (res->replayed < 0) {
        res->replayed = 0;
        e->st = OPS_FAILED, e->at = OPS_AT_NONE; /* e->msg says why */
    } else {
        res->left = count_left(m, cfg->source.name, rq->index);
        e->st = OPS_OK, e->at = OPS_AT_NONE;
    }
    ops_meta_done(m, owned);
    return e->st;
}

enum ops_status ops_dead_letter_discard(const struct ops_env *env, uint64_t id,
                                        struct ops_err *e) {
    bool owned;
    MYSQL *m = ops_meta(env, &owned, e);
    if (!m) return e->st;
    const char *source = env->cfg->source.name;
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "DELETE FROM dead_letters WHERE source = ");
    db_quote(m, &q, source, strlen(source));
    sbuf_printf(&q, " AND id = %" PRIu64, id);
    long long n = db_exec_rows(m, q.data, e->msg, sizeof e->msg);
    sbuf_free(&q);
    if (n < 0) e->st = OPS_FAILED, e->at = OPS_AT_METADATA;
    else if (n == 0)
        ops_fail(e, OPS_UNKNOWN, OPS_AT_NONE, "no such dead letter of source %s", source);
    else
        e->st = OPS_OK, e->at = OPS_AT_NONE;
    ops_meta_done(m, owned);
    return e->st;
}
