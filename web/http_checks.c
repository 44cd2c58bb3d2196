/* http_checks: the admin HTTP server's checks of a request before it is
 * run (http_server.h lists them): headers with control bytes, the Host, the
 * credentials (Bearer token or session cookie), Origin and the CSRF token of
 * a mutating call, the body's type and size, the failed-login limit. */
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

/* the token a request must carry, compared under the lock (a reload may
 * replace it meanwhile) */
bool http_token_matches(struct http_server *s, const char *tok, size_t tlen) {
    pthread_mutex_lock(&s->mu);
    bool ok = s->token && guard_token_equal(tok, tlen, s->token, strlen(s->token));
    pthread_mutex_unlock(&s->mu);
    return ok;
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

/* the request's credentials: a Bearer token, else the session cookie.
 * true when authenticated; else *why says what was wrong */
static bool authenticate(struct http_server *s, struct MHD_Connection *conn, struct req *rq,
                         const char **why) {
    const char *authz = http_header(conn, "Authorization");
    if (authz) {
        size_t tlen = 0;
        const char *tok = guard_bearer(authz, &tlen);
        if (tok && http_token_matches(s, tok, tlen)) return true;
        *why = tok ? "wrong token" : "Authorization is not Bearer";
        return false;
    }
    size_t n = 0;
    const char *id = guard_cookie(http_header(conn, "Cookie"), COOKIE, &n);
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

/* A request without valid credentials: the UI's page sent to the login
 * form, anything else answered 401. true when a response was queued. */
static bool refused_credentials(struct listener *l, struct MHD_Connection *conn, const char *url,
                                const char *method, struct req *rq, enum MHD_Result *rc) {
    char who[80], em[32], eu[600];
    http_peer(conn, who, sizeof who);
    const char *why = NULL;
    if (!authenticate(l->s, conn, rq, &why)) {
        log_info("admin", "%s %s from %s refused: %s", ESC(em, method), ESC(eu, url), who,
                 why);
        if (rq->rt.id == ROUTE_UI && !strcmp(url, "/")) {
            /* the UI's page without a session: to the login form */
            struct api_resp r = {0};
            r.status = 303;
            r.content_type = "text/plain; charset=utf-8";
            sbuf_adds(&r.headers, "Location: /login\n");
            sbuf_adds(&r.body, "log in at /login\n");
            *rc = http_send_resp(conn, &r, method, url);
            api_resp_free(&r);
            return true;
        }
        bool expired = !strcmp(why, "session unknown or expired");
        *rc = http_send_error(conn, 401,
                              expired                    ? "the session has expired or ended"
                              : !strcmp(why, "no token") ? "a token is required"
                                                         : "the token is not valid",
                              expired ? "log in again (POST /api/v1/login)"
                                      : "send Authorization: Bearer <[admin] token>, or log in",
                              method, url);
        return true;
    }
    adm_authenticated(l->adm, http_slot_of(conn));
    return false;
}

/* A mutating call: its Origin an allowed host's, its CSRF token the
 * session's when it came with the session cookie, its body JSON. true when
 * it was refused (a response queued). */
static bool refused_mutating(struct http_server *s, struct MHD_Connection *conn, const char *url,
                             const char *method, struct req *rq, bool has_body,
                             enum MHD_Result *rc) {
    const struct ss_config *cfg = s->cfg;
    char who[80], em[32], eu[600];
    http_peer(conn, who, sizeof who);
    const char *origin = http_header(conn, "Origin");
    const char *bad = NULL;
    if (origin && !guard_origin_allowed(cfg->admin.allowed_hosts, origin))
        bad = "cross-site request refused: the Origin header names a host that is not "
              "allowed";
    else if (rq->by_session && !origin)
        bad = "a call made with a session cookie must carry an Origin header";
    else if (rq->by_session) {
        char want[SESSION_HEX + 1];
        const char *got = http_header(conn, "X-CSRF-Token");
        size_t n = 0;
        if (!sessions_check(s->sessions, rq->session, SESSION_HEX, time(NULL), want, NULL) ||
            !got || (n = strlen(got), !guard_token_equal(got, n, want, SESSION_HEX)))
            bad = "the X-CSRF-Token header is missing or does not match the session";
    }
    if (bad) {
        log_warn("admin", "%s %s from %s refused: %s", ESC(em, method), ESC(eu, url), who,
                 bad);
        *rc = http_send_error(conn, 403, bad,
                              "call the API from a page served by a host in [admin] "
                              "allowed_hosts, sending the csrf_token of POST /api/v1/login in "
                              "X-CSRF-Token; or use Authorization: Bearer (curl, scripts)",
                              method, url);
        return true;
    }
    const char *ct = http_header(conn, "Content-Type");
    if ((has_body || ct) && !guard_is_json_type(ct)) {
        *rc = http_send_error(conn, 415, "the body must be JSON",
                              "send Content-Type: application/json", method, url);
        return true;
    }
    return false;
}

/* the checks of http_server.h on the request's headers; true when a
 * response was queued (*rc says how it went) */
bool http_check_headers(struct listener *l, struct MHD_Connection *conn, const char *url,
                        const char *method, struct req *rq, enum MHD_Result *rc) {
    struct http_server *s = l->s;
    const struct ss_config *cfg = s->cfg;
    char who[80], em[32], eu[600];
    http_peer(conn, who, sizeof who);
    struct hdr_scan hs = {0};
    MHD_get_connection_values_n(conn, MHD_HEADER_KIND, scan_header, &hs);
    if (!hs.nul && hs.n < HDR_SCAN_MAX) hs.nul = nul_cut(&hs);
    if (hs.nul || hs.hosts > 1) {
        log_info("admin", "%s %s from %s refused: %s", ESC(em, method), ESC(eu, url), who,
                 hs.nul ? "a header holds a NUL byte" : "more than one Host header");
        *rc = http_send_error(conn, 400, hs.nul ? "a header holds a NUL byte"
                                           : "the request has more than one Host header",
                              "send each header once, without control characters", method, url);
        return true;
    }
    route_match(method, url, &rq->rt);
    if (l->dict_only && rq->rt.id != ROUTE_DICT) {
        /* [admin] dict_listen serves the dictionary files and nothing else */
        *rc = http_send_error(conn, rq->rt.id == ROUTE_BAD_METHOD ? 405 : 404,
                              "this address serves only /dict/ext.txt and /dict/stop.txt",
                              "the API is on [admin] listen", method, url);
        return true;
    }
    if (rq->rt.id == ROUTE_DICT) return false; /* public, read-only, for any host */
    const char *host = http_header(conn, "Host");
    if (!guard_host_allowed(cfg->admin.allowed_hosts, host)) {
        log_info("admin", "%s %s from %s refused: Host header not in [admin] allowed_hosts",
                 ESC(em, method), ESC(eu, url), who);
        *rc = http_send_error(
            conn, 421,
            host ? "this server does not answer to the host named in the Host header"
                 : "a Host header is required",
            "use an address listed in [admin] allowed_hosts, or add the name there", method, url);
        return true;
    }
    if (!rq->rt.public && refused_credentials(l, conn, url, method, rq, rc)) return true;
    if (rq->rt.id == ROUTE_NOT_FOUND || rq->rt.id == ROUTE_BAD_METHOD) {
        struct api_resp r = {0};
        api_handle(NULL, &rq->rt, NULL, 0, &r);
        *rc = http_send_resp(conn, &r, method, url);
        api_resp_free(&r);
        return true;
    }
    const char *cl = http_header(conn, "Content-Length");
    const char *te = http_header(conn, "Transfer-Encoding");
    unsigned long long clen = cl ? strtoull(cl, NULL, 10) : 0;
    bool has_body = clen > 0 || te;
    if (rq->rt.mutating && refused_mutating(s, conn, url, method, rq, has_body, rc)) return true;
    if (clen > HTTP_BODY_MAX) {
        *rc = http_send_error(conn, 413, "the request body is too large",
                              "the API takes bodies of at most 65536 bytes", method, url);
        return true;
    }
    if (rq->rt.id == ROUTE_LOGIN) {
        int retry = 0;
        http_client_addr(s, conn, who, sizeof who);
        if (ratelimit_blocked(s->logins, who, time(NULL), &retry)) {
            log_warn("admin", "POST /api/v1/login from %s refused: too many failed logins", who);
            struct api_resp r = {0};
            api_error(&r, 429, "too many failed logins from this address",
                      "wait for the time in Retry-After, then log in with the right token");
            sbuf_printf(&r.headers, "Retry-After: %d\n", retry);
            *rc = http_send_resp(conn, &r, method, url);
            api_resp_free(&r);
            return true;
        }
    }
    return false;
}
