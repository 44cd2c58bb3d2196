/* deliver_int.h: what the delivery files share (private to src/deliver/):
 * the structures behind struct deliver, small inline helpers and the
 * functions one file calls in another. deliver.h is the public side.
 *
 *
 * One mutex (d->mu) guards all queue state; the engine round trip, building
 * the bulk body and writing dead letters happen outside it. Three condition
 * variables: work (helpers wait for an eligible queue), space (producers wait
 * below the high-water mark), done (drain, txn waits and the checkpointer).
 *
 * An item's life:
 *
 *   deliver_submit ──► queued in indexq (main, or aux while draining)
 *        │                 │  coalesce: a newer INDEX/DELETE of the same doc
 *        │                 │  replaces a queued INDEX/DELETE in place (the old
 *        │                 │  one is acknowledged: the new one carries it)
 *        │                 ▼
 *        │            in flight (take_batch) ──► 2xx / 409 stale / 404 missing ──► ack
 *        │                 │                ──► 4xx permanent ──► dead letter ──► ack
 *        │                 │                ──► transient ──► front of queue,
 *        │                 │                    backoff, fuse melts (finish_batch)
 *        │                 ▼
 *        └── purged (purge_locked, only with a blown fuse at the high-water
 *            mark and a purge strategy) ──► dead letter ──► ack
 *
 *   ack: txn->pending--; the txn FIFO's front advances while its transactions
 *   are closed and fully acknowledged (advance_low_water); the checkpointer
 *   thread saves the newest such position.
 *
 * Fuse states (fuse_melt, eligible):  ok ──N melts within interval──► blown
 *   ──reset interval passes──► ok (the next batch is the probe). */
#ifndef SS_DELIVER_INT_H
#define SS_DELIVER_INT_H
#include "deliver/deliver.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "deliver/hist.h"
#include "search/search.h"

#define NS_PER_MS 1000000LL

struct txn {
    uint64_t seq;
    char *pos;     /* NULL while open */
    int64_t opened_ns; /* its first change (checkpoint age) */
    long pending;  /* changes not yet acknowledged */
    bool closed;
    struct txn *next;
};

struct indexq;

struct item {
    struct item *prev, *next; /* in its queue (main or aux) */
    struct item *hnext;       /* doc map chain */
    struct indexq *q;
    struct txn *txn;
    /* all inside this allocation; index is the name the request uses (the
     * queue's is the target) */
    char *index, *doc_id, *routing, *body, *script;
    size_t body_len, size;
    uint64_t version;
    uint64_t hash;
    int64_t enq_ns;
    int attempts;
    int status;       /* last item status (dead letters) */
    enum change_op op;
    bool require_alias;
    bool in_aux;
    bool in_map;
    bool solo; /* its batch was refused as a whole (400): send it alone */
};

struct fuse {
    char *index;
    int64_t *melts; /* ring of the last fuse_failures melt times */
    int nmelts, head;
    bool blown;
    int64_t heal_ns;
    uint64_t blows;
    struct fuse *next;
};

struct list {
    struct item *head, *tail;
    long n;
};

struct indexq {
    char *index; /* the target: the physical index its changes land in */
    struct fuse *fuse;
    struct list main, aux;
    size_t main_bytes;
    struct item **map; /* doc id → newest queued item of that doc */
    size_t map_cap, map_n;
    bool inflight;
    int backoff_ms;
    int64_t not_before_ns;
    struct indexq *next; /* in its partition */
};

/* A shard of the queues ([delivery] workers of them): a document's changes
 * always land in partition hash(index, id) mod workers, in that index's
 * indexq. Not a thread: the sending threads are struct helper. */
struct partition {
    struct indexq *qs;
};

/* A sending thread ([delivery] helpers of them), with its own connection. */
struct helper {
    struct deliver *d;
    int id;
    pthread_t th;
    struct search_conn *conn;
    sbuf body;
    struct search_resp resp;
    struct bulk_result *res;
    int res_cap;
    unsigned rnd;
    struct indexq **qs; /* the queues the current batch was taken from */
    int nqs, qs_cap;
    int64_t sending_ns; /* when its request in flight was sent, 0 = none (engine.c) */
};

struct deliver {
    struct deliver_opts o;
    char *version_field;
    struct search_client *client;
    struct deliver_transport tr;
    pthread_mutex_t mu;
    /* dead-letter log lines: at most DL_LOG_BURST per DL_LOG_WINDOW_NS */
    pthread_mutex_t dl_log_mu;
    int64_t dl_log_window;
    int dl_log_n;
    pthread_cond_t work_cv, space_cv, done_cv;
    struct partition *partitions;
    struct helper *helpers;
    pthread_t ckpt_th;
    bool ckpt_started;
    struct fuse *fuses;
    bool stop;
    bool halted; /* deliver_halt: stop is set too, and no checkpoint is saved */
    bool draining;
    int64_t txn_flush_ns; /* flush_on_txn_end: changes queued before this go at once */
    long total;       /* queued + in flight (counts toward the high-water mark) */
    long main_queued; /* queued in main queues (drain waits for 0) */
    long inflight;    /* items in flight */
    long inflight_batches;
    int scan_cursor;
    /* transactions */
    struct txn *txn_head, *txn_tail; /* FIFO; tail may be open */
    uint64_t txn_next_seq;
    uint64_t lw_seq;
    char *lw_pos;
    bool ckpt_dirty;
    bool ckpt_quiet_dirty; /* moved only by quiet transactions since the last save */
    int64_t ckpt_saved_ns; /* when the last save (or the start) was */
    bool ckpt_busy; /* a save is running (outside the lock) */
    uint64_t ckpt_saved_seq;
    int64_t unsaved_since_ns; /* the oldest transaction acknowledged past the saved
                               * checkpoint was opened (0: none) */
    int64_t unsaved_next_ns;  /* ... the first acknowledged while a save ran (what is
                               * left unsaved once it lands) */
    /* statistics */
    int64_t win_start_ns;
    struct wcounter docs_ok, stale, missing, retries, failures, dead_letters, purged,
        coalesced, batches, requests_failed, blocked, drains, drain_timeouts, drain_failures,
        fuse_blows, submitted;
    uint64_t checkpoints_saved, checkpoint_failures;
    uint64_t ckpt_fail_streak; /* failed saves in a row (an outage is said once a minute) */
    long blocked_now;
    int64_t blocked_ns; /* time submits waited at the high-water mark, ended waits */
    int64_t blocked_since_sum; /* the sum of the waits under way's start times */
    struct hist lat_doc_us, lat_batch_us, batch_size, drain_us;
    /* the engine's state (engine.c) */
    bool eng_down, eng_probing, eng_stalled, eng_rejecting;
    bool eng_redetect; /* the engine answers again after being unreachable: ask its
                          version again before the next batch (it may have been upgraded) */
    int64_t eng_down_ns, eng_probe_ns, eng_stall_ns, eng_stall_over_ns, eng_rej_ns,
        eng_rej_last_ns;
    uint64_t eng_down_fails, eng_rej_n;
};

static inline int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline void deadline_ts(struct timespec *ts, int64_t at_ns) {
    /* condition variables use CLOCK_MONOTONIC (pthread_condattr_setclock) */
    ts->tv_sec = (time_t)(at_ns / 1000000000LL);
    ts->tv_nsec = (long)(at_ns % 1000000000LL);
}

static inline uint64_t fnv1a(const char *s, size_t n, uint64_t h) {
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}
#define FNV_BASIS 14695981039346656037ull

/* ---------- lists (queue.c) ---------- */

static inline void list_push_back(struct list *l, struct item *it) {
    it->next = NULL;
    it->prev = l->tail;
    if (l->tail)
        l->tail->next = it;
    else
        l->head = it;
    l->tail = it;
    l->n++;
}

static inline void list_push_front(struct list *l, struct item *it) {
    it->prev = NULL;
    it->next = l->head;
    if (l->head)
        l->head->prev = it;
    else
        l->tail = it;
    l->head = it;
    l->n++;
}

static inline void list_remove(struct list *l, struct item *it) {
    if (it->prev)
        it->prev->next = it->next;
    else
        l->head = it->next;
    if (it->next)
        it->next->prev = it->prev;
    else
        l->tail = it->prev;
    it->prev = it->next = NULL;
    l->n--;
}

/* new takes old's place in l */
static inline void list_replace(struct list *l, struct item *old, struct item *nw) {
    nw->prev = old->prev;
    nw->next = old->next;
    if (old->prev)
        old->prev->next = nw;
    else
        l->head = nw;
    if (old->next)
        old->next->prev = nw;
    else
        l->tail = nw;
    old->prev = old->next = NULL;
}


/* ---------- shared between the files ---------- */

/* queue.c: the per-queue document map */
struct item *map_get(struct indexq *q, const char *id, const char *routing, uint64_t h);
void map_put(struct indexq *q, struct item *it);
void map_del(struct indexq *q, struct item *it);
bool eligible(struct deliver *d, struct indexq *q, int64_t now, int64_t *wake);
/* The same for a queue a leaving batch goes on into (take_batch): it does
 * not wait out linger_ms, the request is leaving anyway. */
bool eligible_to_join(struct deliver *d, struct indexq *q, int64_t now, int64_t *wake);
/* Changes of one index (its fuse) queued in every partition, in queues with
 * no batch in flight: what one batch could take. Under d->mu. */
long index_idle_queued(struct deliver *d, const struct fuse *f);

/* txn.c: transactions, the low-water mark, the checkpointer */
struct txn *open_txn(struct deliver *d);
void advance_low_water(struct deliver *d);
void ack_item(struct deliver *d, struct item *it);
void *ckpt_main(void *arg);

/* helper.c: fuses, purges, the helper threads */
struct fuse *fuse_get(struct deliver *d, const char *index);
bool fuse_check(struct deliver *d, struct fuse *f, int64_t now, int64_t *wake);
void purge_collect(struct deliver *d, struct list *out);
void purge_flush(struct deliver *d, struct list *pl);
void *helper_main(void *arg);
int default_bulk(void *ud, int helper, const char *body, size_t len, struct search_resp *resp);

/* engine.c: the engine's state, said once at each change (under d->mu) */
void engine_failed(struct deliver *d, const char *why, int64_t now); /* no answer */
void engine_answered(struct deliver *d, int64_t now);                /* an HTTP answer */
void engine_rejected(struct deliver *d, long n, int64_t now);        /* n rejections (429) */
void engine_watch(struct deliver *d, int64_t now); /* stalls, rejections' end: each second */
void engine_close(struct deliver *d); /* deliver_free: a state still open is said */
/* true: this helper probes now (unlocked), then calls engine_probed */
bool engine_probe_due(struct deliver *d, int64_t now, int64_t *wake);
void engine_probed(struct deliver *d, bool answered, const char *why, int64_t now);
int default_probe(void *ud, int helper, struct search_resp *resp);

/* stats.c */
void rotate_stats(struct deliver *d, int64_t now);

#endif
