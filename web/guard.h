/* guard: the admin HTTP server's request checks that need no server state
 * (DESIGN.md §4.5, notes/reliability.md "Admin HTTP server"); pure functions,
 * unit-tested in tests/unit/test_web.c.
 *
 *   token   `Authorization: Bearer <token>`, compared in constant time (the
 *           time depends only on the configured token's length, never on
 *           how many leading bytes of a guess are right)
 *   host    the Host header must name one of [admin] allowed_hosts (DNS
 *           rebinding: a browser tricked into resolving evil.example to
 *           127.0.0.1 still sends Host: evil.example)
 *   origin  a mutating request that carries an Origin header must come from
 *           a page served by an allowed host (cross-site requests)
 *   type    a mutating request's body must be application/json (an HTML form
 *           cannot send that without a CORS preflight, which we never grant)
 *
 * allowed_hosts is a comma list of host names or addresses, each optionally
 * with ":port" (then the port must match too); case-insensitive; IPv6
 * addresses in brackets ("[::1]"). No wildcards. */
#ifndef SS_WEB_GUARD_H
#define SS_WEB_GUARD_H
#include <stdbool.h>
#include <stddef.h>

/* given[0..glen) equals want[0..wlen), in time independent of the contents. */
bool guard_token_equal(const char *given, size_t glen, const char *want, size_t wlen);
/* The token of an Authorization header value ("Bearer <token>", scheme
 * case-insensitive), or NULL; *len receives its length. */
const char *guard_bearer(const char *authorization, size_t *len);
/* Host header value ("name", "name:port", "[v6]:port") allowed? NULL: no. */
bool guard_host_allowed(const char *allowed_hosts, const char *host);
/* Origin header value ("http://name:port") from an allowed host? "null" and
 * anything that is not scheme://host[:port] are not. */
bool guard_origin_allowed(const char *allowed_hosts, const char *origin);
/* Content-Type is application/json (parameters such as charset allowed). */
bool guard_is_json_type(const char *content_type);

#endif
