/* monotime: the monotonic clock in milliseconds and a plain sleep, for the
 * deadlines, retry pauses and periodic looks of every thread (header only:
 * a few lines each, used everywhere). */
#ifndef SS_MONOTIME_H
#define SS_MONOTIME_H
#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in ms: for intervals, never a date */
static inline int64_t mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* the same in microseconds: for gaps between events a few ms apart */
static inline int64_t mono_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* sleep ms milliseconds (a signal may cut it short) */
static inline void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

#endif
