/* health.c: whether the hub's threads go round (deliver_hub_healthy) and
 * whether a stream's producer waits for room (deliver_waiting_for_space),
 * for the node's health: systemd's watchdog and status (sync/node/node.h).
 *
 * Every call a sender thread makes in one turn of its loop has a timeout
 * (a request to the engine: [search] timeout_ms; a dead letter or a
 * checkpoint saved in the metadata: its read timeout), so a thread that has
 * not gone round for longer than the bound its caller gives is wedged: a
 * deadlock, or a call that lost its timeout. An engine that is away is not
 * that: the senders time out and go round, probing it. */
#include "deliver/deliver_int.h"

#include <errno.h>
#include <stdio.h>

/* the hub's lock, waited for at most DELIVER_LOCK_WEDGED_MS: a thread that
 * holds it longer is wedged with it, and asking must not wedge the asker */
static bool lock_within(pthread_mutex_t *mu) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t ns = ts.tv_nsec + (int64_t)(DELIVER_LOCK_WEDGED_MS % 1000) * NS_PER_MS;
    ts.tv_sec += DELIVER_LOCK_WEDGED_MS / 1000 + ns / 1000000000;
    ts.tv_nsec = ns % 1000000000;
    return pthread_mutex_timedlock(mu, &ts) == 0;
}

bool deliver_hub_healthy(struct deliver_hub *d, int64_t bound_ms, char *why, size_t whylen) {
    if (!d) return true;
    if (!lock_within(&d->mu)) {
        snprintf(why, whylen, "its lock has been held for more than %d ms (a delivery thread "
                 "is wedged holding it)", DELIVER_LOCK_WEDGED_MS);
        return false;
    }
    int64_t now = now_ns(), bound = bound_ms * NS_PER_MS;
    bool well = true;
    for (int i = 0; i < d->o.helpers && well && !d->stop; i++) {
        const struct helper *h = &d->helpers[i];
        if (!h->beat_ns || h->idle || now - h->beat_ns <= bound) continue;
        well = false;
        snprintf(why, whylen, "sender thread %d has not gone round for more than %lld ms "
                 "(wedged %s)", i, (long long)bound_ms,
                 h->sending_ns ? "in a batch: sending it or reporting its results"
                               : "between batches");
    }
    if (well && d->ckpt_started && !d->stop && d->ckpt_beat_ns && !d->ckpt_idle &&
        now - d->ckpt_beat_ns > bound) {
        well = false;
        snprintf(why, whylen, "the checkpoint thread has not gone round for more than %lld ms "
                 "(wedged saving a checkpoint?)", (long long)bound_ms);
    }
    pthread_mutex_unlock(&d->mu);
    return well;
}

bool deliver_waiting_for_space(struct deliver *s) {
    return s && atomic_load(&s->waiting_space);
}
