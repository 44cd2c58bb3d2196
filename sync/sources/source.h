/* source: what a producer of change sets of `searchsync run` is given by
 * the node — struct source_env, built by sync/node/daemon.c (the node's side
 * of it: sync/node/daemon_source.c) and handed to every source
 * (binlog_source.c, kafka_source.c). A source includes this header, never
 * sync/node/daemon.h: it reads, routes, builds and ends change sets through
 * the pipeline, publishes what it read in the reader stats, and reaches the
 * supervisor only through the callbacks below. Everything here is used on
 * the reader thread (the callbacks take the command queue's lock
 * themselves). */
#ifndef SS_SOURCE_H
#define SS_SOURCE_H
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "binlog/binlog.h"
#include "config.h"
#include "db.h"
#include "deliver/store.h"
#include "sync/mapping/mapping_gen.h"
#include "sync/pipeline/changeset.h"
#include "sync/pipeline/pipeline.h"
#include "sync/sources/reader_stats.h"

#define SOURCE_NOTE_MAX 640 /* a DDL note ("after `ALTER ...` read from ...") */
#define SOURCE_START_MAX 600
/* the start of the note of verdict_ask (a query of the mapping refused),
 * which sync/node/index_stop.c looks for (INDEX_STOP_REFUSED) */
#define SOURCE_QUERY_REFUSED "the source refused a query of the mapping"

/* what a source has read; written by it, read by the node's stop message */
struct source_counts {
    unsigned long long txns; /* transactions (change sets) handed to delivery */
    unsigned long long rows, ddls;
    unsigned long long groups, grouped_txns; /* builds of several transactions read
                                              * while behind, and their transactions */
    unsigned long long waited; /* ... of them, commits a build waited for while caught up
                                * ([source] group_wait_ms) */
};

struct source_env {
    /* ---- the node's, read-only to the source ---- */
    const struct ss_config *cfg;
    struct pipeline *p;              /* route -> build -> deliver (its connections, p->d) */
    struct changeset *cs;            /* the open change set */
    struct mapping_gen *const *gen;  /* the generation in force (changes only in between()) */
    struct dl_store *dls;            /* dead letters (a message that cannot be applied) */
    struct reader_stats *rs;         /* published for /metrics and the admin API */
    volatile sig_atomic_t *stop;     /* a stop was asked for: end at a boundary */
    /* ---- written by the source ---- */
    char *err;                       /* why run/open failed (errlen bytes) */
    size_t errlen;
    char start_pos[SOURCE_START_MAX]; /* where it started, as users read it ("" unknown):
                                      * a build's start position before the first
                                      * transaction (sync/node/daemon_builds.c) */
    struct source_counts counts;
    bool usage;                      /* open failed on the configuration (exit 2) */
    /* ---- the node's callbacks (ud their first argument) ---- */
    void *ud;
    /* Between change sets (and when idle): the supervisor's commands
     * applied — a mapping generation adopted (true: *gen is a new one), the
     * build table followed. */
    bool (*between)(void *ud);
    /* The supervisor has a command waiting: an open group of change sets is
     * built now rather than wait for more. */
    bool (*asks)(void *ud);
    /* A DDL statement read (db: its default database; at: where it was
     * read, "the binlog at F:P" or "Kafka (topic T partition P offset O)"):
     * the node reads it (sync/pipeline/ddl_tables.h), queues a rebuild of
     * every index config of the generation in force that reads a table it
     * emptied (TRUNCATE, DROP), and has the supervisor decide whether the
     * mappings that read the tables it names still fit, at this position.
     * replayed: not a statement the server ran but one a producer wrote to
     * describe the schema as it was at that binlog position (Debezium's
     * snapshot); NULL for every other. */
    void (*ddl)(void *ud, const char *db, const char *sql, size_t len, const char *at,
                const bl_pos *replayed);
    /* The source has refused a query of the mapping (a column or table
     * missing) for [source] schema_settle_ms: the supervisor is asked for its
     * verdict on the mapping as the source is now (note names the refused
     * query, unless a DDL read before is still owed one); the number to
     * wait for ... */
    unsigned long (*verdict_ask)(void *ud, const char *note);
    /* ... until the supervisor has given it. */
    bool (*verdict_given)(void *ud, unsigned long asked);
    /* Where reading starts, saved as the checkpoint now (before the first
     * transaction: fenced like every save). 0, 1 another node reads the
     * source now (*other its token), -1 (err). */
    int (*save_start)(void *ud, const char *token, uint64_t *other, char *err, size_t errlen);
    /* Every index config of the generation in force is rebuilt (a reindex
     * queued), which covers a stretch of the binlog not read: skipped (which
     * stretch, for the log and the sync log), why ("run --from-current", "the
     * binlog was purged"). 0, or -1 (err). */
    int (*rebuild_all)(void *ud, const char *why, const char *skipped);
};

/* ---------- a kind of source: what the daemon calls ----------
 * The daemon picks one by [source] kind (sync/node/daemon.c, cmd_run) and
 * calls it with its struct source_env; state is the source's own. */
struct source_kind {
    const char *name;
    bool ordered_versions; /* one document's changes come in version order (delivery
                            * checks it: I5); Kafka partitions do not */
    /* The source server suits it (the binlog: on, in ROW format); NULL: no
     * check. 0, 1 it does not (err says what to set: exit 2), -1 (err). */
    int (*check)(MYSQL *src, char *err, size_t errlen);
    /* Where reading starts (the checkpoint, [source] start, --from-current:
     * env->start_pos), ready to run. *state set even on a failure (close
     * it). 0, or -1 (env->err; env->usage: exit 2). */
    int (*open)(struct source_env *env, bool from_current, void **state);
    /* Read, route, build and deliver until *env->stop or a failure; BL_STOP
     * or BL_ERR (env->err). */
    int (*run)(void *state);
    /* The end of the newest transaction handed to delivery, where a build's
     * dual writes start (reader thread); NULL or false: env->start_pos. */
    bool (*last_end)(void *state, bl_pos *end);
    /* Delivery's checkpoint thread: position was saved in the metadata
     * (Kafka commits the same offsets). NULL: nothing to do; NULL-safe. */
    void (*saved)(void *state, const char *position);
    /* After delivery is freed (no checkpoint may come any more); NULL-safe. */
    void (*close)(void *state);
};

#endif
