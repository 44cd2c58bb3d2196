/* cluster_jobs: a node's part in the rebalances of a ZooKeeper cluster
 * (rebalance/rebalance.h has the protocol, docs/cluster.md what an operator
 * sees).
 *
 * With [cluster] zookeeper, the jobs of a reindex are not run by the reader
 * alone: every node of the source, the reader and the standbys, runs the
 * ones the last rebalance gave it. A thread of each node follows the
 * coordinator's znode:
 *   - CLEAN of a new session: it stops its jobs at their saved cursors and
 *     answers CLEAN_OK with that session in its registry entity;
 *   - INIT of a new session: it runs its jobs (owner_node = this node,
 *     rebalance_session = that session; every write on a job row is
 *     conditional on both: sync/reindex/reindex_runner.c), says INIT with its jobs,
 *     and FINISH when none is left.
 * The reader also watches for work that needs a rebalance, once a second:
 * jobs of a running build no live node owns under the current session (a
 * build just queued, a node gone), or a node that joined while jobs are
 * left. On any node, a request (POST /api/v1/rebalance) coordinates one
 * too. The coordinator runs in a thread of its own (so that its own node
 * answers as every other does),
 * retrying with a growing pause when it fails.
 *
 * The jobs of a delayed run (jobs.type 'job', sync/delayed/delayed.h) are handed
 * out by the same rebalances, in the same session as the reindex jobs (one
 * lock, one coordinator for both kinds: they exclude each other), each kind
 * split evenly on its own; a node runs its delayed jobs one after another
 * (sync/cluster/cluster_delayed.c) beside its reindex runners, and whichever node
 * ends a run's last job settles the run. The reader settles a run whose
 * last job ended on a node that died before settling it.
 *
 * The build itself stays the reader's: it turns the dual writes on before
 * a job is given out (job_assign only hands out jobs of versions whose
 * start position is recorded), and whichever node ends the last job
 * switches the alias (sync/reindex/reindex_version.c, exactly once by its
 * conditional UPDATE). Standalone (no ZooKeeper), none of this runs: the
 * reader runs every job itself, as before. */
#ifndef SS_CLUSTER_JOBS_H
#define SS_CLUSTER_JOBS_H
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "config.h"
#include "db.h"
#include "liveness.h"
#include "sync/cluster/job_assign.h"
#include "sbuf.h"

struct leadership;
struct search_client;
struct reindex_runner;

struct delayed_worker;

struct cluster_run {
    char *alias;
    unsigned version;
    struct reindex_runner *r;
};

struct cluster_jobs {
    const struct ss_config *cfg;
    struct search_client *client;
    struct deliver_hub *hub;    /* the node's delivery: its jobs write through it */
    struct leadership *lead;
    pthread_t th, coord_th;
    bool started, coord_joinable;
    volatile sig_atomic_t stop;
    atomic_bool requested;      /* a rebalance asked for (API) */
    atomic_bool coord_running;
    pthread_mutex_t wake_mu;    /* the thread's tick, cut short by a change of */
    pthread_cond_t wake_cv;     /* the coordinator's znode (a ZooKeeper watch) */
    bool woken;
    char clean_seen[32];        /* the last CLEAN answered */
    char init_seen[32];         /* the last INIT acted on */
    bool init_pending;          /* its jobs could not be started yet: tried again */
    char session[32];           /* the session of the jobs it runs */
    struct cluster_run *runs;
    size_t nruns;
    struct delayed_worker *delayed; /* its delayed-run jobs (sync/cluster/cluster_delayed.h) */
    bool working;               /* had jobs since the last INIT (FINISH said when done) */
    sbuf job_ids;               /* the ids of those jobs, "1,2,3" */
    MYSQL *meta;
    db_params metap;
    int64_t next_check_ms;      /* the reader's next look for work to rebalance */
    int64_t retry_ms;           /* its pause after a failed rebalance */
    int64_t retry_at_ms;
    sbuf live_prev;             /* the source's live nodes at the previous look */
    struct liveness live;       /* its thread's beats (cluster_jobs_healthy) */
    _Atomic int64_t expired_seen_ms; /* its session first seen expired (0: it is not) */
    char err[1024];
};

/* Start the thread (a no-op standalone: cj->started stays false); the jobs
 * write through hub, the node's delivery. 0 or -1 (err in cj->err). */
int cluster_jobs_start(struct cluster_jobs *cj, const struct ss_config *cfg,
                       struct search_client *client, struct deliver_hub *hub,
                       struct leadership *lead);
/* Ask for a rebalance: this node coordinates one at its next tick (any
 * node may: the lock keeps them one at a time). */
void cluster_jobs_request(struct cluster_jobs *cj);
/* Stop the thread and the jobs (cursors kept). NULL-safe, idempotent. */
void cluster_jobs_stop(struct cluster_jobs *cj);

/* Its thread goes round (every tick, or waits for ZooKeeper, a wait it
 * names), and this node's ZooKeeper session, once expired, is replaced
 * within bound_ms (a standby registers again; a reader stops). false with
 * why otherwise. Any thread. */
bool cluster_jobs_healthy(struct cluster_jobs *cj, int64_t bound_ms, char *why, size_t whylen);

#endif
