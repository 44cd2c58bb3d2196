/* stream.c: streams and their hub: deliver_hub_new / free,
 * deliver_stream_open, deliver_open (on the hub its caller was handed, or a
 * private one), deliver_new (a private hub and one stream), deliver_free,
 * deliver_halt, deliver_hold_sends, and the hub's list of streams.
 *
 * Order between streams. Every change names a target (struct change), and
 * every stream's changes to one target go through that target's one queue,
 * which has at most one batch in flight and puts failed items back at its
 * front; a batch holds one change per document (helper.c, seen_add). So two
 * writes of one document to one target reach the engine in the order they
 * were submitted, whatever streams they came from. A target is a queue, not
 * an index: the order is only as wide as the target, so every index a
 * document's writes may land in must share it — a write through an alias
 * lands where the alias points when the request arrives, and an index
 * config's writes through its alias and to its versions by name have one
 * target (sync/pipeline/targets.c, targets_queue; queued by the name of the
 * version they were meant for, a write through the alias decided before a
 * switch landed in the new version after the deletes decided after it).
 * Within a stream, submit order is version order (the reader submits in
 * binlog order and asserts it, I5; a run or a repair what one read gave).
 * Between streams, submit order can differ from version order: a delayed
 * run's rebuild read at binlog position P may be submitted after a live
 * write decided at Q > P.
 * Such a pair is settled by external versions (I5 at the engine): the
 * older write is refused (409), so it can never revert a newer INDEX or
 * UPDATE. It could resurrect a document only when the newer write is a
 * DELETE whose tombstone the engine has forgotten by the time the older
 * write lands, that is more than index.gc_deletes (60 s by default) after
 * the DELETE was acknowledged. In one queue the older write waits behind
 * the DELETE, so that gap is what the queue sends between them (at most the
 * high-water mark and a half: a few round trips), unless the engine answers
 * nothing for longer than a tombstone lives between two batches of that
 * queue. The delayed runs, repairs and resyncs write through the index
 * config's queue (sync/pipeline/targets.c) and read the rows when they build; a
 * replayed dead letter is superseded by any newer full write that landed
 * (store.c).
 *
 * Reindex pages are the one exception to the shared queue: they have a
 * queue of their own (targets_submit_page), else a build would wait behind
 * the reader's whole backlog. Their order against the dual writes to the
 * same version is settled by versions alone, and the resurrection case is
 * closed by time: a version being built keeps tombstones [reindex]
 * gc_deletes_s (1 h by default, at least 10 s), and a page acknowledged
 * later than 90 % of that after its snapshot fails the build, which is
 * built again (sync/reindex/reindex_runner.c); a dual-write DELETE is acknowledged
 * after the snapshot that missed it, so a page that lands before its
 * deadline finds the tombstone; and the switch, which gives the version the
 * engine's gc_deletes back, waits for every job's last page to be
 * acknowledged. Measured queue ages: t_reindex_late_page holds a page 12 s
 * with gc_deletes_s = 10 and sees the build rolled back.
 *
 * Requests of a process that died (SIGKILL, a crash) with them in flight are
 * in no queue: a proxy or the engine's own queue may apply them after the
 * next process resent their changes and later ones. They carry older
 * versions (the next process resumes at a checkpoint before them) and lose
 * while the engine remembers what came after, so the argument assumes such a
 * request lands within index.gc_deletes of a newer delete of its document,
 * or never (docs/delivery.md, Tombstones). A stream halted because its
 * reader was fenced out (deliver_halt) leaves the same: its queued changes
 * are dropped, the batch in flight completes.
 *
 * Closing. deliver_free waits for the stream's changes in flight (its
 * callbacks may run until they settle). deliver_abandon (a cancelled build)
 * does not: its batch in flight keeps its queue's one slot until the engine
 * answers, so the order above holds (another stream's write of that
 * document still leaves after it), but once the engine answered nothing of
 * it reaches the producer (helper.c, batch_hold_reports: no callback, a dead
 * letter dropped), and the stream, off the hub's list, waits in
 * d->abandoned until the last of them settles and frees it
 * (hub_reap_abandoned). A stream whose acknowledgements feed checkpoint
 * saves is never abandoned: it is closed as deliver_free closes it.  */
#include "deliver/deliver_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

const char *deliver_class_name(enum deliver_class c) {
    return c == DELIVER_BULK ? "bulk" : "live";
}

void hub_stream_add(struct deliver_hub *d, struct deliver *s) {
    s->next = d->streams;
    d->streams = s;
    d->nstreams++;
}

void hub_stream_remove(struct deliver_hub *d, struct deliver *s) {
    for (struct deliver **pp = &d->streams; *pp; pp = &(*pp)->next)
        if (*pp == s) {
            *pp = s->next;
            d->nstreams--;
            return;
        }
}

void stream_init(struct deliver *s, struct deliver_hub *d, const struct deliver_opts *o,
                 const char *name, enum deliver_class cls) {
    memset(s, 0, sizeof *s);
    s->d = d;
    s->name = xstrdup(name && *name ? name : "main");
    s->cls = cls;
    s->checkpoint = o->checkpoint;
    s->checkpoint_ud = o->checkpoint_ud;
    s->dead_letter = o->dead_letter;
    s->dead_letter_ud = o->dead_letter_ud;
    s->written = o->written;
    s->written_ud = o->written_ud;
    s->missing = o->missing;
    s->missing_ud = o->missing_ud;
    s->batch_min = o->batch_min < 1 ? 1 : o->batch_min;
    if (s->batch_min > d->o.batch_max) s->batch_min = d->o.batch_max;
    s->flush_interval_ms = o->flush_interval_ms;
    s->linger_ms = o->linger_ms;
    s->linger_refresh_percent = o->linger_refresh_percent;
    s->linger_refresh_batch = o->linger_refresh_batch;
    s->batch_to_refresh = o->batch_to_refresh;
    s->refresh_pairing_ms = o->refresh_pairing_ms;
    s->refresh_pairing_changes = o->refresh_pairing_changes;
    s->flush_on_txn_end = o->flush_on_txn_end;
    s->ordered_versions = o->ordered_versions;
    s->checkpoint_interval_ms = o->checkpoint_interval_ms < 1 ? 1000 : o->checkpoint_interval_ms;
    s->idle_checkpoint_interval_ms =
        o->idle_checkpoint_interval_ms < 1 ? 60000 : o->idle_checkpoint_interval_ms;
    s->drain_timeout_ms = o->drain_timeout_ms > 0 ? o->drain_timeout_ms : 60000;
    s->txn_next_seq = 1;
    s->next_sseq = 1;
    s->ckpt_saved_ns = now_ns();
    s->ckpt_next_ns = s->ckpt_saved_ns + (int64_t)s->checkpoint_interval_ms * NS_PER_MS;
}

struct deliver_hub *deliver_hub_new(const struct deliver_opts *o, struct search_client *client,
                                    char *err, size_t errlen) {
    return hub_new(o, client, err, errlen);
}

void deliver_hub_free(struct deliver_hub *h) {
    if (!h) return;
    pthread_mutex_lock(&h->mu);
    int open = h->nstreams;
    pthread_mutex_unlock(&h->mu);
    if (open) { /* a producer still holds a stream: freeing would pull the rug */
        log_error("deliver", "delivery not stopped: %d stream(s) still open (a producer was "
                  "not stopped first)", open);
        return;
    }
    hub_free(h);
}

struct deliver_hub *deliver_hub_of(struct deliver *s) { return s ? s->d : NULL; }

static bool name_taken(const struct deliver_hub *h, const char *name) {
    for (const struct deliver *o = h->streams; o; o = o->next)
        if (!strcmp(o->name, name)) return true;
    return false;
}

/* two streams of one name (two delayed runs) get "#2", "#3"...: each is one
 * series in /metrics */
static void stream_unique_name(const struct deliver_hub *h, struct deliver *s) {
    if (!name_taken(h, s->name)) return;
    size_t n = strlen(s->name) + 16;
    char *nm = xmalloc(n);
    for (int k = 2;; k++) {
        snprintf(nm, n, "%s#%d", s->name, k);
        if (!name_taken(h, nm)) break;
    }
    free(s->name);
    s->name = nm;
}

struct deliver *deliver_stream_open(struct deliver_hub *h, const struct deliver_opts *o,
                                    const char *name, enum deliver_class cls, char *err,
                                    size_t errlen) {
    if (!h) {
        snprintf(err, errlen, "no delivery to open stream %s on", name ? name : "");
        return NULL;
    }
    struct deliver *s = xmalloc(sizeof *s);
    stream_init(s, h, o, name, cls);
    pthread_mutex_lock(&h->mu);
    if (h->stop) {
        pthread_mutex_unlock(&h->mu);
        free(s->name);
        free(s);
        snprintf(err, errlen, "delivery is stopping: stream %s not opened", name ? name : "");
        return NULL;
    }
    stream_unique_name(h, s);
    hub_stream_add(h, s);
    pthread_mutex_unlock(&h->mu);
    return s;
}

struct deliver *deliver_open(struct deliver_hub *h, const struct deliver_opts *o,
                             struct search_client *client, const char *name,
                             enum deliver_class cls, char *err, size_t errlen) {
    if (h) return deliver_stream_open(h, o, name, cls, err, errlen);
    h = hub_new(o, client, err, errlen);
    if (!h) return NULL;
    struct deliver *s = deliver_stream_open(h, o, name, cls, err, errlen);
    if (!s) {
        hub_free(h);
        return NULL;
    }
    s->owns_hub = true;
    return s;
}

struct deliver *deliver_new(const struct deliver_opts *o, struct search_client *client,
                            char *err, size_t errlen) {
    struct deliver_hub *h = hub_new(o, client, err, errlen);
    if (!h) return NULL;
    struct deliver *s = deliver_stream_open(h, o, "main", DELIVER_LIVE, err, errlen);
    if (!s) {
        hub_free(h);
        return NULL;
    }
    s->owns_hub = true;
    return s;
}

static void stream_release(struct deliver *s) {
    while (s->txn_head) {
        struct txn *t = s->txn_head;
        s->txn_head = t->next;
        free(t->pos);
        free(t);
    }
    free(s->lw_pos);
    free(s->name);
    free(s);
}

void deliver_free(struct deliver *s) {
    if (!s) return;
    struct deliver_hub *d = s->d;
    if (s->owns_hub) { /* the helpers and the checkpointer stop before the stream goes */
        hub_free(d);
        stream_release(s);
        return;
    }
    pthread_mutex_lock(&d->mu);
    s->closing = true;
    queue_drop_stream(d, s);
    /* its batches in flight still call its callbacks; a save may be running */
    while (s->inflight > 0 || s->reporting > 0 || s->ckpt_busy)
        pthread_cond_wait(&d->done_cv, &d->mu);
    hub_stream_remove(d, s);
    pthread_cond_broadcast(&d->space_cv);
    pthread_mutex_unlock(&d->mu);
    stream_release(s);
}

void hub_reap_abandoned(struct deliver_hub *d) {
    for (struct deliver **pp = &d->abandoned; *pp;) {
        struct deliver *s = *pp;
        if (s->inflight > 0 || s->reporting > 0 || s->ckpt_busy) {
            pp = &s->next;
            continue;
        }
        *pp = s->next;
        log_debug("deliver", "stream %s closed earlier: its last change in flight settled",
                  s->name);
        stream_release(s);
    }
}

void deliver_abandon(struct deliver *s) {
    if (!s) return;
    if (s->owns_hub || s->checkpoint) { /* its hub goes with it; its saves need the acks */
        deliver_free(s);
        return;
    }
    struct deliver_hub *d = s->d;
    pthread_mutex_lock(&d->mu);
    s->closing = s->abandoned = true;
    queue_drop_stream(d, s);
    /* callbacks a helper calls now (their batch was answered: not the
     * engine's wait) */
    while (s->reporting > 0 || s->ckpt_busy) pthread_cond_wait(&d->done_cv, &d->mu);
    hub_stream_remove(d, s);
    pthread_cond_broadcast(&d->space_cv);
    if (s->inflight > 0) {
        log_info("deliver", "stream %s closed with %ld change(s) in flight, not waited for: "
                 "they complete unreported", s->name, s->inflight);
        s->next = d->abandoned;
        d->abandoned = s;
        s = NULL; /* the hub's now: the last of them frees it */
    }
    pthread_mutex_unlock(&d->mu);
    if (s) stream_release(s);
}

int deliver_hub_wait_abandoned(struct deliver_hub *d, int timeout_ms) {
    if (!d) return DELIVER_OK;
    int64_t end = now_ns() + (int64_t)timeout_ms * NS_PER_MS;
    pthread_mutex_lock(&d->mu);
    int rc = DELIVER_OK;
    while (d->abandoned) {
        if (d->stop || now_ns() >= end) {
            rc = d->stop ? DELIVER_ESTOPPED : DELIVER_ETIMEOUT;
            break;
        }
        struct timespec ts;
        deadline_ts(&ts, end);
        pthread_cond_timedwait(&d->done_cv, &d->mu, &ts);
    }
    pthread_mutex_unlock(&d->mu);
    return rc;
}

long deliver_hold_sends(struct deliver *s, bool hold) {
    if (!s) return 0;
    struct deliver_hub *d = s->d;
    pthread_mutex_lock(&d->mu);
    s->held = hold;
    long queued = s->outstanding - s->inflight;
    if (!hold) pthread_cond_broadcast(&d->work_cv); /* its queues are eligible again */
    pthread_mutex_unlock(&d->mu);
    return queued;
}

void deliver_halt(struct deliver *s) {
    if (!s) return;
    struct deliver_hub *d = s->d;
    pthread_mutex_lock(&d->mu);
    bool was = s->halted;
    long queued = s->outstanding - s->inflight;
    s->halted = true; /* its batch in flight, if any, completes; nothing else is sent */
    queue_drop_stream(d, s);
    pthread_cond_broadcast(&d->work_cv);
    pthread_cond_broadcast(&d->space_cv);
    pthread_cond_broadcast(&d->done_cv);
    pthread_mutex_unlock(&d->mu);
    if (!was)
        log_warn("deliver", "delivery of %s halted: %ld queued change(s) will not be sent, no "
                 "checkpoint is saved", s->name, queued);
}
