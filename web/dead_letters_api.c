/* dead_letters_api: the admin API's dead letters (docs/http-api.md "Dead
 * letters"), what `searchsync dead-letters list|replay|discard` does, from the
 * running daemon:
 *
 *   GET    /api/v1/dead-letters[?index=I&limit=N&source=S]  newest first, without
 *                                        bodies, with the total left and each
 *                                        source's count; this node's source's,
 *                                        or (source) another's of the same
 *                                        metadata schema, or (*) every
 *                                        source's, to look at
 *   GET    /api/v1/dead-letters/{id}[?source=S]    one, with its body and script
 *   POST   /api/v1/dead-letters/replay             {"index":..} / {"id":..} / {}
 *   DELETE /api/v1/dead-letters/{id}               discarded (the change is
 *                                                  given up: say why in the UI)
 *
 * A replay and a discard are the node's operations (sync/ops/ops_replay.h,
 * as the command's): a replay writes through a stream of its own on the
 * node's delivery, never the reader's, whose transaction ends would move
 * the checkpoint. Values from the request
 * reach SQL as bound parameters, or (the replay's index) after
 * route_alias_valid. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "db.h"
#include "dead_letters_api.h"
#include "json_exact.h"
#include "jsonw.h"
#include "log.h"
#include "stmt.h"
#include "sync/ops/ops_replay.h"
#include "sync/status/status_lists.h"

/* the columns of status_dead_letters_rows, then (one letter) body and script */
static const char *const dl_names[] = {"id",      "source", "index",    "doc_id",
                                       "routing", "version", "op",      "status",
                                       "error",   "attempts", "created_at", "body",
                                       "script"};
static const bool dl_num[] = {true,  false, false, false, false, true, false,
                              true,  false, true,  false, false, false};
#define DL_NCOLS 11

static MYSQL *meta(const struct api_ctx *ctx, struct api_resp *r) {
    return api_meta_connect(ctx, r);
}

static void h_list(const struct api_ctx *ctx, struct api_resp *r) {
    const char *index = api_lookup(ctx, API_ARG, "index");
    long limit;
    if (index && !route_alias_valid(index, strlen(index))) {
        api_error_field(r, 400, "index", "\"index\" is not an index name",
                        "give a physical index name as the list shows it (products_v2)");
        return;
    }
    const char *source = api_lookup(ctx, API_ARG, "source");
    if (source && (!*source || strlen(source) > 64)) {
        api_error_field(r, 400, "source", "\"source\" is not a source name",
                        "give a source's [source] name (1..64 characters), or * for every source");
        return;
    }
    if (!api_limit_arg(ctx, r, 100, &limit)) return;
    MYSQL *m = meta(ctx, r);
    if (!m) return;
    if (!source) source = ctx->cfg->source.name;
    /* "*": every source's, for an index fed by several (a source name is
     * never "*": it names a configuration file and a systemd unit) */
    const char *only = strcmp(source, "*") ? source : NULL;
    char err[512];
    struct stmt_rows rows = {0}, cnt = {0}, by = {0};
    if (status_dead_letters_rows(m, only, index, limit, &rows, err, sizeof err) < 0 ||
        status_dead_letters_count(m, only, index, &cnt, err, sizeof err) < 0 ||
        status_dead_letters_by_source(m, index, &by, err, sizeof err) < 0) {
        api_error(r, 503, err, "the metadata server must answer; retry");
    } else {
        jsonw w;
        jw_init(&w, &r->body);
        jw_obj_open(&w);
        jw_key(&w, "source"); /* this daemon's: the one whose dead letters it replays */
        jw_str(&w, ctx->cfg->source.name);
        jw_key(&w, "total");
        const char *t = cnt.nrows ? STMT_CELL(&cnt, 0, 0) : "0";
        jw_raw(&w, t, strlen(t));
        jw_key(&w, "by_source");
        static const char *const by_names[] = {"source", "total"};
        static const bool by_num[] = {false, true};
        stmt_rows_json(&w, &by, by_names, by_num, 2);
        jw_key(&w, "dead_letters");
        stmt_rows_json(&w, &rows, dl_names, dl_num, DL_NCOLS);
        jw_obj_close(&w);
        r->status = 200;
        sbuf_addc(&r->body, '\n');
    }
    stmt_rows_free(&rows);
    stmt_rows_free(&cnt);
    stmt_rows_free(&by);
    db_close(m);
}

static void h_get(const struct api_ctx *ctx, const char *id, struct api_resp *r) {
    /* another source's, to look at (as the list shows it) */
    const char *source = api_lookup(ctx, API_ARG, "source");
    if (source && (!*source || strlen(source) > 64)) {
        api_error_field(r, 400, "source", "\"source\" is not a source name",
                        "give a source's [source] name (1..64 characters)");
        return;
    }
    MYSQL *m = meta(ctx, r);
    if (!m) return;
    char err[512];
    struct stmt_rows rows = {0};
    if (status_dead_letter_row(m, source ? source : ctx->cfg->source.name, id, &rows, err,
                               sizeof err) < 0) {
        api_error(r, 503, err, "the metadata server must answer; retry");
    } else if (!rows.nrows) {
        api_error(r, 404, source ? "no such dead letter of that source"
                                 : "no such dead letter of this source",
                  "GET /api/v1/dead-letters lists them (a replayed or discarded one is gone)");
    } else {
        /* the one row, as the list writes its rows, with body and script */
        sbuf arr = SBUF_INIT;
        jsonw w;
        jw_init(&w, &arr);
        stmt_rows_json(&w, &rows, dl_names, dl_num, DL_NCOLS + 2);
        sbuf_add(&r->body, arr.data + 1, arr.len - 2); /* [ {...} ] -> {...} */
        sbuf_free(&arr);
        r->status = 200;
        sbuf_addc(&r->body, '\n');
    }
    stmt_rows_free(&rows);
    db_close(m);
}

static void h_delete(const struct api_ctx *ctx, const char *id, struct api_resp *r) {
    struct ops_env env;
    api_ops_env(ctx, &env, "admin API");
    struct ops_err e;
    enum ops_status st = ops_dead_letter_discard(&env, strtoull(id, NULL, 10), &e);
    if (st == OPS_UNKNOWN) {
        api_error(r, 404, "no such dead letter of this source",
                  "GET /api/v1/dead-letters lists them (a replayed or discarded one is gone)");
    } else if (st != OPS_OK) {
        api_error(r, 503, e.msg, "the metadata server must answer; retry");
    } else {
        log_warn("admin", "dead letter %s of source %s discarded through the API: its change is "
                 "given up (a reindex or resync of the document writes it again)", id,
                 ctx->cfg->source.name);
        sbuf_printf(&r->body, "{\"discarded\":%s}", id);
        r->status = 200;
        sbuf_addc(&r->body, '\n');
    }
}

/* {"index":"products_v2"} or {"id":12} (as a number or a string) or {} */
static int parse_replay(const char *body, size_t len, char *index, size_t indexlen,
                        uint64_t *id, const char **field, char *err, size_t errlen) {
    *index = '\0';
    *id = 0;
    *field = "";
    size_t i = 0;
    while (i < len && (body[i] == ' ' || body[i] == '\n' || body[i] == '\r' || body[i] == '\t'))
        i++;
    if (i == len) return 0;
    cJSON *j = json_exact_object(body, len, ": {\"index\":\"products_v2\"}, {\"id\":12} or {} "
                                 "(every dead letter of the source)", err, errlen);
    if (!j) return -1;
    int rc = 0;
    cJSON *it;
    cJSON_ArrayForEach(it, j) {
        const char *k = it->string ? it->string : "";
        if (!strcmp(k, "index")) {
            *field = "index";
            if (!cJSON_IsString(it) || !route_alias_valid(it->valuestring, strlen(it->valuestring)) ||
                strlen(it->valuestring) >= indexlen) {
                rc = errf(err, errlen, "\"index\" must be an index name (letters, digits, _ . -)");
                break;
            }
            snprintf(index, indexlen, "%s", it->valuestring);
        } else if (!strcmp(k, "id")) {
            *field = "id";
            const char *v = cJSON_IsRaw(it) || cJSON_IsString(it) ? it->valuestring : NULL;
            char *end = NULL;
            *id = v && *v >= '1' && *v <= '9' ? strtoull(v, &end, 10) : 0;
            if (!*id || !end || *end) {
                rc = errf(err, errlen, "\"id\" must be a dead letter's id (a positive integer)");
                break;
            }
        } else {
            *field = "";
            rc = errf(err, errlen, "unknown field \"%.100s\": the body takes \"index\" or \"id\"",
                      k);
            break;
        }
        *field = "";
    }
    cJSON_Delete(j);
    return rc;
}

static void h_replay(const struct api_ctx *ctx, const char *body, size_t len,
                     struct api_resp *r) {
    char index[ROUTE_ALIAS_MAX + 1], err[1024];
    struct ops_replay_req rq = {0};
    const char *field;
    if (parse_replay(body, len, index, sizeof index, &rq.id, &field, err, sizeof err) < 0) {
        api_error_field(r, 400, field, err, NULL);
        return;
    }
    rq.index = index[0] ? index : NULL;
    struct ops_env env;
    api_ops_env(ctx, &env, "admin API");
    struct ops_replay_res res;
    struct ops_err e;
    if (ops_replay(&env, &rq, &res, &e) != OPS_OK) {
        api_ops_error(r, &e, 502, e.st == OPS_DOWN
                                      ? "the metadata server must be reachable for this call; "
                                        "retry once it is"
                                      : "the dead letters are kept; see the daemon's log, retry");
        return;
    }
    long left = res.left > 0 ? res.left : 0;
    log_info("admin", "replayed %ld dead letter(s) of source %s through the API; %ld left",
             res.replayed, ctx->cfg->source.name, left);
    sbuf_printf(&r->body, "{\"replayed\":%ld,\"left\":%ld}\n", res.replayed, left);
    r->status = 200;
}

void dead_letters_handle(const struct api_ctx *ctx, const struct route *rt, const char *body,
                         size_t len, struct api_resp *r) {
    switch (rt->id) {
    case ROUTE_DEAD_LETTERS_LIST: h_list(ctx, r); break;
    case ROUTE_DEAD_LETTER_GET: h_get(ctx, rt->row_id, r); break;
    case ROUTE_DEAD_LETTER_DELETE: h_delete(ctx, rt->row_id, r); break;
    case ROUTE_DEAD_LETTERS_REPLAY: h_replay(ctx, body, len, r); break;
    default: api_error(r, 404, "no such endpoint", NULL); break;
    }
}
