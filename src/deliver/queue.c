/* queue.c: the queues: items, the per-document map of each indexq (for
 * coalescing), the partitions that hold the indexqs, eligibility of a queue
 * for a batch, and deliver_submit (backpressure at the high-water mark, the
 * bulk streams' share of it). Queues are the hub's: every stream's changes
 * to one target share one (stream.c, "Order between streams"). */
#include "deliver/deliver_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "search/search.h"

/* A document is (id, routing): the same id under another routing is another
 * copy on another shard (a child moved to a new parent leaves its old copy to
 * be deleted there), so those changes must not coalesce. The map holds the
 * newest queued change of each document whatever index it names: one queue
 * may hold writes of a document to an alias and to a version by name
 * (sync/pipeline/targets.c), and only a newest change sent to the same name is
 * replaced (the live write and the dual write of one change carry one
 * version: neither stands for the other). */
static bool same_routing(const char *a, const char *b) {
    return a == b || (a && b && !strcmp(a, b));
}

/* the bucket of hash h: FNV-1a's low bits are poorly spread for short,
 * similar ids (1, 2, 3...), so the bucket comes from the high bits of a
 * Fibonacci multiply */
static size_t map_bucket(uint64_t h, size_t cap) {
    return (size_t)((h * 0x9E3779B97F4A7C15ULL) >> 40) & (cap - 1);
}

static struct item **map_slot(struct indexq *q, const char *id, const char *routing, uint64_t h) {
    struct item **pp = &q->map[map_bucket(h, q->map_cap)];
    while (*pp && ((*pp)->hash != h || strcmp((*pp)->doc_id, id) ||
                   !same_routing((*pp)->routing, routing)))
        pp = &(*pp)->hnext;
    return pp;
}

static void map_grow(struct indexq *q) {
    size_t ncap = q->map_cap ? q->map_cap * 2 : 64;
    struct item **nm = xcalloc(ncap, sizeof *nm);
    for (size_t i = 0; i < q->map_cap; i++) {
        struct item *it = q->map[i];
        while (it) {
            struct item *nx = it->hnext;
            struct item **b = &nm[map_bucket(it->hash, ncap)];
            it->hnext = *b;
            *b = it;
            it = nx;
        }
    }
    free(q->map);
    q->map = nm;
    q->map_cap = ncap;
}

struct item *map_get(struct indexq *q, const char *id, const char *routing, uint64_t h) {
    if (!q->map_cap) return NULL;
    return *map_slot(q, id, routing, h);
}

/* make it the newest queued item of its doc */
void map_put(struct indexq *q, struct item *it) {
    if (q->map_n + 1 > q->map_cap * 3 / 4) map_grow(q);
    struct item **pp = map_slot(q, it->doc_id, it->routing, it->hash);
    if (*pp) {
        struct item *old = *pp;
        it->hnext = old->hnext;
        old->hnext = NULL;
        old->in_map = false;
        *pp = it;
    } else {
        it->hnext = NULL;
        *pp = it;
        q->map_n++;
    }
    it->in_map = true;
}

void map_del(struct indexq *q, struct item *it) {
    if (!it->in_map) return;
    struct item **pp = map_slot(q, it->doc_id, it->routing, it->hash);
    if (*pp == it) {
        *pp = it->hnext;
        q->map_n--;
    }
    it->hnext = NULL;
    it->in_map = false;
}

/* ---------- items ---------- */

static struct item *item_new(const struct change *c) {
    size_t ixn = strlen(c->index) + 1;
    size_t idn = strlen(c->doc_id) + 1;
    size_t rn = c->routing ? strlen(c->routing) + 1 : 0;
    size_t bn = c->body ? c->body_len + 1 : 0;
    size_t sn = c->script ? strlen(c->script) + 1 : 0;
    struct item *it = xmalloc(sizeof *it + ixn + idn + rn + bn + sn);
    memset(it, 0, sizeof *it);
    char *p = (char *)(it + 1);
    it->index = memcpy(p, c->index, ixn);
    p += ixn;
    it->doc_id = memcpy(p, c->doc_id, idn);
    p += idn;
    if (rn) it->routing = memcpy(p, c->routing, rn), p += rn;
    if (bn) {
        it->body = memcpy(p, c->body, c->body_len);
        p[c->body_len] = '\0';
        it->body_len = c->body_len;
        p += bn;
    }
    if (sn) it->script = memcpy(p, c->script, sn);
    it->version = c->version;
    it->op = c->op;
    it->require_alias = c->require_alias;
    it->hash = fnv1a(c->doc_id, idn - 1, FNV_BASIS);
    if (c->routing) it->hash = fnv1a(c->routing, rn - 1, fnv1a("\0", 1, it->hash));
    it->size = 96 + ixn + idn + rn + bn + sn;
    return it;
}

/* ---------- queues ---------- */

static struct indexq *indexq_get(struct deliver_hub *d, const char *index, uint64_t ih) {
    struct partition *w = &d->partitions[ih % (uint64_t)d->o.workers];
    for (struct indexq *q = w->qs; q; q = q->next)
        if (!strcmp(q->index, index)) return q;
    struct indexq *q = xcalloc(1, sizeof *q);
    q->index = xstrdup(index);
    q->fuse = fuse_get(d, index);
    q->next = w->qs;
    w->qs = q;
    return q;
}

long index_idle_queued(struct deliver_hub *d, const struct fuse *f) {
    long n = 0;
    for (int w = 0; w < d->o.workers; w++)
        for (struct indexq *o = d->partitions[w].qs; o; o = o->next)
            if (o->fuse == f && !o->inflight) n += o->main.n;
    return n;
}

/* Group commit: a transaction's changes leave together, and while a
 * request of the target is in flight its queues' changes wait for it and
 * leave together, in one request, when it returns; so the engine's own
 * latency sets the batch (a busy engine answers slowly and gets fewer,
 * fuller requests; an idle one gets each transaction at once, as one
 * request however many partitions its documents hash to: take_batch goes
 * on into them). Held: a change whose transaction the producer is still
 * building (deliver_txn_end wakes a helper), and any change of a target
 * with a request in flight. Not held: a full batch_max of the target
 * waiting (throughput: requests run side by side; a change set of many
 * documents goes out while it is built), the hub at its high-water mark, a
 * change that waited flush_interval_ms (the upper bound), and a stream
 * that sends each transaction at once (a reindex page: its own queues, one
 * request each). */
static bool group_commit_holds(struct deliver_hub *d, const struct indexq *q,
                               const struct deliver *hs, const struct item *head, int64_t now,
                               int64_t *wake) {
    if (!d->o.group_commit || hs->flush_on_txn_end) return false;
    if (q->fuse->reqs == 0 && head->txn->closed) return false;
    if (hub_pressed(d, hs)) return false;
    int64_t due = head->enq_ns + (int64_t)hs->flush_interval_ms * NS_PER_MS;
    if (now >= due) return false;
    if (index_idle_queued(d, q->fuse) >= d->o.batch_max) return false;
    if (due < *wake) *wake = due; /* else the request's return, or the end of the
                                   * transaction, wakes a helper */
    return true;
}

static bool eligible_ex(struct deliver_hub *d, struct indexq *q, int64_t now, int64_t *wake,
                        bool lingers) {
    if (q->inflight || q->main.n == 0) return false;
    if (!fuse_check(d, q->fuse, now, wake)) return false;
    if (now < q->not_before_ns) {
        if (q->not_before_ns < *wake) *wake = q->not_before_ns;
        return false;
    }
    /* the knobs of the stream whose change is at the front */
    const struct item *head = q->main.head;
    const struct deliver *hs = head->txn->s;
    if (hs->held) return false; /* deliver_hold_sends: released with a broadcast */
    if (d->draining) return true;
    if (head->txn->seq <= hs->waited_seq) return true; /* deliver_wait_txn waits for it */
    if (lingers && group_commit_holds(d, q, hs, head, now, wake)) return false;
    if (lingers && refresh_holds(d, q, hs, head, now, wake)) return false;
    if (lingers && linger_refresh_holds(d, q, hs, head, now, wake)) return false;
    if (lingers && hs->linger_ms > 0 && !hub_pressed(d, hs)) {
        /* group commit with a floor: the queue's first change waits for
         * company (a transaction's end does not cut this short), unless the
         * index has a full batch waiting over its partitions (take_batch
         * goes on into them) */
        int64_t until = head->enq_ns + (int64_t)hs->linger_ms * NS_PER_MS;
        if (now < until && q->main.n < d->o.batch_max &&
            index_idle_queued(d, q->fuse) < d->o.batch_max) {
            if (until < *wake) *wake = until;
            return false;
        }
    }
    if (q->main.n >= hs->batch_min) return true;
    if (head->enq_ns <= hs->txn_flush_ns) return true;
    if (hub_pressed(d, hs)) return true;
    int64_t due = head->enq_ns + (int64_t)hs->flush_interval_ms * NS_PER_MS;
    if (now >= due) return true;
    if (due < *wake) *wake = due;
    return false;
}

bool eligible(struct deliver_hub *d, struct indexq *q, int64_t now, int64_t *wake) {
    return eligible_ex(d, q, now, wake, true);
}

bool eligible_to_join(struct deliver_hub *d, struct indexq *q, int64_t now, int64_t *wake) {
    return eligible_ex(d, q, now, wake, false);
}

/* ---------- dropping a stream's changes ---------- */

void item_drop(struct deliver_hub *d, struct item *it) {
    struct deliver *s = it->txn->s;
    d->total--;
    if (s->cls == DELIVER_BULK) d->bulk_total--;
    s->outstanding--;
    if (s->draining && it->sseq <= s->drain_mark) s->drain_left--;
    free(it); /* its transaction stays unacknowledged */
}

void queue_drop_stream(struct deliver_hub *d, struct deliver *s) {
    for (int w = 0; w < d->o.workers; w++)
        for (struct indexq *q = d->partitions[w].qs; q; q = q->next)
            for (struct item *it = q->main.head, *nx; it; it = nx) {
                nx = it->next;
                if (it->txn->s != s) continue;
                list_remove(&q->main, it);
                map_del(q, it);
                q->main_bytes -= it->size;
                d->main_queued--;
                item_drop(d, it);
            }
    pthread_cond_broadcast(&d->space_cv);
    pthread_cond_broadcast(&d->done_cv);
}

/* ---------- submit ---------- */

/* The fairness rule (deliver.h): the bulk streams together hold at most
 * half the high-water mark, whatever the live stream holds (one change of
 * each bulk stream always goes); a live stream waits once the hub holds the
 * mark. So neither class starves the other: live changes always have at
 * least half the mark, a build its half even behind a reader's backlog; at
 * most 1.5 times the mark is queued (live to the mark, then bulk's half). */
static bool must_wait(const struct deliver_hub *d, const struct deliver *s) {
    if (s->cls == DELIVER_BULK) {
        long share = d->o.high_watermark / 2 > 0 ? d->o.high_watermark / 2 : 1;
        return d->bulk_total >= share && s->outstanding > 0;
    }
    return d->total >= d->o.high_watermark;
}

/* Under d->mu: wait while the stream must (purging at the mark when a fuse
 * is blown and a strategy says so); the time is counted. */
static void wait_for_space(struct deliver_hub *d, struct deliver *s) {
    bool counted_block = false;
    int64_t block_start = 0;
    while (!d->stop && !s->halted && !s->closing && must_wait(d, s)) {
        if (!counted_block) {
            counted_block = true;
            block_start = now_ns();
            d->blocked_since_sum += block_start;
            wc_add(&d->blocked, 1);
            s->n_blocked++;
            d->blocked_now++;
            if (s->cls == DELIVER_BULK) d->blocked_bulk_now++;
            pthread_cond_broadcast(&d->work_cv); /* flush partial batches */
        }
        struct list pl = {0};
        purge_collect(d, &pl);
        if (pl.head) {
            purge_flush(d, &pl);
            continue;
        }
        struct timespec ts;
        deadline_ts(&ts, now_ns() + 200 * NS_PER_MS);
        pthread_cond_timedwait(&d->space_cv, &d->mu, &ts);
    }
    if (counted_block) {
        int64_t waited = now_ns() - block_start;
        d->blocked_now--;
        if (s->cls == DELIVER_BULK) d->blocked_bulk_now--;
        d->blocked_ns += waited;
        s->blocked_ns += waited;
        d->blocked_since_sum -= block_start;
    }
}

int deliver_submit(struct deliver *s, const struct change *c) {
    if (!c || !c->index || !*c->index || !c->doc_id || !*c->doc_id || c->version == 0 ||
        c->version > (uint64_t)INT64_MAX || (unsigned)c->op > CHANGE_SCRIPT ||
        (c->op == CHANGE_SCRIPT && !c->script) ||
        (c->op != CHANGE_DELETE && !c->body))
        return DELIVER_EINVAL;
    struct deliver_hub *d = s->d;
    /* the queue (partition, indexq, fuse) is the target's */
    const char *target = c->target && *c->target ? c->target : c->index;
    struct item *it = item_new(c);
    uint64_t ih = fnv1a(target, strlen(target), FNV_BASIS);
    ih = fnv1a("\0", 1, ih);
    ih = fnv1a(c->doc_id, strlen(c->doc_id), ih);

    pthread_mutex_lock(&d->mu);
    atomic_store(&s->waiting_space, true);
    wait_for_space(d, s);
    atomic_store(&s->waiting_space, false);
    if (d->stop || s->halted || s->closing) {
        pthread_mutex_unlock(&d->mu);
        free(it);
        return DELIVER_ESTOPPED;
    }
    int64_t now = now_ns();
    rotate_stats(d, now);
    struct indexq *q = indexq_get(d, target, ih);
    it->q = q;
    refresh_note_live(q->fuse, s);
    struct txn *t = open_txn(s);
    it->txn = t;
    it->sseq = s->next_sseq++;
    t->pending++;
    d->total++;
    if (s->cls == DELIVER_BULK) d->bulk_total++;
    s->outstanding++;
    s->n_submitted++;
    wc_add(&d->submitted, 1);
    it->enq_ns = now;
    /* coalescing: only a change of the same stream (its transactions carry
     * it), sent to the same name, that a drain under way does not wait for */
    struct item *old = NULL;
    if (c->op == CHANGE_INDEX || c->op == CHANGE_DELETE) {
        struct item *m = map_get(q, it->doc_id, it->routing, it->hash);
        if (m && m->txn->s == s && !(s->draining && m->sseq <= s->drain_mark) &&
            (m->op == CHANGE_INDEX || m->op == CHANGE_DELETE) && !strcmp(m->index, it->index))
            old = m;
    }
    if (s->ordered_versions) {
        /* I5 (and I3, its worst case: an older whole write behind the
         * stream's own delete, which would bring the document back) */
        struct item *m = old ? old : map_get(q, it->doc_id, it->routing, it->hash);
        if (m && m->txn->s == s && !strcmp(m->index, it->index))
            SS_INVARIANT(it->version >= m->version, m->op == CHANGE_DELETE ? "I3" : "I5",
                         "stream %s submits %s/%s version %llu behind its own %s at %llu",
                         s->name, it->index, it->doc_id, (unsigned long long)it->version,
                         change_op_name(m->op), (unsigned long long)m->version);
    }
    if (old && it->version <= old->version) {
        /* a replay of something older than what is queued: it would lose
         * to the queued change at the engine anyway (409) */
        wc_add(&d->coalesced, 1);
        wc_add(&d->stale, 1);
        s->n_coalesced++;
        s->n_stale++;
        ack_item(d, it);
        advance_low_water(s);
    } else if (old) {
        /* the newer full-state change replaces the queued one in place */
        list_replace(&q->main, old, it);
        map_del(q, old);
        map_put(q, it);
        it->enq_ns = old->enq_ns;
        q->main_bytes += it->size - old->size;
        wc_add(&d->coalesced, 1);
        s->n_coalesced++;
        ack_item(d, old);
        advance_low_water(s);
    } else {
        list_push_back(&q->main, it);
        map_put(q, it);
        d->main_queued++;
        q->main_bytes += it->size;
    }
    /* wake a helper only when this changes what it would do: a first item
     * (its flush deadline), a queue that reached batch_min, or the high
     * water mark; waking it for every item of a filling batch costs a
     * context switch per document */
    if (!q->inflight &&
        (q->main.n == 1 || q->main.n >= s->batch_min || d->total >= d->o.high_watermark ||
         d->draining))
        pthread_cond_signal(&d->work_cv);
    pthread_mutex_unlock(&d->mu);
    return DELIVER_OK;
}
