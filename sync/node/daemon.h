/* daemon: `searchsync run`, split by thread (the design is at the top of
 * sync/node/daemon.c):
 *
 *   reader thread   the source: sync/sources/binlog_source.c (the binlog) or
 *                   kafka_source.c, given a struct source_env
 *                   (sync/sources/source.h, built by sync/node/daemon_source.c);
 *                   it drives the pipeline (sync/pipeline/pipeline.c) and,
 *                   between transactions, has the node apply what the
 *                   supervisor asks (adopt a mapping generation, follow the
 *                   build table: sync/node/daemon_builds.c)
 *   supervisor      sync/node/supervisor.c (supervisor.h), its own thread:
 *                   mapping generations (loaded, validated, published), the
 *                   build table (read every poll interval, build_table.c),
 *                   the commands to the reader; the admin server and the
 *                   rest are the node's subsystems beside it
 *                   (daemon_subsystems.c).
 *                   Its files (supervisor, reload, index_ensure, index_stop)
 *                   include supervisor.h, never this header: calls run from
 *                   the reader's side to the supervisor's, not back
 *   shared          the configuration and the engine client (read-only after
 *                   start), delivery (thread-safe), the command queue (its
 *                   own lock)
 * Each thread has connections of its own. */
#ifndef SS_DAEMON_H
#define SS_DAEMON_H
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "binlog/binlog.h"
#include "sync/pipeline/changeset.h"
#include "sync/check/check_schedule.h"
#include "sync/delayed/delayed_schedule.h"
#include "sync/node/build_table.h"
#include "sync/node/supervisor.h"
#include "sync/node/node.h"
#include "sync/node/node_state.h"
#include "sync/node/retention.h"
#include "sync/node/shard_join.h"
#include "config.h"
#include "db.h"
#include "deliver/deliver.h"
#include "deliver/store.h"
#include "sync/mapping/mapping.h"
#include "sync/mapping/mapping_gen.h"
#include "sync/cluster/leadership.h"
#include "sync/cluster/cluster_jobs.h"
#include "sync/pipeline/pipeline.h"
#include "sync/sources/reader_stats.h"
#include "sync/sources/source.h"
#include "sbuf.h"
#include "search/search.h"

/* ---------- mapping generations: sync/mapping/mapping_gen.h ----------
 * Loaded, validated and published by the supervisor; the reader holds the
 * one in force, the supervisor the last it published, each build the one it
 * started with. */

/* ---------- the build table: sync/node/build_table.h ----------
 * Read by the supervisor, followed by the reader (daemon_builds.c). */

/* ---------- the supervisor and the command queue: sync/node/supervisor.h */

struct daemon {
    struct ss_config *cfg;
    const char *config;        /* the configuration file's path, for messages */
    bool no_wait, from_current; /* `run`'s options */
    int exit_code;             /* `run`'s: set by the start that failed, or the reader's stop */
    int run_rc;                /* what the source's run returned (BL_STOP, BL_ERR, ...) */
    bool ran;                  /* the source ran: the reader's stop drains its stream */
    struct shard_joins joins;  /* shards joining an index config read into its live version */
    struct node_state node;    /* this node's live state in the metadata, every 2 s */
    /* reader thread */
    struct pipeline p;
    struct changeset cs;
    struct mapping_gen *gen;   /* the generation in force (adopted between transactions:
                                * daemon_between_txns, sync/node/daemon_source.c) */
    MYSQL *ckpt;               /* delivery's checkpoint thread */
    unsigned ckpt_failed;
    db_params ckptp;
    struct dl_store *dls;
    struct search_client *client;
    struct node nd;            /* the node: subsystems, drain order, admin requests */
    struct deliver_hub *hub;   /* the process's one delivery: every producer's stream */
    /* the source read ([source] kind: sync/sources/binlog_source.c or
     * kafka_source.c), what it is given (daemon_source_env), and its state,
     * its own (opaque here) */
    const struct source_kind *source;
    struct source_env env;
    void *source_state;
    struct leadership lead;    /* whether this node reads the source (and its token) */
    struct cluster_jobs cluster; /* [cluster]: the jobs rebalances give this node */
    atomic_bool fenced;        /* a checkpoint save found a newer reader's token */
    atomic_bool released;      /* the source's reader lock is given back: no more saves */
    atomic_bool builds_row;    /* the build workers row is started: the cluster jobs row
                                * leaves its workers to it (daemon_subsystems.c) */
    unsigned long build_wait_gen; /* a build waited for a generation that routes its index
                               * config (builds_apply): asked once for this one */
    unsigned long long reloads; /* mapping generations adopted */
    struct reader_stats rs;    /* for /metrics (web/metrics.c) */
    /* shared */
    struct commands cmds;
    struct supervisor sv;
    char err[1024];
};

extern volatile sig_atomic_t daemon_stop_requested;

/* `searchsync run` once its options are read and cfg is loaded (the front
 * end: cmd/cmd_run.c): the daemon started, the source read until a stop or a
 * failure, everything stopped in drain order. The exit code (exit_codes.h),
 * the failure said on stderr. */
int daemon_run(struct ss_config *cfg, const char *config_path, bool no_wait, bool from_current);

/* ---------- sync/node/daemon.c ---------- */
/* delivery's callbacks for the reader's stream and the hub: checkpoint
 * saves (fenced), dead letters, written, missing */
void daemon_delivery_callbacks(struct daemon *dm, struct deliver_opts *o);
/* The mapping of the source, loaded and validated (sync/node/supervisor.c)
 * into dm->gen; -1 with dm->err (and dm->exit_code EXIT_USAGE when the
 * mapping is at fault). */
int daemon_load_mapping(struct daemon *dm);

/* ---------- sync/node/daemon_subsystems.c: the node's table ---------- */
/* Start every subsystem in the table's order: 0, or the first start's
 * nonzero result (dm->err and dm->exit_code say why). */
int daemon_start(struct daemon *dm);

/* ---------- sync/node/daemon_source.c: the node's side of a source ---------- */
/* dm->env filled: what the source reads is given (sync/sources/source.h). */
void daemon_source_env(struct daemon *dm);
/* The rebuilds tables emptied before the last stop still owe (recorded in
 * the metadata: sync/node/emptied_store.h), queued for the supervisor
 * before the reader reads on. */
void daemon_owed_load(struct daemon *dm);
/* Between transactions: apply the supervisor's commands; true when a new
 * mapping generation was adopted (env->between). */
bool daemon_between_txns(struct daemon *dm);

/* ---------- sync/node/daemon_builds.c (reader thread) ---------- */
/* Between transactions: dual writes and runners as the table says. */
void builds_apply(struct daemon *dm, const struct build_table *t);
void builds_stop(struct daemon *dm, size_t i, const char *why, bool cancelled);
/* A new generation is adopted: builds whose index config in it differs
 * from the generation they pinned are cancelled and queued again with the
 * new mapping. true if any was. */
bool builds_mapping_changed(struct daemon *dm, const struct mapping_gen *nw);

#endif
