/* indices_api: the index configs and their builds in the admin API:
 * GET /api/v1/indices (each index config in the metadata and as the
 * generation in force has it, with its versions), GET
 * /api/v1/indices/{alias}/reindex (the build in progress or the last one),
 * POST .../reindex (a build queued) and POST .../reindex/reset (the build
 * in progress cancelled), the last two through the operations of
 * sync/ops/ops_reindex.h. */
#include "indices_api.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <mysql.h>

#include "db.h"
#include "jsonw.h"
#include "log.h"
#include "search/index_version.h"
#include "stmt.h"
#include "sync/mapping/mapping_gen.h"
#include "sync/ops/ops_reindex.h"
#include "sync/status/status_indices.h"

/* the request's metadata connection and the error of its last query */
struct req_meta {
    MYSQL *meta;
    char err[1024];
};

/* the metadata schema (required): 503 when unreachable (api_meta_connect) */
static bool open_meta(const struct api_ctx *ctx, struct req_meta *c, struct api_resp *r) {
    c->meta = api_meta_connect(ctx, r);
    return c->meta != NULL;
}

static void conns_close(struct req_meta *c) { db_close(c->meta); }

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

/* the row of alias among this source's index configs:
 * id, state, current_version, building_version, epoch, history_retention */
static int index_row(const struct api_ctx *ctx, struct req_meta *c, const char *alias,
                     struct stmt_rows *row, struct api_resp *r) {
    /* among the index configs this source feeds */
    long n = status_index_config_row(c->meta, ctx->cfg, alias, row, c->err, sizeof c->err);
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

/* ---------- GET /api/v1/indices ---------- */

/* Index config alias as the generation in force has it (its configuration
 * fields only: the run-time ones are the reader's); null when it has none. */
static void in_force_json(jsonw *w, const struct api_ctx *ctx, const char *alias) {
    const struct mp_index *gx = ctx->gen ? mapping_gen_index(ctx->gen, alias) : NULL;
    if (!gx) {
        jw_null(w);
        return;
    }
    jw_obj_open(w);
    jw_key(w, "tables");
    jw_uint(w, gx->ntables);
    jw_key(w, "routed");
    jw_bool(w, !gx->unusable);
    jw_key(w, "stopped");
    jw_str0(w, gx->stopped);
    if (gx->unit) { /* over shard tables: its pattern, the shards it reads now */
        char pat[300];
        snprintf(pat, sizeof pat, "%s.%s", gx->pattern_db ? gx->pattern_db : "",
                 gx->pattern_table ? gx->pattern_table : "");
        jw_key(w, "pattern");
        jw_str(w, pat);
        jw_key(w, "shards");
        jw_arr_open(w);
        for (size_t u = 0; u < ctx->gen->m.nindices; u++)
            if (!strcmp(ctx->gen->m.indices[u].alias, gx->alias))
                jw_str(w, ctx->gen->m.indices[u].unit);
        jw_arr_close(w);
    }
    jw_obj_close(w);
}

/* The versions of index config id among vs (every index config's, by
 * index_id) as an array. */
static void versions_json(jsonw *w, const struct stmt_rows *vs, const char *id) {
    static const char *const vn[] = {"index_id", "version", "index", "state", "created_at",
                                     "switched_at"};
    jw_arr_open(w);
    for (size_t v = 0; v < vs->nrows; v++) {
        if (!STMT_CELL(vs, v, 0) || strcmp(STMT_CELL(vs, v, 0), id)) continue;
        /* index_id is not repeated: skip column 0 */
        jw_obj_open(w);
        for (size_t col = 1; col < vs->ncols; col++) {
            jw_key(w, vn[col]);
            if (col == 1) jw_int_text(w, STMT_CELL(vs, v, col));
            else jw_str0(w, STMT_CELL(vs, v, col));
        }
        jw_obj_close(w);
    }
    jw_arr_close(w);
}

static void h_indices(const struct api_ctx *ctx, struct api_resp *r) {
    struct req_meta c = {0};
    if (!open_meta(ctx, &c, r)) return;
    struct stmt_rows ix = {0}, vs = {0};
    if (status_index_configs_rows(c.meta, ctx->cfg, &ix, c.err, sizeof c.err) < 0 ||
        status_index_versions_rows(c.meta, ctx->cfg, &vs, c.err, sizeof c.err) < 0) {
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
        jw_key(&w, "in_force");
        in_force_json(&w, ctx, STMT_CELL(&ix, i, 1));
        jw_key(&w, "versions");
        versions_json(&w, &vs, STMT_CELL(&ix, i, 0));
        jw_obj_close(&w);
    }
    jw_arr_close(&w);
    jw_obj_close(&w);
    api_ok_json(r, 200);
out:
    stmt_rows_free(&ix);
    stmt_rows_free(&vs);
    conns_close(&c);
}

/* ---------- GET /api/v1/indices/{alias}/reindex ---------- */

static void h_reindex_get(const struct api_ctx *ctx, const char *alias, struct api_resp *r) {
    struct req_meta c = {0};
    struct stmt_rows ix = {0}, jobs = {0}, run = {0};
    if (!open_meta(ctx, &c, r)) return;
    if (index_row(ctx, &c, alias, &ix, r) < 0) goto out;
    const char *id = STMT_CELL(&ix, 0, 0), *building = STMT_CELL(&ix, 0, 3);
    if (status_last_run_row(c.meta, id, &run, c.err, sizeof c.err) < 0 ||
        status_build_jobs_rows(c.meta, id, building, run.nrows ? STMT_CELL(&run, 0, 0) : NULL,
                               &jobs, c.err, sizeof c.err) < 0)
        goto dberr;
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
    api_ok_json(r, 200);
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
    api_ok_json(r, 202);
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
    api_ok_json(r, 200);
}

void indices_api_handle(const struct api_ctx *ctx, const struct route *rt, const char *body,
                        size_t len, struct api_resp *r) {
    switch (rt->id) {
    case ROUTE_INDICES: h_indices(ctx, r); break;
    case ROUTE_REINDEX_GET: h_reindex_get(ctx, rt->alias, r); break;
    case ROUTE_REINDEX_POST: h_reindex_post(ctx, rt->alias, body, len, r); break;
    default: h_reindex_reset(ctx, rt->alias, r); break; /* ROUTE_REINDEX_RESET */
    }
}
