/* deliver: queues, batching, backpressure, fuses, retries, dead letters,
 * checkpoint low-water mark and drain between the document builder and the
 * search engine (batching as Yokozuna does; a write lands only if it is
 * fresher). docs/delivery.md is the long version.
 *
 *   producer ──deliver_submit()──► partition hash(target,id) mod W ──► indexq (one
 *   (its stream)       blocks at       per-target FIFO, coalesced       per target
 *                     high-water mark   per document                   in each partition,
 *                     (bulk: half)                                     every stream's)
 *        │                                                              │
 *        └─deliver_txn_end(pos)──► the stream's  ◄──ack── helper threads ◄──┘ one batch in
 *                                   txn FIFO
 *                                   │               (bulk, external      flight per
 *                                   ▼                versions, retry)    indexq
 *                          checkpoint callback(low-water position)
 *
 * Ordering: one document always lands in the same indexq, and an indexq has
 * at most one batch in flight; failed items go back to the front of their
 * queue. So one document's changes reach the engine in submit order, and
 * external versions make any replay or retry harmless. The queue is chosen
 * by struct change.target, not by the name a change is sent to: a producer
 * names one target for every index its writes of one document can land in
 * (sync/pipeline/targets.c: an index config's alias for the alias and each of its
 * versions), so those writes are one FIFO whatever the alias points at when
 * they leave.
 *
 * Thread-safety: every public function may be called from any thread. */
#ifndef SS_DELIVER_H
#define SS_DELIVER_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "sbuf.h"

struct search_client;
struct search_resp;

/* ---------- versions ----------
 * 63 bits (the engines' external versions are signed 64-bit longs):
 *   bit 63      0
 *   bits 53..62 epoch           (10 bits, 0..1023)
 *   bits 32..52 binlog file no. (21 bits, 0..2097151; mysql-bin.000042 → 42)
 *   bits  0..31 position in the file (32 bits)
 * A later binlog event always has a larger version within one epoch; a new
 * epoch outranks everything written before it. */
#define VERSION_EPOCH_BITS 10
#define VERSION_FILE_BITS 21
#define VERSION_POS_BITS 32
/* 0 if a part is out of range (0 is never a valid version) */
uint64_t version_make(uint32_t epoch, uint32_t file_no, uint64_t pos);
/* [source] versions = gtid: epoch (10 bits) | 2 * ordinal + 1 + after (53
 * bits), ordinal the GTID ordinal of the transaction (bl_gtid_ordinal);
 * after: just past it and before the next (a TTL delete between two
 * transactions). 0 when the ordinal does not fit. */
uint64_t version_make_gtid(uint32_t epoch, uint64_t ordinal, bool after);
uint32_t version_epoch(uint64_t v);
uint32_t version_file(uint64_t v);
uint32_t version_pos(uint64_t v);
/* "binlog 000042:91234" (epoch > 0: " epoch 2" after it): where a change
 * came from, for log lines; buf of 64 bytes is enough */
const char *version_describe(uint64_t v, char *buf, size_t len);

/* ---------- changes ---------- */

enum change_op {
    CHANGE_INDEX = 0,  /* body = the whole document (JSON object) */
    CHANGE_DELETE = 1, /* no body */
    CHANGE_UPDATE = 2, /* body = partial document, merged if fresher */
    CHANGE_SCRIPT = 3, /* script = painless source, body = its params object */
};
const char *change_op_name(enum change_op op);
int change_op_parse(const char *s); /* -1 if unknown */

struct change {
    const char *index;   /* index (or alias) name: what the request names */
    const char *target;  /* the queue, NULL = index: changes with one target
                          * share one queue (one FIFO, one batch in flight,
                          * one fuse), whatever name they are sent to, so
                          * writes of one document through an alias and to
                          * the indices it points at, or will, land in order */
    const char *doc_id;
    const char *routing; /* NULL = none */
    uint64_t version;    /* version_make(); 1 .. 2^63-1 */
    enum change_op op;
    const char *body;    /* JSON text, copied by deliver_submit */
    size_t body_len;
    const char *script;  /* CHANGE_SCRIPT only */
    bool require_alias;  /* index must be an alias: a write to a missing alias
                          * fails (404) instead of auto-creating a concrete index */
};

/* A change that could not be delivered for good (engine said 4xx, or it was
 * purged at the high-water mark). Written to the dead-letter table. */
struct dead_letter {
    const char *index, *doc_id, *routing;
    uint64_t version;
    enum change_op op;
    const char *body;
    size_t body_len;
    const char *script;
    const char *error;   /* the engine's error object, or why it was purged */
    int status;          /* item HTTP status, 0 for purges */
    int attempts;
    bool require_alias;  /* the change was written to an alias (struct change) */
};

/* Return 0 once stored durably; 1 when the change needs nothing (its index
 * was deleted on purpose, say): acknowledged, without a dead-letter line in
 * the log; -1 to have delivery try again later (the change stays
 * unacknowledged and keeps the checkpoint behind it). */
typedef int (*deliver_dead_letter_fn)(void *ud, const struct dead_letter *dl);
/* The engine accepted a full-state write (INDEX or DELETE) of a document:
 * dead letters of that document with an older version are superseded (a
 * replay could only lose, or resurrect a deleted document once the engine
 * has forgotten the tombstone). Called from helper threads, outside locks. */
typedef void (*deliver_written_fn)(void *ud, const char *index, const char *doc_id,
                                   uint64_t version);
/* A partial update (UPDATE or SCRIPT) found no document to update (404). The
 * item is acknowledged; the producer may rebuild the document whole. Called
 * from helper threads, outside locks. */
typedef void (*deliver_missing_fn)(void *ud, const char *index, const char *doc_id,
                                   const char *routing, uint64_t version);
/* Save the low-water position atomically. 0 saved, -1 try again later. */
typedef int (*deliver_checkpoint_fn)(void *ud, const char *position, uint64_t txn_seq);

/* The engine behind delivery: by default the search client; tests pass a
 * fake. bulk() sends one NDJSON body from helper thread `helper`, fills
 * resp->status and resp->body, returns SEARCH_OK or SEARCH_ETRANSPORT. */
struct deliver_transport {
    void *ud;
    int (*bulk)(void *ud, int helper, const char *body, size_t len, struct search_resp *resp);
    /* optional: any request that the engine answers (GET /), sent while it
     * is unreachable; SEARCH_OK when an answer came back */
    int (*probe)(void *ud, int helper, struct search_resp *resp);
    /* optional, both or neither (without them live changes are not held for
     * the refresh, [delivery] batch_to_refresh): wait until the engine's
     * next refresh of a target has ended (0; -1 when the answer tells no
     * refresh's end), and the shortest refresh interval of the indices a
     * target names in ms (*ms 0: none, refresh_interval -1; returns 0 when
     * read, -1 when it could not be) */
    int (*refresh_probe)(void *ud, int helper, const char *target);
    int (*refresh_interval)(void *ud, int helper, const char *target, long *ms);
    /* optional: bulk, answered only after the refresh that took its writes
     * in (refresh=wait_for); a request aimed at a refresh of a target that
     * writes into every other refresh (refresh_pairing_ms) carries that
     * refresh's end instead of a probe. Without it a probe is sent */
    int (*bulk_wait)(void *ud, int helper, const char *body, size_t len,
                     struct search_resp *resp);
};

enum purge_strategy { PURGE_OFF = 0, PURGE_ONE, PURGE_INDEX, PURGE_ALL };
int purge_strategy_parse(const char *s); /* -1 if unknown */

struct deliver_opts {
    int workers, helpers;
    int batch_min, batch_max, batch_max_bytes, flush_interval_ms;
    int linger_ms; /* a queue waits this long after its first change unless batch_max wait */
    int linger_refresh_percent; /* with linger_ms 0, a live stream's request to a target
                                 * leaves no sooner than this percent of the target's
                                 * refresh_interval after its previous one (linger.c) */
    int linger_refresh_batch; /* ... unless this many changes of the target wait (0 or
                               * above batch_max: batch_max) */
    bool batch_to_refresh; /* a live stream's changes wait until just before the engine's
                            * next refresh of their index (src/deliver/refresh.c) */
    int refresh_pairing_ms; /* a slow live stream (linger_refresh_percent or
                             * batch_to_refresh) writes into every other refresh of a
                             * target whose refresh after next ends within this (refresh.c) */
    int refresh_pairing_changes; /* ... while its refresh periods carry fewer changes */
    bool group_commit; /* hub: while a request of a target is in flight, its next
                        * changes wait for it and leave together when it returns
                        * (unless batch_max wait or flush_interval_ms passed) */
    int high_watermark;
    int fuse_failures, fuse_interval_ms, fuse_reset_ms;
    enum purge_strategy purge;
    int drain_timeout_ms;
    int retry_initial_ms, retry_max_ms;
    int checkpoint_interval_ms;
    int idle_checkpoint_interval_ms; /* when only quiet transactions moved it (below) */
    int stats_window_ms;        /* windowed counters; default 60000 */
    int max_attempts_5xx;       /* HTTP 500 and other odd 5xx on one item: then dead letter */
    bool flush_on_txn_end;      /* a closed transaction's changes are sent at once, whatever
                                 * batch_min says (a producer that waits for each
                                 * transaction's acknowledgement, like a reindex page) */
    bool ordered_versions;      /* stream: it submits one document's versions in
                                 * increasing order (the binlog reader): I5 is
                                 * asserted against its queued changes */
    const char *version_field;  /* document field for update guards; "" = none */
    bool content_hash;          /* whole documents carry the check's ss_hash and
                                 * ss_key_hash (search/content_hash.h): on for the
                                 * indices searchsync creates (deliver_opts_from_config) */
    deliver_checkpoint_fn checkpoint;
    void *checkpoint_ud;
    deliver_dead_letter_fn dead_letter;
    void *dead_letter_ud;
    deliver_written_fn written; /* optional: dl_store_written */
    void *written_ud;
    deliver_missing_fn missing; /* optional */
    void *missing_ud;
    const struct deliver_transport *transport; /* NULL = the search client */
};

/* Defaults (docs/delivery.md, "Settings"), then [delivery] from config. */
void deliver_opts_defaults(struct deliver_opts *o);
void deliver_opts_from_config(struct deliver_opts *o, const struct ss_config *c);
/* The engine client's options from [search] (strings point into c). */
struct search_opts;
void deliver_search_opts(struct search_opts *so, const struct ss_config *c);

/* ---------- one delivery per process, a stream per producer ----------
 *
 * The hub (struct deliver_hub) is the process's delivery: the queues, the
 * helper threads and their connections, one high-water mark, one fuse per
 * target, the engine's state, the statistics. A producer (the binlog
 * reader, a reindex worker, a delayed run, a repair, a resync, a replay)
 * holds a stream (struct deliver): its transactions, low-water mark and
 * checkpoint, its dead-letter and written/missing callbacks, its batching
 * knobs. Every stream's changes to one target share that target's queue
 * (queue.c), so the writes of one document to one index leave in the order
 * they were submitted, whichever producer submitted them; see "Order between
 * streams" in stream.c for why that order never lets an older write win.
 *
 * Fairness (queue.c, deliver_submit): a DELIVER_LIVE stream waits once the
 * hub holds the high-water mark; the DELIVER_BULK streams (pages, delayed
 * runs, repairs, resyncs, replays) together hold at most half of it,
 * whatever the live stream holds. Whatever the bulk producers submit, live
 * changes always have half the mark; whatever backlog the reader has, a
 * build has its half (pages have queues of their own: sync/pipeline/targets.c). At
 * most 1.5 times the mark is queued. And the helpers alternate: while both
 * classes have changes ready, every other batch is a bulk one (helper.c,
 * pick_queue). */
enum deliver_class { DELIVER_LIVE = 0, DELIVER_BULK = 1 };
const char *deliver_class_name(enum deliver_class c);

struct deliver;
struct deliver_hub;

/* The hub: o's hub fields (workers, helpers, batch_max, batch_max_bytes,
 * high_watermark, fuses, purge, retries, stats window, max_attempts_5xx,
 * version_field, content_hash, transport) are used; the stream fields are
 * each stream's own. client may be NULL only when o->transport is set; the
 * engine's dialect must be known (search_detect). */
struct deliver_hub *deliver_hub_new(const struct deliver_opts *o, struct search_client *client,
                                    char *err, size_t errlen);
/* Every stream must be closed first (deliver_free). NULL-safe. */
void deliver_hub_free(struct deliver_hub *h);
/* A stream on h with o's stream fields: checkpoint, dead_letter, written,
 * missing (and their ud), batch_min, flush_interval_ms, linger_ms,
 * flush_on_txn_end, checkpoint_interval_ms, idle_checkpoint_interval_ms,
 * drain_timeout_ms. name: for statistics ("live", "pages", ...). */
struct deliver *deliver_stream_open(struct deliver_hub *h, const struct deliver_opts *o,
                                    const char *name, enum deliver_class cls, char *err,
                                    size_t errlen);
/* A stream on hub h, the delivery its caller was handed (a daemon's node);
 * with none (NULL: a command-line process), on a private hub made from o
 * and client (as deliver_new), freed with the stream. */
struct deliver *deliver_open(struct deliver_hub *h, const struct deliver_opts *o,
                             struct search_client *client, const char *name,
                             enum deliver_class cls, char *err, size_t errlen);
/* A private hub with one stream ("main", live): a process of one producer,
 * and the tests. deliver_free frees both. */
struct deliver *deliver_new(const struct deliver_opts *o, struct search_client *client,
                            char *err, size_t errlen);
/* Close the stream: its queued changes are dropped (their transactions stay
 * unacknowledged: call deliver_drain() first), its changes in flight are
 * waited for; a private hub is freed with it. NULL-safe. */
void deliver_free(struct deliver *d);
/* Close the stream without waiting for the engine, for a producer whose
 * changes no longer matter (a cancelled build): its queued changes are
 * dropped, and its bulk requests in flight complete later without calling
 * its callbacks (written, missing, dead_letter; a dead letter of it is
 * dropped, not written). Once it returns none of them runs or will run, so
 * what they reference may go; the stream itself stays the hub's until the
 * last of its changes in flight settles. Waits only for callbacks a helper
 * calls at that moment (their batch was answered). A stream with a
 * checkpoint callback, or on a private hub, is closed as deliver_free does
 * (waiting). NULL-safe. */
void deliver_abandon(struct deliver *d);
/* Wait until the streams of h closed by deliver_abandon have nothing in
 * flight any more (before deleting the index their writes went to: a write
 * landing later could create it again). DELIVER_OK, DELIVER_ETIMEOUT,
 * DELIVER_ESTOPPED. NULL-safe. */
int deliver_hub_wait_abandoned(struct deliver_hub *h, int timeout_ms);
struct deliver_hub *deliver_hub_of(struct deliver *d);

/* Health (src/deliver/health.c), for the node's watchdog and status: false
 * with why when a sender thread or the checkpoint thread has not gone round
 * its loop for more than bound_ms (each of its calls has a timeout shorter
 * than that: it is wedged), or when the hub's lock cannot be taken within
 * DELIVER_LOCK_WEDGED_MS (a thread wedged holding it). NULL-safe (well). */
#define DELIVER_LOCK_WEDGED_MS 5000
bool deliver_hub_healthy(struct deliver_hub *h, int64_t bound_ms, char *why, size_t whylen);
/* the stream's producer waits in deliver_submit for room below the
 * high-water mark (the engine slow or away): a wait it can name. Lock-free. */
bool deliver_waiting_for_space(struct deliver *d);

enum deliver_rc {
    DELIVER_OK = 0,
    DELIVER_EINVAL = -1,   /* bad change (empty id, version 0 or >= 2^63) */
    DELIVER_ESTOPPED = -2, /* shutting down */
    DELIVER_EBUSY = -3,    /* a drain is already running */
    DELIVER_ETIMEOUT = -4,
};

/* Queue one change of the current transaction. Blocks while the queues hold
 * high_watermark changes (backpressure); never drops. */
int deliver_submit(struct deliver *d, const struct change *c);
/* Close the current transaction: position is where the reader resumes after
 * it (copied). Returns the transaction's sequence number (1, 2, ...). */
uint64_t deliver_txn_end(struct deliver *d, const char *position);
/* The same for a transaction that is itself a checkpoint save read back
 * from the binlog (with the metadata on the source): it moves the low-water
 * mark, but a save for it alone waits idle_checkpoint_interval_ms, so an idle
 * daemon does not write one save per checkpoint_interval_ms, each read back
 * as the next one's reason. With changes of its own it is an ordinary end. */
uint64_t deliver_txn_end_quiet(struct deliver *d, const char *position);
/* Wait until every change of transactions <= seq is acknowledged. Those
 * changes go at once from then on: no linger or refresh spacing holds them
 * while a caller waits for them. */
int deliver_wait_txn(struct deliver *d, uint64_t seq, int timeout_ms);
/* The low-water mark now: sequence (0 = none yet) and position (copied into
 * buf, "" if none). */
uint64_t deliver_low_water(struct deliver *d, char *buf, size_t len);

/* Deliver everything the stream has outstanding now (its submits meanwhile
 * queue behind and are not waited for), then save its checkpoint. One at a
 * time per stream: DELIVER_EBUSY if one runs. timeout_ms <= 0 uses
 * drain_timeout_ms. */
int deliver_drain(struct deliver *d, int timeout_ms);

/* Stop sending this stream's changes now, for a producer that learnt it
 * must not write any more (a reader fenced out by a newer one): its queued
 * changes are dropped and none is retried or purged from here on, and no
 * checkpoint of it is saved; a bulk request already in flight completes
 * (its acknowledgements move nothing). Its submits, waits and drains return
 * DELIVER_ESTOPPED at once. Joins nothing: callable from any thread,
 * delivery's own callbacks included. deliver_free still frees. Other
 * streams of the hub go on. */
void deliver_halt(struct deliver *d);

/* Hold (hold true) or release this stream's sends, for a producer that
 * must not write while it cannot tell whether it still may (a reader whose
 * lock cannot be confirmed: it may be taken over meanwhile). While held its
 * queued changes stay queued in their order and none is sent or retried
 * (the changes of other streams to the same targets queued behind them wait
 * too, keeping each document's order); a bulk request already in flight
 * completes. Submits still queue, up to the high-water mark; a drain waits.
 * Released, everything goes as before. Returns the changes it has queued.
 * Callable from any thread. */
long deliver_hold_sends(struct deliver *d, bool hold);

/* ---------- statistics (docs/metrics.md) ---------- */
struct deliver_stats {
    uint64_t docs_ok, stale, missing, retries, failures, dead_letters, purged, coalesced;
    uint64_t batches, requests_failed, blocked, drains, drain_timeouts, drain_failures;
    uint64_t fuse_blows, checkpoints_saved, checkpoint_failures, submitted;
    long queued, inflight;
    int fuses_blown;
};
/* The stream's own figures (submitted, docs_ok, stale, missing,
 * dead_letters, purged, coalesced, blocked, queued, inflight, checkpoints)
 * and the hub's for the rest (batches, retries, failures, requests,
 * drains, fuses). */
void deliver_get_stats(struct deliver *d, struct deliver_stats *s);
/* Every stream's figures together: the hub's. */
void deliver_hub_stats(struct deliver_hub *h, struct deliver_stats *s);
/* 1 if the target's fuse is blown now, 0 if not, -1 if never seen (fuses
 * are the hub's, per target: struct change.target, else index). */
int deliver_fuse_blown(struct deliver *d, const char *index);
/* The targets whose fuse is blown now, as a JSON array of strings appended
 * to out, and whether the engine is reachable (*engine_up). */
void deliver_fuses_json(struct deliver *d, sbuf *out, bool *engine_up);
/* The hub's streams as a JSON array of objects (name, class, queued,
 * inflight, submitted, acknowledged, dead_letters, blocked_seconds,
 * acknowledged_position, checkpoint_age_seconds) appended to out. */
void deliver_streams_json(struct deliver *d, sbuf *out);
/* Prometheus text exposition of every delivery metric of the hub d belongs
 * to, every stream's (label stream="name") included, appended to out. */
void deliver_stats_prometheus(struct deliver *d, sbuf *out);

#endif
