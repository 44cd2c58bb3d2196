/* reindex_runner_int: what the files of the reindex runner share — the
 * runner, its workers, its jobs and their pages. sync/reindex/reindex_runner.c runs
 * the jobs (pages delivered, their cursors saved), reading each page with
 * sync/reindex/reindex_page_read.c;
 * sync/reindex/reindex_version.c looks after the version they build in the engine
 * (the mid-build refresh, lost writes, the switch); sync/reindex/
 * reindex_runner_load.c reads what a runner starts from. Not for other files:
 * the interface is reindex.h. The runner calls the version's file, never
 * the other way round. */
#ifndef SS_REINDEX_RUNNER_INT_H
#define SS_REINDEX_RUNNER_INT_H
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mysql.h>

#include "config.h"
#include "db.h"
#include "deliver/deliver.h"
#include "liveness.h"
#include "sync/mapping/mapping.h"
#include "sync/mapping/mapping_gen.h"
#include "sync/pipeline/read_view.h"
#include "sbuf.h"
#include "search/search.h"

struct reindex_runner;

/* one bucket of the build (a jobs row) */
struct job {
    unsigned long long id;
    int bucket;
    char *params, *cursor;
    bool done;
    const struct mp_index *ix; /* the index config (or its shard's unit) it reads */
};


/* A page read and built but not yet handed to delivery: its documents wait
 * here while the page before it is being acknowledged, so at most one page
 * per job is ever delivered beyond the saved cursor (a restart reads at most
 * that page twice) while reading the next page overlaps the engine's work. */
struct page_doc {
    size_t id, routing, body, body_len; /* offsets into text; routing SIZE_MAX = none */
};
struct page {
    size_t t;        /* the table (index into the index config's tables) */
    char *last;      /* its last key: the cursor once it is acknowledged */
    size_t rows;
    uint64_t version; /* the binlog position read before the page */
    int64_t snap_ms;  /* when its snapshot was taken (mono_ms) */
    sbuf text;
    struct page_doc *docs;
    size_t ndocs, cap;
};
/* the page delivered and not yet acknowledged */
struct sent_page {
    bool on;
    uint64_t seq;
    size_t t, rows;
    char *last;
    unsigned long long docs;
    int64_t snap_ms; /* its snapshot's time (settle_page: older than gc_deletes_s?) */
};

/* one thread running jobs one after the other, with its own connections and
 * delivery */
struct worker {
    struct reindex_runner *r;
    pthread_t th;
    MYSQL *src, *meta;
    struct deliver *d;
    _Atomic(struct job *) job;   /* the job it runs now (read by delivery's helpers) */
    _Atomic unsigned long long rejected; /* of the current job */
    struct page next;            /* read and built, waiting for the page before it */
    int snap;                    /* the source reports snapshot positions: -1 not known yet, 0 no, 1 yes */
    bool snap_open;              /* a snapshot is open on src (read_page) */
    int64_t snap_ms;             /* when it was taken (mono_ms) */
    uint64_t snap_version;       /* the version of its pages */
    struct rv_tables rv;         /* the tables its snapshots open first (read_view.h) ... */
    const struct mp_index *rv_ix; /* ... those of this unit */
    unsigned pages;              /* read by the current job (RAMP_PAGES ramp up) */
    /* the current job's end in the table it reads (read_page_in): the
     * largest key the table held when the job first read it */
    int end_state;               /* 0 not read yet, 1 end_key, 2 the table held no row */
    size_t end_t;                /* the table end_state is of */
    char *end_key;
    struct sent_page sent;
    struct sent_page acked;      /* acknowledged, its cursor not saved yet (record_page) */
    int slot;                    /* the build slot it holds (reindex_slots.c), -1 none */
    /* its progress, for the node's health (sync/reindex/reindex_health.c):
     * beats at each page read, handed over or waited on, named waits for a
     * server away */
    struct liveness live;
    char err[1024];
};

/* the jobs of one build (reindex.h) */
struct reindex_runner {
    const struct ss_config *cfg;
    struct search_client *client;
    char *alias, *phys, *id;
    unsigned version;
    /* in a cluster, the condition that keeps to this node's jobs of its
     * rebalance session (" AND owner_node = .. AND rebalance_session = .."),
     * added to every statement on a job row: a job given to another node
     * by a later rebalance is no longer moved by this one (fencing); ""
     * standalone */
    char *owned;
    struct mapping_gen *gen;     /* the build's pinned generation (a reference of its own) */
    struct deliver_hub *own_hub; /* the build's own delivery when none was handed (a
                                  * daemon's builds stream on the node's) */
    const struct mp_index *ix;   /* the index config in gen */
    db_params srcp, metap;
    pthread_mutex_t mu;
    struct job *jobs;
    size_t njobs, next;
    struct worker *w;
    int nw, wcap;
    _Atomic int stop;       /* 1: stop between pages (shutdown), 2: the build fails */
    _Atomic int failing;    /* claimed by the one worker that rolls the build back */
    _Atomic int switcher;   /* 1 + index of the worker doing the switch here, 0 none */
    int64_t switch_ms[5];   /* the switch's steps, ms: refresh, settings, flush and
                             * terms, alias; [4] its start (mono_ms) */
    _Atomic int running;    /* threads still running */
    _Atomic int gone;       /* 1: a worker found its job gone (cancelled, or moved) */
    _Atomic unsigned long long rejected_total;
    unsigned long long rows_expected;       /* the document tables' estimated rows */
    _Atomic unsigned long long rows_acked;  /* acknowledged, before a restart too */
    _Atomic int mid_refresh;                /* 1 once the mid-build refreshes' thread started */
    unsigned long long mid_at;              /* the rows acknowledged when it started */
    char *build_terms;          /* primary terms at creation; NULL: built with writes on disk */
    int buckets;                /* of this build, for a build queued in its place */
    bool by_mod;
    _Atomic int64_t lost_check_ms;          /* the next lost_check while the jobs run */
    _Atomic int lost;           /* the engine may have lost writes (1), or forgotten a
                                 * delete a page predates (2): fail, queue again */
    _Atomic int no_snap_said;   /* 1 once a worker found the source reports no snapshot
                                 * position: said once a build, not once a worker */
    _Atomic int no_commit_wait; /* 1: a GTID stayed owned past the wait (said): pages no
                                 * longer wait for the binlog's transactions to commit */
    pthread_t mid_th;
    pthread_mutex_t errmu;  /* guards errdb (job_errors from helper threads), why */
    MYSQL *errdb;
    char why[1100];         /* why the build fails (rejections, or a worker error) */
    struct reindex_runner *health_next; /* the registry of running runners (reindex_health.c) */
};

/* ---------- sync/reindex/reindex_health.c ---------- */
/* r's workers asked about by the node's health from start to free: added
 * once they run, removed before they are joined and r freed. */
void rx_health_add(struct reindex_runner *r);
void rx_health_remove(struct reindex_runner *r);
/* every worker of r has beaten within bound_ms at now_ms, is in a named
 * wait, waits for room in delivery, or has ended; else false with why
 * (the first stalled one: its build, worker and bucket) */
bool rx_runner_healthy(struct reindex_runner *r, int64_t now_ms, int64_t bound_ms, char *why,
                       size_t whylen);
/* the named waits of a worker */
#define RX_WAIT_SOURCE_AWAY "the source server does not answer"
#define RX_WAIT_META_AWAY "the metadata server does not answer"
#define RX_WAIT_SLOT "a build slot, held by the jobs of the other sources' parts"

/* ---------- sync/reindex/reindex_version.c ---------- */
#define LOST_CHECK_MS 10000 /* the version's primary terms compared this often */
/* rows more rows acknowledged: the caller that passes the first mark of the
 * estimate starts the thread of the mid-build refreshes. */
void rv_mid_refresh_maybe(struct reindex_runner *r, size_t rows);
/* The primary terms compared, if LOST_CHECK_MS passed since the last look. */
void rv_lost_check_maybe(struct worker *w);
/* All jobs done: the one caller whose UPDATE finds none unfinished switches
 * the alias. 1 switched, 0 not the last, -1 error, -2 the engine may have
 * lost writes of the version (r->why; the state is back to 'changing').
 * w->meta connected (the runner waits out a restarting metadata server
 * first). */
int rv_try_finish(struct worker *w, bool may_resume);
/* The builds before this one lost their writes to engine restarts too: this
 * one is not queued again. */
bool rv_lost_too_often(struct reindex_runner *r, MYSQL *meta);

/* reindex_runner_load.c: r's jobs of this source's part, the run's counts so
 * far and how its version is built, read from the metadata (r->id, cfg,
 * gen, alias and version set); estimated rows from src. 1, or 0 with err. */
int rx_runner_load(struct reindex_runner *r, MYSQL *meta, MYSQL *src, char *err,
                   size_t errlen);

/* ---------- sync/reindex/reindex_page_read.c ---------- */
/* A snapshot serves a job's pages for up to SNAPSHOT_REUSE_MS: its pages
 * then carry its version (still every change before it is in them, every
 * change after it comes as a dual write with a greater version), and the
 * three statements that take one (START TRANSACTION WITH CONSISTENT SNAPSHOT,
 * SHOW STATUS, COMMIT) run a few times a second instead of once a page. Never
 * held longer: an open snapshot holds back InnoDB's purge. */
#define SNAPSHOT_REUSE_MS 500
/* Read and build the next page of table t (keys after *after, rows that
 * meet cond) into w->next: 1 a page was read (*after moves to its last
 * key), 0 the table is finished, -1 error (w->err). */
int rx_read_page(struct worker *w, size_t t, const char *cond, char **after);
/* End the worker's open snapshot, if any. */
void rx_snapshot_end(struct worker *w);

/* build slots across the sources of an index (reindex_slots.c): how many
 * (0: not paced), one taken before a job (false: the runner stops), given back
 * after it */
int rx_slots_of(const struct reindex_runner *r);
bool rx_slot_take(struct worker *w);
void rx_slot_give(struct worker *w);

/* a runner of version of alias, not started (reindex_runner_load.c): its
 * jobs are those of this node's rebalance session when owner_node is set,
 * else every job of this source's part; then its index config id and jobs
 * read (1, or 0 with err) */
struct reindex_runner *rx_runner_new(const struct ss_config *cfg, struct search_client *client,
                                     struct mapping_gen *gen, const char *alias,
                                     unsigned version, const char *owner_node,
                                     const char *session);
int rx_runner_open(struct reindex_runner *r, char *err, size_t errlen);

#endif
