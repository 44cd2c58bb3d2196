/* txn.c: transactions and the checkpointer: the txn FIFO and its low-water
 * mark, acknowledgements, deliver_txn_end / wait / low_water, the
 * checkpoint thread and deliver_drain.
 *
 * Invariants upheld here:
 *   I4 the saved checkpoint is never ahead of what the engine acknowledged:
 *      the low-water mark moves only past closed transactions none of whose
 *      changes is pending (advance_low_water), and only the low-water
 *      position is ever handed to the checkpoint callback, which saves it in
 *      one atomic upsert (src/deliver/store.c).
 *   I1 no loss: a change leaves its transaction's pending count only when
 *      the engine acknowledged it, refused it as older (409: a newer version
 *      is stored), or it was stored as a dead letter; the producer is
 *      blocked at the high-water mark, never dropped; a drain that runs out
 *      of time saves nothing past the low-water mark, so a restart reads
 *      the rest again. */
#include "deliver/deliver_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "search/search.h"

/* ---------- transactions and the low-water mark ---------- */

struct txn *open_txn(struct deliver *d) {
    if (d->txn_tail && !d->txn_tail->closed) return d->txn_tail;
    struct txn *t = xcalloc(1, sizeof *t);
    t->seq = d->txn_next_seq++;
    t->opened_ns = now_ns();
    if (d->txn_tail)
        d->txn_tail->next = t;
    else
        d->txn_head = t;
    d->txn_tail = t;
    return t;
}

void advance_low_water(struct deliver *d) {
    bool moved = false;
    while (d->txn_head && d->txn_head->closed && d->txn_head->pending == 0) {
        struct txn *t = d->txn_head;
        d->txn_head = t->next;
        if (!d->txn_head) d->txn_tail = NULL;
        if (d->lw_seq == d->ckpt_saved_seq || !d->unsaved_since_ns)
            d->unsaved_since_ns = t->opened_ns;
        if (d->ckpt_busy && !d->unsaved_next_ns) d->unsaved_next_ns = t->opened_ns;
        d->lw_seq = t->seq;
        free(d->lw_pos);
        d->lw_pos = t->pos;
        free(t);
        moved = true;
    }
    if (moved) {
        d->ckpt_dirty = true;
        pthread_cond_broadcast(&d->done_cv);
    }
}

/* the change is acknowledged (delivered, stale, dead-lettered or purged) */
void ack_item(struct deliver *d, struct item *it) {
    it->txn->pending--;
    d->total--;
    free(it);
}

static uint64_t txn_end(struct deliver *d, const char *position, bool quiet) {
    pthread_mutex_lock(&d->mu);
    uint64_t seq;
    if (d->txn_tail && !d->txn_tail->closed) {
        struct txn *t = d->txn_tail;
        t->pos = xstrdup(position ? position : "");
        t->closed = true;
        seq = t->seq;
    } else if (d->txn_tail) {
        /* an empty transaction behind a closed one: it moves that one's
         * position forward (nothing of its own to wait for) */
        struct txn *t = d->txn_tail;
        free(t->pos);
        t->pos = xstrdup(position ? position : "");
        t->seq = d->txn_next_seq++;
        seq = t->seq;
    } else {
        seq = d->txn_next_seq++;
        d->lw_seq = seq;
        free(d->lw_pos);
        d->lw_pos = xstrdup(position ? position : "");
        if (quiet)
            d->ckpt_quiet_dirty = true;
        else
            d->ckpt_dirty = true;
        pthread_cond_broadcast(&d->done_cv);
    }
    if (d->o.flush_on_txn_end) { /* the closed transaction's partial batches go now */
        d->txn_flush_ns = now_ns();
        pthread_cond_broadcast(&d->work_cv);
    }
    advance_low_water(d);
    pthread_mutex_unlock(&d->mu);
    return seq;
}

uint64_t deliver_txn_end(struct deliver *d, const char *position) {
    return txn_end(d, position, false);
}

uint64_t deliver_txn_end_quiet(struct deliver *d, const char *position) {
    return txn_end(d, position, true);
}

int deliver_wait_txn(struct deliver *d, uint64_t seq, int timeout_ms) {
    int64_t end = now_ns() + (int64_t)timeout_ms * NS_PER_MS;
    pthread_mutex_lock(&d->mu);
    int rc = DELIVER_OK;
    while (d->lw_seq < seq) {
        if (d->stop) {
            rc = DELIVER_ESTOPPED;
            break;
        }
        if (now_ns() >= end) {
            rc = DELIVER_ETIMEOUT;
            break;
        }
        struct timespec ts;
        deadline_ts(&ts, end);
        pthread_cond_timedwait(&d->done_cv, &d->mu, &ts);
    }
    pthread_mutex_unlock(&d->mu);
    return rc;
}

uint64_t deliver_low_water(struct deliver *d, char *buf, size_t len) {
    pthread_mutex_lock(&d->mu);
    uint64_t s = d->lw_seq;
    if (buf && len) snprintf(buf, len, "%s", d->lw_pos ? d->lw_pos : "");
    pthread_mutex_unlock(&d->mu);
    return s;
}

/* ---------- checkpointer ---------- */

/* Called with d->mu held; drops and retakes it. final: the drain's save, whose
 * failure is always said. */
static void save_checkpoint_locked(struct deliver *d, bool final) {
    /* one save at a time (checkpointer thread, drain): two concurrent saves
     * could land out of order and leave the older position behind */
    while (d->ckpt_busy) pthread_cond_wait(&d->done_cv, &d->mu);
    if (!d->o.checkpoint || !d->lw_pos || d->halted) return;
    /* moved only past checkpoint saves read back: saved once the idle
     * interval has passed (or at the drain), else the save's own binlog
     * transaction would be the next save's reason, every interval */
    bool quiet_due = d->ckpt_quiet_dirty &&
                     (final || now_ns() - d->ckpt_saved_ns >=
                                   (int64_t)d->o.idle_checkpoint_interval_ms * NS_PER_MS);
    if (!d->ckpt_dirty && !quiet_due) return;
    char *pos = xstrdup(d->lw_pos);
    uint64_t seq = d->lw_seq;
    bool was_dirty = d->ckpt_dirty, was_quiet = d->ckpt_quiet_dirty;
    d->ckpt_dirty = d->ckpt_quiet_dirty = false;
    d->ckpt_busy = true;
    d->unsaved_next_ns = 0;
    pthread_mutex_unlock(&d->mu);
    int rc = d->o.checkpoint(d->o.checkpoint_ud, pos, seq);
    pthread_mutex_lock(&d->mu);
    d->ckpt_busy = false;
    pthread_cond_broadcast(&d->done_cv);
    if (rc == 0) {
        d->checkpoints_saved++;
        d->ckpt_saved_seq = seq;
        d->ckpt_saved_ns = now_ns();
        /* what moved past it during the save is what waits now */
        d->unsaved_since_ns = seq == d->lw_seq ? 0 : d->unsaved_next_ns;
        if (d->ckpt_fail_streak)
            log_info("deliver", "checkpoint %s saved after %llu failed attempt(s)", pos,
                     (unsigned long long)d->ckpt_fail_streak);
        d->ckpt_fail_streak = 0;
    } else {
        d->checkpoint_failures++;
        d->ckpt_dirty |= was_dirty; /* whatever moved it since set its own flag too */
        d->ckpt_quiet_dirty |= was_quiet;
        /* one attempt per checkpoint interval: said at the first failure,
         * then about once a minute at the default interval */
        if (d->ckpt_fail_streak++ % 60 == 0 || final)
            log_warn("deliver", "saving the checkpoint %s failed; will retry (%llu failure(s) "
                     "in a row)", pos, (unsigned long long)d->ckpt_fail_streak);
    }
    /* moved during the save: by what moved it (advance_low_water and txn_end
     * set the flag of their kind) */
    if (d->lw_seq != seq && !d->ckpt_dirty && !d->ckpt_quiet_dirty) d->ckpt_dirty = true;
    free(pos);
}

void *ckpt_main(void *arg) {
    struct deliver *d = arg;
    /* at most one save per checkpoint_interval_ms: done_cv is broadcast on
     * every acknowledgement, and when the checkpoint lives on the source
     * server each save is itself a binlog transaction that moves the
     * low-water mark, so saving on every wake-up would feed on itself */
    pthread_mutex_lock(&d->mu);
    int64_t next = now_ns() + (int64_t)d->o.checkpoint_interval_ms * NS_PER_MS;
    while (!d->stop) {
        struct timespec ts;
        /* it also watches the engine's requests (engine.c), each second */
        int64_t watch = now_ns() + 1000 * NS_PER_MS;
        deadline_ts(&ts, next < watch ? next : watch);
        pthread_cond_timedwait(&d->done_cv, &d->mu, &ts);
        if (d->stop) break;
        engine_watch(d, now_ns());
        if (now_ns() < next) continue;
        save_checkpoint_locked(d, false);
        next = now_ns() + (int64_t)d->o.checkpoint_interval_ms * NS_PER_MS;
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

/* ---------- drain ---------- */

int deliver_drain(struct deliver *d, int timeout_ms) {
    if (timeout_ms <= 0) timeout_ms = d->o.drain_timeout_ms;
    int64_t t0 = now_ns(), end = t0 + (int64_t)timeout_ms * NS_PER_MS;
    pthread_mutex_lock(&d->mu);
    if (d->halted) { /* deliver_halt: nothing is sent any more, nothing saved */
        pthread_mutex_unlock(&d->mu);
        return DELIVER_ESTOPPED;
    }
    if (d->draining) {
        pthread_mutex_unlock(&d->mu);
        return DELIVER_EBUSY;
    }
    d->draining = true;
    rotate_stats(d, t0);
    wc_add(&d->drains, 1);
    pthread_cond_broadcast(&d->work_cv);
    int rc = DELIVER_OK;
    while (d->main_queued > 0 || d->inflight_batches > 0) {
        if (d->stop) {
            rc = DELIVER_ESTOPPED;
            break;
        }
        if (now_ns() >= end) {
            rc = DELIVER_ETIMEOUT;
            break;
        }
        struct timespec ts;
        int64_t w = now_ns() + 100 * NS_PER_MS;
        deadline_ts(&ts, w < end ? w : end);
        pthread_cond_timedwait(&d->done_cv, &d->mu, &ts);
    }
    /* the auxiliary queues join the main ones */
    for (int w = 0; w < d->o.workers; w++)
        for (struct indexq *q = d->partitions[w].qs; q; q = q->next) {
            while (q->aux.head) {
                struct item *it = q->aux.head;
                list_remove(&q->aux, it);
                it->in_aux = false;
                list_push_back(&q->main, it);
                q->main_bytes += it->size;
                d->main_queued++;
            }
        }
    d->draining = false;
    int64_t t1 = now_ns();
    hist_add(&d->drain_us, (uint64_t)((t1 - t0) / 1000));
    if (rc == DELIVER_ETIMEOUT) wc_add(&d->drain_timeouts, 1);
    if (rc != DELIVER_OK) wc_add(&d->drain_failures, 1);
    advance_low_water(d);
    save_checkpoint_locked(d, true);
    pthread_cond_broadcast(&d->work_cv);
    bool halted = d->halted; /* halted meanwhile: deliver_halt said so */
    pthread_mutex_unlock(&d->mu);
    if (rc != DELIVER_OK && !halted)
        log_warn("deliver", "drain did not finish within %d ms", timeout_ms);
    return rc;
}
