/* http_int: what the files of the admin HTTP server share among
 * themselves (http_server.c, http_response.c, http_checks.c, http_bind.c):
 * the server, its listeners, a request in progress, and the helpers that
 * answer a connection. Nobody outside web/ includes it. */
#ifndef SS_HTTP_INT_H
#define SS_HTTP_INT_H
#include <stdbool.h>
#include <stddef.h>
#include <pthread.h>

#include <microhttpd.h>

#include "admission.h"
#include "http_server.h"
#include "api.h"
#include "guard.h"
#include "route.h"
#include "sbuf.h"
#include "session.h"

struct api_call;

/* what an oversized chunked body may still send (discarded) before the
 * connection is cut instead of answered with 413 */
#define HTTP_DISCARD_MAX (1024 * 1024)

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

#define COOKIE "ss_session"

/* r queued as the answer (security headers, the UI's CSP, its own headers
 * and status), logged with method and url */
enum MHD_Result http_send_resp(struct MHD_Connection *conn, const struct api_resp *r,
                               const char *method, const char *url);
/* an api_error answer */
enum MHD_Result http_send_error(struct MHD_Connection *conn, int status, const char *error,
                                const char *hint, const char *method, const char *url);
/* a request header, NULL when absent */
const char *http_header(struct MHD_Connection *conn, const char *name);
/* the peer's numeric address into buf ("?" when unknown) */
const char *http_peer(struct MHD_Connection *conn, char *buf, size_t n);
/* the client's address for the failed-login limit and its log lines: the
 * peer's, or behind a proxy of [admin] trusted_proxies the one its
 * X-Forwarded-For names */
const char *http_client_addr(const struct http_server *s, struct MHD_Connection *conn,
                             char *buf, size_t n);
/* the admission slot of the connection (admission.h) */
struct adm_slot *http_slot_of(struct MHD_Connection *conn);

/* the token a request must carry, compared under the lock (a reload may
 * replace it meanwhile) */
bool http_token_matches(struct http_server *s, const char *tok, size_t tlen);

/* The checks of http_server.h on a request's headers (control bytes, Host,
 * credentials, Origin and CSRF token, body type and size, the failed-login
 * limit); true when a response was queued (*rc says how it went). */
bool http_check_headers(struct listener *l, struct MHD_Connection *conn, const char *url,
                        const char *method, struct req *rq, enum MHD_Result *rc);

/* "host:port", "[v6]:port", ":port" (all addresses) -> a bound, listening
 * socket; key names the setting in messages. The fd, or -1 with err. */
int http_bind_listen(const char *key, const char *listen_at, int *family, int *port,
                     bool *loopback, char *err, size_t errlen);

#endif
