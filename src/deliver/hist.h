/* hist: fixed-memory log-linear histograms and windowed counters for the
 * delivery statistics. Values are unsigned integers (microseconds, sizes).
 * Buckets: exact below 16, then 8 per power of two (about 6% relative error).
 * Percentiles cover the current and the previous window, so they describe the
 * last one or two windows rather than all time. Not thread-safe: the owner
 * holds its lock. */
#ifndef SS_HIST_H
#define SS_HIST_H
#include <stdint.h>

#define HIST_BUCKETS (16 + 60 * 8)

struct hist_win {
    uint64_t b[HIST_BUCKETS];
    uint64_t count;
};

struct hist {
    struct hist_win w[2]; /* current, previous */
    int cur;
    uint64_t count, sum, min, max; /* all time */
};

void hist_add(struct hist *h, uint64_t v);
void hist_rotate(struct hist *h); /* start a new window */
/* q in [0,1]; over the current and previous window; 0 if empty */
uint64_t hist_quantile(const struct hist *h, double q);
int hist_bucket(uint64_t v);
uint64_t hist_bucket_value(int b); /* a representative value of the bucket */

/* A counter in total and per window: `last` is the count of the last whole
 * window, `cur` of the running one. */
struct wcounter {
    uint64_t total, cur, last;
};
static inline void wc_add(struct wcounter *c, uint64_t n) {
    c->total += n;
    c->cur += n;
}
static inline void wc_rotate(struct wcounter *c) {
    c->last = c->cur;
    c->cur = 0;
}

#endif
