/* pipeline: the back half of every sync — route → build → deliver — that
 * each producer of change sets shares (sync/pipeline/changeset.h).
 *
 *   producer (sync/sources/binlog_source.c: the binlog; later delayed runs, repair,
 *   a Kafka source)
 *      │ pipeline_route_row: which documents a row touches (router.c),
 *      │   row-image documents (row_image.c), change snapshots
 *      │   (change_snapshots.c), parent/child rows that may move
 *      ▼
 *   struct changeset ──pipeline_build──► documents rebuilt from MySQL
 *      (docbuild.c), element scripts (area_update.c), row-image documents,
 *      stale child copies (child_copies.c) ──► deliver_submit to every
 *      target of the index (its live alias, a version being built)
 *      ──pipeline_end──► one delivery transaction, ended at the change
 *      set's position ──► acknowledged ──► checkpoint (src/deliver)
 *
 * Each build gets its inputs in a struct build_ctx (the index config, the
 * version of its writes, whether parent/child ids are noted): nothing is
 * passed through fields a previous caller left behind.
 *
 * The pipeline runs on one thread (the producer's). Its mapping and router
 * are replaced only between change sets (pipeline_adopt), and so are its
 * builds (sync/node/daemon_builds.c); `missing` is filled by delivery's helper
 * threads under miss_mu. */
#ifndef SS_PIPELINE_H
#define SS_PIPELINE_H
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "binlog/binlog.h"
#include "sync/pipeline/changeset.h"
#include "sync/pipeline/read_view.h"
#include "liveness.h"
#include "config.h"
#include "db.h"
#include "deliver/deliver.h"
#include "sync/mapping/mapping.h"
#include "sync/pipeline/router.h"
#include "sbuf.h"
#include "search/search.h"
#include "strset.h"

/* a version being built by a reindex: live changes go to it too */
struct mapping_gen;
struct build {
    char *alias, *phys;
    unsigned version;
    struct mapping_gen *gen;        /* pinned when the build started (its runner's mapping) */
    struct reindex_runner *runner;
    bool planned;                   /* this source's part of it is planned (its jobs exist) */
    bool plan_said;                 /* a failure to plan it was logged */
    bool ran;                       /* its runner ran and ended: this source's jobs are done
                                     * (or it failed); started again only to finish a switch
                                     * left halfway */
};

/* parent/child documents built (one list an index config, kept across the
 * builds whose lookup is put off), for the stale-copy check */
struct child_copy {
    char *id, *routing;
    bool absent;
};
struct copy_list {
    struct child_copy *v;
    size_t n, cap;
    /* the pipeline's list of an index config (copies_list): */
    char *alias;
    size_t index;        /* its index config in the mapping it was noted under */
    bool moved;          /* a row moved: the ids are looked up (copies_settle) */
    uint64_t version;    /* of the last build noted in it: the deletes carry it */
    int64_t since_ms;    /* when its lookup was first put off */
};

struct pipeline {
    const struct ss_config *cfg;
    const struct mapping *m;  /* in force; replaced between change sets */
    struct router *router;    /* over m */
    MYSQL *src;               /* document reads (the producer's snapshot) */
    db_params srcp;
    MYSQL *meta;              /* change snapshots */
    db_params metap;
    struct deliver *d;
    struct search_conn *k;    /* engine lookups (child copies) */
    /* the reader's beats (the daemon's pipeline; NULL for the others): its
     * waits for a server that is away are named there (src/liveness.h) */
    struct liveness *live;
    struct build *builds;     /* versions being built: their dual writes */
    size_t nbuilds;
    uint64_t last_txn;        /* delivery's sequence of the last transaction ended */
    uint64_t scripts_after;   /* no element scripts until delivery acknowledged this
                               * transaction (0: none pending): pipeline_hold_scripts */
    volatile sig_atomic_t *stop; /* set when the daemon stops */
    bl_valctx v;
    sbuf val;                 /* image_value's buffer */
    pthread_mutex_t miss_mu;  /* guards missing (delivery's helpers add to it) */
    char **missing;           /* "alias\x1fid": scripts that found no document */
    size_t nmissing, capmissing;
    unsigned long long docs, deletes, scripts, snapshots;
    unsigned long long slices; /* slices of large fan-outs built while routing (build_slice) */
    unsigned long long copy_lookups; /* child copy lookups made (a refresh and a search each) */
    unsigned long long copy_waits;   /* builds whose lookup was put off, made with a later one's */
    char err[1024];
    unsigned src_errno; /* the source's error code when the last build failed on a query */
    /* child copy lookups put off while the reader is behind (child_copies.c) */
    struct copy_list *copies;
    size_t ncopies;
    bool copies_may_wait;  /* the producer: the next transaction is already there */
    bool copies_put_off;   /* the build just ended put lookups off */
    char *copies_hold;     /* meanwhile the checkpoint stays here */
    char *last_pos;        /* the position the last delivery transaction ended at */
    struct rv_tables rv; /* the tables the last read snapshot opened (pipeline_read_view) */
    enum rv_kind rv_kind; /* whether the source reports a snapshot's binlog position */
};

/* Root documents a large fan-out builds and delivers at a time while the
 * router reads the rest (router_set_slice, build_slice in pipeline.c). */
#define ROUTE_SLICE 5000

/* The explicit inputs of one build of one index config's documents. */
struct build_ctx {
    struct pipeline *p;
    const struct mp_index *ix;
    uint64_t version;         /* of every write of this build */
    struct copy_list *copies; /* non-NULL: parent/child documents, ids noted */
};

/* a row image the router reads its values from (image_value) */
struct image {
    struct pipeline *p;
    const bl_table *t;
    const bl_cell *cells;
};

/* ---------- pipeline.c ---------- */
void pipeline_init(struct pipeline *p, const struct ss_config *cfg);
void pipeline_free(struct pipeline *p);
/* Between change sets: route with mapping m from now on (router over m,
 * owned by the pipeline from here; the caller keeps m alive). */
void pipeline_adopt(struct pipeline *p, const struct mapping *m, struct router *router);
/* Route one row of the source into cs. -1 with p->err. */
int pipeline_route_row(struct pipeline *p, struct changeset *cs, const bl_row *row);
/* Resolve, build and submit everything cs gathered, with the versions of
 * position `end`; documents a script did not find are rebuilt too. Reads
 * p->src (the caller has opened whatever read snapshot it needs). 0, or -1
 * with p->err. */
int pipeline_build(struct pipeline *p, struct changeset *cs, const bl_pos *end);
/* The same with the versions just past `end`, before the next transaction
 * (a TTL delete decided between two transactions: sync/pipeline/ttl.c). */
int pipeline_build_after(struct pipeline *p, struct changeset *cs, const bl_pos *end);
/* For a producer outside the binlog (resync, the delayed run, a check's
 * repair): open a read snapshot on p->src and set *end to the binlog
 * position it matches (MariaDB's Binlog_snapshot_position; elsewhere the
 * binlog's end read just before it), the version of what it builds — a
 * transaction in the binlog but not yet visible is then never versioned as
 * if it were in the rows. pipeline_build reads in it; pipeline_snapshot_end
 * after. alias: the index config whose documents it builds (its tables are
 * the ones the snapshot opens first: pipeline_read_view), NULL every one;
 * unit: over shard tables, only that shard's (NULL: every shard's). 0, or
 * -1 with p->err. */
int pipeline_snapshot_begin(struct pipeline *p, const char *alias, const char *unit,
                            bl_pos *end);
/* The one snapshot wait of every producer: open a read snapshot (as
 * pipeline_read_view, for cs or alias/unit) whose binlog position is at or
 * past `at`, the position the documents read in it are versioned by or
 * after, taken again while it is behind, for up to wait_ms (a transaction
 * reaches the binlog a moment before its rows are visible). Returns 1 with
 * the snapshot open at or past `at` (*snap its position): I2 holds, asserted
 * here; 2 when it is still behind after wait_ms and read_behind (open, *snap
 * where: the caller says so and reads it anyway), where without read_behind
 * I2 fails here; 0 the source reports no snapshot position (as
 * pipeline_read_view); -1 with p->err. */
int pipeline_snapshot_at(struct pipeline *p, const struct changeset *cs, const char *alias,
                         const char *unit, const bl_pos *at, int wait_ms, bool read_behind,
                         bl_pos *snap);
/* Open a read snapshot on p->src that first opens every table the reads
 * may touch (sync/pipeline/read_view.h): those of the index configs (over
 * shard tables: the shards) cs's builds name (cs non-NULL), else of those
 * named alias (and unit, when not NULL), else of every index config; each
 * with its version being built. 1 with the snapshot's
 * binlog position in file/pos, 0 the source reports none (a transaction is
 * open, its read view taken at its first read), -1 with p->err and
 * p->src_errno (nothing left open). pipeline_snapshot_end after. */
int pipeline_read_view(struct pipeline *p, const struct changeset *cs, const char *alias,
                       const char *unit, char *file, size_t filelen, unsigned long long *pos);
/* I2 (src/invariant.h): the binlog position read before a snapshot, which
 * versions its writes on a server that does not report the snapshot's own,
 * is never after the snapshot's position (an over-estimate would let the
 * snapshot's older rows win over changes between the two). Asserted where
 * both are known. */
void pipeline_version_check(const char *before_file, unsigned long long before_pos,
                            const char *snap_file, unsigned long long snap_pos);
void pipeline_snapshot_end(struct pipeline *p);
/* What a transaction's checkpoint records besides its binlog position, for
 * the binlog reader: the executed GTID set after it ([source] versions =
 * gtid), and a position to hold the checkpoint at instead (an XA
 * transaction prepared before it and not ended yet: xa_prepared.h). NULL
 * fields, or none at all (a producer outside the binlog): neither. */
struct pipeline_resume {
    const char *gtids;
    const char *hold;
};
/* End the delivery transaction of cs at `end` (quiet: it holds only
 * checkpoint saves read back) and reset cs; at rs->hold instead while one is
 * given. Returns the transaction's sequence. */
uint64_t pipeline_end(struct pipeline *p, struct changeset *cs, const bl_pos *end,
                      const struct pipeline_resume *rs, bool quiet);
/* The checkpoint's resume token for `end` (and GTID set gtids with [source]
 * versions = gtid, NULL: none), appended to out. */
void pipeline_position(const struct pipeline *p, const bl_pos *end, const char *gtids,
                       sbuf *out);
/* The same with the checkpoint's resume token given as it is (a producer whose
 * position is not a binlog position: sync/sources/kafka_source.c, its offsets). */
uint64_t pipeline_end_at(struct pipeline *p, struct changeset *cs, const char *position,
                         bool quiet);
/* A version just switched live: whole documents instead of element scripts
 * until delivery acknowledged every transaction ended so far (writes queued
 * for the version by its old name or through the old alias: a script
 * landing before them would be overwritten by an older whole document).
 * State of the pipeline across builds, not an input of one: it ends by
 * itself (area_update.c). */
void pipeline_hold_scripts(struct pipeline *p);
/* Documents element scripts did not find (delivery's missing callback, any
 * thread), rebuilt whole by the next pipeline_build or pipeline_rebuild. */
void pipeline_note_missing(struct pipeline *p, const char *index, const char *doc_id);
bool pipeline_has_missing(struct pipeline *p);
/* Does building cs read the source (documents to read back, not row images
 * alone, or documents scripts did not find)? Then its producer opens the
 * read snapshot that makes what cs says visible first. */
bool pipeline_build_reads(struct pipeline *p, const struct changeset *cs);
int pipeline_rebuild_missing(struct pipeline *p, const bl_pos *end);

/* ---------- targets.c ---------- */
/* The version of writes of index config ix made at position end (after:
 * just past it, before the next transaction: a TTL delete, pipeline_build_after);
 * 0 with p->err when the position does not fit a version. */
uint64_t targets_version(struct pipeline *p, const struct mp_index *ix, const bl_pos *end,
                         bool after);
/* The same for binlog position file:pos of server src, without a pipeline
 * (a reindex's page: the position of its read snapshot); with [source]
 * versions = gtid the server is asked for its GTID set there (MySQL: now,
 * so call it before the snapshot). 0 with err. */
uint64_t targets_version_at(const struct ss_config *cfg, MYSQL *src, const struct mp_index *ix,
                            const char *file, unsigned long long pos, char *err, size_t errlen);
/* I6: a write of index config (or unit) ix, of document doc_id (NULL: not
 * known here), made by a process of source `source`, is that source's;
 * aborts otherwise (src/invariant.h). */
void targets_source_check(const char *source, const struct mp_index *ix, const char *doc_id);
/* One change of index config ix: to the live version behind the alias and to
 * a version being built. 0 or -1. */
int targets_submit(struct pipeline *p, const struct mp_index *ix, const struct change *c);
/* The delivery queue of every write of the index config behind alias,
 * whatever index the write names (the alias, a version by its name): one
 * FIFO per document across a switch (see targets.c). */
const char *targets_queue(const char *alias);
/* A reindex page's write to the version it builds, in the pages' own queue. */
int targets_submit_page(struct deliver *d, const char *phys, const struct change *c);
/* One change to version phys of alias being built, by its physical name, in
 * the index config's queue (targets_queue). 0, or -1 when delivery is
 * shutting down. */
int targets_submit_build(struct deliver *d, const char *alias, const char *phys,
                         const struct change *c);
const struct build *targets_build_of(const struct pipeline *p, const char *alias);

/* ---------- image.c ---------- */
/* A column's value in a row image, as text (the router's and the builder's
 * form); NULL with *absent when the image lacks the column. The buffer is
 * reused by the next call. */
const char *image_value(void *img, const char *column, size_t *len, bool *absent);

/* ---------- row_image.c ---------- */
bool row_image_index(const struct mp_index *ix);
/* A row of a row-image root table: its document from the after image. */
int row_image_doc(struct pipeline *p, struct changeset *cs, size_t index, const bl_row *row);
/* cs's row-image documents whose latest image only the server can decide
 * (cs_rowdoc.requery): added to cs's documents rebuilt from MySQL by key.
 * Called before those are built. */
void row_image_requery(struct pipeline *p, struct changeset *cs);
/* cs's row-image documents, the latest image of each document winning
 * (changeset_rowdoc_winners), versioned by its coordinates when it has some
 * (those row_image_requery took: left to the rebuild). */
int row_image_submit(struct pipeline *p, struct changeset *cs, const bl_pos *end, bool after);

/* ---------- change_snapshots.c ---------- */
int snapshots_add_row(struct pipeline *p, struct changeset *cs, const bl_row *row);
/* cs's snapshots, in one INSERT on p->meta; 0 or -1 */
int snapshots_write(struct pipeline *p, struct changeset *cs);

/* ---------- child_copies.c ---------- */
/* Sets cs->copies_may_move when this row can leave a copy behind. */
void copies_watch_row(struct pipeline *p, struct changeset *cs, const bl_row *row);
void copies_note(struct copy_list *l, const char *id, const char *routing, bool absent);
void copies_free(struct copy_list *l);
/* The pipeline's list of index config `index` (added when it has none). */
struct copy_list *copies_list(struct pipeline *p, size_t index);
/* After a build: the lists whose rows moved are looked up now, or put off
 * while the producer said the next transaction waits (and for at most
 * COPIES_WAIT_MS); the others are dropped. 0, or -1 with p->err. */
int copies_settle(struct pipeline *p);
/* Every lookup put off done now (an end that did not follow a build that
 * put them off, an idle reader); 0, or -1 with p->err (the hold stays). */
int copies_release(struct pipeline *p);
void copies_clear(struct pipeline *p);

/* ---------- area_update.c ---------- */
/* The router's element collector (router_set_area); ctx: struct route_ctx */
int area_collect(void *ctx, size_t index, const struct mp_relation *rel, const char *doc,
                 const char *elem);
/* cs's elements not in a document rebuilt whole (full: "index\x1fkey"),
 * each document's edits in one script. */
int area_submit(struct pipeline *p, struct changeset *cs, const struct strset *full,
                const bl_pos *end, bool after);

/* the context of router_flush's collectors */
struct route_ctx {
    struct pipeline *p;
    struct changeset *cs;
    const bl_pos *end; /* the change set's end: slices are built with its version */
    bool after;        /* ... just past it (pipeline_build_after) */
};

/* A wait of the pipeline for a server that is away (what: a static
 * string), or its end (NULL): named in the reader's health, if it is the
 * reader's pipeline */
static inline void pipeline_waits(struct pipeline *p, const char *what) {
    if (p->live) liveness_wait(p->live, what);
}

#endif
