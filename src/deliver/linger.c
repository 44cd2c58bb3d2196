/* linger.c: requests spaced by the refresh ([delivery]
 * linger_refresh_percent): a live stream's request to a target leaves no
 * sooner than a share of the target's refresh_interval after the target's
 * previous request; what comes meanwhile waits and leaves with it.
 *
 * Why: every bulk request costs the engine CPU of its own beyond its
 * documents, and a change is searchable only at the first refresh after it
 * landed. Group commit alone sends one request a transaction while the
 * engine is idle (100 a second at 500 changes/s in 10 ms transactions);
 * spaced by a share of the interval, the same changes go in a few
 * requests a refresh period, and each waits at most that share, which a
 * refresh interval much longer than it mostly absorbs.
 *
 * How: the spacing is linger_refresh_percent of the interval (read from
 * the engine through the target, as refresh.c reads it, every
 * REFRESH_READ_MS), at most LINGER_REFRESH_CAP_MS; a change never waits
 * past flush_interval_ms.
 * A change that finds the target without a request for that long goes at
 * once: a lone change pays no wait, only a stream of them is batched. Nor
 * does a request wait once linger_refresh_batch changes of the target are
 * queued: a request's own cost (about 1-2 ms of engine CPU) is then a small
 * share of its documents', and holding it longer would only add lag; so
 * the spacing applies to slow streams (few changes a transaction), and at
 * high rates requests leave as group commit sends them. Not
 * held, as for group commit (queue.c): a full batch_max of the target, the
 * hub at its high-water mark, a change that waited flush_interval_ms, a
 * drain; nor before the interval is read, for an index without refreshes
 * (refresh_interval -1), for streams that are not live (reindex pages,
 * replays, repairs), with linger_ms set (the fixed linger wins) or with
 * batch_to_refresh (which holds to the refresh itself), nor while refresh.c
 * pairs the target's refreshes (refresh_pairing_ms: a slow stream under a
 * short interval, held there for every other refresh). */
#include "deliver/deliver_int.h"

#define LINGER_REFRESH_CAP_MS 100

bool linger_refresh_on(const struct deliver *s) {
    return s->linger_refresh_percent > 0 && s->linger_ms == 0 && !s->batch_to_refresh &&
           s->cls == DELIVER_LIVE && !s->flush_on_txn_end;
}

int64_t linger_refresh_ns(const struct fuse *f) {
    const struct refresh_state *r = &f->rf;
    if (!r->lingers || r->period_ns <= 0) return 0;
    int64_t ns = r->period_ns / 100 * r->linger_pct;
    int64_t cap = (int64_t)LINGER_REFRESH_CAP_MS * NS_PER_MS;
    return ns < cap ? ns : cap;
}

bool linger_refresh_holds(struct deliver_hub *d, const struct indexq *q, const struct deliver *hs,
                          const struct item *head, int64_t now, int64_t *wake) {
    if (!linger_refresh_on(hs)) return false;
    if (refresh_pairs(d, q->fuse, now)) return false; /* refresh.c aims it at a refresh */
    int64_t gap = linger_refresh_ns(q->fuse);
    const struct refresh_state *r = &q->fuse->rf;
    if (gap <= 0 || r->last_send_ns == 0) return false;
    int64_t release = r->last_send_ns + gap;
    if (now >= release) return false; /* idle for the spacing: at once */
    if (hub_pressed(d, hs)) return false;
    int64_t due = head->enq_ns + (int64_t)hs->flush_interval_ms * NS_PER_MS;
    if (now >= due) return false;
    /* a request of enough changes costs the engine little beyond them: it
     * goes, so a fast stream keeps group commit's lag and only a slow one
     * (few changes a transaction) is spaced */
    long enough = hs->linger_refresh_batch > 0 && hs->linger_refresh_batch < d->o.batch_max
                      ? hs->linger_refresh_batch
                      : d->o.batch_max;
    if (index_idle_queued(d, q->fuse) >= enough) return false;
    if (release > due) release = due;
    if (release < *wake) *wake = release;
    return true;
}
