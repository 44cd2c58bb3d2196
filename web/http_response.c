/* http_response: how the admin HTTP server answers a connection — the
 * security headers every answer carries (and the UI's content security
 * policy), errors as the API's JSON — and what it knows of the peer
 * (http_int.h). */
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

enum MHD_Result http_send_resp(struct MHD_Connection *conn, const struct api_resp *r,
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

enum MHD_Result http_send_error(struct MHD_Connection *conn, int status, const char *error,
                                const char *hint, const char *method, const char *url) {
    struct api_resp r = {0};
    api_error(&r, status, error, hint);
    enum MHD_Result rc = http_send_resp(conn, &r, method, url);
    api_resp_free(&r);
    return rc;
}

const char *http_header(struct MHD_Connection *conn, const char *name) {
    return MHD_lookup_connection_value(conn, MHD_HEADER_KIND, name);
}

const char *http_peer(struct MHD_Connection *conn, char *buf, size_t n) {
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
const char *http_client_addr(const struct http_server *s, struct MHD_Connection *conn, char *buf,
                             size_t n) {
    char p[80];
    http_peer(conn, p, sizeof p);
    return guard_client_addr(p, http_header(conn, "X-Forwarded-For"), s->cfg->admin.trusted_proxies,
                             buf, n);
}

struct adm_slot *http_slot_of(struct MHD_Connection *conn) {
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}
