/* leadership: which daemon reads a source's binlog and moves its checkpoint.
 *
 * Exactly one node per source runs the live sync. With [cluster] zookeeper,
 * nodes register under /searchsync/<cluster>/nodes and elect the reader
 * under /searchsync/<cluster>/leaders/<source> (rebalance/zlock.c); the
 * others stand by with their admin server up and take over from the saved
 * checkpoint when the reader's session goes. Without ZooKeeper, a named lock
 * of the metadata server (GET_LOCK, held by the reader's own connection, so
 * released by the server when the reader's process or connection goes, and
 * writing nothing to the binlog while held) keeps a second daemon started
 * by mistake on the same source from reading too: it says who reads and
 * waits, taking the lock over when it is free (or exits 1 with --no-wait).
 * The reader_locks row records the last taker and the fencing token. A
 * clean stop releases the lock.
 *
 * Fencing: the reader holds a token larger than any reader's before it (its
 * election node's czxid, or the lock row's fence); it raises offsets.fence
 * to it when it starts, and every checkpoint save carries it
 * (offsets_save_fenced), so a reader that was paused past its session and
 * wakes up after another took over cannot move the checkpoint. Documents it
 * may still send are harmless: their external versions come from the binlog,
 * so they never win over what the new reader wrote.
 *
 * Unreachable is not taken. A reader that cannot confirm its lock — cut
 * off from ZooKeeper, or, without it, the metadata server not answering
 * (with the default layout, the source server itself) — waits: it reads
 * nothing more (daemon_between_txns holds the reader at its next
 * transaction boundary while leadership_holds_reads), delivers what it had
 * read until 2/3 of the session timeout after the last confirmation (the
 * earliest another node could be given the source, with ZooKeeper), then
 * holds that too (deliver_hold_sends), and goes on when the lock is
 * confirmed again: the session came back (ZooKeeper), or the named lock
 * was taken back with the token unchanged (nobody took it meanwhile). It
 * steps down (LEAD_LOST: delivery halted, the process exits 1) only once it
 * sees that the lock is another's: its session expired or its election
 * node is gone, or another connection holds the named lock or took it
 * meanwhile (the token moved). docs/cluster.md has the argument. */
#ifndef SS_LEADERSHIP_H
#define SS_LEADERSHIP_H
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdint.h>

#include "config.h"
#include "db.h"
#include "sbuf.h"

struct zk;
struct zlock;

struct leadership {
    const struct ss_config *cfg;
    char node_id[256];
    /* NULL: standalone. Replaced by a new session when a standby's expires
     * (leadership_acquire registers again); the expired handles are kept
     * (retired) until leadership_free, so a thread that read the old
     * pointer only gets errors from it, never a freed handle */
    struct zk *_Atomic zk;
    struct zk **retired;
    size_t nretired;
    struct zlock *lock;
    MYSQL *meta;            /* standalone: holds the named lock; both: the claim */
    unsigned long lock_conn; /* standalone: the connection id that took the lock */
    db_params metap;
    _Atomic uint64_t fence; /* this reader's token, 0 until it leads (set by the
                             * supervisor, read by the checkpoint thread) */
    int64_t beat_at_ms;     /* when the lock was last confirmed held (monotonic ms) */
    int64_t unconfirmed_at_ms; /* when a check first could not confirm it; 0: confirmed */
    int64_t retry_at_ms;    /* standalone, unconfirmed: the next try to take it back */
    atomic_bool hold_reads; /* unconfirmed: the reader reads nothing more */
    bool no_wait;
    char err[1024];
    /* this node's part in rebalances (sync/cluster/cluster_jobs.c), published in its
     * registry entity; guarded by work_mu */
    pthread_mutex_t work_mu;
    bool work_mu_init;
    char cloud_status[16];  /* NORMAL | REBALANCING */
    char node_status[16];   /* CLEAN | CLEAN_OK | INIT | FINISH */
    char session[32];       /* the rebalance session it answered or runs jobs of */
    char *jobs_json;        /* its jobs: [{"id":..,"type":"index","index":..,"version":..,
                             * "bucket":..}], type "job" with "delayed_run" instead of version */
    int alive_work;         /* jobs running now */
};

/* Register this node (ZooKeeper) or prepare the lock row. -1 with l->err. */
int leadership_init(struct leadership *l, const struct ss_config *cfg, bool no_wait);
/* Block until this node reads the source: 1 it does (l->fence set, the
 * checkpoint's fence claimed), 0 *stop was set, -1 failure (l->err; with
 * --no-wait: another node reads it). With ZooKeeper, a standby whose
 * session expired (it was paused, or cut off longer than the timeout)
 * registers again with a new session and goes on waiting; while ZooKeeper
 * cannot be reached it waits for it. */
int leadership_acquire(struct leadership *l, volatile sig_atomic_t *stop);
/* What leadership_check saw. */
enum lead_state {
    LEAD_HELD,        /* confirmed (standalone: within the last 2 s) */
    LEAD_UNCONFIRMED, /* it cannot be told: ZooKeeper, or without it the metadata
                       * server, does not answer; nobody is seen holding it. Said
                       * once (WARN), and once again when confirmed (INFO) */
    LEAD_LOST,        /* seen to be another's (l->err says what was seen) */
};
/* Still the reader? Called every few hundred ms by the supervisor once this
 * node reads (ZooKeeper: its election node looked at each time; standalone:
 * the named lock every 2 s, and once a second while unconfirmed). */
enum lead_state leadership_check(struct leadership *l);
/* The reader must read nothing more now (the lock is unconfirmed). Any
 * thread. */
bool leadership_holds_reads(struct leadership *l);
/* ms since the lock was last confirmed while it is unconfirmed, else 0 */
int64_t leadership_unconfirmed_ms(struct leadership *l);
/* How long after its last confirmation an unconfirmed reader may still
 * send what it read: 2/3 of the session timeout (ZooKeeper's as
 * negotiated; standalone [cluster] session_timeout_ms). */
int64_t leadership_send_window_ms(struct leadership *l);
/* This node's entry in the registry (no-op standalone). */
void leadership_publish(struct leadership *l, const char *json);
/* This node's rebalance state (see struct leadership), republished at once
 * (ZooKeeper; standalone: kept for leadership_nodes). jobs_json NULL: []. */
void leadership_set_work(struct leadership *l, const char *cloud_status, const char *node_status,
                         const char *session, const char *jobs_json, int alive_work);
/* The registered nodes as a JSON array (standalone: this one). */
int leadership_nodes(struct leadership *l, sbuf *out);
/* A clean stop: the lock row is deleted (standalone) or the election node
 * left (ZooKeeper), so a standby or a restart takes over at once. */
void leadership_release(struct leadership *l);
void leadership_free(struct leadership *l);

#endif
