/* http_server: the admin HTTP server — its MHD daemons on the listening
 * addresses, each request read, checked (http_checks.c), answered or posted
 * to the node, the login session endpoint, start and stop (see
 * http_server.h). */
#include "http_server.h"
#include "http_int.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "admission.h"
#include "api.h"
#include "guard.h"
#include "json_exact.h"
#include "jsonw.h"
#include "log.h"
#include "login_page.h"
#include "sync/mapping/mapping_gen.h"
#include "sync/node/node.h"
#include "ratelimit.h"
#include "route.h"
#include "sbuf.h"
#include "session.h"
#include "ui_assets.h"

/* how long http_server_stop waits for the answers of posted calls to be sent */
#define STOP_SEND_WAIT_S 5



static void mhd_log(void *cls, const char *fmt, va_list ap) {
    (void)cls;
    char line[512], esc[1024];
    vsnprintf(line, sizeof line, fmt, ap);
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
    log_warn("admin", "libmicrohttpd: %s", guard_log_escape(line, n, esc, sizeof esc));
}

static int hexval(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Decode %XX in place, except %00: a NUL would cut the path short of what
 * was asked ("/api/v1/status%00.png" read as "/api/v1/status"); it stays
 * "%00" and matches no route. */
static size_t unescape(void *cls, struct MHD_Connection *conn, char *s) {
    (void)cls, (void)conn;
    char *w = s;
    for (const char *r = s; *r;) {
        int hi, lo;
        if (r[0] == '%' && (hi = hexval(r[1])) >= 0 && (lo = hexval(r[2])) >= 0 && (hi | lo)) {
            *w++ = (char)(hi * 16 + lo);
            r += 3;
        } else {
            *w++ = *r++;
        }
    }
    *w = '\0';
    return (size_t)(w - s);
}

static const char *lookup(void *cls, enum api_lookup kind, const char *name) {
    return MHD_lookup_connection_value(cls, kind == API_HEADER ? MHD_HEADER_KIND
                                                               : MHD_GET_ARGUMENT_KIND, name);
}

static void iso_time(time_t t, char *buf, size_t n) {
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void session_json(sbuf *out, const char *csrf, time_t expires, int ttl) {
    char when[40];
    iso_time(expires, when, sizeof when);
    jsonw w;
    jw_init(&w, out);
    jw_obj_open(&w);
    jw_key(&w, "authenticated");
    jw_str(&w, csrf ? "session" : "token");
    if (csrf) {
        jw_key(&w, "csrf_token");
        jw_str(&w, csrf);
        jw_key(&w, "expires_at");
        jw_str(&w, when);
        jw_key(&w, "ttl_s");
        jw_int(&w, ttl);
    }
    jw_obj_close(&w);
    sbuf_addc(out, '\n');
}

/* POST /api/v1/login, /api/v1/logout, GET /api/v1/session */
static void h_session(struct http_server *s, struct MHD_Connection *conn, struct req *rq,
                      struct api_resp *r) {
    r->content_type = "application/json";
    int ttl = s->cfg->admin.session_ttl_s;
    if (rq->rt.id == ROUTE_LOGIN) {
        char who[80];
        http_client_addr(s, conn, who, sizeof who);
        cJSON *j = rq->body.len ? json_exact_parse(rq->body.data, rq->body.len) : NULL;
        cJSON *t = cJSON_IsObject(j) ? cJSON_GetObjectItemCaseSensitive(j, "token") : NULL;
        if (!cJSON_IsString(t)) {
            api_error_field(r, 400, "token", !j || !cJSON_IsObject(j)
                                                 ? "the body must be a JSON object {\"token\":\"...\"}"
                                                 : "\"token\" must be a string",
                            "send {\"token\":\"<[admin] token>\"}");
        } else if (!http_token_matches(s, t->valuestring, strlen(t->valuestring))) {
            ratelimit_failure(s->logins, who, time(NULL));
            log_info("admin", "login from %s refused: wrong token", who);
            api_error(r, 401, "the token is not valid", "log in with the [admin] token");
        } else {
            char id[SESSION_HEX + 1], csrf[SESSION_HEX + 1];
            time_t exp = 0;
            if (sessions_create(s->sessions, time(NULL), id, csrf, &exp) < 0) {
                api_error(r, 500, "no random bytes for a session id", "retry");
            } else {
                sbuf_printf(&r->headers,
                            "Set-Cookie: " COOKIE "=%s; Path=/; Max-Age=%d; HttpOnly; "
                            "SameSite=Strict\n", id, ttl);
                session_json(&r->body, csrf, exp, ttl);
                r->status = 200;
                log_info("admin", "login from %s: session opened for %d s", who, ttl);
            }
        }
        cJSON_Delete(j);
        return;
    }
    if (rq->rt.id == ROUTE_LOGOUT) {
        if (rq->by_session) sessions_delete(s->sessions, rq->session, SESSION_HEX);
        sbuf_adds(&r->headers, "Set-Cookie: " COOKIE "=; Path=/; Max-Age=0; HttpOnly; "
                               "SameSite=Strict\n");
        sbuf_printf(&r->body, "{\"logged_out\":%s}\n", rq->by_session ? "true" : "false");
        r->status = 200;
        return;
    }
    char csrf[SESSION_HEX + 1];
    time_t exp = 0;
    bool live = rq->by_session &&
                sessions_check(s->sessions, rq->session, SESSION_HEX, time(NULL), csrf, &exp);
    session_json(&r->body, live ? csrf : NULL, exp, ttl);
    r->status = 200;
}

/* A request that changes something, posted to the node (node_post) and
 * answered asynchronously: on_request suspends its connection and returns;
 * the node's request thread runs it, stores the answer in r and resumes the
 * connection; MHD then calls on_request again, which sends r. A suspended
 * connection is not read, timed out, closed or completed by MHD, and
 * http_server_stop waits for every posted call to be answered before it
 * stops MHD (which must not stop with a connection suspended).
 *
 * The call is shared by the connection (struct req) and the node's request
 * thread and freed by the last of them (refs): nothing the node thread
 * reads or writes is on on_request's stack or freed by on_completed under
 * it. ctx.gen is the call's own reference, held until the work ran. */
struct api_call {
    atomic_int refs;
    struct http_server *s;
    struct MHD_Connection *conn;
    struct api_ctx ctx;
    struct route rt;
    sbuf body;
    struct api_resp r;
};

static void call_unref(struct api_call *c) {
    if (!c || atomic_fetch_sub(&c->refs, 1) != 1) return;
    mapping_gen_unref(c->ctx.gen);
    sbuf_free(&c->body);
    api_resp_free(&c->r);
    free(c);
}

#define STOPPING_ERROR "the daemon is stopping: the request was not run"
#define STOPPING_HINT "retry once the daemon runs again"

/* on the node's request thread */
static void api_call_run(void *arg) {
    struct api_call *c = arg;
    pthread_mutex_lock(&c->s->mu);
    bool stopping = c->s->stopping;
    pthread_mutex_unlock(&c->s->mu);
    if (stopping) /* queued when the server began to stop: not run */
        api_error(&c->r, 503, STOPPING_ERROR, STOPPING_HINT);
    else
        api_handle(&c->ctx, &c->rt, c->body.data, c->body.len, &c->r);
}

/* the call answered (on the node's request thread, or on_request's when the
 * node refused it): resume its connection, let the server stop */
static void api_call_done(void *arg, bool ran) {
    struct api_call *c = arg;
    struct http_server *s = c->s;
    if (!ran) api_error(&c->r, 503, STOPPING_ERROR, STOPPING_HINT);
    mapping_gen_unref(c->ctx.gen);
    c->ctx.gen = NULL;
    struct MHD_Connection *conn = c->conn;
    call_unref(c); /* the node's reference: c is not touched after this */
    MHD_resume_connection(conn); /* on_request sends the answer */
    pthread_mutex_lock(&s->mu);
    s->posted--;
    pthread_cond_broadcast(&s->posted_cv);
    pthread_mutex_unlock(&s->mu);
}

/* an API call, posted to the node n (true: the connection is suspended
 * until its answer) or, with no node, run here (false: the answer in r) */
static bool api_call_start(struct http_server *s, struct MHD_Connection *conn, const char *url,
                           struct req *rq, struct node *n, struct api_resp *r) {
    struct api_ctx ctx = {s->cfg, NULL, NULL, NULL, NULL, lookup, conn};
    pthread_mutex_lock(&s->mu);
    ctx.client = s->client;
    ctx.d = s->d;
    ctx.rs = s->rs;
    struct mapping_gen *(*gen_get)(void *) = s->gen_get;
    void *gen_ud = s->gen_ud;
    bool stopping = s->stopping;
    if (n && !stopping) s->posted++, s->unsent++;
    pthread_mutex_unlock(&s->mu);
    if (n && stopping) {
        api_error(r, 503, STOPPING_ERROR, STOPPING_HINT);
        return false;
    }
    ctx.gen = gen_get ? gen_get(gen_ud) : NULL;
    if (!n) {
        api_handle(&ctx, &rq->rt, rq->body.data, rq->body.len, r);
        mapping_gen_unref(ctx.gen);
        return false;
    }
    struct api_call *c = xcalloc(1, sizeof *c);
    atomic_init(&c->refs, 2); /* the connection's (rq->call) and the node's */
    c->s = s;
    c->conn = conn; /* the lookups read it: it stays, suspended, until resumed */
    c->ctx = ctx;
    c->rt = rq->rt;
    c->body = rq->body; /* moved */
    memset(&rq->body, 0, sizeof rq->body);
    rq->call = c;
    /* suspended before it is posted: the node's answer may resume it at once */
    MHD_suspend_connection(conn);
    char what[640], eu[600];
    snprintf(what, sizeof what, "admin call %s", ESC(eu, url));
    if (node_post(n, what, api_call_run, c, api_call_done, c) < 0)
        api_call_done(c, false); /* the node stops: 503, resumed at once */
    return true;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls) {
    (void)version;
    struct listener *l = cls;
    struct http_server *s = l->s;
    struct req *rq = *con_cls;
    if (!rq) { /* headers only: check them before any body is read */
        adm_request_start(l->adm, http_slot_of(conn));
        rq = xcalloc(1, sizeof *rq);
        *con_cls = rq;
        enum MHD_Result rc = MHD_YES;
        if (http_check_headers(l, conn, url, method, rq, &rc)) return rc;
        return MHD_YES;
    }
    if (*upload_data_size) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        if (rq->too_big || rq->body.len + n > HTTP_BODY_MAX) {
            rq->too_big = true;
            rq->discarded += n;
            return rq->discarded > HTTP_DISCARD_MAX ? MHD_NO : MHD_YES;
        }
        sbuf_add(&rq->body, upload_data, n);
        return MHD_YES;
    }
    if (rq->call) /* resumed: the node answered */
        return http_send_resp(conn, &rq->call->r, method, url);
    if (rq->too_big)
        return http_send_error(conn, 413, "the request body is too large",
                               "the API takes bodies of at most 65536 bytes", method, url);
    struct api_resp r = {0};
    enum route_id id = rq->rt.id;
    if (id == ROUTE_LOGIN || id == ROUTE_LOGOUT || id == ROUTE_SESSION) {
        h_session(s, conn, rq, &r);
    } else if (id == ROUTE_LOGIN_PAGE) {
        bool js = !strcmp(rq->rt.file, "js");
        sbuf_adds(&r.body, js ? login_page_js : login_page_html);
        r.content_type = js ? "text/javascript; charset=utf-8" : "text/html; charset=utf-8";
        r.status = 200;
    } else if (id == ROUTE_UI) {
        ui_asset_serve(url, http_header(conn, "If-None-Match"), &r);
    } else {
        /* a request that changes something (a build, a resync, a replay, a
         * metadata write) is posted to the node and runs on its request
         * thread (sync/node/node.h); reads are answered here */
        struct node *n = strcmp(method, "GET") && strcmp(method, "HEAD") ? s->node : NULL;
        if (api_call_start(s, conn, url, rq, n, &r)) return MHD_YES; /* answered later */
    }
    enum MHD_Result rc = http_send_resp(conn, &r, method, url);
    api_resp_free(&r);
    return rc;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
    (void)toe;
    struct listener *l = cls;
    adm_request_done(l->adm, http_slot_of(conn));
    struct req *rq = *con_cls;
    if (!rq) return;
    if (rq->call) { /* a posted call's answer went out (or its client left) */
        struct http_server *s = l->s;
        pthread_mutex_lock(&s->mu);
        s->unsent--;
        pthread_cond_broadcast(&s->posted_cv);
        pthread_mutex_unlock(&s->mu);
    }
    call_unref(rq->call); /* the node's reference, if any, keeps it */
    sbuf_free(&rq->body);
    free(rq);
    *con_cls = NULL;
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code) {
    struct listener *l = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *fi =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        char who[80];
        *socket_context = adm_open(l->adm, fi ? (int)fi->connect_fd : -1, http_peer(conn, who, sizeof who));
    } else {
        adm_close(l->adm, *socket_context);
        *socket_context = NULL;
    }
}

/* the limits of docs/http-api.md, "Limits" */
#define SLOTS_TOTAL 256
#define SLOTS_PER_ADDR 128
#define MHD_HARD_LIMIT 768 /* above SLOTS_TOTAL: cut connections are still open for a moment */

static int listener_start(struct http_server *s, struct listener *l, const char *key,
                          const char *listen_at, bool dict_only, char *err, size_t errlen) {
    int family = AF_INET, port = 0;
    bool loopback = false;
    int fd = http_bind_listen(key, listen_at, &family, &port, &loopback, err, errlen);
    if (fd < 0) return -1;
    l->s = s;
    l->port = port;
    l->dict_only = dict_only;
    struct adm_limits lim = {SLOTS_TOTAL, SLOTS_PER_ADDR, 10, 30, 60};
    l->adm = adm_new(&lim);
    /* a pool of internal polling threads; suspend/resume (with the
     * inter-thread channel it implies, which wakes a worker when the node
     * resumes one of its connections) for the calls posted to the node */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG |
                     MHD_ALLOW_SUSPEND_RESUME;
    if (family == AF_INET6) flags |= MHD_USE_IPv6;
    /* its threads inherit this mask: SIGTERM/SIGINT stay with the daemon's
     * own threads (the binlog reader's blocking read sees them) */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    if (l->adm)
        l->mhd = MHD_start_daemon(
            flags, 0, NULL, NULL, on_request, l, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, l,
            MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd, MHD_OPTION_THREAD_POOL_SIZE,
            (unsigned int)(dict_only ? 2 : 4), MHD_OPTION_CONNECTION_LIMIT,
            (unsigned int)MHD_HARD_LIMIT, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)30,
            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(128 * 1024),
            MHD_OPTION_NOTIFY_COMPLETED, on_completed, l, MHD_OPTION_NOTIFY_CONNECTION,
            on_connection, l, MHD_OPTION_UNESCAPE_CALLBACK, unescape, l, MHD_OPTION_END);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!l->mhd) {
        close(fd);
        adm_free(l->adm);
        l->adm = NULL;
        return errf(err, errlen, "%s = \"%s\": the HTTP server did not start (see the "
                                 "libmicrohttpd message above)", key, listen_at);
    }
    const char *colon = strrchr(listen_at, ':');
    if (dict_only)
        log_info("admin", "dictionary files served on %.*s:%d (/dict/ext.txt, /dict/stop.txt; "
                          "public, read-only)", (int)(colon - listen_at), listen_at, port);
    else
        log_info("admin", "admin HTTP server listening on %.*s:%d; every call needs the token "
                          "or a login session", (int)(colon - listen_at), listen_at, port);
    if (!dict_only && !loopback)
        log_warn("admin", "%s = \"%s\" is not a loopback address and the admin server speaks "
                          "plain HTTP: the token, session cookies and data cross the network "
                          "unencrypted. Bind 127.0.0.1 and put a TLS reverse proxy in front "
                          "(docs/http-api.md)", key, listen_at);
    return 0;
}

static void listener_stop(struct listener *l) {
    if (!l->mhd) return;
    MHD_stop_daemon(l->mhd); /* joins its threads: no request runs after this */
    adm_free(l->adm);
    l->mhd = NULL;
}

int http_server_start(const struct ss_config *cfg, struct node *node, struct http_server **out,
                      char *err, size_t errlen) {
    *out = NULL;
    const char *listen_at = cfg->admin.listen, *dict_at = cfg->admin.dict_listen;
    bool want_main = listen_at && *listen_at, want_dict = dict_at && *dict_at;
    if (!want_main) {
        log_info("admin", "admin HTTP server off ([admin] listen is empty)");
    } else if (!cfg->admin.token || !*cfg->admin.token) {
        log_warn("admin", "admin HTTP server off: no token. Set [admin] token (or the "
                          "environment variable SEARCHSYNC_ADMIN_TOKEN) to at least 32 random hex "
                          "characters, e.g. from `openssl rand -hex 16`, to serve the API on %s",
                 listen_at);
        want_main = false;
    }
    if (!want_main && !want_dict) return 0;
    struct http_server *s = xcalloc(1, sizeof *s);
    s->cfg = cfg;
    s->node = node;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->posted_cv, NULL);
    s->token = cfg->admin.token ? xstrdup(cfg->admin.token) : NULL;
    s->sessions = sessions_new(cfg->admin.session_ttl_s);
    s->logins = ratelimit_new(LOGIN_FAILURES_MAX, LOGIN_WINDOW_S);
    if ((want_main && listener_start(s, &s->main, "[admin] listen", listen_at, false, err,
                                     errlen) < 0) ||
        (want_dict && listener_start(s, &s->dict, "[admin] dict_listen", dict_at, true, err,
                                     errlen) < 0)) {
        listener_stop(&s->main);
        sessions_free(s->sessions);
        ratelimit_free(s->logins);
        pthread_mutex_destroy(&s->mu);
        pthread_cond_destroy(&s->posted_cv);
        free(s->token);
        free(s);
        return -1;
    }
    *out = s;
    return 0;
}

void http_server_attach(struct http_server *s, struct search_client *client, struct deliver *d,
                        struct reader_stats *rs) {
    if (!s) return;
    pthread_mutex_lock(&s->mu);
    s->client = client;
    s->d = d;
    s->rs = rs;
    pthread_mutex_unlock(&s->mu);
}

void http_server_set_token(struct http_server *s, const char *token) {
    if (!s || !token || !*token) return;
    char *t = xstrdup(token);
    pthread_mutex_lock(&s->mu);
    char *old = s->token;
    s->token = t;
    pthread_mutex_unlock(&s->mu);
    free(old);
}

int http_server_port(const struct http_server *s) { return s ? s->main.port : 0; }
int http_server_dict_port(const struct http_server *s) { return s ? s->dict.port : 0; }

void http_server_stop(struct http_server *s) {
    if (!s) return;
    /* no more calls posted; those queued on the node are answered 503, the
     * one it runs is waited for: MHD must not stop with a connection
     * suspended */
    pthread_mutex_lock(&s->mu);
    s->stopping = true;
    while (s->posted > 0) pthread_cond_wait(&s->posted_cv, &s->mu);
    /* and their answers sent: a connection resumed a moment ago may not have
     * been written yet, and MHD_stop_daemon would close it unanswered. A
     * client that does not read its answer is not waited for long. */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += STOP_SEND_WAIT_S;
    while (s->unsent > 0 &&
           pthread_cond_timedwait(&s->posted_cv, &s->mu, &until) != ETIMEDOUT) {}
    pthread_mutex_unlock(&s->mu);
    listener_stop(&s->main);
    listener_stop(&s->dict);
    sessions_free(s->sessions);
    ratelimit_free(s->logins);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->posted_cv);
    log_info("admin", "admin HTTP server stopped");
    free(s->token);
    free(s);
}

void http_server_generation(struct http_server *s, struct mapping_gen *(*get)(void *ud),
                            void *ud) {
    if (!s) return;
    pthread_mutex_lock(&s->mu);
    s->gen_get = get;
    s->gen_ud = ud;
    pthread_mutex_unlock(&s->mu);
}

/* ---------- the node's admin operations (sync/node/node.h) ---------- */

static int ops_start(const struct ss_config *cfg, struct node *n, void **srv, char *err,
                     size_t errlen) {
    struct http_server *s = NULL;
    int rc = http_server_start(cfg, n, &s, err, errlen);
    *srv = s;
    return rc;
}
static void ops_attach(void *srv, struct search_client *client, struct deliver *d,
                       struct reader_stats *rs) {
    http_server_attach(srv, client, d, rs);
}
static void ops_generation(void *srv, struct mapping_gen *(*get)(void *ud), void *ud) {
    http_server_generation(srv, get, ud);
}
static void ops_set_token(void *srv, const char *token) { http_server_set_token(srv, token); }
static void ops_stop(void *srv) { http_server_stop(srv); }
static bool ops_healthy(void *srv, int64_t bound_ms, char *why, size_t whylen) {
    struct http_server *s = srv;
    return !s || (adm_healthy(s->main.adm, bound_ms, why, whylen) &&
                  adm_healthy(s->dict.adm, bound_ms, why, whylen));
}

const struct node_admin_ops http_server_node_ops = {
    .start = ops_start,
    .attach = ops_attach,
    .generation = ops_generation,
    .set_token = ops_set_token,
    .stop = ops_stop,
    .healthy = ops_healthy,
};
