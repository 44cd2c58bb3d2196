/* http_server: the admin HTTP server's socket, MHD daemon and request checks
 * (see http_server.h). */
#include "http_server.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "api.h"
#include "guard.h"
#include "log.h"
#include "route.h"
#include "sbuf.h"

/* what an oversized chunked body may still send (discarded) before the
 * connection is cut instead of answered with 413 */
#define HTTP_DISCARD_MAX (1024 * 1024)

struct http_server {
    const struct ss_config *cfg;
    struct MHD_Daemon *mhd;
    int port;
    pthread_mutex_t mu; /* guards client, d (attach vs. requests) and token (reload) */
    struct search_client *client;
    struct deliver *d;
    char *token; /* [admin] token, replaced by a SIGHUP reload */
};

/* one request in progress (MHD's con_cls) */
struct req {
    struct route rt;
    sbuf body;
    size_t discarded;
    bool too_big;
};

static void mhd_log(void *cls, const char *fmt, va_list ap) {
    (void)cls;
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
    log_warn("admin", "libmicrohttpd: %s", line);
}

static enum MHD_Result send_resp(struct MHD_Connection *conn, const struct api_resp *r,
                                 const char *method, const char *url) {
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(r->body.len, r->body.data ? r->body.data : (void *)"",
                                        MHD_RESPMEM_MUST_COPY);
    if (!resp) return MHD_NO;
    MHD_add_response_header(resp, "Content-Type", r->content_type ? r->content_type
                                                                  : "application/json");
    MHD_add_response_header(resp, "Cache-Control", "no-store");
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    if (r->allow) MHD_add_response_header(resp, "Allow", r->allow);
    if (r->status == 401) MHD_add_response_header(resp, "WWW-Authenticate", "Bearer realm=\"searchsync\"");
    enum MHD_Result rc = MHD_queue_response(conn, (unsigned)r->status, resp);
    MHD_destroy_response(resp);
    LOG(r->status >= 500 ? LOG_WARN : LOG_DEBUG, "admin", "%s %s -> %d", method, url, r->status);
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

/* checks 1-5 of http_server.h on the request's headers; true when a
 * response was queued (*rc says how it went) */
static bool check_headers(struct http_server *s, struct MHD_Connection *conn, const char *url,
                          const char *method, struct req *rq, enum MHD_Result *rc) {
    const struct ss_config *cfg = s->cfg;
    const char *host = header(conn, "Host");
    char who[80];
    if (!guard_host_allowed(cfg->admin.allowed_hosts, host)) {
        log_info("admin", "%s %s from %s refused: Host header not in [admin] allowed_hosts",
                 method, url, peer(conn, who, sizeof who));
        *rc = send_error(conn, 421,
                         host ? "this server does not answer to the host named in the Host header"
                              : "a Host header is required",
                         "use an address listed in [admin] allowed_hosts, or add the name there",
                         method, url);
        return true;
    }
    size_t tlen = 0;
    const char *tok = guard_bearer(header(conn, "Authorization"), &tlen);
    pthread_mutex_lock(&s->mu);
    bool tok_ok = tok && guard_token_equal(tok, tlen, s->token, strlen(s->token));
    pthread_mutex_unlock(&s->mu);
    if (!tok_ok) {
        log_info("admin", "%s %s from %s refused: %s token", method, url,
                 peer(conn, who, sizeof who), tok ? "wrong" : "no");
        *rc = send_error(conn, 401, tok ? "the token is not valid" : "a token is required",
                         "send Authorization: Bearer <[admin] token>", method, url);
        return true;
    }
    route_match(method, url, &rq->rt);
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
        if (origin && !guard_origin_allowed(cfg->admin.allowed_hosts, origin)) {
            log_warn("admin", "%s %s from %s refused: cross-site request (Origin not in [admin] "
                              "allowed_hosts)", method, url, peer(conn, who, sizeof who));
            *rc = send_error(conn, 403, "cross-site request refused: the Origin header names a "
                                        "host that is not allowed",
                             "call the API from a page served by a host in [admin] "
                             "allowed_hosts, or without an Origin header (curl, scripts)",
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
    return false;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls) {
    (void)version;
    struct http_server *s = cls;
    struct req *rq = *con_cls;
    if (!rq) { /* headers only: check them before any body is read */
        rq = xcalloc(1, sizeof *rq);
        *con_cls = rq;
        enum MHD_Result rc = MHD_YES;
        if (check_headers(s, conn, url, method, rq, &rc)) return rc;
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
    if (rq->too_big)
        return send_error(conn, 413, "the request body is too large",
                          "the API takes bodies of at most 65536 bytes", method, url);
    struct api_ctx ctx = {s->cfg, NULL, NULL};
    pthread_mutex_lock(&s->mu);
    ctx.client = s->client;
    ctx.d = s->d;
    pthread_mutex_unlock(&s->mu);
    struct api_resp r = {0};
    api_handle(&ctx, &rq->rt, rq->body.data, rq->body.len, &r);
    enum MHD_Result rc = send_resp(conn, &r, method, url);
    api_resp_free(&r);
    return rc;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
    (void)cls, (void)conn, (void)toe;
    struct req *rq = *con_cls;
    if (!rq) return;
    sbuf_free(&rq->body);
    free(rq);
    *con_cls = NULL;
}

/* "host:port", "[v6]:port", ":port" (all addresses) -> a bound, listening socket */
static int bind_listen(const char *listen_at, int *family, int *port, char *err, size_t errlen) {
    const char *hint = "set [admin] listen to host:port (e.g. 127.0.0.1:8089), or to \"\" to "
                       "turn the admin server off";
    char host[256] = "";
    const char *colon = strrchr(listen_at, ':');
    if (!colon || !colon[1])
        return errf(err, errlen, "[admin] listen = \"%s\" is not host:port: %s", listen_at, hint);
    const char *h = listen_at;
    size_t hn = (size_t)(colon - listen_at);
    if (hn >= 2 && h[0] == '[' && h[hn - 1] == ']') h++, hn -= 2;
    if (hn >= sizeof host)
        return errf(err, errlen, "[admin] listen = \"%s\": the host is too long", listen_at);
    memcpy(host, h, hn);
    host[hn] = '\0';
    for (const char *p = colon + 1; *p; p++)
        if (*p < '0' || *p > '9')
            return errf(err, errlen, "[admin] listen = \"%s\": the port is not a number: %s",
                        listen_at, hint);
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int g = getaddrinfo(hn ? host : NULL, colon + 1, &hints, &res);
    if (g != 0)
        return errf(err, errlen, "[admin] listen = \"%s\": cannot resolve \"%s\": %s; %s",
                    listen_at, host, gai_strerror(g), hint);
    int fd = -1, e = 0;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            e = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 64) != 0) {
            e = errno;
            close(fd);
            fd = -1;
            continue;
        }
        *family = ai->ai_family;
    }
    freeaddrinfo(res);
    if (fd < 0)
        return errf(err, errlen, "[admin] listen = \"%s\": cannot listen there: %s%s", listen_at,
                    strerror(e),
                    e == EADDRINUSE  ? " (another process, perhaps another searchsync run, uses "
                                       "it): pick a free port in [admin] listen, or set it to \"\" "
                                       "to turn the admin server off"
                    : e == EACCES    ? ": ports below 1024 need privileges; pick another port"
                    : e == EADDRNOTAVAIL ? ": that address is not on this machine; use one of its "
                                           "addresses (127.0.0.1 for local access)"
                                     : "");
    struct sockaddr_storage sa;
    socklen_t sl = sizeof sa;
    *port = 0;
    if (getsockname(fd, (struct sockaddr *)&sa, &sl) == 0)
        *port = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
                                               : ((struct sockaddr_in *)&sa)->sin_port);
    return fd;
}

int http_server_start(const struct ss_config *cfg, struct http_server **out, char *err,
                      size_t errlen) {
    *out = NULL;
    const char *listen_at = cfg->admin.listen;
    if (!listen_at || !*listen_at) {
        log_info("admin", "admin HTTP server off ([admin] listen is empty)");
        return 0;
    }
    if (!cfg->admin.token || !*cfg->admin.token) {
        log_warn("admin", "admin HTTP server off: no token. Set [admin] token (or the "
                          "environment variable SEARCHSYNC_ADMIN_TOKEN) to at least 32 random hex "
                          "characters, e.g. from `openssl rand -hex 16`, to serve the API on %s",
                 listen_at);
        return 0;
    }
    int family = AF_INET, port = 0;
    int fd = bind_listen(listen_at, &family, &port, err, errlen);
    if (fd < 0) return -1;
    struct http_server *s = xcalloc(1, sizeof *s);
    s->cfg = cfg;
    s->port = port;
    s->token = xstrdup(cfg->admin.token);
    pthread_mutex_init(&s->mu, NULL);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG;
    if (family == AF_INET6) flags |= MHD_USE_IPv6;
    /* its threads inherit this mask: SIGTERM/SIGINT stay with the daemon's
     * own threads (the binlog reader's blocking read sees them) */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    s->mhd = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, s, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s,
        MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)2, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned int)64, MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)32,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)30, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)(128 * 1024), MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_END);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!s->mhd) {
        close(fd);
        pthread_mutex_destroy(&s->mu);
        free(s->token);
        free(s);
        return errf(err, errlen, "[admin] listen = \"%s\": the HTTP server did not start (see the "
                                 "libmicrohttpd message above)", listen_at);
    }
    const char *colon = strrchr(listen_at, ':');
    log_info("admin", "admin HTTP server listening on %.*s:%d; every call needs the token",
             (int)(colon - listen_at), listen_at, port);
    *out = s;
    return 0;
}

void http_server_attach(struct http_server *s, struct search_client *client, struct deliver *d) {
    if (!s) return;
    pthread_mutex_lock(&s->mu);
    s->client = client;
    s->d = d;
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

int http_server_port(const struct http_server *s) { return s ? s->port : 0; }

void http_server_stop(struct http_server *s) {
    if (!s) return;
    MHD_stop_daemon(s->mhd); /* joins its threads: no request runs after this */
    pthread_mutex_destroy(&s->mu);
    log_info("admin", "admin HTTP server stopped");
    free(s->token);
    free(s);
}
