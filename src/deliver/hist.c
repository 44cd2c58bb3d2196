/* hist: log-linear histograms (hist.h). */
#include "deliver/hist.h"

#include <string.h>

int hist_bucket(uint64_t v) {
    if (v < 16) return (int)v;
    int e = 63 - __builtin_clzll(v); /* >= 4 */
    int sub = (int)((v >> (e - 3)) & 7);
    int b = 16 + (e - 4) * 8 + sub;
    return b < HIST_BUCKETS ? b : HIST_BUCKETS - 1;
}

uint64_t hist_bucket_value(int b) {
    if (b < 16) return (uint64_t)b;
    int e = (b - 16) / 8 + 4, sub = (b - 16) % 8;
    uint64_t lo = ((uint64_t)(8 + sub)) << (e - 3);
    uint64_t width = 1ull << (e - 3);
    return lo + width / 2;
}

void hist_add(struct hist *h, uint64_t v) {
    struct hist_win *w = &h->w[h->cur];
    w->b[hist_bucket(v)]++;
    w->count++;
    if (h->count == 0 || v < h->min) h->min = v;
    if (v > h->max) h->max = v;
    h->count++;
    h->sum += v;
}

void hist_rotate(struct hist *h) {
    h->cur ^= 1;
    memset(&h->w[h->cur], 0, sizeof h->w[h->cur]);
}

uint64_t hist_quantile(const struct hist *h, double q) {
    uint64_t n = h->w[0].count + h->w[1].count;
    if (n == 0) return 0;
    uint64_t want = (uint64_t)(q * (double)n + 0.5);
    if (want < 1) want = 1;
    if (want > n) want = n;
    uint64_t acc = 0;
    for (int b = 0; b < HIST_BUCKETS; b++) {
        acc += h->w[0].b[b] + h->w[1].b[b];
        if (acc >= want) {
            uint64_t v = hist_bucket_value(b);
            if (v > h->max) v = h->max;
            if (v < h->min) v = h->min;
            return v;
        }
    }
    return h->max;
}
