/* txn.c: each stream's transactions and the checkpointer: the txn FIFO
 * and its low-water mark, acknowledgements, deliver_txn_end / wait /
 * low_water, the checkpoint thread (one per hub, saving each stream's
 * checkpoint) and deliver_drain (of one stream).
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

struct txn *open_txn(struct deliver *s) {
    if (s->txn_tail && !s->txn_tail->closed) return s->txn_tail;
    struct txn *t = xcalloc(1, sizeof *t);
    t->s = s;
    t->seq = s->txn_next_seq++;
    t->opened_ns = now_ns();
    if (s->txn_tail)
        s->txn_tail->next = t;
    else
        s->txn_head = t;
    s->txn_tail = t;
    return t;
}

void advance_low_water(struct deliver *s) {
    bool moved = false;
    while (s->txn_head && s->txn_head->closed && s->txn_head->pending == 0) {
        struct txn *t = s->txn_head;
        s->txn_head = t->next;
        if (!s->txn_head) s->txn_tail = NULL;
        if (s->lw_seq == s->ckpt_saved_seq || !s->unsaved_since_ns)
            s->unsaved_since_ns = t->opened_ns;
        if (s->ckpt_busy && !s->unsaved_next_ns) s->unsaved_next_ns = t->opened_ns;
        /* I4: the low-water mark passes only a closed transaction none of
         * whose changes is pending, in the stream's order */
        SS_INVARIANT(t->seq > s->lw_seq, "I4", "low-water mark of %s moves back: %llu after %llu",
                     s->name, (unsigned long long)t->seq, (unsigned long long)s->lw_seq);
        s->lw_seq = t->seq;
        free(s->lw_pos);
        s->lw_pos = t->pos;
        free(t);
        moved = true;
    }
    if (moved) {
        s->ckpt_dirty = true;
        pthread_cond_broadcast(&s->d->done_cv);
    }
}

void ack_item(struct deliver_hub *d, struct item *it) {
    struct txn *t = it->txn;
    struct deliver *s = t->s;
    SS_INVARIANT(t->pending > 0, "I1", "an acknowledgement of %s/%s in stream %s has no pending "
                 "change left in its transaction %llu", it->index, it->doc_id, s->name,
                 (unsigned long long)t->seq);
    t->pending--;
    d->total--;
    if (s->cls == DELIVER_BULK) d->bulk_total--;
    s->outstanding--;
    SS_INVARIANT(d->total >= 0 && s->outstanding >= 0, "I1",
                 "more acknowledgements than changes (stream %s: %ld outstanding, %ld in all)",
                 s->name, s->outstanding, d->total);
    if (s->draining && it->sseq <= s->drain_mark) s->drain_left--;
    free(it);
}

static uint64_t txn_end(struct deliver *s, const char *position, bool quiet) {
    struct deliver_hub *d = s->d;
    pthread_mutex_lock(&d->mu);
    uint64_t seq;
    if (s->txn_tail && !s->txn_tail->closed) {
        struct txn *t = s->txn_tail;
        t->pos = xstrdup(position ? position : "");
        t->closed = true;
        seq = t->seq;
    } else if (s->txn_tail) {
        /* an empty transaction behind a closed one: it moves that one's
         * position forward (nothing of its own to wait for) */
        struct txn *t = s->txn_tail;
        free(t->pos);
        t->pos = xstrdup(position ? position : "");
        t->seq = s->txn_next_seq++;
        seq = t->seq;
    } else {
        seq = s->txn_next_seq++;
        s->lw_seq = seq;
        free(s->lw_pos);
        s->lw_pos = xstrdup(position ? position : "");
        if (quiet)
            s->ckpt_quiet_dirty = true;
        else
            s->ckpt_dirty = true;
        pthread_cond_broadcast(&d->done_cv);
    }
    if (s->flush_on_txn_end) { /* the closed transaction's partial batches go now */
        s->txn_flush_ns = now_ns();
        pthread_cond_broadcast(&d->work_cv);
    } else if (d->o.group_commit && s->outstanding > s->inflight) {
        pthread_cond_signal(&d->work_cv); /* its changes waited for the end (group commit) */
    }
    advance_low_water(s);
    pthread_mutex_unlock(&d->mu);
    return seq;
}

uint64_t deliver_txn_end(struct deliver *s, const char *position) {
    return txn_end(s, position, false);
}

uint64_t deliver_txn_end_quiet(struct deliver *s, const char *position) {
    return txn_end(s, position, true);
}

/* One wait of a caller for delivered work (d->mu held): DELIVER_ESTOPPED
 * when the hub stops or the stream is halted, DELIVER_ETIMEOUT once end
 * (now_ns) has passed, else DELIVER_OK after a wait on done_cv until end,
 * or at most slice_ns when that is not 0. */
static int wait_done_locked(struct deliver *s, int64_t end, int64_t slice_ns) {
    struct deliver_hub *d = s->d;
    if (d->stop || s->halted) return DELIVER_ESTOPPED;
    if (now_ns() >= end) return DELIVER_ETIMEOUT;
    struct timespec ts;
    int64_t w = slice_ns ? now_ns() + slice_ns : end;
    deadline_ts(&ts, w < end ? w : end);
    pthread_cond_timedwait(&d->done_cv, &d->mu, &ts);
    return DELIVER_OK;
}

int deliver_wait_txn(struct deliver *s, uint64_t seq, int timeout_ms) {
    struct deliver_hub *d = s->d;
    int64_t end = now_ns() + (int64_t)timeout_ms * NS_PER_MS;
    pthread_mutex_lock(&d->mu);
    int rc = DELIVER_OK;
    /* a caller stopped until these are in (a child copy check, a snapshot's
     * reuse, a delayed job): holding their changes for company, or spacing
     * them by the refresh, would only stop it longer */
    if (s->lw_seq < seq && s->waited_seq < seq) {
        s->waited_seq = seq;
        pthread_cond_broadcast(&d->work_cv);
    }
    while (s->lw_seq < seq && rc == DELIVER_OK) rc = wait_done_locked(s, end, 0);
    pthread_mutex_unlock(&d->mu);
    return rc;
}

uint64_t deliver_low_water(struct deliver *s, char *buf, size_t len) {
    pthread_mutex_lock(&s->d->mu);
    uint64_t q = s->lw_seq;
    if (buf && len) snprintf(buf, len, "%s", s->lw_pos ? s->lw_pos : "");
    pthread_mutex_unlock(&s->d->mu);
    return q;
}

/* ---------- checkpointer ---------- */

void save_checkpoint_locked(struct deliver *s, bool final) {
    struct deliver_hub *d = s->d;
    /* one save at a time (checkpointer thread, drain): two concurrent saves
     * could land out of order and leave the older position behind */
    while (s->ckpt_busy) pthread_cond_wait(&d->done_cv, &d->mu);
    if (!s->checkpoint || !s->lw_pos || s->halted) return;
    /* moved only past checkpoint saves read back: saved once the idle
     * interval has passed (or at the drain), else the save's own binlog
     * transaction would be the next save's reason, every interval */
    bool quiet_due = s->ckpt_quiet_dirty &&
                     (final || now_ns() - s->ckpt_saved_ns >=
                                   (int64_t)s->idle_checkpoint_interval_ms * NS_PER_MS);
    if (!s->ckpt_dirty && !quiet_due) return;
    char *pos = xstrdup(s->lw_pos);
    uint64_t seq = s->lw_seq;
    bool was_dirty = s->ckpt_dirty, was_quiet = s->ckpt_quiet_dirty;
    s->ckpt_dirty = s->ckpt_quiet_dirty = false;
    s->ckpt_busy = true;
    s->unsaved_next_ns = 0;
    pthread_mutex_unlock(&d->mu);
    /* I4: what is saved is the low-water mark, never behind the last save */
    SS_INVARIANT(seq >= s->ckpt_saved_seq, "I4", "stream %s would save checkpoint %llu after "
                 "%llu", s->name, (unsigned long long)seq, (unsigned long long)s->ckpt_saved_seq);
    int rc = s->checkpoint(s->checkpoint_ud, pos, seq);
    pthread_mutex_lock(&d->mu);
    s->ckpt_busy = false;
    pthread_cond_broadcast(&d->done_cv);
    if (rc == 0) {
        s->checkpoints_saved++;
        d->checkpoints_saved++;
        s->ckpt_saved_seq = seq;
        s->ckpt_saved_ns = now_ns();
        /* what moved past it during the save is what waits now */
        s->unsaved_since_ns = seq == s->lw_seq ? 0 : s->unsaved_next_ns;
        if (s->ckpt_fail_streak)
            log_info("deliver", "checkpoint %s saved after %llu failed attempt(s)", pos,
                     (unsigned long long)s->ckpt_fail_streak);
        s->ckpt_fail_streak = 0;
    } else {
        s->checkpoint_failures++;
        d->checkpoint_failures++;
        s->ckpt_dirty |= was_dirty; /* whatever moved it since set its own flag too */
        s->ckpt_quiet_dirty |= was_quiet;
        /* one attempt per checkpoint interval: said at the first failure,
         * then about once a minute at the default interval */
        if (s->ckpt_fail_streak++ % 60 == 0 || final)
            log_warn("deliver", "saving the checkpoint %s failed; will retry (%llu failure(s) "
                     "in a row)", pos, (unsigned long long)s->ckpt_fail_streak);
    }
    /* moved during the save: by what moved it (advance_low_water and txn_end
     * set the flag of their kind) */
    if (s->lw_seq != seq && !s->ckpt_dirty && !s->ckpt_quiet_dirty) s->ckpt_dirty = true;
    free(pos);
}

/* the streams whose save is due, one at a time: a save drops the lock, and
 * the list may change meanwhile, so the walk starts again after each */
static void save_due_locked(struct deliver_hub *d, int64_t *next) {
    for (bool again = true; again && !d->stop;) {
        again = false;
        int64_t now = now_ns();
        for (struct deliver *s = d->streams; s; s = s->next) {
            if (s->checkpoint && !s->closing && now >= s->ckpt_next_ns) {
                s->ckpt_next_ns = now + (int64_t)s->checkpoint_interval_ms * NS_PER_MS;
                save_checkpoint_locked(s, false);
                again = true;
                break;
            }
            if (s->checkpoint && s->ckpt_next_ns < *next) *next = s->ckpt_next_ns;
        }
    }
}

void *ckpt_main(void *arg) {
    struct deliver_hub *d = arg;
    /* at most one save per checkpoint_interval_ms and stream: done_cv is
     * broadcast on every acknowledgement, and when the checkpoint lives on
     * the source server each save is itself a binlog transaction that moves
     * the low-water mark, so saving on every wake-up would feed on itself */
    pthread_mutex_lock(&d->mu);
    while (!d->stop) {
        struct timespec ts;
        /* it also watches the engine's requests (engine.c), each second */
        d->ckpt_beat_ns = now_ns();
        int64_t next = d->ckpt_beat_ns + 1000 * NS_PER_MS;
        save_due_locked(d, &next);
        if (d->stop) break;
        deadline_ts(&ts, next);
        d->ckpt_idle = true; /* (health.c) */
        pthread_cond_timedwait(&d->done_cv, &d->mu, &ts);
        d->ckpt_idle = false;
        if (d->stop) break;
        engine_watch(d, now_ns());
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

/* ---------- drain ---------- */

int deliver_drain(struct deliver *s, int timeout_ms) {
    struct deliver_hub *d = s->d;
    if (timeout_ms <= 0) timeout_ms = s->drain_timeout_ms;
    int64_t t0 = now_ns(), end = t0 + (int64_t)timeout_ms * NS_PER_MS;
    pthread_mutex_lock(&d->mu);
    if (s->halted) { /* deliver_halt: nothing is sent any more, nothing saved */
        pthread_mutex_unlock(&d->mu);
        return DELIVER_ESTOPPED;
    }
    if (s->draining) {
        pthread_mutex_unlock(&d->mu);
        return DELIVER_EBUSY;
    }
    /* what the stream has outstanding now is what the drain waits for;
     * changes submitted meanwhile queue behind it and are not waited for */
    s->draining = true;
    s->drain_mark = s->next_sseq - 1;
    s->drain_left = s->outstanding;
    d->draining++;
    rotate_stats(d, t0);
    wc_add(&d->drains, 1);
    pthread_cond_broadcast(&d->work_cv);
    int rc = DELIVER_OK;
    while (s->drain_left > 0 && rc == DELIVER_OK) rc = wait_done_locked(s, end, 100 * NS_PER_MS);
    s->draining = false;
    d->draining--;
    int64_t t1 = now_ns();
    hist_add(&d->drain_us, (uint64_t)((t1 - t0) / 1000));
    if (rc == DELIVER_ETIMEOUT) wc_add(&d->drain_timeouts, 1);
    if (rc != DELIVER_OK) wc_add(&d->drain_failures, 1);
    advance_low_water(s);
    save_checkpoint_locked(s, true);
    pthread_cond_broadcast(&d->work_cv);
    bool halted = s->halted; /* halted meanwhile: deliver_halt said so */
    pthread_mutex_unlock(&d->mu);
    if (rc != DELIVER_OK && !halted)
        log_warn("deliver", "drain of %s did not finish within %d ms", s->name, timeout_ms);
    return rc;
}
