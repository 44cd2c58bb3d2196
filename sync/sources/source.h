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

#include "config.h"
#include "deliver/store.h"
#include "sync/mapping/mapping_gen.h"
#include "sync/pipeline/changeset.h"
#include "sync/pipeline/pipeline.h"
#include "sync/sources/reader_stats.h"

#define SOURCE_NOTE_MAX 640 /* a DDL note (struct commands' ddl_note) */
#define SOURCE_START_MAX 600
/* the start of the note of verdict_ask (a query of the mapping refused),
 * which sync/node/index_stop.c looks for (INDEX_STOP_REFUSED) */
#define SOURCE_QUERY_REFUSED "the source refused a query of the mapping"

/* what a source has read; written by it, read by the node's stop message */
struct source_counts {
    unsigned long long txns; /* transactions (change sets) handed to delivery */
    unsigned long long rows, ddls;
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
    /* ---- the node's callbacks (ud their first argument) ---- */
    void *ud;
    /* Between change sets (and when idle): the supervisor's commands
     * applied — a mapping generation adopted (true: *gen is a new one), the
     * build table followed. */
    bool (*between)(void *ud);
    /* The supervisor has a command waiting: an open group of change sets is
     * built now rather than wait for more. */
    bool (*asks)(void *ud);
    /* A DDL of a read database: the supervisor checks the mapping against
     * the source now; note ("after `ALTER ...` read from ... at ...") is
     * what its messages say. */
    void (*schema_changed)(void *ud, const char *note);
    /* db.table emptied (TRUNCATE, or DROP: dropped) by a statement read at
     * `at` ("file:pos"): every index config of the generation in force that
     * reads it is queued for a rebuild; how many. */
    size_t (*emptied)(void *ud, const char *db, const char *table, bool dropped,
                      const char *at);
    /* The source refused a query of the mapping (a column or table gone):
     * the supervisor is asked for its verdict on the mapping (note, unless
     * a DDL's note is still owed one); the number to wait for ... */
    unsigned long (*verdict_ask)(void *ud, const char *note);
    /* ... until the supervisor has given it. */
    bool (*verdict_given)(void *ud, unsigned long asked);
};

#endif
