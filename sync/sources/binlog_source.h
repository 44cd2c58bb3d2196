/* binlog_source: the binlog as the producer of change sets of `searchsync
 * run` (the design is at the top of sync/sources/binlog_source.c; where it
 * starts: binlog_start.c). Its state is its own: struct binlog_source,
 * allocated by its open and written on the reader thread only; the node
 * holds it as the source's opaque state and calls it through
 * binlog_source_kind; /metrics reads the reader stats it publishes. */
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
    bl_reader_opts ro;         /* where and how the reader starts (binlog_start.c) */
    char file[BL_FILE_MAX];    /* ... ro.file's */
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
    sbuf gtids;                /* [source] versions = gtid: the executed GTID set at the
                                * last transaction built, saved in the checkpoint beside
                                * file:pos (binlog_resume) */
    struct pipeline_resume resume; /* binlog_resume's last answer */
    long long group_start_ms;
    long long commit_us;       /* when the last commit was read (mono_us) */
    long long commit_gap_us;   /* the gap between commits read, smoothed (group_defer) */
    unsigned long long group_rows_from; /* counts.rows when the last build began */
    bool in_txn;               /* rows read whose commit is still to come (a transaction
                                  begun and never committed does not keep a group open) */
    bool txn_saves;            /* the transaction being read holds checkpoint saves */
    int snap; /* the source reports snapshot positions: -1 not known yet, 0 no, 1 yes */
    bool in_snap;              /* a read snapshot is open on p->src */
    int gtid_wait; /* without snapshot positions, MySQL's WAIT_FOR_EXECUTED_GTID_SET:
                    * -1 not tried yet, 0 unusable, 1 used */
    bool xa_recover_denied; /* XA RECOVER refused (MySQL 8 without XA_RECOVER_ADMIN):
                             * an XA COMMIT's reads do not wait for its engine commit */
    bl_pos at;                 /* the reader's position: the last commit, or a heartbeat's */
    bl_pos boundary;           /* the last transaction boundary (a commit, or the start) */
    bl_pos ended;              /* the last position handed to delivery as a transaction's
                                * end (a commit, or an idle heartbeat past a rotate) */
    struct ttl ttl;            /* expired documents (sync/pipeline/ttl.c) */
    bool ttl_warned;
    bool replay;               /* the failed transaction lost a connection: read it again */
    unsigned long replay_after_gen; /* ... once a generation newer than this one is adopted
                               * (the source refused a mapped column or table: 0 none), */
    unsigned long replay_verdict; /* ... or the supervisor answered this check */
    unsigned replays;          /* ... how many times in a row, since a commit went through */
    long long refused_ms;      /* a query of the mapping refused since (monotonic ms; 0 none):
                               * the transaction is read again, backing off, until the
                               * source has the table or column again or [source]
                               * schema_settle_ms passed (then the supervisor judges) */
    long replay_nap_ms;        /* wait this long before reading it again */
    unsigned long long reconnects_before; /* of readers closed before this one (replays) */
};

/* [source] kind = binlog, what the daemon calls (sync/sources/source.h) */
extern const struct source_kind binlog_source_kind;

/* ---- between binlog_source.c and binlog_visible.c ---- */
/* The read snapshot of transaction cm's documents opened, at or past its
 * commit (or its GTID waited for, where the server says no snapshot
 * position). 0, or -1 with bl->env->p->err (p->src_errno). */
int binlog_read_snapshot_begin(struct binlog_source *bl, const bl_commit *cm);
/* Does building the change set read the source (documents to read back, not
 * row images alone)? */
bool binlog_build_reads(struct binlog_source *bl);
/* XA COMMIT cm waited for until the engine committed it too. 0, or -1 with
 * bl->env->p->err when the connection failed. */
int binlog_wait_xa_engine_commit(struct binlog_source *bl, const bl_commit *cm);
/* The source connection for a transaction's reads, a restarting server
 * waited out; -1 only on a stop request. */
int binlog_src_ensure(struct binlog_source *bl);

/* ---- between binlog_source.c and binlog_start.c ---- */
void binlog_source_init(struct binlog_source *bl, struct source_env *env);
/* Where reading starts (binlog_start.c): bl->ro, bl->boundary,
 * env->start_pos; the kind's open. */
int binlog_source_open(struct source_env *env, bool from_current, void **state);
/* Is the binlog after file (and, in GTID mode, after GTID set gtids: NULL
 * otherwise) no longer on the source? 1 purged, 0 there, -1 the source
 * failed (env->err). */
int binlog_purged(struct binlog_source *bl, const char *file, const char *gtids);
/* Reading starts at the binlog's end, skipping what is after `was` (where
 * the checkpoint or the reader was): every index config is rebuilt first
 * (why: "run --from-current", "[source] on_purged = rebuild"), then the
 * position saved as the checkpoint (bl->ro, bl->file, bl->boundary,
 * env->start_pos set). 0 or -1 (env->err). */
int binlog_skip_to_end(struct binlog_source *bl, const char *why, const char *was);
/* The reader r's reconnect was refused its position (error 1236): when the
 * binlog after it was purged and [source] on_purged = rebuild, reading goes
 * on at the binlog's end, every index rebuilt (0); else -1 (env->err). */
int binlog_purged_midway(struct binlog_source *bl, bl_reader *r, const bl_sink *sink);

#endif
