/* http_server: the admin HTTP server's socket, MHD daemon and request checks
 * (see http_server.h). */
#include "http_server.h"

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

/* what an oversized chunked body may still send (discarded) before the
 * connection is cut instead of answered with 413 */
#define HTTP_DISCARD_MAX (1024 * 1024)
/* how long http_server_stop waits for the answers of posted calls to be sent */
#define STOP_SEND_WAIT_S 5

struct http_server;

/* one listening address: [admin] listen (everything) or [admin]
 * dict_listen (only the /dict/ files) */
struct listener {
    struct http_server *s;
    struct MHD_Daemon *mhd;
    struct admission *adm;
    bool dict_only;
    int port;
};

struct http_server {
    const struct ss_config *cfg;
    struct node *node; /* where a request that changes something runs (node_post) */
    struct listener main, dict;
    pthread_mutex_t mu; /* guards client, d (attach vs. requests) and token (reload) */
    struct search_client *client;
    struct deliver *d;
    struct reader_stats *rs;
    struct mapping_gen *(*gen_get)(void *ud);
    void *gen_ud;
    char *token;        /* [admin] token, replaced by a SIGHUP reload */
    struct sessions *sessions;
    struct ratelimit *logins;
    /* under mu: requests posted to the node and not yet answered (their
     * connections suspended), those posted whose answer is not sent yet
     * (unsent: until MHD completes the request), and whether the server
     * stops (no more are posted; those queued are answered 503) */
    int posted, unsent;
    bool stopping;
    pthread_cond_t posted_cv;
};

/* the token a request must carry, compared under the lock (a reload may
 * replace it meanwhile) */
static bool token_matches(struct http_server *s, const char *tok, size_t tlen) {
    pthread_mutex_lock(&s->mu);
    bool ok = s->token && guard_token_equal(tok, tlen, s->token, strlen(s->token));
    pthread_mutex_unlock(&s->mu);
    return ok;
}

struct api_call;

/* one request in progress (MHD's con_cls) */
struct req {
    struct api_call *call;        /* posted to the node (NULL: not) */
    struct route rt;
    sbuf body;
    size_t discarded;
    bool too_big;
    bool by_session;              /* authenticated by the session cookie */
    char session[SESSION_HEX + 1]; /* its id */
};

/* s for a log line: control bytes escaped (a %0a in a URL cannot forge a
 * line) */
#define ESC(buf, str) guard_log_escape((str), (str) ? strlen(str) : 0, (buf), sizeof(buf))

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

/* a value of a "Name: value\n" list */
static void add_headers(struct MHD_Response *resp, const sbuf *h) {
    if (!h->len) return;
    char *copy = xstrdup(h->data);
    for (char *line = copy, *nl; line && *line; line = nl) {
        nl = strchr(line, '\n');
        if (nl) *nl++ = '\0';
        char *colon = strchr(line, ':');
        if (!colon) continue;
        *colon = '\0';
        const char *v = colon + 1;
        while (*v == ' ') v++;
        MHD_add_response_header(resp, line, v);
    }
    free(copy);
}

/* HTML: scripts and styles only from this server's own files, no inline
 * code, no framing */
#define CSP "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " \
            "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; " \
            "frame-ancestors 'none'"

static enum MHD_Result send_resp(struct MHD_Connection *conn, const struct api_resp *r,
                                 const char *method, const char *url) {
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(r->body.len, r->body.data ? r->body.data : (void *)"",
                                        MHD_RESPMEM_MUST_COPY);
    if (!resp) return MHD_NO;
    MHD_add_response_header(resp, "Content-Type", r->content_type ? r->content_type
                                                                  : "application/json");
    if (!strstr(r->headers.data ? r->headers.data : "", "Cache-Control:"))
        MHD_add_response_header(resp, "Cache-Control", "no-store"); /* the UI's files: their own */
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(resp, "X-Frame-Options", "DENY");
    if (r->content_type && !strncmp(r->content_type, "text/html", 9))
        MHD_add_response_header(resp, "Content-Security-Policy", CSP);
    add_headers(resp, &r->headers);
    if (r->allow) MHD_add_response_header(resp, "Allow", r->allow);
    if (r->status == 401) MHD_add_response_header(resp, "WWW-Authenticate", "Bearer realm=\"searchsync\"");
    enum MHD_Result rc = MHD_queue_response(conn, (unsigned)r->status, resp);
    MHD_destroy_response(resp);
    char em[32], eu[600];
    LOG(r->status >= 500 ? LOG_WARN : LOG_DEBUG, "admin", "%s %s -> %d", ESC(em, method),
        ESC(eu, url), r->status);
    return rc;
}

static enum MHD_Result send_error(struct MHD_Connection *conn, int status, const char *error,
                                  const char *hint, const char *method, const char *url) {
    struct api_resp r = {0};
    api_error(&r, status, error, hint);
    enum MHD_Result rc = send_resp(conn, &r, method, url);
    api_resp_free(&r);
    return rc;
}

static const char *header(struct MHD_Connection *conn, const char *name) {
    return MHD_lookup_connection_value(conn, MHD_HEADER_KIND, name);
}

static const char *peer(struct MHD_Connection *conn, char *buf, size_t n) {
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    snprintf(buf, n, "?");
    if (ci && ci->client_addr) {
        socklen_t len = ci->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                                               : sizeof(struct sockaddr_in);
        getnameinfo(ci->client_addr, len, buf, (socklen_t)n, NULL, 0, NI_NUMERICHOST);
    }
    return buf;
}

/* the client's address for the failed-login limit and its log lines: the
 * peer's, or behind a proxy of [admin] trusted_proxies the one its
 * X-Forwarded-For names (guard_client_addr) */
static const char *client(const struct http_server *s, struct MHD_Connection *conn, char *buf,
                          size_t n) {
    char p[80];
    peer(conn, p, sizeof p);
    return guard_client_addr(p, header(conn, "X-Forwarded-For"), s->cfg->admin.trusted_proxies,
                             buf, n);
}

static struct adm_slot *slot_of(struct MHD_Connection *conn) {
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* headers seen as libmicrohttpd parsed them: a NUL inside a name or value
 * (which a C string cuts: "Bearer <token>\0junk" read as "Bearer <token>")
 * and the Host count. */
#define HDR_SCAN_MAX 128
struct hdr_scan {
    int hosts, n;
    bool nul;
    const char *key[HDR_SCAN_MAX], *value[HDR_SCAN_MAX];
};

static enum MHD_Result scan_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                   size_t key_size, const char *value, size_t value_size) {
    (void)kind;
    struct hdr_scan *h = cls;
    if (!key || strlen(key) != key_size || (value && strlen(value) != value_size)) h->nul = true;
    if (key && !strcasecmp(key, "Host")) h->hosts++;
    if (h->n < HDR_SCAN_MAX) h->key[h->n] = key, h->value[h->n] = value, h->n++;
    return MHD_YES;
}

/* libmicrohttpd up to 0.9.75 parses the header lines in place in its read
 * buffer, replacing CR and LF with NUL, and takes a value's length with
 * strlen: an embedded NUL cuts the value and nothing says so. Its lines are
 * consecutive there, so after a value's end come exactly its line end (one
 * NUL for LF, two for CRLF) and the next header's name; anything else means
 * the value went on after a NUL. (Later versions refuse a NUL in a header
 * themselves; the check is made only where the parsing is known.) */
static bool nul_cut(const struct hdr_scan *h) {
    static int in_place = -1;
    if (in_place < 0) {
        unsigned a = 0, b = 0, c = 0;
        const char *v = MHD_get_version();
        in_place = v && sscanf(v, "%u.%u.%u", &a, &b, &c) == 3 && a == 0 && b == 9 && c <= 75;
    }
    if (!in_place) return false;
    for (int i = 0; i < h->n; i++) {
        if (!h->value[i]) continue;
        const char *end = h->value[i] + strlen(h->value[i]);
        if (i + 1 < h->n) {
            if (h->key[i + 1] != end + 1 && h->key[i + 1] != end + 2) return true;
        } else if (end[1] != '\0') { /* the last: its line end, then the empty line */
            return true;
        }
    }
    return false;
}

static const char *lookup(void *cls, enum api_lookup kind, const char *name) {
    return MHD_lookup_connection_value(cls, kind == API_HEADER ? MHD_HEADER_KIND
                                                               : MHD_GET_ARGUMENT_KIND, name);
}

#define COOKIE "ss_session"

/* the request's credentials: a Bearer token, else the session cookie.
 * true when authenticated; else *why says what was wrong */
static bool authenticate(struct http_server *s, struct MHD_Connection *conn, struct req *rq,
                         const char **why) {
    const char *authz = header(conn, "Authorization");
    if (authz) {
        size_t tlen = 0;
        const char *tok = guard_bearer(authz, &tlen);
        if (tok && token_matches(s, tok, tlen)) return true;
        *why = tok ? "wrong token" : "Authorization is not Bearer";
        return false;
    }
    size_t n = 0;
    const char *id = guard_cookie(header(conn, "Cookie"), COOKIE, &n);
    if (id) {
        if (sessions_check(s->sessions, id, n, time(NULL), NULL, NULL)) {
            rq->by_session = true;
            memcpy(rq->session, id, SESSION_HEX);
            rq->session[SESSION_HEX] = '\0';
            return true;
        }
        *why = "session unknown or expired";
        return false;
    }
    *why = "no token";
    return false;
}

/* the checks of http_server.h on the request's headers; true when a
 * response was queued (*rc says how it went) */
static bool check_headers(struct listener *l, struct MHD_Connection *conn, const char *url,
                          const char *method, struct req *rq, enum MHD_Result *rc) {
    struct http_server *s = l->s;
    const struct ss_config *cfg = s->cfg;
    char who[80], em[32], eu[600];
    peer(conn, who, sizeof who);
    struct hdr_scan hs = {0};
    MHD_get_connection_values_n(conn, MHD_HEADER_KIND, scan_header, &hs);
    if (!hs.nul && hs.n < HDR_SCAN_MAX) hs.nul = nul_cut(&hs);
    if (hs.nul || hs.hosts > 1) {
        log_info("admin", "%s %s from %s refused: %s", ESC(em, method), ESC(eu, url), who,
                 hs.nul ? "a header holds a NUL byte" : "more than one Host header");
        *rc = send_error(conn, 400, hs.nul ? "a header holds a NUL byte"
                                           : "the request has more than one Host header",
                         "send each header once, without control characters", method, url);
        return true;
    }
    route_match(method, url, &rq->rt);
    if (l->dict_only && rq->rt.id != ROUTE_DICT) {
        /* [admin] dict_listen serves the dictionary files and nothing else */
        *rc = send_error(conn, rq->rt.id == ROUTE_BAD_METHOD ? 405 : 404,
                         "this address serves only /dict/ext.txt and /dict/stop.txt",
                         "the API is on [admin] listen", method, url);
        return true;
    }
    if (rq->rt.id == ROUTE_DICT) return false; /* public, read-only, for any host */
    const char *host = header(conn, "Host");
    if (!guard_host_allowed(cfg->admin.allowed_hosts, host)) {
        log_info("admin", "%s %s from %s refused: Host header not in [admin] allowed_hosts",
                 ESC(em, method), ESC(eu, url), who);
        *rc = send_error(conn, 421,
                         host ? "this server does not answer to the host named in the Host header"
                              : "a Host header is required",
                         "use an address listed in [admin] allowed_hosts, or add the name there",
                         method, url);
        return true;
    }
    if (!rq->rt.public) {
        const char *why = NULL;
        if (!authenticate(s, conn, rq, &why)) {
            log_info("admin", "%s %s from %s refused: %s", ESC(em, method), ESC(eu, url), who,
                     why);
            if (rq->rt.id == ROUTE_UI && !strcmp(url, "/")) {
                /* the UI's page without a session: to the login form */
                struct api_resp r = {0};
                r.status = 303;
                r.content_type = "text/plain; charset=utf-8";
                sbuf_adds(&r.headers, "Location: /login\n");
                sbuf_adds(&r.body, "log in at /login\n");
                *rc = send_resp(conn, &r, method, url);
                api_resp_free(&r);
                return true;
            }
            bool expired = !strcmp(why, "session unknown or expired");
            *rc = send_error(conn, 401,
                             expired                         ? "the session has expired or ended"
                             : !strcmp(why, "no token")      ? "a token is required"
                                                             : "the token is not valid",
                             expired ? "log in again (POST /api/v1/login)"
                                     : "send Authorization: Bearer <[admin] token>, or log in",
                             method, url);
            return true;
        }
        adm_authenticated(l->adm, slot_of(conn));
    }
    if (rq->rt.id == ROUTE_NOT_FOUND || rq->rt.id == ROUTE_BAD_METHOD) {
        struct api_resp r = {0};
        api_handle(NULL, &rq->rt, NULL, 0, &r);
        *rc = send_resp(conn, &r, method, url);
        api_resp_free(&r);
        return true;
    }
    const char *cl = header(conn, "Content-Length");
    const char *te = header(conn, "Transfer-Encoding");
    unsigned long long clen = cl ? strtoull(cl, NULL, 10) : 0;
    bool has_body = clen > 0 || te;
    if (rq->rt.mutating) {
        const char *origin = header(conn, "Origin");
        const char *bad = NULL;
        if (origin && !guard_origin_allowed(cfg->admin.allowed_hosts, origin))
            bad = "cross-site request refused: the Origin header names a host that is not "
                  "allowed";
        else if (rq->by_session && !origin)
            bad = "a call made with a session cookie must carry an Origin header";
        else if (rq->by_session) {
            char want[SESSION_HEX + 1];
            const char *got = header(conn, "X-CSRF-Token");
            size_t n = 0;
            if (!sessions_check(s->sessions, rq->session, SESSION_HEX, time(NULL), want, NULL) ||
                !got || (n = strlen(got), !guard_token_equal(got, n, want, SESSION_HEX)))
                bad = "the X-CSRF-Token header is missing or does not match the session";
        }
        if (bad) {
            log_warn("admin", "%s %s from %s refused: %s", ESC(em, method), ESC(eu, url), who,
                     bad);
            *rc = send_error(conn, 403, bad,
                             "call the API from a page served by a host in [admin] "
                             "allowed_hosts, sending the csrf_token of POST /api/v1/login in "
                             "X-CSRF-Token; or use Authorization: Bearer (curl, scripts)",
                             method, url);
            return true;
        }
        const char *ct = header(conn, "Content-Type");
        if ((has_body || ct) && !guard_is_json_type(ct)) {
            *rc = send_error(conn, 415, "the body must be JSON",
                             "send Content-Type: application/json", method, url);
            return true;
        }
    }
    if (clen > HTTP_BODY_MAX) {
        *rc = send_error(conn, 413, "the request body is too large",
                         "the API takes bodies of at most 65536 bytes", method, url);
        return true;
    }
    if (rq->rt.id == ROUTE_LOGIN) {
        int retry = 0;
        client(s, conn, who, sizeof who);
        if (ratelimit_blocked(s->logins, who, time(NULL), &retry)) {
            log_warn("admin", "POST /api/v1/login from %s refused: too many failed logins", who);
            struct api_resp r = {0};
            api_error(&r, 429, "too many failed logins from this address",
                      "wait for the time in Retry-After, then log in with the right token");
            sbuf_printf(&r.headers, "Retry-After: %d\n", retry);
            *rc = send_resp(conn, &r, method, url);
            api_resp_free(&r);
            return true;
        }
    }
    return false;
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
        client(s, conn, who, sizeof who);
        cJSON *j = rq->body.len ? json_exact_parse(rq->body.data, rq->body.len) : NULL;
        cJSON *t = cJSON_IsObject(j) ? cJSON_GetObjectItemCaseSensitive(j, "token") : NULL;
        if (!cJSON_IsString(t)) {
            api_error_field(r, 400, "token", !j || !cJSON_IsObject(j)
                                                 ? "the body must be a JSON object {\"token\":\"...\"}"
                                                 : "\"token\" must be a string",
                            "send {\"token\":\"<[admin] token>\"}");
        } else if (!token_matches(s, t->valuestring, strlen(t->valuestring))) {
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
        adm_request_start(l->adm, slot_of(conn));
        rq = xcalloc(1, sizeof *rq);
        *con_cls = rq;
        enum MHD_Result rc = MHD_YES;
        if (check_headers(l, conn, url, method, rq, &rc)) return rc;
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
        return send_resp(conn, &rq->call->r, method, url);
    if (rq->too_big)
        return send_error(conn, 413, "the request body is too large",
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
        ui_asset_serve(url, header(conn, "If-None-Match"), &r);
    } else {
        /* a request that changes something (a build, a resync, a replay, a
         * metadata write) is posted to the node and runs on its request
         * thread (sync/node/node.h); reads are answered here */
        struct node *n = strcmp(method, "GET") && strcmp(method, "HEAD") ? s->node : NULL;
        if (api_call_start(s, conn, url, rq, n, &r)) return MHD_YES; /* answered later */
    }
    enum MHD_Result rc = send_resp(conn, &r, method, url);
    api_resp_free(&r);
    return rc;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
    (void)toe;
    struct listener *l = cls;
    adm_request_done(l->adm, slot_of(conn));
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
        *socket_context = adm_open(l->adm, fi ? (int)fi->connect_fd : -1, peer(conn, who, sizeof who));
    } else {
        adm_close(l->adm, *socket_context);
        *socket_context = NULL;
    }
}

/* "host:port", "[v6]:port", ":port" (all addresses) -> a bound, listening
 * socket; key names the setting in messages */
static int bind_listen(const char *key, const char *listen_at, int *family, int *port,
                       bool *loopback, char *err, size_t errlen) {
    char hint[200];
    snprintf(hint, sizeof hint, "set %s to host:port (e.g. 127.0.0.1:8089), or to \"\" to turn "
                                "it off", key);
    char host[256] = "";
    const char *colon = strrchr(listen_at, ':');
    if (!colon || !colon[1])
        return errf(err, errlen, "%s = \"%s\" is not host:port: %s", key, listen_at, hint);
    const char *h = listen_at;
    size_t hn = (size_t)(colon - listen_at);
    if (hn >= 2 && h[0] == '[' && h[hn - 1] == ']') h++, hn -= 2;
    if (hn >= sizeof host)
        return errf(err, errlen, "%s = \"%s\": the host is too long", key, listen_at);
    memcpy(host, h, hn);
    host[hn] = '\0';
    for (const char *p = colon + 1; *p; p++)
        if (*p < '0' || *p > '9')
            return errf(err, errlen, "%s = \"%s\": the port is not a number: %s", key,
                        listen_at, hint);
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int g = getaddrinfo(hn ? host : NULL, colon + 1, &hints, &res);
    if (g != 0)
        return errf(err, errlen, "%s = \"%s\": cannot resolve \"%s\": %s; %s", key, listen_at,
                    host, gai_strerror(g), hint);
    int fd = -1, e = 0;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            e = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 511) != 0) {
            e = errno;
            close(fd);
            fd = -1;
            continue;
        }
        *family = ai->ai_family;
    }
    freeaddrinfo(res);
    if (fd < 0)
        return errf(err, errlen, "%s = \"%s\": cannot listen there: %s%s%s", key, listen_at,
                    strerror(e),
                    e == EADDRINUSE  ? " (another process, perhaps another searchsync run, uses "
                                       "it): pick a free port in " : "",
                    e == EADDRINUSE  ? key
                    : e == EACCES    ? ": ports below 1024 need privileges; pick another port"
                    : e == EADDRNOTAVAIL ? ": that address is not on this machine; use one of its "
                                           "addresses (127.0.0.1 for local access)"
                                     : "");
    struct sockaddr_storage sa;
    socklen_t sl = sizeof sa;
    *port = 0;
    *loopback = false;
    if (getsockname(fd, (struct sockaddr *)&sa, &sl) == 0) {
        *port = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
                                               : ((struct sockaddr_in *)&sa)->sin_port);
        char num[80];
        if (getnameinfo((struct sockaddr *)&sa, sl, num, sizeof num, NULL, 0, NI_NUMERICHOST) == 0)
            *loopback = guard_is_loopback(num);
    }
    return fd;
}

/* the limits of docs/http-api.md, "Limits" */
#define SLOTS_TOTAL 256
#define SLOTS_PER_ADDR 128
#define MHD_HARD_LIMIT 768 /* above SLOTS_TOTAL: cut connections are still open for a moment */

static int listener_start(struct http_server *s, struct listener *l, const char *key,
                          const char *listen_at, bool dict_only, char *err, size_t errlen) {
    int family = AF_INET, port = 0;
    bool loopback = false;
    int fd = bind_listen(key, listen_at, &family, &port, &loopback, err, errlen);
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

const struct node_admin_ops http_server_node_ops = {
    .start = ops_start,
    .attach = ops_attach,
    .generation = ops_generation,
    .set_token = ops_set_token,
    .stop = ops_stop,
};
