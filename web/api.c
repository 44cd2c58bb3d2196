/* api: handlers of the admin JSON API and /metrics (see api.h). */
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
#include "metrics.h"
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

static void ok_json(struct api_resp *r, int status) {
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

void api_rows_reply(struct api_resp *r, MYSQL *m, const struct api_rows *q) {
    struct stmt_rows rows = {0};
    char err[1024];
    if (stmt_query(m, q->sql, q->params, q->nparams, &rows, err, sizeof err) < 0) {
        api_error(r, q->fail_status, err, q->fail_hint);
    } else {
        jsonw w;
        api_answer_open(&w, r, q->alias);
        jw_key(&w, q->key);
        stmt_rows_json(&w, &rows, q->names, q->num, q->ncols);
        jw_obj_close(&w);
        ok_json(r, 200);
    }
    stmt_rows_free(&rows);
}

bool api_engine_ready(const struct api_ctx *ctx, struct api_resp *r) {
    if (ctx->client) return true;
    api_error(r, 503, API_ENGINE_NOT_DETECTED, "retry in a few seconds");
    return false;
}

/* the row of alias among this source's index configs:
 * id, state, current_version, building_version, epoch, history_retention */
static int index_row(const struct api_ctx *ctx, struct conns *c, const char *alias,
                     struct stmt_rows *row, struct api_resp *r) {
    /* among the index configs this source feeds (sync/mapping/mapping_source.h) */
    const char *p[] = {MP_FED_BY_ARGS(ctx->cfg), alias};
    long n = stmt_query(c->meta,
                        "SELECT id, state, current_version, building_version, epoch, "
                        "history_retention FROM index_configs WHERE " MP_FED_BY_PARAMS
                        " AND alias = ?",
                        p, 4, row, c->err, sizeof c->err);
    if (n < 0) {
        api_error(r, 500, c->err, "reading index_configs failed; see the daemon's log");
        return -1;
    }
    if (n == 0) {
        stmt_rows_free(row);
        sbuf e = SBUF_INIT;
        sbuf_printf(&e, "source %s has no index config \"%s\"", ctx->cfg->source.name, alias);
        api_error(r, 404, e.data, "GET /api/v1/indices lists them; a new one comes with "
                                  "searchsync mapping import");
        sbuf_free(&e);
        return -1;
    }
    return 0;
}

/* ---------- JSON helpers ---------- */

/* a TIMESTAMP(3) as ISO 8601 UTC with milliseconds (the session is UTC: db.c) */
#define TS(col) "CONCAT(LEFT(DATE_FORMAT(" col ", '%Y-%m-%dT%H:%i:%s.%f'), 23), 'Z')"

/* a version number, null when 0 (none) */
static void jw_version(jsonw *w, const char *s) {
    if (!s || !strcmp(s, "0")) jw_null(w);
    else jw_int_text(w, s);
}

/* row r of t as an object: spec is "name:kind,..." kinds s (string),
 * n (number), v (version, 0 = null) */
static void row_obj(jsonw *w, const struct stmt_rows *t, size_t r, const char *const *names,
                    const char *kinds) {
    jw_obj_open(w);
    for (size_t c = 0; c < t->ncols && kinds[c]; c++) {
        jw_key(w, names[c]);
        const char *v = STMT_CELL(t, r, c);
        if (kinds[c] == 'n') jw_int_text(w, v);
        else if (kinds[c] == 'v') jw_version(w, v);
        else jw_str0(w, v);
    }
    jw_obj_close(w);
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
    ok_json(r, 200);
    conns_close(&c);
}

/* ---------- GET /api/v1/checks, /api/v1/indices/{alias}/checks ---------- */

/* The last 50 consistency checks (check_runs, newest first), of one index
 * config when alias is not empty; each with its JSON report. */
static void h_checks(const struct api_ctx *ctx, const char *alias, struct api_resp *r) {
    struct conns c = {0};
    if (!open_meta(ctx, &c, r)) return;
    struct stmt_rows rows = {0};
    const char *p[] = {ctx->cfg->source.name, alias, alias};
    if (stmt_query(c.meta,
                   "SELECT id, index_alias, status, window_s, trigger_kind, node, "
                   "DATE_FORMAT(started_at, '%Y-%m-%dT%H:%i:%s.%fZ'), "
                   "DATE_FORMAT(finished_at, '%Y-%m-%dT%H:%i:%s.%fZ'), missing, extra, different, "
                   "duplicate, documents_fetched, details, error FROM check_runs WHERE source = ? "
                   "AND (? = '' OR index_alias = ?) ORDER BY id DESC LIMIT 50",
                   p, 3, &rows, c.err, sizeof c.err) < 0) {
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
    ok_json(r, 200);
    conns_close(&c);
}

/* ---------- GET /api/v1/delayed/runs, /api/v1/delayed/snapshots ---------- */

/* rows as an array of objects named by names; num[i]: written as a number */
#define ISO(col) STMT_ISO(col)

/* The answer {key: rows} of one query (sql) on the metadata server with the
 * source's name as its parameter; rows named by names, num[i] written as a
 * number; a failure names the table (what). */
static void source_rows_reply(const struct api_ctx *ctx, struct api_resp *r, const char *sql,
                              const char *what, const char *key, const char *const *names,
                              const bool *num, size_t n) {
    struct conns c = {0};
    if (!open_meta(ctx, &c, r)) return;
    const char *p[] = {ctx->cfg->source.name};
    char hint[128];
    snprintf(hint, sizeof hint, "reading %s failed; see the daemon's log", what);
    api_rows_reply(r, c.meta, &(struct api_rows){sql, p, 1, NULL, key, names, num, n, 500, hint});
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
    source_rows_reply(ctx, r,
                      "SELECT id, status, index_alias, node, buckets, snapshots, ids, "
                      "docs_written, docs_deleted, errors, " ISO("started_at") ", "
                      ISO("finished_at") ", error_text FROM delayed_runs WHERE source = ? "
                      "ORDER BY id DESC LIMIT 50",
                      "delayed_runs", "runs", names, num, sizeof names / sizeof names[0]);
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
    const char *p[] = {ctx->cfg->source.name, status ? status : ""};
    if (stmt_query(c.meta,
                   "SELECT id, db_name, table_name, operation, business_id, status, attempts, "
                   "run_id, " ISO("created_at") ", " ISO("updated_at") ", error_text FROM "
                   "change_snapshots WHERE source = ? AND (IF(? = '', status <> 'done', "
                   "status = ?)) ORDER BY id DESC LIMIT 500",
                   (const char *[]){p[0], p[1], p[1]}, 3, &rows, c.err, sizeof c.err) < 0 ||
        stmt_query(c.meta,
                   "SELECT CONCAT(db_name, '.', table_name), status, COUNT(*) FROM "
                   "change_snapshots WHERE source = ? GROUP BY db_name, table_name, status "
                   "ORDER BY db_name, table_name, status",
                   p, 1, &counts, c.err, sizeof c.err) < 0) {
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
    ok_json(r, 200);
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
    source_rows_reply(ctx, r,
                      "SELECT t.db_name, t.table_name, i.alias, t.path, t.level, t.level_db, "
                      "t.level_sql, t.output_column, t.doc_table, t.origin FROM relation_tops t "
                      "LEFT JOIN index_configs i ON i.id = t.top_index_id WHERE t.source = ? "
                      "ORDER BY t.db_name, t.table_name, i.alias, t.path, t.level",
                      "relation_tops", "levels", names, num, sizeof names / sizeof names[0]);
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
    ok_json(r, 200);
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
        ok_json(r, 200);
        return;
    }
    struct conns c = {0};
    if (!open_meta(ctx, &c, r)) return;
    struct stmt_rows rows = {0};
    const char *p[] = {cfg->source.name};
    if (stmt_query(c.meta,
                   "SELECT owner, fence, IS_USED_LOCK(CONCAT('searchsync:reader:', MD5(source))) "
                   "IS NOT NULL FROM reader_locks WHERE source = ?",
                   p, 1, &rows, c.err, sizeof c.err) < 0) {
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
    ok_json(r, 200);
}

/* ---------- GET /api/v1/indices ---------- */

static void h_indices(const struct api_ctx *ctx, struct api_resp *r) {
    struct conns c = {0};
    if (!open_meta(ctx, &c, r)) return;
    struct stmt_rows ix = {0}, vs = {0};
    const char *p[] = {MP_FED_BY_ARGS(ctx->cfg)};
    if (stmt_query(c.meta,
                   "SELECT id, alias, state, current_version, building_version, epoch, "
                   "history_retention FROM index_configs WHERE " MP_FED_BY_PARAMS
                   " ORDER BY position, id",
                   p, 3, &ix, c.err, sizeof c.err) < 0 ||
        stmt_query(c.meta,
                   "SELECT v.index_id, v.version, v.physical_name, v.state, "
                   TS("v.created_at") ", " TS("v.switched_at") " FROM index_versions v "
                   "WHERE v.index_id IN " MP_FED_BY_IDS " ORDER BY v.index_id, v.version",
                   p, 3, &vs, c.err, sizeof c.err) < 0) {
        api_error(r, 500, c.err, "reading index_configs failed; see the daemon's log");
        goto out;
    }
    jsonw w;
    jw_init(&w, &r->body);
    jw_obj_open(&w);
    jw_key(&w, "source");
    jw_str(&w, ctx->cfg->source.name);
    /* the generation the daemon routes with (the metadata may hold an edit
     * it has not taken yet, or refused) */
    jw_key(&w, "mapping_generation");
    if (ctx->gen) jw_uint(&w, ctx->gen->id);
    else jw_null(&w);
    jw_key(&w, "indices");
    jw_arr_open(&w);
    static const char *const vn[] = {"index_id", "version", "index", "state", "created_at",
                                     "switched_at"};
    for (size_t i = 0; i < ix.nrows; i++) {
        jw_obj_open(&w);
        jw_key(&w, "alias");
        jw_str0(&w, STMT_CELL(&ix, i, 1));
        jw_key(&w, "state");
        jw_str0(&w, STMT_CELL(&ix, i, 2));
        jw_key(&w, "current_version");
        jw_version(&w, STMT_CELL(&ix, i, 3));
        jw_key(&w, "building_version");
        jw_version(&w, STMT_CELL(&ix, i, 4));
        jw_key(&w, "epoch");
        jw_int_text(&w, STMT_CELL(&ix, i, 5));
        jw_key(&w, "history_retention");
        jw_int_text(&w, STMT_CELL(&ix, i, 6));
        /* as the generation in force has it (its configuration fields only:
         * the run-time ones are the reader's) */
        const struct mp_index *gx = ctx->gen ? mapping_gen_index(ctx->gen, STMT_CELL(&ix, i, 1))
                                             : NULL;
        jw_key(&w, "in_force");
        if (gx) {
            jw_obj_open(&w);
            jw_key(&w, "tables");
            jw_uint(&w, gx->ntables);
            jw_key(&w, "routed");
            jw_bool(&w, !gx->unusable);
            jw_key(&w, "stopped");
            jw_str0(&w, gx->stopped);
            if (gx->unit) { /* over shard tables: its pattern, the shards it reads now */
                char pat[300];
                snprintf(pat, sizeof pat, "%s.%s", gx->pattern_db ? gx->pattern_db : "",
                         gx->pattern_table ? gx->pattern_table : "");
                jw_key(&w, "pattern");
                jw_str(&w, pat);
                jw_key(&w, "shards");
                jw_arr_open(&w);
                for (size_t u = 0; u < ctx->gen->m.nindices; u++)
                    if (!strcmp(ctx->gen->m.indices[u].alias, gx->alias))
                        jw_str(&w, ctx->gen->m.indices[u].unit);
                jw_arr_close(&w);
            }
            jw_obj_close(&w);
        } else {
            jw_null(&w);
        }
        jw_key(&w, "versions");
        jw_arr_open(&w);
        for (size_t v = 0; v < vs.nrows; v++) {
            if (!STMT_CELL(&vs, v, 0) || strcmp(STMT_CELL(&vs, v, 0), STMT_CELL(&ix, i, 0)))
                continue;
            /* index_id is not repeated: skip column 0 */
            jw_obj_open(&w);
            for (size_t col = 1; col < vs.ncols; col++) {
                jw_key(&w, vn[col]);
                if (col == 1) jw_int_text(&w, STMT_CELL(&vs, v, col));
                else jw_str0(&w, STMT_CELL(&vs, v, col));
            }
            jw_obj_close(&w);
        }
        jw_arr_close(&w);
        jw_obj_close(&w);
    }
    jw_arr_close(&w);
    jw_obj_close(&w);
    ok_json(r, 200);
out:
    stmt_rows_free(&ix);
    stmt_rows_free(&vs);
    conns_close(&c);
}

/* ---------- GET /api/v1/indices/{alias}/reindex ---------- */

static void h_reindex_get(const struct api_ctx *ctx, const char *alias, struct api_resp *r) {
    struct conns c = {0};
    struct stmt_rows ix = {0}, jobs = {0}, run = {0};
    if (!open_meta(ctx, &c, r)) return;
    if (index_row(ctx, &c, alias, &ix, r) < 0) goto out;
    const char *id = STMT_CELL(&ix, 0, 0), *building = STMT_CELL(&ix, 0, 3);
    const char *p1[] = {id};
    if (stmt_query(c.meta,
                   "SELECT id, version, status, buckets, start_position, rows_read, docs_written, "
                   "rejected, error_text, " TS("started_at") ", " TS("finished_at")
                   " FROM reindex_runs WHERE index_id = ? ORDER BY id DESC LIMIT 1",
                   p1, 1, &run, c.err, sizeof c.err) < 0)
        goto dberr;
    /* the jobs of the build in progress; else the bookkeeping of the last run */
    if (building && strcmp(building, "0")) {
        const char *p2[] = {id, building};
        if (stmt_query(c.meta,
                       "SELECT bucket, status, rows_read, docs_written, rejected, errors, "
                       "error_text, " TS("started_at") ", " TS("finished_at")
                       " FROM jobs WHERE index_id = ? AND version = ? AND type = 'index' "
                       "ORDER BY bucket",
                       p2, 2, &jobs, c.err, sizeof c.err) < 0)
            goto dberr;
    } else if (run.nrows) {
        const char *p2[] = {STMT_CELL(&run, 0, 0)};
        if (stmt_query(c.meta,
                       "SELECT bucket, status, rows_read, docs_written, rejected, NULL, "
                       "error_text, " TS("started_at") ", " TS("finished_at")
                       " FROM reindex_run_jobs WHERE run_id = ? ORDER BY bucket",
                       p2, 1, &jobs, c.err, sizeof c.err) < 0)
            goto dberr;
    }
    jsonw w;
    api_answer_open(&w, r, alias);
    jw_key(&w, "state");
    jw_str0(&w, STMT_CELL(&ix, 0, 1));
    jw_key(&w, "current_version");
    jw_version(&w, STMT_CELL(&ix, 0, 2));
    jw_key(&w, "building_version");
    jw_version(&w, building);
    jw_key(&w, "jobs");
    jw_arr_open(&w);
    static const char *const jn[] = {"bucket", "status", "rows_read", "docs_written", "rejected",
                                     "errors", "error", "started_at", "finished_at"};
    for (size_t i = 0; i < jobs.nrows; i++) row_obj(&w, &jobs, i, jn, "nsnnnnsss");
    jw_arr_close(&w);
    jw_key(&w, "last_run");
    if (run.nrows) {
        static const char *const rn[] = {"id",        "version",  "status",      "buckets",
                                         "start_position", "rows_read", "docs_written", "rejected",
                                         "error",     "started_at", "finished_at"};
        row_obj(&w, &run, 0, rn, "nnsnsnnnsss");
    } else {
        jw_null(&w);
    }
    jw_obj_close(&w);
    ok_json(r, 200);
    goto out;
dberr:
    api_error(r, 500, c.err, "reading the reindex bookkeeping failed; see the daemon's log");
out:
    stmt_rows_free(&ix);
    stmt_rows_free(&jobs);
    stmt_rows_free(&run);
    conns_close(&c);
}

/* ---------- POST /api/v1/indices/{alias}/reindex ---------- */

/* the hints of the reindex operations' outcomes (sync/ops/ops_reindex.h) */
static const char *reindex_hint(const struct ops_err *e) {
    switch (e->st) {
    case OPS_UNKNOWN: return "GET /api/v1/indices lists them; a new one comes with searchsync "
                             "mapping import";
    case OPS_REFUSED: return "see GET /api/v1/indices/{alias}/reindex for the build in progress";
    case OPS_DOWN:
        return e->at == OPS_AT_SOURCE ? "a reindex checks the mapping against the source: it "
                                        "must be reachable"
                                      : "the metadata server must be reachable for this call; "
                                        "retry once it is";
    default:
        return e->at == OPS_AT_METADATA ? "reading index_configs failed; see the daemon's log"
                                        : "a server failed; see the daemon's log and retry";
    }
}

static void h_reindex_post(const struct api_ctx *ctx, const char *alias, const char *body,
                           size_t len, struct api_resp *r) {
    struct ops_reindex_req rq = {.alias = alias};
    const char *field = "";
    char err[2048];
    if (route_parse_reindex_body(body, len, &rq.buckets, &rq.by_mod, &field, err, sizeof err) <
        0) {
        api_error_field(r, 400, field, err, "send {\"buckets\":N,\"by_mod\":true|false}, both "
                                            "optional, or no body");
        return;
    }
    struct ops_env env;
    api_ops_env(ctx, &env, "admin API");
    struct ops_reindex_res res;
    struct ops_err e;
    if (ops_reindex_request(&env, &rq, &res, &e) != OPS_OK) {
        api_ops_error(r, &e, 500, reindex_hint(&e));
        return;
    }
    log_info("admin", "%s: version %u queued through the admin API", alias, res.version);
    jsonw w;
    api_answer_open(&w, r, alias);
    jw_key(&w, "version");
    jw_uint(&w, res.version);
    jw_key(&w, "index");
    char phys[ROUTE_ALIAS_MAX + 32];
    jw_str(&w, index_version_name(phys, sizeof phys, alias, res.version));
    jw_key(&w, "state");
    jw_str(&w, "changing");
    jw_key(&w, "buckets");
    jw_int(&w, res.buckets);
    jw_key(&w, "by_mod");
    jw_bool(&w, rq.by_mod);
    jw_key(&w, "progress");
    sbuf u = SBUF_INIT;
    sbuf_printf(&u, "/api/v1/indices/%s/reindex", alias);
    jw_str(&w, u.data);
    sbuf_free(&u);
    jw_obj_close(&w);
    ok_json(r, 202);
}

/* ---------- POST /api/v1/indices/{alias}/reindex/reset ---------- */

static void h_reindex_reset(const struct api_ctx *ctx, const char *alias, struct api_resp *r) {
    struct ops_env env;
    api_ops_env(ctx, &env, "admin API reset");
    struct ops_reset_res res;
    struct ops_err e;
    if (ops_reindex_reset(&env, alias, &res, &e) != OPS_OK) {
        api_ops_error(r, &e, 500, e.st == OPS_REFUSED ? "only a build in state changing can be "
                                                        "cancelled"
                                                      : reindex_hint(&e));
        return;
    }
    log_info("admin", "%s: build of version %u cancelled through the admin API", alias,
             res.cancelled);
    jsonw w;
    api_answer_open(&w, r, alias);
    jw_key(&w, "cancelled_version");
    if (res.cancelled) jw_uint(&w, res.cancelled);
    else jw_null(&w);
    jw_key(&w, "state");
    if (res.state[0]) jw_str(&w, res.state);
    else jw_null(&w);
    jw_obj_close(&w);
    ok_json(r, 200);
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
    ok_json(r, 200);
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
    case ROUTE_INDICES: h_indices(ctx, r); break;
    case ROUTE_REINDEX_GET: h_reindex_get(ctx, rt->alias, r); break;
    case ROUTE_REINDEX_POST: h_reindex_post(ctx, rt->alias, body, len, r); break;
    case ROUTE_REINDEX_RESET: h_reindex_reset(ctx, rt->alias, r); break;
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
