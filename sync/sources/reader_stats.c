/* reader_stats: the reader's figures for /metrics (see reader_stats.h). */
#include "sync/sources/reader_stats.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

int64_t reader_stats_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void reader_stats_init(struct reader_stats *s) {
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
    s->f.started_ms = reader_stats_now_ms();
}

void reader_stats_destroy(struct reader_stats *s) {
    pthread_mutex_destroy(&s->mu);
}

struct reader_figures reader_stats_copy(struct reader_stats *s) {
    pthread_mutex_lock(&s->mu);
    struct reader_figures f = s->f;
    pthread_mutex_unlock(&s->mu);
    return f;
}

void reader_stats_link(void *stats, bool up, const char *why) {
    struct reader_stats *s = stats;
    pthread_mutex_lock(&s->mu);
    if (up) {
        s->f.source_down_ms = 0;
        s->f.source_err[0] = '\0';
        liveness_wait(&s->live, NULL);
    } else {
        liveness_wait(&s->live, READER_WAIT_SOURCE_DOWN);
        if (!s->f.source_down_ms) s->f.source_down_ms = reader_stats_now_ms();
        snprintf(s->f.source_err, sizeof s->f.source_err, "%s", why ? why : "");
    }
    pthread_mutex_unlock(&s->mu);
}
