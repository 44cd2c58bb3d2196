/* table_ops_api: an index config's operations besides reindex through the
 * admin API (docs/http-api.md "Index operations"), and the sync log:
 *
 *   POST /api/v1/indices/{alias}/resync      {"ids":["42","review-7"]}: these
 *        documents rebuilt from MySQL now (sync/ops/ops_resync.h, as `searchsync
 *        resync`), up to 1000 ids a call
 *   POST /api/v1/indices/{alias}/delete-all  {"confirm":"<alias>"}: every
 *        version deleted (as `reindex --delete-all`); the alias typed again
 *        is the confirmation
 *   GET  /api/v1/indices/{alias}/runs        its builds, newest first, with
 *        their figures and errors (reindex_runs)
 *   GET  /api/v1/sync-log[?limit=N&event=E]  what happened to the source's
 *        index configs (imports, builds, switches, resets, checks...),
 *        newest first
 *
 * Request values reach SQL as bound parameters; the alias comes from the
 * route (route_alias_valid) and is looked up among this source's index
 * configs by the functions called. */
#include "table_ops_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "json_exact.h"
#include "jsonw.h"
#include "log.h"
#include "search/search.h"
#include "stmt.h"
#include "sync/ops/ops_reindex.h"
#include "sync/ops/ops_resync.h"
#include "sync/status/status_lists.h"

#define RESYNC_IDS_MAX 1000

/* the body's array of ids: 1..RESYNC_IDS_MAX strings (or integers, as
 * exact text) of 1..512 bytes each */
static int parse_ids(const char *body, size_t len, char ***out, size_t *n, char *err,
                     size_t errlen) {
    *out = NULL;
    *n = 0;
    cJSON *j = body && len ? json_exact_parse(body, len) : NULL;
    const cJSON *a = j && cJSON_IsObject(j) ? cJSON_GetObjectItemCaseSensitive(j, "ids") : NULL;
    int rc = 0;
    if (!a || !cJSON_IsArray(a) || !cJSON_GetArraySize(a)) {
        rc = errf(err, errlen, "the body must be {\"ids\":[\"42\",\"review-7\"]}: the documents' "
                               "ids, root keys or <join_name>-<key>");
    } else if (cJSON_GetArraySize(a) > RESYNC_IDS_MAX) {
        rc = errf(err, errlen, "\"ids\" holds %d ids: at most %d a call", cJSON_GetArraySize(a),
                  RESYNC_IDS_MAX);
    } else {
        const cJSON *it;
        cJSON_ArrayForEach(it, j) {
            if (it->string && strcmp(it->string, "ids")) {
                rc = errf(err, errlen, "unknown field \"%.100s\": the body takes \"ids\"",
                          it->string);
                break;
            }
        }
        cJSON_ArrayForEach(it, a) {
            if (rc) break;
            const char *v = cJSON_IsString(it) || cJSON_IsRaw(it) ? it->valuestring : NULL;
            size_t vl = v ? strlen(v) : 0;
            if (!vl || vl > 512 || (cJSON_IsRaw(it) && (*v == '-' || strpbrk(v, ".eE")))) {
                rc = errf(err, errlen, "\"ids\"[%zu] must be a document id (a string, or a "
                                       "non-negative integer)", *n);
                break;
            }
            *out = xrealloc(*out, (*n + 1) * sizeof **out);
            (*out)[(*n)++] = xstrdup(v);
        }
    }
    cJSON_Delete(j);
    return rc;
}

static void h_resync(const struct api_ctx *ctx, const char *alias, const char *body, size_t len,
                     struct api_resp *r) {
    char **ids = NULL;
    size_t n = 0;
    char err[2048];
    if (parse_ids(body, len, &ids, &n, err, sizeof err) < 0) {
        api_error_field(r, 400, "ids", err, NULL);
    } else {
        struct ops_env env;
        api_ops_env(ctx, &env, "admin API");
        struct resync_result res;
        struct ops_err e;
        if (ops_resync(&env, alias, (const char *const *)ids, n, &res, &e) != OPS_OK) {
            api_ops_error(r, &e, 502, e.st == OPS_FAILED
                                          ? "a server failed; see the daemon's log and retry"
                                          : "GET /api/v1/indices lists the index configs and "
                                            "their versions");
        } else {
            log_info("admin", "%s: %zu document(s) resynced through the admin API: %llu rebuilt, "
                     "%llu deleted", alias, n, res.rebuilt, res.deleted);
            sbuf_printf(&r->body, "{\"alias\":");
            jsonw w;
            jw_init(&w, &r->body);
            jw_str(&w, alias);
            sbuf_printf(&r->body, ",\"rebuilt\":%llu,\"deleted\":%llu,\"dead_letters\":%llu,"
                                  "\"stale\":%llu,\"forced\":%llu,\"left\":%llu}\n",
                        res.rebuilt, res.deleted, res.dead_letters, res.stale, res.forced,
                        res.left);
            r->status = 200;
        }
    }
    for (size_t i = 0; i < n; i++) free(ids[i]);
    free(ids);
}

static void h_delete_all(const struct api_ctx *ctx, const char *alias, const char *body,
                         size_t len, struct api_resp *r) {
    cJSON *j = body && len ? json_exact_parse(body, len) : NULL;
    const cJSON *c = j && cJSON_IsObject(j) ? cJSON_GetObjectItemCaseSensitive(j, "confirm") : NULL;
    bool confirmed = c && cJSON_IsString(c) && !strcmp(c->valuestring, alias);
    cJSON_Delete(j);
    if (!confirmed) {
        char hint[400];
        snprintf(hint, sizeof hint, "send {\"confirm\":\"%s\"}: every version of the index and "
                 "its alias are deleted, searches on it fail until the next reindex", alias);
        api_error_field(r, 400, "confirm", "the index config's alias must be typed again to "
                                           "delete its indices", hint);
        return;
    }
    struct ops_env env;
    api_ops_env(ctx, &env, "admin API");
    struct ops_err e;
    if (ops_reindex_delete_all(&env, alias, &e) != OPS_OK) {
        api_ops_error(r, &e, 502,
                      e.st == OPS_REFUSED   ? "cancel the build first (POST .../reindex/reset)"
                      : e.st == OPS_UNKNOWN ? "GET /api/v1/indices lists the index configs"
                      : e.st == OPS_DOWN    ? "the metadata server must be reachable for this "
                                              "call; retry once it is"
                                            : "a server failed; see the daemon's log and retry");
        return;
    }
    log_warn("admin", "%s: every version deleted through the admin API", alias);
    jsonw w;
    api_answer_open(&w, r, alias);
    jw_key(&w, "state");
    jw_str(&w, "unavailable");
    jw_obj_close(&w);
    sbuf_addc(&r->body, '\n');
    r->status = 200;
}

static void h_sync_log(const struct api_ctx *ctx, struct api_resp *r) {
    const char *event = api_lookup(ctx, API_ARG, "event");
    long limit;
    if (!api_limit_arg(ctx, r, 100, &limit)) return;
    if (event && (!*event || strlen(event) > 64)) {
        api_error_field(r, 400, "event", "\"event\" must be an event name (1..64 bytes)", NULL);
        return;
    }
    MYSQL *m = api_meta_connect(ctx, r);
    if (!m) return;
    static const char *const names[] = {"id", "index", "event", "detail", "node", "at"};
    static const bool num[] = {true, false, false, false, false, false};
    struct stmt_rows rows = {0};
    char err[1024];
    long n = status_sync_log_rows(m, ctx->cfg->source.name, event, limit, &rows, err, sizeof err);
    api_rows_reply(r, n, &rows, err,
                   &(struct api_rows){NULL, "entries", names, num, 6, 503,
                                      "the metadata server must answer; retry"});
    stmt_rows_free(&rows);
    db_close(m);
}

/* the index config's builds, newest first (reindex_runs, kept [reindex]
 * keep_runs per index config): status, rows read, documents written,
 * rejected, error, times and the rate */
static void h_runs(const struct api_ctx *ctx, const char *alias, struct api_resp *r) {
    MYSQL *m = api_meta_connect(ctx, r);
    if (!m) return;
    static const char *const names[] = {"version", "status", "buckets", "start_position",
                                        "rows_read", "docs_written", "rejected", "error",
                                        "started_at", "finished_at", "seconds",
                                        "docs_per_second"};
    static const bool num[] = {1, 0, 1, 0, 1, 1, 1, 0, 0, 0, 1, 1};
    struct stmt_rows rows = {0};
    char err[1024];
    long n = status_runs_rows(m, ctx->cfg->source.name, alias, &rows, err, sizeof err);
    api_rows_reply(r, n, &rows, err,
                   &(struct api_rows){alias, "runs", names, num, 12, 503,
                                      "the metadata server must answer; retry"});
    stmt_rows_free(&rows);
    db_close(m);
}

void table_ops_handle(const struct api_ctx *ctx, const struct route *rt, const char *body,
                      size_t len, struct api_resp *r) {
    switch (rt->id) {
    case ROUTE_RESYNC: h_resync(ctx, rt->alias, body, len, r); break;
    case ROUTE_DELETE_ALL: h_delete_all(ctx, rt->alias, body, len, r); break;
    case ROUTE_SYNC_LOG: h_sync_log(ctx, r); break;
    case ROUTE_RUNS: h_runs(ctx, rt->alias, r); break;
    default: api_error(r, 404, "no such endpoint", NULL); break;
    }
}
