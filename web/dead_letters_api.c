/* dead_letters_api: the admin API's dead letters (docs/http-api.md "Dead
 * letters"), what `searchsync dead-letters list|replay|discard` does, from the
 * running daemon:
 *
 *   GET    /api/v1/dead-letters[?index=I&limit=N]  newest first, without bodies,
 *                                                  with the total left
 *   GET    /api/v1/dead-letters/{id}               one, with its body and script
 *   POST   /api/v1/dead-letters/replay             {"index":..} / {"id":..} / {}
 *   DELETE /api/v1/dead-letters/{id}               discarded (the change is
 *                                                  given up: say why in the UI)
 *
 * A replay goes through a delivery of its own (as the command does), never
 * the daemon's: its transaction end would move the daemon's checkpoint. It
 * uses the daemon's search client (the engine's dialect as detected) and
 * writes what fails again back as dead letters. Values from the request
 * reach SQL as bound parameters, or (the replay's index) after
 * route_alias_valid. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "db.h"
#include "dead_letters_api.h"
#include "deliver/deliver.h"
#include "deliver/store.h"
#include "json_exact.h"
#include "jsonw.h"
#include "log.h"
#include "stmt.h"

#define DL_COLS                                                                               \
    "id, index_name, doc_id, routing, version, op, status, error, attempts, " STMT_ISO("created_at")
static const char *const dl_names[] = {"id",     "index", "doc_id",   "routing",    "version",
                                       "op",     "status", "error",   "attempts",   "created_at",
                                       "body",   "script"};
static const bool dl_num[] = {true, false, false, false, true, false,
                              true, false, true,  false, false, false};
#define DL_NCOLS 10

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
    if (!api_limit_arg(ctx, r, 100, &limit)) return;
    MYSQL *m = meta(ctx, r);
    if (!m) return;
    const char *params[2] = {ctx->cfg->source.name, index};
    size_t np = index ? 2 : 1;
    char err[512];
    sbuf sql = SBUF_INIT; /* DL_COLS holds % signs: not a format */
    sbuf_adds(&sql, "SELECT " DL_COLS " FROM dead_letters WHERE source = ?");
    sbuf_printf(&sql, "%s ORDER BY id DESC LIMIT %ld", index ? " AND index_name = ?" : "", limit);
    struct stmt_rows rows = {0}, cnt = {0};
    if (stmt_query(m, sql.data, params, np, &rows, err, sizeof err) < 0 ||
        stmt_query(m, index ? "SELECT COUNT(*) FROM dead_letters WHERE source = ? AND "
                              "index_name = ?"
                            : "SELECT COUNT(*) FROM dead_letters WHERE source = ?",
                   params, np, &cnt, err, sizeof err) < 0) {
        api_error(r, 503, err, "the metadata server must answer; retry");
    } else {
        jsonw w;
        jw_init(&w, &r->body);
        jw_obj_open(&w);
        jw_key(&w, "total");
        const char *t = cnt.nrows ? STMT_CELL(&cnt, 0, 0) : "0";
        jw_raw(&w, t, strlen(t));
        jw_key(&w, "dead_letters");
        stmt_rows_json(&w, &rows, dl_names, dl_num, DL_NCOLS);
        jw_obj_close(&w);
        r->status = 200;
        sbuf_addc(&r->body, '\n');
    }
    stmt_rows_free(&rows);
    stmt_rows_free(&cnt);
    sbuf_free(&sql);
    db_close(m);
}

static void h_get(const struct api_ctx *ctx, const char *id, struct api_resp *r) {
    MYSQL *m = meta(ctx, r);
    if (!m) return;
    const char *params[2] = {ctx->cfg->source.name, id};
    char err[512];
    struct stmt_rows rows = {0};
    if (stmt_query(m, "SELECT " DL_COLS ", body, script FROM dead_letters WHERE source = ? AND "
                      "id = ?", params, 2, &rows, err, sizeof err) < 0) {
        api_error(r, 503, err, "the metadata server must answer; retry");
    } else if (!rows.nrows) {
        api_error(r, 404, "no such dead letter of this source",
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
    MYSQL *m = meta(ctx, r);
    if (!m) return;
    const char *params[2] = {ctx->cfg->source.name, id};
    char err[512];
    long n = stmt_query(m, "DELETE FROM dead_letters WHERE source = ? AND id = ?", params, 2, NULL,
                        err, sizeof err);
    if (n < 0) {
        api_error(r, 503, err, "the metadata server must answer; retry");
    } else if (n == 0) {
        api_error(r, 404, "no such dead letter of this source",
                  "GET /api/v1/dead-letters lists them (a replayed or discarded one is gone)");
    } else {
        log_warn("admin", "dead letter %s of source %s discarded through the API: its change is "
                 "given up (a reindex or resync of the document writes it again)", id,
                 ctx->cfg->source.name);
        sbuf_printf(&r->body, "{\"discarded\":%s}", id);
        r->status = 200;
        sbuf_addc(&r->body, '\n');
    }
    db_close(m);
}

/* {"index":"products_v2"} or {"id":12} (as a number or a string) or {} */
static int parse_replay(const char *body, size_t len, char *index, size_t indexlen,
                        unsigned long long *id, const char **field, char *err, size_t errlen) {
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
    unsigned long long id;
    const char *field;
    if (parse_replay(body, len, index, sizeof index, &id, &field, err, sizeof err) < 0) {
        api_error_field(r, 400, field, err, NULL);
        return;
    }
    if (!api_engine_ready(ctx, r)) return;
    MYSQL *m = meta(ctx, r);
    if (!m) return;
    const struct ss_config *cfg = ctx->cfg;
    db_params p = db_params_metadata(cfg);
    p.database = cfg->metadata.database;
    struct dl_store *store = dl_store_new(&p, cfg->source.name, err, sizeof err);
    struct deliver *d = NULL;
    if (store) {
        struct deliver_opts o;
        deliver_opts_from_config(&o, cfg);
        o.dead_letter = dl_store_put;
        o.dead_letter_ud = store;
        o.linger_ms = 0; /* a replay goes as fast as it can */
        /* a bulk stream on the node's delivery (src/deliver/stream.c) */
        d = deliver_open(&o, ctx->client, "dead-letters", DELIVER_BULK, err, sizeof err);
    }
    long n = d ? dl_replay(m, cfg->source.name, index[0] ? index : NULL, id, d,
                           cfg->delivery.drain_timeout_ms, err, sizeof err)
               : -1;
    deliver_free(d);
    dl_store_free(store);
    if (n < 0) {
        api_error(r, 502, err, "the dead letters are kept; see the daemon's log, retry");
        db_close(m);
        return;
    }
    const char *params[2] = {cfg->source.name, index};
    struct stmt_rows cnt = {0};
    long q = stmt_query(m, index[0] ? "SELECT COUNT(*) FROM dead_letters WHERE source = ? AND "
                                      "index_name = ?"
                                    : "SELECT COUNT(*) FROM dead_letters WHERE source = ?",
                        params, index[0] ? 2 : 1, &cnt, err, sizeof err);
    const char *left = q > 0 && STMT_CELL(&cnt, 0, 0) ? STMT_CELL(&cnt, 0, 0) : "0";
    log_info("admin", "replayed %ld dead letter(s) of source %s through the API; %s left", n,
             cfg->source.name, left);
    sbuf_printf(&r->body, "{\"replayed\":%ld,\"left\":%s}\n", n, left);
    r->status = 200;
    stmt_rows_free(&cnt);
    db_close(m);
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
