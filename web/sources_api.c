/* sources_api: the sources of the metadata schema through the admin API
 * (docs/http-api.md "Sources"), the operations of sync/ops/ops_sources.h as
 * `searchsync source` runs them:
 *
 *   GET    /api/v1/sources          every source known: where, who reads it,
 *                                   up or down, lag, the index configs it feeds
 *   POST   /api/v1/sources          {"name","host","port","user","password",
 *                                   "ssl_mode","ssl_ca","server_id","admin_listen"}:
 *                                   checked on its server, recorded, its files written
 *   PUT    /api/v1/sources/{name}   the members given changed (the same checks)
 *   DELETE /api/v1/sources/{name}[?force=true]  removed
 *
 * The password is write-only: it is read from the request body and handed
 * to the operation, and no answer, log line or error says it; a source's
 * answer says "password": "set". The writes run on the node's request thread
 * like every admin write (web/http_server.c). */
#include "sources_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_exact.h"
#include "jsonw.h"
#include "log.h"
#include "sync/ops/ops_sources.h"

static const char *const members[] = {"name",   "host",     "port",      "user",
                                       "password", "ssl_mode", "ssl_ca", "server_id",
                                       "admin_listen"};

/* a string member (NULL: absent); false with the error answered */
static bool str_member(const cJSON *j, const char *k, const char **out, struct api_resp *r) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, k);
    *out = NULL;
    if (!v || cJSON_IsNull(v)) return true;
    if (!cJSON_IsString(v)) {
        char e[160];
        snprintf(e, sizeof e, "\"%s\" must be a string", k);
        api_error_field(r, 400, k, e, NULL);
        return false;
    }
    *out = v->valuestring;
    return true;
}

/* an integer member 1..max (0: absent) */
static bool int_member(const cJSON *j, const char *k, long max, int *out, struct api_resp *r) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, k);
    *out = 0;
    if (!v || cJSON_IsNull(v)) return true;
    const char *t = cJSON_IsRaw(v) ? v->valuestring : cJSON_IsString(v) ? v->valuestring : NULL;
    char *end = NULL;
    long n = t ? strtol(t, &end, 10) : 0;
    if (!t || !*t || *end || n < 1 || n > max) {
        char e[160];
        snprintf(e, sizeof e, "\"%s\" must be an integer from 1 to %ld", k, max);
        api_error_field(r, 400, k, e, NULL);
        return false;
    }
    *out = (int)n;
    return true;
}

/* the body into s (its strings point into *j, freed by the caller) */
static bool parse_spec(const char *body, size_t len, bool add, cJSON **j, struct source_spec *s,
                       struct api_resp *r) {
    char err[512];
    memset(s, 0, sizeof *s);
    *j = json_exact_object(body, len, " such as {\"name\":\"west\",\"host\":\"db-west\","
                                      "\"user\":\"repl\",\"password\":\"...\"}", err, sizeof err);
    if (!*j) {
        api_error_field(r, 400, "", err, NULL);
        return false;
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, *j) {
        bool known = false;
        for (size_t i = 0; i < sizeof members / sizeof *members; i++)
            known |= !strcmp(it->string, members[i]) && (add || i);
        if (!known) {
            char e[200];
            snprintf(e, sizeof e, "unknown member \"%.64s\": the body takes %s", it->string,
                     add ? "name, host, port, user, password, ssl_mode, ssl_ca, server_id, "
                           "admin_listen"
                         : "host, port, user, password, ssl_mode, ssl_ca, server_id, admin_listen "
                           "(the name is the path's)");
            api_error_field(r, 400, it->string, e, NULL);
            return false;
        }
    }
    return str_member(*j, "name", &s->name, r) && str_member(*j, "host", &s->host, r) &&
           int_member(*j, "port", 65535, &s->port, r) && str_member(*j, "user", &s->user, r) &&
           str_member(*j, "password", &s->password, r) &&
           str_member(*j, "ssl_mode", &s->ssl_mode, r) &&
           str_member(*j, "ssl_ca", &s->ssl_ca, r) &&
           int_member(*j, "server_id", 2147483647L, &s->server_id, r) &&
           str_member(*j, "admin_listen", &s->admin_listen, r);
}

static void h_list(const struct api_ctx *ctx, struct api_resp *r) {
    struct ops_env env;
    api_ops_env(ctx, &env, "admin API");
    struct source_list l;
    struct ops_err e;
    if (ops_source_list(&env, &l, &e) != OPS_OK) {
        api_ops_error(r, &e, 503, "the metadata server must answer; retry");
        return;
    }
    jsonw w;
    api_answer_open(&w, r, NULL);
    jw_key(&w, "source");
    jw_str(&w, ctx->cfg->source.name);
    jw_key(&w, "sources_dir");
    jw_str(&w, ops_sources_dir(ctx->cfg));
    jw_key(&w, "sources");
    sources_json_array(&l, &w);
    jw_obj_close(&w);
    sbuf_addc(&r->body, '\n');
    r->status = 200;
    source_list_free(&l);
}

/* the outcome of add or edit: 201/200 with what was written, or the error
 * with the member at fault */
static void answer_done(struct api_resp *r, enum ops_status st, const struct source_done *d,
                        const struct ops_err *e, bool add) {
    if (st != OPS_OK) {
        int status = st == OPS_INVALID ? 400 : st == OPS_UNKNOWN ? 404 : st == OPS_REFUSED ? 409
                   : st == OPS_DOWN     ? 502
                                        : 500;
        const char *hint = st == OPS_DOWN ? "the source's server (or the metadata server) did "
                                            "not answer: check that it runs and the host and port"
                           : st == OPS_FAILED ? "see the daemon's log" : NULL;
        api_error_field(r, status, d->field, e->msg, hint);
        return;
    }
    jsonw w;
    api_answer_open(&w, r, NULL);
    jw_key(&w, "name");
    jw_str(&w, d->name);
    jw_key(&w, "host");
    jw_str(&w, d->host);
    jw_key(&w, "port");
    jw_int(&w, d->port);
    jw_key(&w, "user");
    jw_str(&w, d->user);
    jw_key(&w, "password");
    jw_str(&w, "set");
    jw_key(&w, "server_id");
    jw_uint(&w, d->server_id);
    jw_key(&w, "config_path");
    jw_str(&w, d->ini);
    jw_key(&w, "admin_listen");
    jw_str0(&w, d->admin_listen[0] ? d->admin_listen : NULL);
    jw_key(&w, "systemd");
    jw_bool(&w, d->systemd);
    jw_key(&w, "start");
    jw_str(&w, d->start);
    jw_key(&w, "notes");
    jw_str0(&w, d->notes.len ? d->notes.data : NULL);
    jw_obj_close(&w);
    sbuf_addc(&r->body, '\n');
    r->status = add ? 201 : 200;
}

static void h_write(const struct api_ctx *ctx, const char *name, const char *body, size_t len,
                    struct api_resp *r) {
    bool add = !name;
    cJSON *j = NULL;
    struct source_spec s;
    if (parse_spec(body, len, add, &j, &s, r)) {
        if (!add) s.name = name;
        struct ops_env env;
        api_ops_env(ctx, &env, "admin API");
        struct source_done d;
        struct ops_err e = {0};
        enum ops_status st = add ? ops_source_add(&env, &s, &d, &e) : ops_source_edit(&env, &s, &d, &e);
        if (st != OPS_OK)
            log_warn("admin", "source %s not %s through the admin API: %s", s.name ? s.name : "?",
                     add ? "added" : "changed", e.msg);
        answer_done(r, st, &d, &e, add);
        source_done_free(&d);
    }
    /* the password's bytes do not outlive the request */
    const cJSON *pw = j ? cJSON_GetObjectItemCaseSensitive(j, "password") : NULL;
    if (cJSON_IsString(pw)) memset(pw->valuestring, 0, strlen(pw->valuestring));
    cJSON_Delete(j);
}

static void h_remove(const struct api_ctx *ctx, const char *name, struct api_resp *r) {
    const char *f = api_lookup(ctx, API_ARG, "force");
    bool force = f && (!strcmp(f, "true") || !strcmp(f, "1"));
    struct ops_env env;
    api_ops_env(ctx, &env, "admin API");
    sbuf fed = SBUF_INIT;
    struct ops_err e;
    if (ops_source_remove(&env, name, force, &fed, &e) != OPS_OK) {
        api_ops_error(r, &e, 500, e.st == OPS_REFUSED ? "DELETE again with ?force=true to "
                                                        "remove it anyway" : NULL);
    } else {
        jsonw w;
        api_answer_open(&w, r, NULL);
        jw_key(&w, "name");
        jw_str(&w, name);
        jw_key(&w, "removed");
        jw_bool(&w, true);
        jw_key(&w, "still_listed_by");
        jw_str0(&w, fed.len ? fed.data : NULL);
        jw_obj_close(&w);
        sbuf_addc(&r->body, '\n');
        r->status = 200;
    }
    sbuf_free(&fed);
}

void sources_api_handle(const struct api_ctx *ctx, const struct route *rt, const char *body,
                        size_t len, struct api_resp *r) {
    switch (rt->id) {
    case ROUTE_SOURCES_LIST: h_list(ctx, r); break;
    case ROUTE_SOURCE_ADD: h_write(ctx, NULL, body, len, r); break;
    case ROUTE_SOURCE_EDIT: h_write(ctx, rt->alias, body, len, r); break;
    case ROUTE_SOURCE_REMOVE: h_remove(ctx, rt->alias, r); break;
    default: api_error(r, 404, "no such endpoint", NULL); break;
    }
}
