/* guard: the admin HTTP server's request checks that need no server state
 * (docs/http-api.md, "Security"); pure functions,
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
 *   log     anything taken from a request (path, method, header values) is
 *           logged only through guard_log_escape: a control byte in it
 *           (a %0a in a URL) cannot start a forged line of its own
 *   cookie  the session cookie's value in a Cookie header
 *   client  the client's address: the peer's, or, when the peer is one of
 *           [admin] trusted_proxies (a reverse proxy in front), the last
 *           address of X-Forwarded-For that is not a trusted proxy — so the
 *           failed-login limit counts each client behind the proxy apart
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

/* s[0..n) for a log line: bytes below 0x20, 0x7f and '\\' written as \\xHH,
 * at most outlen-1 bytes (a cut ends with "..."); always NUL-terminated.
 * Returns out. */
char *guard_log_escape(const char *s, size_t n, char *out, size_t outlen);
/* The value of cookie name in a Cookie header ("a=1; name=v"), or NULL;
 * *len receives its length. */
const char *guard_cookie(const char *cookie_header, const char *name, size_t *len);
/* the numeric address (getnameinfo NI_NUMERICHOST form) is a loopback one:
 * 127.0.0.0/8, ::1, ::ffff:127.x.y.z */
bool guard_is_loopback(const char *numeric_addr);
/* The client's numeric address into out: peer, or when peer is in
 * trusted_proxies (a comma list of numeric addresses; NULL or "": none) and
 * forwarded_for (an X-Forwarded-For value, "a, b, c") names one, the
 * rightmost of its addresses that is not a trusted proxy (an entry that is
 * not an IPv4 or IPv6 address ends the walk: the peer is kept). Returns out. */
const char *guard_client_addr(const char *peer, const char *forwarded_for,
                              const char *trusted_proxies, char *out, size_t outlen);
/* RFC 7232 If-None-Match: does the header list etag (or "*")? Weak
 * comparison (W/ ignored). */
bool guard_etag_matches(const char *if_none_match, const char *etag);

#endif
