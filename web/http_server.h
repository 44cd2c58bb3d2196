/* http_server: the admin HTTP server inside `searchsync run`
 * (docs/http-api.md), on libmicrohttpd.
 *
 * Owns: the listening sockets ([admin] listen, and [admin] dict_listen for
 * the dictionary files only; bound by us so a failure names the address and
 * errno), the MHD daemons (a pool of internal threads, a memory limit per
 * connection), the connection slots and deadlines (web/admission.c), the
 * login sessions (web/session.c, web/ratelimit.c), and the checks every
 * request passes before a handler (web/api.c, web/words.c) sees it, in this
 * order:
 *
 *   0. no NUL byte in any header, one Host header     else 400
 *   1. Host header in [admin] allowed_hosts           else 421 (DNS rebinding)
 *      (not for /dict/: public, read-only)
 *   2. Authorization: Bearer <[admin] token> (constant time), or the
 *      session cookie of a login                      else 401
 *      (not for the public routes: /dict/, /login, POST /api/v1/login)
 *   3. a known path (404) and method (405 + Allow)
 *   4. mutating calls (POST, PUT, DELETE): an Origin header, if any, from an
 *      allowed host; with a session cookie an Origin is required and
 *      X-CSRF-Token must be the session's (403); a body only as
 *      application/json (415)
 *   5. body at most HTTP_BODY_MAX bytes                else 413
 *   6. POST /api/v1/login: not after LOGIN_FAILURES_MAX failed logins from
 *      the address within LOGIN_WINDOW_S              else 429
 *
 * The path is decoded with %00 left as it is (no NUL cuts it short). The
 * token never appears in a log line or a response; what a request brings
 * (method, path) is logged with control bytes escaped.
 *
 * Life: http_server_start after the configuration and mapping are loaded
 * (a bind failure is a configuration error: exit 2); http_server_attach once
 * the engine client and delivery exist (until then the calls that need them
 * answer 503); http_server_stop before either is freed: it waits for the
 * requests in progress. */
#ifndef SS_WEB_HTTP_SERVER_H
#define SS_WEB_HTTP_SERVER_H
#include <stddef.h>

#include "config.h"

#define HTTP_BODY_MAX (64 * 1024)
#define LOGIN_FAILURES_MAX 10
#define LOGIN_WINDOW_S 300

struct http_server;
struct search_client;
struct deliver;

/* Start serving [admin] listen and [admin] dict_listen. Returns 0 with *out
 * set; 0 with *out NULL when both are off (listen empty, or no token: a
 * warning is logged; the dictionary needs no token);
 * -1 with err when the address is malformed or cannot be bound. cfg must
 * outlive the server; so must node, which runs the requests that change
 * something (sync/node/node.h; NULL: they run on the HTTP thread). */
struct node;
int http_server_start(const struct ss_config *cfg, struct node *node, struct http_server **out,
                      char *err, size_t errlen);
/* Hand the handlers the daemon's engine client and delivery (thread-safe;
 * NULL-safe on s). */
struct reader_stats;
void http_server_attach(struct http_server *s, struct search_client *client, struct deliver *d,
                        struct reader_stats *rs);
/* Replace the token every request must carry (a SIGHUP reload; the new
 * one applies to the next request). NULL or empty: ignored. */
void http_server_set_token(struct http_server *s, const char *token);
/* Where the mapping generation in force comes from (the supervisor's
 * published one, with a reference for the caller): the API shows what the
 * daemon runs with beside what the metadata holds. */
struct mapping_gen;
void http_server_generation(struct http_server *s, struct mapping_gen *(*get)(void *ud),
                            void *ud);
/* The port actually bound (for listen = host:0); the dictionary's. */
int http_server_port(const struct http_server *s);
int http_server_dict_port(const struct http_server *s);
/* Stop accepting, wait for the requests in progress, free. NULL-safe. */
void http_server_stop(struct http_server *s);
/* The above as the node's admin operations (sync/node/node.h): cmd/main.c
 * registers them, so the core starts the admin server without including
 * web/. */
struct node_admin_ops;
extern const struct node_admin_ops http_server_node_ops;

#endif
