/* route: which endpoint of the admin HTTP server a request names, and the
 * parsing of request bodies; pure functions (tests/unit/test_web.c).
 *
 *   GET  /api/v1/status                          ROUTE_STATUS
 *   GET  /api/v1/indices                         ROUTE_INDICES
 *   GET  /api/v1/indices/{alias}/reindex         ROUTE_REINDEX_GET (progress)
 *   POST /api/v1/indices/{alias}/reindex         ROUTE_REINDEX_POST (queue a build)
 *   POST /api/v1/indices/{alias}/reindex/reset   ROUTE_REINDEX_RESET
 *   GET  /metrics                                ROUTE_METRICS
 *
 * HEAD is accepted wherever GET is. A known path with another method is
 * ROUTE_BAD_METHOD (405, `allow` says which methods); anything else is
 * ROUTE_NOT_FOUND. {alias} is 1..255 bytes of [A-Za-z0-9_.-] (the characters
 * an engine index name and our <alias>_v<N> scheme can hold); others are
 * ROUTE_NOT_FOUND before any lookup. */
#ifndef SS_WEB_ROUTE_H
#define SS_WEB_ROUTE_H
#include <stdbool.h>
#include <stddef.h>

enum route_id {
    ROUTE_NOT_FOUND = 0,
    ROUTE_BAD_METHOD,
    ROUTE_STATUS,
    ROUTE_INDICES,
    ROUTE_REINDEX_GET,
    ROUTE_REINDEX_POST,
    ROUTE_REINDEX_RESET,
    ROUTE_METRICS,
};

#define ROUTE_ALIAS_MAX 255

struct route {
    enum route_id id;
    char alias[ROUTE_ALIAS_MAX + 1]; /* "" when the path names none */
    const char *allow;               /* ROUTE_BAD_METHOD: "GET, HEAD", "POST", ... */
    bool mutating;                   /* POST: CSRF rules apply */
};

void route_match(const char *method, const char *path, struct route *out);
bool route_alias_valid(const char *s, size_t n);

/* The body of POST .../reindex: empty, or a JSON object with optional
 * "buckets" (integer 1..4096) and "by_mod" (boolean); any other member is an
 * error. Fills *buckets (0 = [reindex] buckets) and *by_mod. Returns 0, or -1
 * with err naming the field and *field set to it ("" for the body itself). */
int route_parse_reindex_body(const char *body, size_t len, int *buckets, bool *by_mod,
                             const char **field, char *err, size_t errlen);

#endif
