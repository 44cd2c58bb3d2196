/* liveness: a thread's beats and named waits, and the predicate the node's
 * health asks (see liveness.h). */
#include "liveness.h"

#include <stdio.h>

#include "monotime.h"

void liveness_start(struct liveness *l) {
    atomic_store(&l->wait, NULL);
    atomic_store(&l->ended, false);
    atomic_store(&l->stopping, false);
    atomic_store(&l->beat_ms, mono_ms());
}

void liveness_beat(struct liveness *l) {
    atomic_store_explicit(&l->beat_ms, mono_ms(), memory_order_relaxed);
}

void liveness_wait(struct liveness *l, const char *what) {
    int64_t now = mono_ms();
    if (what && !atomic_load(&l->wait)) atomic_store(&l->wait_ms, now);
    atomic_store(&l->wait, what);
    atomic_store(&l->beat_ms, now);
}

void liveness_end(struct liveness *l, bool asked) {
    atomic_store(&l->stopping, asked);
    atomic_store(&l->ended, true);
}

const char *liveness_waiting(const struct liveness *l) { return atomic_load(&l->wait); }

bool liveness_check(const struct liveness *l, const char *thread, int64_t now_ms,
                    int64_t bound_ms, char *why, size_t whylen) {
    int64_t beat = atomic_load(&l->beat_ms);
    if (!beat) return true;
    if (atomic_load(&l->ended)) {
        if (atomic_load(&l->stopping)) return true;
        snprintf(why, whylen, "the %s thread ended while nothing stopped it", thread);
        return false;
    }
    if (atomic_load(&l->wait)) return true;
    if (now_ms - beat <= bound_ms) return true;
    snprintf(why, whylen, "the %s thread has not gone round for more than %lld ms (wedged)",
             thread, (long long)bound_ms);
    return false;
}
