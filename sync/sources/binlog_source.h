/* binlog_source: the binlog as the producer of change sets of `searchsync
 * run` (the design is at the top of sync/sources/binlog_source.c). Its
 * state is its own: struct binlog_source, embedded in the node's struct
 * daemon, written on the reader thread only; the node reads it through the
 * accessors below, /metrics through the reader stats it publishes. */
#ifndef SS_BINLOG_SOURCE_H
#define SS_BINLOG_SOURCE_H
#include <stdbool.h>

#include "binlog/binlog.h"
#include "binlog/reader.h"
#include "sbuf.h"
#include "sync/pipeline/ttl.h"
#include "sync/pipeline/xa_prepared.h"
#include "sync/sources/source.h"

struct binlog_source {
    struct source_env *env;
    bl_reader *reader;         /* while binlog_source_run runs */
    bl_commit last_commit;     /* the newest transaction handed to delivery */
    bool have_last;
    struct xa_set xa;          /* two-phase XA transactions prepared, not yet ended */
    /* transactions read whose documents wait to be built with the next
     * ones' ("several transactions in one build") */
    unsigned group_n;
    bl_commit group_last;      /* the newest of them */
    sbuf group_gtids;          /* [source] versions = gtid: its executed GTID set */
    sbuf start_gtids;          /* ... the set the reader started after (ro->gtid) */
    long long group_start_ms;
    unsigned long long group_rows_from; /* counts.rows when the last build began */
    bool in_txn;               /* rows read whose commit is still to come (a transaction
                                  begun and never committed does not keep a group open) */
    unsigned long long groups, grouped_txns; /* builds of several, and their transactions */
    int snap; /* the source reports snapshot positions: -1 not known yet, 0 no, 1 yes */
    bool in_snap;              /* a read snapshot is open on p->src */
    int gtid_wait; /* without snapshot positions, MySQL's WAIT_FOR_EXECUTED_GTID_SET:
                    * -1 not tried yet, 0 unusable, 1 used */
    bool xa_recover_denied; /* XA RECOVER refused (MySQL 8 without XA_RECOVER_ADMIN):
                             * an XA COMMIT's reads do not wait for its engine commit */
    bl_pos at;                 /* the reader's position: the last commit, or a heartbeat's */
    bl_pos boundary;           /* the last transaction boundary (a commit, or the start) */
    struct ttl ttl;            /* expired documents (sync/pipeline/ttl.c) */
    bool ttl_warned;
    bool replay;               /* the failed transaction lost a connection: read it again */
    unsigned long replay_after_gen; /* ... once a generation newer than this one is adopted
                               * (the source refused a mapped column or table: 0 none), */
    unsigned long replay_verdict; /* ... or the supervisor answered this check */
    unsigned replays;          /* ... how many times in a row, since a commit went through */
    unsigned long long reconnects_before; /* of readers closed before this one (replays) */
};

void binlog_source_init(struct binlog_source *bl, struct source_env *env);
void binlog_source_free(struct binlog_source *bl);
/* Where reading starts (set before binlog_source_run): the transaction
 * boundary file:pos, and in gtid mode the GTID set the reader starts after
 * (kept here: ro->gtid points at it). */
void binlog_source_start_at(struct binlog_source *bl, const char *file, unsigned long long pos);
const char *binlog_source_start_gtids(struct binlog_source *bl, const char *set);
/* Follow the binlog from ro until a stop or a failure; BL_STOP or BL_ERR
 * (env->err). */
int binlog_source_run(struct binlog_source *bl, bl_reader_opts *ro);
/* The end of the newest transaction handed to delivery; false before the
 * first (reader thread). */
bool binlog_source_last_end(const struct binlog_source *bl, bl_pos *end);
/* Transactions built together while behind: the builds of several, and
 * how many transactions they held (the stop message). */
void binlog_source_groups(const struct binlog_source *bl, unsigned long long *groups,
                          unsigned long long *txns);

#endif
