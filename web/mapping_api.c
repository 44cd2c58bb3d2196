/* mapping_api: the mapping and the source's tables through the admin API
 * (docs/http-api.md "Mapping"), what `searchsync mapping export|import|
 * generate` do, from the running daemon:
 *
 *   GET  /api/v1/mapping                      the stored mapping file
 *   POST /api/v1/mapping/plan                 body: a mapping file; its checks
 *                                             and plan, nothing stored
 *   POST /api/v1/mapping/apply                the same, then stored (the daemon
 *                                             picks it up as after an import)
 *   GET  /api/v1/source/tables                the source's base tables
 *   GET  /api/v1/source/tables/{db}/{table}/mapping[?depth=N]
 *                                             a mapping generated from the
 *                                             live schema ("auto-generate
 *                                             columns"), the guesses, and one
 *                                             document built with it
 *
 * The import is the node's operation (sync/ops/ops_mapping.h, steps in
 * sync/authoring/mapping_import.c) and the proposal is
 * sync/authoring/mapping_generate.c's: the API and the commands say the same thing. A
 * mapping that fails its checks is a 422 with every problem; names from the
 * path reach SQL as bound parameters (the generator's queries bind them). */
#include "mapping_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "jsonw.h"
#include "log.h"
#include "search/replicas.h"
#include "search/search.h"
#include "stmt.h"
#include "sync/mapping/mapping.h"
#include "sync/authoring/mapping_generate.h"
#include "sync/authoring/source_tables.h"
#include "sync/ops/ops_mapping.h"

static void lines_array(jsonw *w, const char *text) {
    jw_arr_open(w);
    for (const char *p = text ? text : ""; *p;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n) jw_strn(w, p, n);
        p += n + (e ? 1 : 0);
    }
    jw_arr_close(w);
}

static void h_export(const struct api_ctx *ctx, struct api_resp *r) {
    MYSQL *m = api_meta_connect(ctx, r);
    if (!m) return;
    struct mapping mp = {0};
    char err[1024];
    if (mapping_db_load(m, config_mapping_name(ctx->cfg), &mp, err, sizeof err) < 0) {
        api_error(r, 503, err, "the metadata server must answer; retry");
    } else {
        mapping_write(&mp, &r->body);
        r->status = 200;
    }
    mapping_free(&mp);
    db_close(m);
}

static void h_import(const struct api_ctx *ctx, const char *body, size_t len, bool apply,
                     struct api_resp *r) {
    if (!body || !len) {
        api_error(r, 400, "the body must be a mapping file (docs/mapping.md)",
                  "GET /api/v1/mapping gives the current one to start from");
        return;
    }
    struct mapping_import mi = {.name = "the request body", .text = body, .len = len,
                                .apply = apply};
    struct ops_env env;
    api_ops_env(ctx, &env, "admin API");
    struct ops_err e;
    enum ops_status st = ops_mapping_import(&env, &mi, &e);
    jsonw w;
    jw_init(&w, &r->body);
    if (st == OPS_DOWN) {
        api_error(r, 503, e.msg, "the metadata server must be reachable for this call; retry "
                                 "once it is");
    } else if (st == OPS_FAILED) {
        api_error(r, 503, mi.err, "a server did not answer; nothing was stored; retry");
    } else {
        jw_obj_open(&w);
        jw_key(&w, "valid");
        jw_bool(&w, st == OPS_OK);
        if (st != OPS_OK) {
            jw_key(&w, "error");
            jw_str(&w, mi.err);
            jw_key(&w, "problems");
            lines_array(&w, mi.problems.data);
        } else {
            jw_key(&w, "changes");
            jw_int(&w, mi.changes);
            jw_key(&w, "plan");
            lines_array(&w, mi.plan.data);
            jw_key(&w, "applied");
            jw_bool(&w, mi.applied);
        }
        jw_obj_close(&w);
        sbuf_addc(&r->body, '\n');
        r->status = st == OPS_OK ? 200 : 422;
        if (mi.applied && mi.log_err[0])
            log_warn("admin", "mapping of source %s stored, but not noted in the sync log: %s",
                     ctx->cfg->source.name, mi.log_err);
        if (mi.applied)
            log_info("admin", "mapping of source %s stored through the API (%d change%s); the "
                     "daemon takes it up as after `mapping import`", ctx->cfg->source.name,
                     mi.changes, mi.changes == 1 ? "" : "s");
    }
    mapping_import_free(&mi);
}

static MYSQL *source_connect(const struct api_ctx *ctx, struct api_resp *r) {
    db_params sp = db_params_source(ctx->cfg);
    char err[1024];
    MYSQL *s = db_connect(&sp, err, sizeof err);
    if (!s) api_error(r, 503, err, "the source must be reachable for this call; retry");
    return s;
}

static void h_tables(const struct api_ctx *ctx, struct api_resp *r) {
    MYSQL *s = source_connect(ctx, r);
    if (!s) return;
    struct stmt_rows rows = {0};
    char err[1024];
    long n = source_tables_rows(s, ctx->cfg->metadata.database ? ctx->cfg->metadata.database : "",
                                &rows, err, sizeof err);
    if (n < 0) {
        api_error(r, 503, err, "the source must answer; retry");
    } else {
        jsonw w;
        jw_init(&w, &r->body);
        jw_obj_open(&w);
        jw_key(&w, "tables");
        jw_arr_open(&w);
        for (size_t i = 0; i < rows.nrows; i++) {
            jw_obj_open(&w);
            jw_key(&w, "database");
            jw_str(&w, STMT_CELL(&rows, i, 0));
            jw_key(&w, "table");
            jw_str(&w, STMT_CELL(&rows, i, 1));
            jw_key(&w, "rows_estimate");
            const char *est = STMT_CELL(&rows, i, 2);
            if (est) jw_raw(&w, est, strlen(est));
            else jw_null(&w);
            jw_key(&w, "engine");
            if (STMT_CELL(&rows, i, 3)) jw_str(&w, STMT_CELL(&rows, i, 3));
            else jw_null(&w);
            jw_key(&w, "primary_key");
            jw_arr_open(&w);
            const char *pk = STMT_CELL(&rows, i, 4);
            for (const char *p = pk ? pk : ""; *p;) {
                const char *c = strchr(p, ',');
                size_t k = c ? (size_t)(c - p) : strlen(p);
                jw_strn(&w, p, k);
                p += k + (c ? 1 : 0);
            }
            jw_arr_close(&w);
            jw_obj_close(&w);
        }
        jw_arr_close(&w);
        jw_obj_close(&w);
        sbuf_addc(&r->body, '\n');
        r->status = 200;
    }
    stmt_rows_free(&rows);
    db_close(s);
}

static void h_generate(const struct api_ctx *ctx, const char *db, const char *table,
                       struct api_resp *r) {
    const char *d = api_lookup(ctx, API_ARG, "depth");
    int depth = 2;
    if (d) {
        char *end = NULL;
        long v = strtol(d, &end, 10);
        if (!*d || *end || v < 0 || v > 5) {
            api_error_field(r, 400, "depth", "\"depth\" must be an integer from 0 to 5",
                            "relation levels below the table (default 2)");
            return;
        }
        depth = (int)v;
    }
    const char *purpose = api_lookup(ctx, API_ARG, "for");
    if (purpose && strcmp(purpose, "relations")) {
        api_error_field(r, 400, "for", "\"for\" must be \"relations\" or absent",
                        "relations: only the table's relations are wanted (a link table: a "
                        "composite primary key is not refused)");
        return;
    }
    MYSQL *s = source_connect(ctx, r);
    if (!s) return;
    sbuf file = SBUF_INIT, notes = SBUF_INIT, sample = SBUF_INIT;
    char err[2048] = "";
    /* the daemon's engine, once detected: it decides BIGINT UNSIGNED's type,
     * and its data nodes the replicas (none on one node: search/replicas.h;
     * not asked: none in the file, the import asks) */
    int replicas = -1;
    if (ctx->client && !purpose) {
        struct search_conn *k = search_conn_new(ctx->client);
        char rerr[256];
        replicas = search_default_replicas(k, rerr, sizeof rerr);
        search_conn_free(k);
    }
    struct mg_opts o = {depth, NULL, 0, replicas,
                        ctx->client ? search_client_dialect(ctx->client) : NULL, purpose != NULL};
    int rc = mapping_propose(s, db, table, &o, &file, &notes, &sample, err, sizeof err);
    if (rc > 0) {
        api_error(r, 404, err, "GET /api/v1/source/tables lists the tables (with their "
                               "primary keys)");
    } else if (rc < 0) {
        api_error(r, 503, err, "the source must answer; retry");
    } else {
        jsonw w;
        jw_init(&w, &r->body);
        jw_obj_open(&w);
        jw_key(&w, "mapping");
        jw_raw(&w, file.data, file.len && file.data[file.len - 1] == '\n' ? file.len - 1 : file.len);
        jw_key(&w, "guesses");
        lines_array(&w, notes.data);
        jw_key(&w, "sample");
        if (sample.len) jw_raw(&w, sample.data, sample.len);
        else jw_null(&w);
        if (!sample.len) {
            jw_key(&w, "sample_note");
            jw_str(&w, err);
        }
        jw_obj_close(&w);
        sbuf_addc(&r->body, '\n');
        r->status = 200;
    }
    sbuf_free(&file);
    sbuf_free(&notes);
    sbuf_free(&sample);
    db_close(s);
}

void mapping_api_handle(const struct api_ctx *ctx, const struct route *rt, const char *body,
                        size_t len, struct api_resp *r) {
    r->content_type = "application/json";
    switch (rt->id) {
    case ROUTE_MAPPING_GET: h_export(ctx, r); break;
    case ROUTE_MAPPING_PLAN: h_import(ctx, body, len, false, r); break;
    case ROUTE_MAPPING_APPLY: h_import(ctx, body, len, true, r); break;
    case ROUTE_SOURCE_TABLES: h_tables(ctx, r); break;
    case ROUTE_SOURCE_TABLE_MAPPING: h_generate(ctx, rt->db, rt->table, r); break;
    default: api_error(r, 404, "no such endpoint", NULL); break;
    }
}
