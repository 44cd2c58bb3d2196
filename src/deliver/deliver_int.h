/* deliver_int.h: what the delivery files share (private to src/deliver/):
 * the structures behind struct deliver_hub (the process's delivery) and
 * struct deliver (a producer's stream), small inline helpers and the
 * functions one file calls in another. deliver.h is the public side.
 *
 * One mutex (the hub's d->mu) guards all queue and stream state; the engine round trip, building
 * the bulk body and writing dead letters happen outside it. Three condition
 * variables: work (helpers wait for an eligible queue), space (producers wait
 * below the high-water mark), done (drain, txn waits and the checkpointer).
 *
 * An item's life:
 *
 *   deliver_submit ──► queued in its target's indexq (every stream's)
 *        │                 │  coalesce: a newer INDEX/DELETE of the same doc
 *        │                 │  from the same stream replaces a queued
 *        │                 │  INDEX/DELETE in place (the old one is
 *        │                 │  acknowledged: the new one carries it)
 *        │                 ▼
 *        │            in flight (take_batch) ──► 2xx / 409 stale / 404 missing ──► ack
 *        │                 │                ──► 4xx permanent ──► dead letter ──► ack
 *        │                 │                ──► transient ──► front of queue,
 *        │                 │                    backoff, fuse melts (finish_batch)
 *        │                 ▼
 *        └── purged (purge_locked, only with a blown fuse at the high-water
 *            mark and a purge strategy) ──► dead letter ──► ack
 *
 *   ack: txn->pending--; the stream's txn FIFO's front advances while its
 *   transactions are closed and fully acknowledged (advance_low_water); the
 *   hub's checkpointer thread saves each stream's newest such position.
 *
 * Fuse states (fuse_melt, eligible):  ok ──N melts within interval──► blown
 *   ──reset interval passes──► ok (the next batch is the probe). */
#ifndef SS_DELIVER_INT_H
#define SS_DELIVER_INT_H
#include "deliver/deliver.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "deliver/hist.h"
#include "invariant.h"
#include "search/search.h"

#define NS_PER_MS 1000000LL

struct txn {
    struct deliver *s; /* the stream it belongs to */
    uint64_t seq;
    char *pos;     /* NULL while open */
    int64_t opened_ns; /* its first change (checkpoint age) */
    long pending;  /* changes not yet acknowledged */
    bool closed;
    struct txn *next;
};

struct indexq;

enum item_result { RES_OK = 0, RES_STALE, RES_MISSING, RES_DEAD };

struct item {
    struct item *prev, *next; /* in its queue */
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
    uint64_t sseq;    /* its stream's submit counter (drain marks) */
    int attempts;
    int status;       /* last item status (dead letters) */
    uint8_t result;   /* enum item_result: what the engine said last (statistics) */
    enum change_op op;
    bool require_alias;
    bool in_map;
    bool solo; /* its batch was refused as a whole (400): send it alone */
    bool quiet; /* in flight for a stream closed by deliver_abandon: nothing of it
                 * is reported to the producer (set when the engine answered) */
};

/* The refresh-aware hold's knowledge of a target (refresh.c), under d->mu */
#define REFRESH_SKIPS 4

struct refresh_state {
    int64_t period_ns;  /* its refresh_interval: 0 not read yet, < 0 none (no hold) */
    int64_t read_ns;    /* when it was read, 0 = due */
    bool reading;       /* a helper is reading it */
    bool live;          /* a stream that holds sent to it: worth reading */
    bool lingers;       /* a stream spacing its requests by the interval sent to it
                         * (linger.c): worth reading too, never probed */
    int linger_pct;     /* ... the largest percent of the interval of those streams */
    int flush_ms;       /* the longest flush_interval_ms of those streams */
    int64_t end_ns;     /* the end of the last refresh seen (a wait_for answer), 0 = none */
    int64_t took_ns;    /* how long a refresh takes (average) */
    int64_t near_ns;    /* the last part leaves this long before a predicted refresh */
    int64_t rtt_ns;     /* a plain request's round trip (average) */
    int rtt_samples;    /* ... of this many requests (counted up to 16) */
    int64_t far_ns;     /* held requests leave at least this long before their refresh:
                         * learnt from those answered after it began */
    int64_t last_send_ns;
    int64_t probe_sent_ns; /* a probe is in flight since, 0 = none */
    int64_t probe_aim_ns;  /* the refresh start it aims at (0: unknown) */
    int64_t probe_not_before_ns; /* after a failed probe */
    int64_t retake_not_before_ns; /* the next probe that measures a refresh's time again
                                   * while that time alone keeps pairing off */
    /* every other refresh (refresh_pairing_ms) */
    bool pairs;          /* a stream that may pair sent to it */
    int pair_ms;         /* the largest refresh_pairing_ms of those streams */
    int pair_changes;    /* ... and refresh_pairing_changes */
    int64_t written_ns;  /* the predicted start of the refresh the last request went into */
    int64_t rate_t0_ns;  /* the stream's rate: changes sent since then */
    long rate_n;
    long cycle_changes;  /* changes a refresh cycle, measured over the last few cycles
                          * (-1: not yet since the stream began or came back) */
    int64_t wait_aim_ns; /* the refresh the last request answered after it aimed at */
    int64_t skips[REFRESH_SKIPS]; /* refreshes left without writes on purpose (their
                                   * predicted starts), the last few */
    int nskips;
    int pair_said;        /* what the log last said of pairing (enum in refresh.c) */
    int64_t pair_said_ns; /* ... and when */
};

struct fuse {
    char *index;
    int64_t *melts; /* ring of the last fuse_failures melt times */
    int nmelts, head;
    bool blown;
    int64_t heal_ns;
    uint64_t blows;
    int reqs; /* requests of this target in flight (group commit: eligible_ex) */
    struct refresh_state rf;
    struct fuse *next;
};

struct list {
    struct item *head, *tail;
    long n;
};

struct indexq {
    char *index; /* the target: the physical index its changes land in */
    struct fuse *fuse;
    struct list main;
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
    struct deliver_hub *d;
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
    int64_t refresh_aim_ns; /* the refresh that request aims at, 0 = none (refresh.c) */
    bool refresh_wait;      /* ... answered after that refresh (transport bulk_wait) */
    int64_t beat_ns;    /* it last went round its loop (health.c), 0 = not yet */
    bool idle;          /* it waits for work (health.c: well) */
};

/* The process's one delivery (the hub): queues, helpers, fuses, the
 * high-water mark, the engine's state and the statistics every stream adds
 * to. Streams (struct deliver, below) are what producers hold. */
struct deliver_hub {
    struct deliver_opts o; /* the hub's fields: workers, helpers, batch sizes,
                            * high-water mark, fuses, retries, purges */
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
    int64_t ckpt_beat_ns; /* the checkpoint thread last went round (health.c) */
    bool ckpt_idle;       /* ... and waits between saves (well) */
    struct fuse *fuses;
    bool stop;
    int draining;     /* streams draining now: every queue sends what it has */
    long total;       /* queued + in flight (counts toward the high-water mark) */
    long bulk_total;  /* ... of them, the bulk streams' (their half of it) */
    long main_queued; /* queued */
    long inflight;    /* items in flight */
    long bulk_inflight; /* ... of them, the bulk streams' */
    long inflight_batches;
    int scan_cursor;
    bool prefer_bulk; /* pick_queue: the class of stream the next batch is taken for */
    struct deliver *streams; /* open streams, newest first */
    int nstreams;
    /* streams closed by deliver_abandon with batches still in flight: the
     * last of them frees it (hub_reap_abandoned) */
    struct deliver *abandoned;
    /* statistics */
    int64_t win_start_ns;
    struct wcounter docs_ok, stale, missing, retries, failures, dead_letters, purged,
        coalesced, batches, requests_failed, blocked, drains, drain_timeouts, drain_failures,
        fuse_blows, submitted;
    uint64_t checkpoints_saved, checkpoint_failures;
    long blocked_now;
    long blocked_bulk_now; /* of them, bulk streams' producers */
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

/* A producer's stream (stream.c): its transactions and checkpoint, its
 * callbacks, its batching knobs and its share of the statistics. Guarded by
 * its hub's mutex. */
struct deliver {
    struct deliver_hub *d;
    bool owns_hub;  /* deliver_new: a private hub, freed with the stream */
    char *name;
    enum deliver_class cls;
    /* the stream's fields of struct deliver_opts */
    deliver_checkpoint_fn checkpoint;
    void *checkpoint_ud;
    deliver_dead_letter_fn dead_letter;
    void *dead_letter_ud;
    deliver_written_fn written;
    void *written_ud;
    deliver_missing_fn missing;
    void *missing_ud;
    int batch_min, flush_interval_ms, linger_ms;
    int linger_refresh_percent; /* its live requests spaced by the refresh (linger.c) */
    int linger_refresh_batch;   /* ... unless this many of the target wait */
    bool batch_to_refresh; /* its live changes wait for the next refresh (refresh.c) */
    int refresh_pairing_ms, refresh_pairing_changes; /* ... or every other one (refresh.c) */
    bool flush_on_txn_end;
    bool ordered_versions; /* I5 asserted at submit */
    int checkpoint_interval_ms, idle_checkpoint_interval_ms;
    int drain_timeout_ms;
    int64_t txn_flush_ns; /* flush_on_txn_end: changes queued before this go at once */
    uint64_t waited_seq;  /* deliver_wait_txn: changes of its transactions up to this one
                           * go at once (no linger holds them) */
    bool halted;  /* deliver_halt: nothing of it is sent any more, nothing saved */
    bool held;    /* deliver_hold_sends: its queued changes wait, none is sent */
    atomic_bool waiting_space; /* its producer waits at the high-water mark (read
                                * without the lock by the producer's health) */
    bool closing; /* deliver_free of a stream on a shared hub */
    bool abandoned; /* deliver_abandon: closed, its callbacks are no longer called */
    int reporting;  /* its items whose callbacks a helper (or a purge) is calling now:
                     * deliver_free and deliver_abandon wait for them */
    /* its changes */
    long outstanding;      /* queued + in flight */
    long inflight;
    uint64_t next_sseq;    /* the next change's submit counter */
    uint64_t drain_mark;   /* a drain waits for changes with sseq <= this */
    long drain_left;       /* ... that many are still outstanding */
    bool draining;
    /* transactions */
    struct txn *txn_head, *txn_tail; /* FIFO; tail may be open */
    uint64_t txn_next_seq;
    uint64_t lw_seq;
    char *lw_pos;
    bool ckpt_dirty;
    bool ckpt_quiet_dirty; /* moved only by quiet transactions since the last save */
    int64_t ckpt_saved_ns; /* when the last save (or the start) was */
    int64_t ckpt_next_ns;  /* the checkpointer's next save of it */
    bool ckpt_busy; /* a save is running (outside the lock) */
    uint64_t ckpt_saved_seq;
    int64_t unsaved_since_ns; /* the oldest transaction acknowledged past the saved
                               * checkpoint was opened (0: none) */
    int64_t unsaved_next_ns;  /* ... the first acknowledged while a save ran (what is
                               * left unsaved once it lands) */
    uint64_t checkpoints_saved, checkpoint_failures;
    uint64_t ckpt_fail_streak; /* failed saves in a row (an outage is said once a minute) */
    /* its statistics (totals) */
    uint64_t n_submitted, n_ok, n_stale, n_missing, n_dead, n_purged, n_coalesced;
    uint64_t n_blocked;
    int64_t blocked_ns;
    struct deliver *next; /* in the hub's list */
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

/* ---------- pressure (queue.c, linger.c, refresh.c) ---------- */

/* Under d->mu: for a queue whose head is hs's, the hub is at its high-water
 * mark, or hs is a bulk stream, a bulk producer waits for room (bulk streams
 * wait at their class's half of the mark, below the hub's) and no bulk
 * change is in flight, whose answer would free room: every hold on a
 * partial batch (group commit, linger, refresh phase, the wait for
 * batch_min or a transaction's end) gives way, since only sending frees
 * room. Holding one there would leave the waiting producer to the
 * flush_interval_ms timer: a build page larger than the bulk half, spread
 * over the partitions, fills no queue to batch_min and is not closed yet. With bulk changes in
 * flight their answers make the room, and the pages keep their full
 * requests; live queues keep their holds while only a build waits. */
static inline bool hub_pressed(const struct deliver_hub *d, const struct deliver *hs) {
    return d->total >= d->o.high_watermark ||
           (hs->cls == DELIVER_BULK && d->blocked_bulk_now > 0 && d->bulk_inflight == 0);
}

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
bool eligible(struct deliver_hub *d, struct indexq *q, int64_t now, int64_t *wake);
/* The same for a queue a leaving batch goes on into (take_batch): it does
 * not wait out linger_ms, the request is leaving anyway. */
bool eligible_to_join(struct deliver_hub *d, struct indexq *q, int64_t now, int64_t *wake);
/* Changes of one index (its fuse) queued in every partition, in queues with
 * no batch in flight: what one batch could take. Under d->mu. */
long index_idle_queued(struct deliver_hub *d, const struct fuse *f);
/* Take every queued change of stream s out of the queues and free it (its
 * transactions stay unacknowledged): deliver_halt, and closing a stream. */
void queue_drop_stream(struct deliver_hub *d, struct deliver *s);
/* An item already out of its queue (and map) is dropped unsent: the hub's
 * and its stream's counts, then freed (its transaction stays
 * unacknowledged). Under d->mu. */
void item_drop(struct deliver_hub *d, struct item *it);

/* txn.c: transactions, the low-water mark, the checkpointer */
struct txn *open_txn(struct deliver *s);
void advance_low_water(struct deliver *s);
/* the change is acknowledged (delivered, stale, dead-lettered, purged or
 * replaced by a newer one): its transaction's pending count, the stream's
 * drain; frees it. The caller advances the stream's low-water mark. */
void ack_item(struct deliver_hub *d, struct item *it);
void *ckpt_main(void *arg);
/* Called with d->mu held; drops and retakes it. final: the drain's save. */
void save_checkpoint_locked(struct deliver *s, bool final);

/* stream.c: the hub's list of streams */
void hub_stream_add(struct deliver_hub *d, struct deliver *s);
void hub_stream_remove(struct deliver_hub *d, struct deliver *s);
/* under d->mu: free the abandoned streams nothing is in flight for any more */
void hub_reap_abandoned(struct deliver_hub *d);
/* the hub alone (deliver_hub_new / free): stream.c opens streams on it */
struct deliver_hub *hub_new(const struct deliver_opts *o, struct search_client *client,
                            char *err, size_t errlen);
void hub_free(struct deliver_hub *d);
/* a stream's fields from o */
void stream_init(struct deliver *s, struct deliver_hub *d, const struct deliver_opts *o,
                 const char *name, enum deliver_class cls);

/* fuse.c */
struct fuse *fuse_get(struct deliver_hub *d, const char *index);
bool fuse_check(struct deliver_hub *d, struct fuse *f, int64_t now, int64_t *wake);
void fuse_melt(struct deliver_hub *d, struct fuse *f, int64_t now);
/* purge.c */
void purge_collect(struct deliver_hub *d, struct list *out);
void purge_flush(struct deliver_hub *d, struct list *pl);
/* helper.c: the helper threads; an item's dead letter written (status: the
 * engine's, 0 when none) */
void *helper_main(void *arg);
int write_dead_letter(struct deliver_hub *d, struct item *it, const char *error,
                      size_t error_len, int status);
int default_bulk(void *ud, int helper, const char *body, size_t len, struct search_resp *resp);

/* engine.c: the engine's state, said once at each change (under d->mu) */
void engine_failed(struct deliver_hub *d, const char *why, int64_t now); /* no answer */
void engine_answered(struct deliver_hub *d, int64_t now);                /* an HTTP answer */
void engine_rejected(struct deliver_hub *d, long n, int64_t now);        /* n rejections (429) */
void engine_watch(struct deliver_hub *d, int64_t now); /* stalls, rejections' end: each second */
void engine_close(struct deliver_hub *d); /* hub_free: a state still open is said */
/* true: this helper probes now (unlocked), then calls engine_probed */
bool engine_probe_due(struct deliver_hub *d, int64_t now, int64_t *wake);
void engine_probed(struct deliver_hub *d, bool answered, const char *why, int64_t now);
int default_probe(void *ud, int helper, struct search_resp *resp);

/* refresh.c: the refresh-aware hold (all under d->mu but the two defaults) */
/* a change of stream s was queued for f: read f's refresh interval */
void refresh_note_live(struct fuse *f, const struct deliver *s);
/* q's head waits for the point before the next refresh (wake: when it goes) */
bool refresh_holds(struct deliver_hub *d, const struct indexq *q, const struct deliver *hs,
                   const struct item *head, int64_t now, int64_t *wake);
/* a request of f's taken at now: the refresh start it aims at (0: none known) */
int64_t refresh_sent(struct fuse *f, long changes, bool can_wait, int64_t now, bool *wait);
bool refresh_pairs(const struct deliver_hub *d, const struct fuse *f, int64_t now);
void refresh_answered(struct fuse *f, bool ok, int64_t sent, int64_t aim, bool waited,
                      int64_t now);
/* a target to probe now (marked in flight; wake: when the next is due), or NULL */
struct fuse *refresh_probe_due(struct deliver_hub *d, int64_t now, int64_t *wake);
void refresh_probed(struct fuse *f, bool ok, int64_t now);
/* a target whose refresh interval is to be read now (marked reading), or NULL */
struct fuse *refresh_read_due(struct deliver_hub *d, int64_t now);
void refresh_read_done(struct fuse *f, long ms, int64_t now);
int default_refresh_probe(void *ud, int helper, const char *target);
int default_bulk_wait(void *ud, int helper, const char *body, size_t len,
                      struct search_resp *resp);
/* the document id of the probe (its version 1 never wins over a document's) */
#define REFRESH_PROBE_ID "searchsync:refresh-probe"
int default_refresh_interval(void *ud, int helper, const char *target, long *ms);

/* linger.c: requests spaced by the refresh ([delivery] linger_refresh_percent),
 * under d->mu */
/* stream s spaces its requests by its targets' refresh interval */
bool linger_refresh_on(const struct deliver *s);
/* the spacing of f's requests (0: none: the interval not read, or none) */
int64_t linger_refresh_ns(const struct fuse *f);
/* q's head waits for the spacing after the target's last request (wake:
 * when it goes) */
bool linger_refresh_holds(struct deliver_hub *d, const struct indexq *q, const struct deliver *hs,
                          const struct item *head, int64_t now, int64_t *wake);

/* stats.c */
void rotate_stats(struct deliver_hub *d, int64_t now);

#endif
