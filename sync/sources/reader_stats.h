/* reader_stats: what the binlog reader of `searchsync run` has read, kept
 * for /metrics (web/metrics.c) and nothing else.
 *
 * The reader thread writes it under its lock after each transaction and
 * each heartbeat (a handful of stores, a lock nobody else holds for long);
 * the admin server copies it out under the same lock when a scrape comes.
 * Counters only grow for the life of the process; positions and the
 * commit timestamp are the newest the reader handed to delivery. */
#ifndef SS_SYNC_READER_STATS_H
#define SS_SYNC_READER_STATS_H
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "binlog/binlog.h"
#include "liveness.h"

struct reader_figures {
    int64_t started_ms;        /* the process started (unix ms) */
    bool reading;              /* this node reads the binlog now */
    bool at_end;               /* the last thing read was an idle heartbeat */
    char file[BL_FILE_MAX];    /* the reader's position ("" before the first) */
    uint64_t pos;
    uint32_t commit_ts;        /* the last transaction's commit time (unix s; 0 none) */
    int64_t read_ms;           /* ... when it was read (unix ms) */
    uint64_t txns, rows, ddls, replays, reconnects, expired;
    uint64_t xa_prepared;      /* two-phase XA transactions prepared, not yet ended */
    uint64_t purge_rebuilds;   /* the checkpoint's binlog found purged, every index rebuilt
                                * ([source] on_purged = rebuild) */
    int64_t source_down_ms;    /* the reader lost its source at (unix ms) and has not read
                                * from it since; 0: it reads (or has not started) */
    char source_err[512];      /* ... why (the last error) */
};

struct kafka_live;

struct reader_stats {
    pthread_mutex_t mu;
    struct reader_figures f; /* under mu */
    /* [source] kind = kafka: the consumer's live state while it runs
     * (sync/sources/kafka_live.h, owned by sync/sources/kafka_source.c), else NULL; under mu */
    struct kafka_live *kafka;
    /* the reader thread's beats (each row, commit and idle heartbeat, each
     * poll of Kafka) and its named waits: the node's health (lock-free) */
    struct liveness live;
};

void reader_stats_init(struct reader_stats *s);
void reader_stats_destroy(struct reader_stats *s);
/* a consistent copy (any thread) */
struct reader_figures reader_stats_copy(struct reader_stats *s);
/* The source lost (up false: since when, and why) or read again: for
 * status, so that the daemons of other sources feeding the same index say
 * which one is down (sync/node/node_state.c). Reader thread. stats is a
 * struct reader_stats *, as bl_reader_opts' link callback takes it. */
void reader_stats_link(void *stats, bool up, const char *why);
/* the reader's named waits (reader_stats_link names the source's outage) */
#define READER_WAIT_SOURCE_DOWN "the source server is down or refuses the replica"
#define READER_WAIT_LOCK "the reader lock cannot be confirmed"
#define READER_WAIT_METADATA "the metadata server does not take a dead letter"
int64_t reader_stats_now_ms(void); /* the wall clock, unix ms */

#endif
