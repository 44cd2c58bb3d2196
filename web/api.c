/* api: the admin JSON API's dispatch, the answers its handlers share, and
 * the handlers of the routes without a file of their own (see api.h); the
 * index configs and their builds are web/indices_api.c's. */
#include "api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mysql.h>

#include "db.h"
#include "deliver/deliver.h"
#include "json_exact.h"
#include "jsonw.h"
#include "log.h"
#include "rebalance/rebalance.h"
#include "rebalance/registry.h"
#include "sync/ops/ops_assign.h"
#include "sync/ops/ops_reindex.h"
#include "search/search.h"
#include "sync/mapping/mapping_gen.h"
#include "sync/mapping/mapping_source.h"
#include "sync/sources/reader_stats.h"
#include "sync/status/status.h"
#include "sync/status/status_lists.h"
#include "metrics.h"
#include "indices_api.h"
#include "stmt.h"
#include "words.h"
#include "dead_letters_api.h"
#include "mapping_api.h"
#include "table_ops_api.h"
#include "topics_api.h"
#include "sources_api.h"
#include "search/index_version.h"

void api_resp_free(struct api_resp *r) {
    if (!r) return;
    sbuf_free(&r->body);
    sbuf_free(&r->headers);
}

const char *api_lookup(const struct api_ctx *ctx, enum api_lookup kind, const char *name) {
    return ctx && ctx->lookup ? ctx->lookup(ctx->lookup_cls, kind, name) : NULL;
}

void api_error(struct api_resp *r, int status, const char *error, const char *hint) {
    api_error_field(r, status, NULL, error, hint);
}

void api_error_field(struct api_resp *r, int status, const char *field, const char *error,
                     const char *hint) {
    r->status = status;
    r->content_type = "application/json";
    sbuf_reset(&r->body);
    jsonw w;
    jw_init(&w, &r->body);
    jw_obj_open(&w);
    jw_key(&w, "error");
    jw_str(&w, error);
    if (field && *field) {
        jw_key(&w, "field");
        jw_str(&w, field);
    }
    if (hint) {
        jw_key(&w, "hint");
        jw_str(&w, hint);
    }
    jw_obj_close(&w);
    sbuf_addc(&r->body, '\n');
}

void api_ok_json(struct api_resp *r, int status) {
    r->status = status;
    r->content_type = "application/json";
    sbuf_addc(&r->body, '\n');
}

/* ---------- per-request connections ---------- */

struct conns {
    MYSQL *meta, *src;
    struct search_conn *k;
    char err[1024];
};

static void conns_close(struct conns *c) {
    search_conn_free(c->k);
    db_close(c->src);
    db_close(c->meta);
}

/* the metadata schema (required): 503 when unreachable */
static bool open_meta(const struct api_ctx *ctx, struct conns *c, struct api_resp *r) {
    db_params mp = db_params_metadata(ctx->cfg);
    mp.database = ctx->cfg->metadata.database;
    c->meta = db_connect(&mp, c->err, sizeof c->err);
    if (c->meta) return true;
    api_error(r, 503, c->err, "the metadata server must be reachable for this call; retry "
                              "once it is");
    return false;
}

MYSQL *api_meta_connect(const struct api_ctx *ctx, struct api_resp *r) {
    struct conns c = {0};
    return open_meta(ctx, &c, r) ? c.meta : NULL;
}

bool api_limit_arg(const struct api_ctx *ctx, struct api_resp *r, long def, long *limit) {
    const char *lim = api_lookup(ctx, API_ARG, "limit");
    *limit = def;
    if (!lim) return true;
    char *end = NULL;
    *limit = strtol(lim, &end, 10);
    if (!*lim || *end || *limit < 1 || *limit > 1000) {
        api_error_field(r, 400, "limit", "\"limit\" must be an integer from 1 to 1000", NULL);
        return false;
    }
    return true;
}

void api_ops_env(const struct api_ctx *ctx, struct ops_env *env, const char *by) {
    *env = (struct ops_env){.cfg = ctx->cfg, .client = ctx->client,
                            .hub = ctx->d ? deliver_hub_of(ctx->d) : NULL, .by = by};
}

void api_ops_error(struct api_resp *r, const struct ops_err *e, int failed_status,
                   const char *hint) {
    switch (e->st) {
    case OPS_INVALID: api_error(r, 400, e->msg, hint); break;
    case OPS_UNKNOWN: api_error(r, 404, e->msg, hint); break;
    case OPS_REFUSED: api_error(r, 409, e->msg, hint); break;
    case OPS_STARTING: api_error(r, 503, e->msg, "retry in a few seconds"); break;
    case OPS_DOWN: api_error(r, 503, e->msg, hint); break;
    default: api_error(r, failed_status, e->msg, hint); break;
    }
}

void api_answer_open(jsonw *w, struct api_resp *r, const char *alias) {
    jw_init(w, &r->body);
    jw_obj_open(w);
    if (alias) {
        jw_key(w, "alias");
        jw_str(w, alias);
    }
}

void api_rows_reply(struct api_resp *r, long n, const struct stmt_rows *rows, const char *err,
                    const struct api_rows *q) {
    if (n < 0) {
        api_error(r, q->fail_status, err, q->fail_hint);
        return;
    }
    jsonw w;
    api_answer_open(&w, r, q->alias);
    jw_key(&w, q->key);
    stmt_rows_json(&w, rows, q->names, q->num, q->ncols);
    jw_obj_close(&w);
    api_ok_json(r, 200);
}

bool api_engine_ready(const struct api_ctx *ctx, struct api_resp *r) {
    if (ctx->client) return true;
    api_error(r, 503, API_ENGINE_NOT_DETECTED, "retry in a few seconds");
    return false;
}

/* ---------- GET /api/v1/status ---------- */

/* 200 whatever is down: a monitoring system parses one shape, and
 * `errors` (with `ok`, `metadata.reachable`, `source.reachable`) says what
 * could not be read */
static void h_status(const struct api_ctx *ctx, struct api_resp *r) {
    struct conns c = {0};
    db_params mp = db_params_metadata(ctx->cfg);
    mp.database = ctx->cfg->metadata.database;
    c.meta = db_connect(&mp, c.err, sizeof c.err);
    char src_err[1024] = "";
    db_params sp = db_params_source(ctx->cfg);
    c.src = db_connect(&sp, src_err, sizeof src_err);
    const char *engine_err = NULL;
    if (ctx->client) c.k = search_conn_new(ctx->client);
    else engine_err = API_ENGINE_NOT_DETECTED;
    struct ss_status st;
    status_collect(ctx->cfg, c.meta, c.err, c.src, src_err, c.k, engine_err, &st);
    status_json(&st, &r->body);
    status_free(&st);
    api_ok_json(r, 200);
    conns_close(&c);
}

/* ---------- GET /api/v1/checks, /api/v1/indices/{alias}/checks ---------- */

/* The last 50 consistency checks (check_runs, newest first), of one index
 * config when alias is not empty; each with its JSON report. */
static void h_checks(const struct api_ctx *ctx, const char *alias, struct api_resp *r) {
    struct conns c = {0};
    if (!open_meta(ctx, &c, r)) return;
    struct stmt_rows rows = {0};
    if (status_checks_rows(c.meta, ctx->cfg->source.name, alias, &rows, c.err, sizeof c.err) <
        0) {
        api_error(r, 500, c.err, "reading check_runs failed; see the daemon's log");
        conns_close(&c);
        return;
    }
    jsonw w;
    jw_init(&w, &r->body);
    jw_obj_open(&w);
    jw_key(&w, "checks");
    jw_arr_open(&w);
    static const char *const names[] = {"id", "index", "status", "window_s", "trigger", "node",
                                        "started_at", "finished_at", "missing", "extra",
                                        "different", "duplicate", "documents_fetched"};
    static const bool num[] = {true, false, false, true, false, false,
                               false, false, true, true, true, true, true};
    for (size_t i = 0; i < rows.nrows; i++) {
        jw_obj_open(&w);
        for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
            const char *v = STMT_CELL(&rows, i, k);
            jw_key(&w, names[k]);
            if (!v) jw_null(&w);
            else if (num[k]) jw_int(&w, atoll(v));
            else jw_str(&w, v);
        }
        const char *d = STMT_CELL(&rows, i, 13), *e = STMT_CELL(&rows, i, 14);
        cJSON *dj = d ? json_exact_parse(d, strlen(d)) : NULL; /* embedded only if it parses */
        jw_key(&w, "report");
        if (dj) jw_raw(&w, d, strlen(d));
        else jw_null(&w);
        cJSON_Delete(dj);
        jw_key(&w, "error");
        jw_str0(&w, e);
        jw_obj_close(&w);
    }
    jw_arr_close(&w);
    jw_obj_close(&w);
    stmt_rows_free(&rows);
    api_ok_json(r, 200);
    conns_close(&c);
}

/* ---------- GET /api/v1/delayed/runs, /api/v1/delayed/snapshots ---------- */

/* The answer {key: rows} of one list of the source on the metadata
 * server; rows named by names, num[i] written as a number; a failure names
 * the table (what). */
static void source_rows_reply(const struct api_ctx *ctx, struct api_resp *r,
                              enum status_list list, const char *what, const char *key,
                              const char *const *names, const bool *num, size_t n) {
    struct conns c = {0};
    if (!open_meta(ctx, &c, r)) return;
    char hint[128];
    snprintf(hint, sizeof hint, "reading %s failed; see the daemon's log", what);
    struct stmt_rows rows = {0};
    long got =
        status_list_rows(c.meta, ctx->cfg->source.name, list, &rows, c.err, sizeof c.err);
    api_rows_reply(r, got, &rows, c.err,
                   &(struct api_rows){NULL, key, names, num, n, 500, hint});
    stmt_rows_free(&rows);
    conns_close(&c);
}

/* The last 50 delayed runs (delayed_runs, newest first), from cron or the
 * daemon's schedule, with their figures (docs/operations.md, Delayed run). */
static void h_delayed_runs(const struct api_ctx *ctx, struct api_resp *r) {
    static const char *const names[] = {"id", "status", "index", "node", "buckets", "snapshots",
                                        "ids", "documents_rebuilt", "documents_deleted",
                                        "errors", "started_at", "finished_at", "error"};
    static const bool num[] = {true, false, false, false, true, true, true, true, true, true,
                               false, false, false};
    source_rows_reply(ctx, r, SL_DELAYED_RUNS, "delayed_runs", "runs", names, num,
                      sizeof names / sizeof names[0]);
}

/* Change snapshots of one status (?status=init|running|error|done; default:
 * every one not done), the newest 500, and their counts per table and
 * status. */
static void h_delayed_snapshots(const struct api_ctx *ctx, struct api_resp *r) {
    const char *status = api_lookup(ctx, API_ARG, "status");
    if (status && strcmp(status, "init") && strcmp(status, "running") && strcmp(status, "error") &&
        strcmp(status, "done")) {
        api_error(r, 400, "status must be one of init, running, error, done",
                  "leave it out for every snapshot not done yet");
        return;
    }
    struct conns c = {0};
    if (!open_meta(ctx, &c, r)) return;
    struct stmt_rows rows = {0}, counts = {0};
    const char *source = ctx->cfg->source.name;
    if (status_snapshots_rows(c.meta, source, status ? status : "", &rows, c.err, sizeof c.err) <
            0 ||
        status_list_rows(c.meta, source, SL_SNAPSHOT_COUNTS, &counts, c.err, sizeof c.err) < 0) {
        api_error(r, 500, c.err, "reading change_snapshots failed; see the daemon's log");
        stmt_rows_free(&rows);
        conns_close(&c);
        return;
    }
    static const char *const names[] = {"id", "db", "table", "operation", "business_id",
                                        "status", "attempts", "run_id", "created_at",
                                        "updated_at", "error"};
    static const bool num[] = {true, false, false, false, false, false, true, true,
                               false, false, false};
    static const char *const cn[] = {"table", "status", "count"};
    static const bool cnum[] = {false, false, true};
    jsonw w;
    jw_init(&w, &r->body);
    jw_obj_open(&w);
    jw_key(&w, "counts");
    stmt_rows_json(&w, &counts, cn, cnum, 3);
    jw_key(&w, "snapshots");
    stmt_rows_json(&w, &rows, names, num, sizeof names / sizeof names[0]);
    jw_obj_close(&w);
    stmt_rows_free(&rows);
    stmt_rows_free(&counts);
    api_ok_json(r, 200);
    conns_close(&c);
}

/* The relation tops the delayed run uses (relation_tops: generated from the
 * mapping's relations by each run, or hand-written in the mapping file):
 * per delay-effect table and index config, each path's levels in order. */
static void h_relation_tops(const struct api_ctx *ctx, struct api_resp *r) {
    static const char *const names[] = {"db", "table", "index", "path", "level", "level_db",
                                        "sql", "output_column", "document_table", "origin"};
    static const bool num[] = {false, false, false, true, true, false, false, false, false,
                               false};
    source_rows_reply(ctx, r, SL_RELATION_TOPS, "relation_tops", "levels", names, num,
                      sizeof names / sizeof names[0]);
}

/* ---------- POST /api/v1/rebalance ---------- */

/* A rebalance of this source's reindex jobs over the cluster's live nodes,
 * coordinated by this request as `searchsync rebalance` does it (the node's
 * operation, sync/ops/ops_assign.h): answered once the nodes got their
 * jobs, with the assignment. */
static void h_rebalance(const struct api_ctx *ctx, struct api_resp *r) {
    const struct ss_config *cfg = ctx->cfg;
    char me[300];
    snprintf(me, sizeof me, "api-%s", cfg->cluster.node_id && cfg->cluster.node_id[0]
                                          ? cfg->cluster.node_id : "node");
    struct ops_env env;
    api_ops_env(ctx, &env, "admin API");
    struct ops_assign_req rq = {.me = me, .connect_ms = 3000};
    sbuf assign = SBUF_INIT;
    struct ops_err e;
    if (ops_assign(&env, &rq, &assign, &e) != OPS_OK) {
        api_ops_error(r, &e, 503,
                      e.st == OPS_REFUSED ? "a standalone daemon runs every reindex job itself: "
                                            "nothing to rebalance"
                      : e.st == OPS_DOWN  ? "ZooKeeper must be reachable for this call; retry "
                                            "once it is"
                                          : "the rebalance did not complete; the daemons retry "
                                            "by themselves, or call again");
        sbuf_free(&assign);
        return;
    }
    jsonw w;
    jw_init(&w, &r->body);
    jw_obj_open(&w);
    jw_key(&w, "assign");
    jw_raw(&w, assign.data ? assign.data : "{}", assign.data ? assign.len : 2);
    jw_obj_close(&w);
    sbuf_free(&assign);
    api_ok_json(r, 200);
}

/* ---------- GET /api/v1/nodes ---------- */

/* The daemons of this source: with ZooKeeper, every node registered in the
 * cluster (its entity as it published it: reader or standby, source, ...);
 * without, the standalone reader lock's holder (docs/cluster.md). */
static void h_nodes(const struct api_ctx *ctx, struct api_resp *r) {
    const struct ss_config *cfg = ctx->cfg;
    jsonw w;
    if (cfg->cluster.zookeeper && cfg->cluster.zookeeper[0]) {
        char err[600];
        struct zk *z = zk_open(cfg->cluster.zookeeper, cfg->cluster.session_timeout_ms, 3000, err,
                               sizeof err);
        sbuf nodes = SBUF_INIT;
        if (!z || registry_list(z, cfg->cluster.name, &nodes, err, sizeof err) < 0) {
            zk_close(z);
            sbuf_free(&nodes);
            api_error(r, 503, err, "ZooKeeper must be reachable for this call; retry once it is");
            return;
        }
        zk_close(z);
        jw_init(&w, &r->body);
        jw_obj_open(&w);
        jw_key(&w, "cluster");
        jw_str(&w, cfg->cluster.name);
        jw_key(&w, "nodes");
        jw_raw(&w, nodes.data, nodes.len);
        jw_obj_close(&w);
        sbuf_free(&nodes);
        api_ok_json(r, 200);
        return;
    }
    struct conns c = {0};
    if (!open_meta(ctx, &c, r)) return;
    struct stmt_rows rows = {0};
    if (status_list_rows(c.meta, cfg->source.name, SL_READER_LOCK, &rows, c.err, sizeof c.err) <
        0) {
        api_error(r, 500, c.err, "reading reader_locks failed; see the daemon's log");
        conns_close(&c);
        return;
    }
    jw_init(&w, &r->body);
    jw_obj_open(&w);
    jw_key(&w, "cluster");
    jw_null(&w);
    jw_key(&w, "nodes");
    jw_arr_open(&w);
    for (size_t i = 0; i < rows.nrows; i++) {
        const char *owner = STMT_CELL(&rows, i, 0), *fence = STMT_CELL(&rows, i, 1),
                   *held = STMT_CELL(&rows, i, 2);
        jw_obj_open(&w);
        jw_key(&w, "node");
        jw_str0(&w, owner);
        jw_key(&w, "entity");
        jw_obj_open(&w);
        jw_key(&w, "source");
        jw_str(&w, cfg->source.name);
        jw_key(&w, "reader");
        jw_str(&w, held && !strcmp(held, "1") ? "leader" : "stopped");
        jw_key(&w, "fence");
        jw_int(&w, fence ? atoll(fence) : 0);
        jw_obj_close(&w);
        jw_obj_close(&w);
    }
    jw_arr_close(&w);
    jw_obj_close(&w);
    stmt_rows_free(&rows);
    conns_close(&c);
    api_ok_json(r, 200);
}

/* ---------- GET /metrics ---------- */

/* ---------- GET /api/v1/live ---------- */

/* This daemon's figures that move all the time, from its own memory (no
 * server is asked): delivery's queues and fuses, the engine's state, what
 * the binlog reader read. `searchsync status` prints them (cmd/cmd_status.c). */
static void h_live(const struct api_ctx *ctx, struct api_resp *r) {
    if (!ctx->d) {
        api_error(r, 503, "the daemon is still starting: delivery is not running yet",
                  "retry in a few seconds");
        return;
    }
    struct deliver_stats ds;
    deliver_get_stats(ctx->d, &ds);
    bool engine_up = true;
    sbuf fuses = SBUF_INIT;
    deliver_fuses_json(ctx->d, &fuses, &engine_up);
    struct reader_figures f = ctx->rs ? reader_stats_copy(ctx->rs) : (struct reader_figures){0};
    jsonw w;
    jw_init(&w, &r->body);
    jw_obj_open(&w);
    jw_key(&w, "source");
    jw_str(&w, ctx->cfg->source.name);
    /* queued and in flight: every stream of the node's delivery (what the
     * engine has ahead of it); the rest is the binlog reader's stream */
    struct deliver_stats hs;
    deliver_hub_stats(deliver_hub_of(ctx->d), &hs);
    jw_key(&w, "queued");
    jw_int(&w, hs.queued);
    jw_key(&w, "inflight");
    jw_int(&w, hs.inflight);
    jw_key(&w, "acknowledged");
    jw_uint(&w, ds.docs_ok);
    /* the low-water mark: every change of a transaction ending at or before
     * it was acknowledged by the engine (saved as the checkpoint at the next
     * checkpoint_interval_ms) */
    char lw[4200];
    deliver_low_water(ctx->d, lw, sizeof lw);
    jw_key(&w, "acknowledged_position");
    if (lw[0])
        jw_str(&w, lw);
    else
        jw_null(&w);
    jw_key(&w, "dead_letters");
    jw_uint(&w, ds.dead_letters);
    jw_key(&w, "engine_up");
    jw_bool(&w, engine_up);
    jw_key(&w, "fuses_blown");
    jw_raw(&w, fuses.data, fuses.len);
    jw_key(&w, "streams");
    sbuf streams = SBUF_INIT;
    deliver_streams_json(ctx->d, &streams);
    jw_raw(&w, streams.data, streams.len);
    sbuf_free(&streams);
    jw_key(&w, "reader");
    if (f.reading || f.file[0]) {
        jw_obj_open(&w);
        jw_key(&w, "reading");
        jw_bool(&w, f.reading);
        jw_key(&w, "position");
        if (f.file[0]) {
            char pos[BL_FILE_MAX + 32];
            snprintf(pos, sizeof pos, "%s:%llu", f.file, (unsigned long long)f.pos);
            jw_str(&w, pos);
        } else {
            jw_null(&w);
        }
        jw_key(&w, "at_end");
        jw_bool(&w, f.at_end);
        jw_key(&w, "last_commit_time");
        if (f.commit_ts) jw_uint(&w, f.commit_ts);
        else jw_null(&w);
        jw_key(&w, "transactions");
        jw_uint(&w, f.txns);
        jw_obj_close(&w);
    } else {
        jw_null(&w); /* standing by, or not started */
    }
    jw_obj_close(&w);
    sbuf_free(&fuses);
    api_ok_json(r, 200);
}

void api_handle(const struct api_ctx *ctx, const struct route *rt, const char *body, size_t len,
                struct api_resp *r) {
    r->status = 500;
    r->content_type = "application/json";
    r->allow = NULL;
    sbuf_reset(&r->body);
    sbuf_reset(&r->headers);
    switch (rt->id) {
    case ROUTE_STATUS: h_status(ctx, r); break;
    case ROUTE_INDICES:
    case ROUTE_REINDEX_GET:
    case ROUTE_REINDEX_POST:
    case ROUTE_REINDEX_RESET: indices_api_handle(ctx, rt, body, len, r); break;
    case ROUTE_METRICS: metrics_handle(ctx, r); break;
    case ROUTE_NODES: h_nodes(ctx, r); break;
    case ROUTE_REBALANCE: h_rebalance(ctx, r); break;
    case ROUTE_LIVE: h_live(ctx, r); break;
    case ROUTE_CHECKS: h_checks(ctx, rt->alias, r); break;
    case ROUTE_DELAYED_RUNS: h_delayed_runs(ctx, r); break;
    case ROUTE_DELAYED_SNAPSHOTS: h_delayed_snapshots(ctx, r); break;
    case ROUTE_RELATION_TOPS: h_relation_tops(ctx, r); break;
    case ROUTE_WORDS_LIST:
    case ROUTE_WORD_CREATE:
    case ROUTE_WORD_GET:
    case ROUTE_WORD_UPDATE:
    case ROUTE_WORD_DELETE:
    case ROUTE_WORD_PUBLISH: words_handle(ctx, rt, body, len, r); break;
    case ROUTE_DICT: dict_handle(ctx, rt->file, r); break;
    case ROUTE_DEAD_LETTERS_LIST:
    case ROUTE_DEAD_LETTER_GET:
    case ROUTE_DEAD_LETTER_DELETE:
    case ROUTE_DEAD_LETTERS_REPLAY: dead_letters_handle(ctx, rt, body, len, r); break;
    case ROUTE_MAPPING_GET:
    case ROUTE_MAPPING_PLAN:
    case ROUTE_MAPPING_APPLY:
    case ROUTE_SOURCE_TABLES:
    case ROUTE_SOURCE_TABLE_MAPPING: mapping_api_handle(ctx, rt, body, len, r); break;
    case ROUTE_RESYNC:
    case ROUTE_DELETE_ALL:
    case ROUTE_SYNC_LOG:
    case ROUTE_RUNS: table_ops_handle(ctx, rt, body, len, r); break;
    case ROUTE_TOPICS_LIST:
    case ROUTE_TOPIC_ADD:
    case ROUTE_TOPIC_DELETE: topics_api_handle(ctx, rt, body, len, r); break;
    case ROUTE_SOURCES_LIST:
    case ROUTE_SOURCE_ADD:
    case ROUTE_SOURCE_EDIT:
    case ROUTE_SOURCE_REMOVE: sources_api_handle(ctx, rt, body, len, r); break;
    case ROUTE_BAD_METHOD: {
        sbuf h = SBUF_INIT;
        sbuf_printf(&h, "this path takes: %s", rt->allow);
        api_error(r, 405, "method not allowed on this path", h.data);
        sbuf_free(&h);
        r->allow = rt->allow;
        break;
    }
    case ROUTE_NOT_FOUND:
    default:
        api_error(r, 404, "no such endpoint",
                  "see docs/http-api.md: /api/v1/status, /api/v1/live, /api/v1/indices, /api/v1/nodes, "
                  "/api/v1/rebalance, "
                  "/api/v1/checks, "
                  "/api/v1/delayed/runs, /api/v1/delayed/snapshots, "
                  "/api/v1/indices/{alias}/reindex, /api/v1/words, /api/v1/dead-letters, "
                  "/api/v1/mapping, /api/v1/source/tables, /api/v1/sync-log, /api/v1/topics, "
                  "/api/v1/sources, "
                  "/dict/ext.txt, /metrics");
        break;
    }
}
