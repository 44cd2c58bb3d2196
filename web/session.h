/* session: the admin UI's login sessions (docs/http-api.md, "Sessions").
 *
 * POST /api/v1/login exchanges the token for a session: a random 256-bit
 * id sent only as an HttpOnly, SameSite=Strict cookie, and a random CSRF
 * token the page sends back in X-CSRF-Token on every mutating call. A
 * session lives [admin] session_ttl_s seconds from its login (no sliding
 * renewal) or until logout. Sessions are held in this process's memory (a
 * restart logs everyone out); at most SESSION_MAX at once, the one closest
 * to expiry is dropped for a new one. Ids are compared in constant time.
 * Times are passed in (seconds since the epoch) so tests can move them.
 * Thread-safe. */
#ifndef SS_WEB_SESSION_H
#define SS_WEB_SESSION_H
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#define SESSION_MAX 256
#define SESSION_HEX 64 /* characters of an id or a CSRF token */

struct sessions;

struct sessions *sessions_new(int ttl_s);
void sessions_free(struct sessions *ss); /* NULL-safe */
/* A new session: id and csrf receive SESSION_HEX hex characters + NUL.
 * -1 when no randomness could be had. */
int sessions_create(struct sessions *ss, time_t now, char *id, char *csrf, time_t *expires);
/* The session of id[0..n), unexpired at now: true with its CSRF token
 * (csrf may be NULL) and expiry. */
bool sessions_check(struct sessions *ss, const char *id, size_t n, time_t now, char *csrf,
                    time_t *expires);
/* Forget it (logout). true when it existed. */
bool sessions_delete(struct sessions *ss, const char *id, size_t n);

#endif
