/* http_server: the admin HTTP server inside `searchsync run` (DESIGN.md §4.5,
 * docs/http-api.md), on libmicrohttpd.
 *
 * Owns: the listening socket ([admin] listen, bound by us so a failure names
 * the address and errno), the MHD daemon (a pool of 2 internal threads,
 * connection limits, per-connection timeout, memory limit), and the checks
 * every request passes before a handler (web/api.c) sees it, in this order:
 *
 *   1. Host header in [admin] allowed_hosts           else 421 (DNS rebinding)
 *   2. Authorization: Bearer <[admin] token>         else 401 (constant time)
 *   3. a known path (404) and method (405 + Allow)
 *   4. mutating calls (POST): an Origin header, if any, from an allowed host
 *      (403); a body only as application/json (415)
 *   5. body at most HTTP_BODY_MAX bytes                else 413
 *
 * Every path, /metrics included, needs the token: there is no public route
 * yet (the dictionary files, which must be public, are a later issue and get
 * their own listener, [admin] dict_listen). The token never appears in a log
 * line or a response.
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

struct http_server;
struct search_client;
struct deliver;

/* Start serving [admin] listen. Returns 0 with *out set; 0 with *out NULL
 * when the server is off (listen empty, or no token: a warning is logged);
 * -1 with err when the address is malformed or cannot be bound. cfg must
 * outlive the server. */
int http_server_start(const struct ss_config *cfg, struct http_server **out, char *err,
                      size_t errlen);
/* Hand the handlers the daemon's engine client and delivery (thread-safe;
 * NULL-safe on s). */
void http_server_attach(struct http_server *s, struct search_client *client, struct deliver *d);
/* Replace the token every request must carry (a SIGHUP reload; the new
 * one applies to the next request). NULL or empty: ignored. */
void http_server_set_token(struct http_server *s, const char *token);
/* The port actually bound (for listen = host:0). */
int http_server_port(const struct http_server *s);
/* Stop accepting, wait for the requests in progress, free. NULL-safe. */
void http_server_stop(struct http_server *s);

#endif
