/* ratelimit: failed logins per client address (docs/http-api.md,
 * "Sessions"). After max_failures failed logins from one address within
 * window_s seconds, every login from it is answered 429 until the window
 * ends (the right token too: a guesser learns nothing while blocked).
 * Remembers RATELIMIT_ADDRS addresses; a new one replaces the stalest.
 * Thread-safe; times passed in (seconds). */
#ifndef SS_WEB_RATELIMIT_H
#define SS_WEB_RATELIMIT_H
#include <stdbool.h>
#include <time.h>

#define RATELIMIT_ADDRS 512

struct ratelimit;

struct ratelimit *ratelimit_new(unsigned max_failures, int window_s);
void ratelimit_free(struct ratelimit *rl); /* NULL-safe */
/* true when addr may not try now; *retry_after = seconds left */
bool ratelimit_blocked(struct ratelimit *rl, const char *addr, time_t now, int *retry_after);
void ratelimit_failure(struct ratelimit *rl, const char *addr, time_t now);

#endif
