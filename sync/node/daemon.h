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
 *   supervisor      sync/node/supervisor.c, its own thread: mapping generations
 *                   (loaded, validated, published), the build table (read
 *                   every poll interval), the commands to the reader; the
 *                   admin server and
 *                   signals are started and stopped by cmd_run beside it
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
#include "sync/node/node.h"
#include "sync/node/node_state.h"
#include "sync/node/retention.h"
#include "config.h"
#include "db.h"
#include "deliver/deliver.h"
#include "deliver/store.h"
#include "sync/mapping/mapping.h"
#include "sync/mapping/mapping_gen.h"
#include "sync/node/leadership.h"
#include "rebalance/jobs/cluster_jobs.h"
#include "sync/pipeline/pipeline.h"
#include "sync/sources/reader_stats.h"
#include "sync/sources/source.h"
#include "sbuf.h"
#include "search/search.h"

/* ---------- mapping generations: sync/mapping/mapping_gen.h ----------
 * Loaded, validated and published by the supervisor; the reader holds the
 * one in force, the supervisor the last it published, each build the one it
 * started with. */

/* ---------- the build table (sync/node/daemon_builds.c) ----------
 * The state and versions of every index config of the source, as the
 * supervisor read them from the metadata (today's job table; tomorrow's
 * ZooKeeper assignments come the same way). */
struct build_want {
    char *alias, *state;
    unsigned current, building;
    bool stopped; /* its deliveries are stopped (index_configs.stopped_reason) */
};
struct build_table {
    struct build_want *v;
    size_t n;
};
void build_table_free(struct build_table *t); /* NULL-safe */

/* an index config to rebuild because a table it reads was emptied */
struct emptied {
    char *alias, *reason; /* reason: "TRUNCATE TABLE db.t read from the binlog at pos" */
    bool dropped;         /* DROP TABLE: no rebuild until the table is back */
    unsigned tries;
};

/* ---------- the command queue: supervisor -> reader ----------
 * Drained by the reader between transactions and on heartbeats
 * (daemon_between_txns). A newer generation replaces one not yet adopted. */
struct commands {
    pthread_mutex_t mu;
    struct mapping_gen *adopt; /* a new generation to route with */
    struct build_table *builds; /* the build table, newest read (NULL: none new) */
    bool schema_changed;       /* reader -> supervisor: a DDL of a read database */
    char ddl_note[640];        /* ... "after ALTER TABLE ... read from the binlog at F:P" */
    struct emptied *truncated; /* reader -> supervisor: index configs a TRUNCATE or DROP
                                * TABLE emptied a table of (ddl_truncate.h), to rebuild */
    size_t ntruncated;
    /* a schema check the reader waits for (a query of the mapping refused):
     * asked (reader, with schema_changed) and answered (supervisor, once its
     * verdict is published: a generation without the index configs the source
     * no longer fits, or none when it fits again), as sequence numbers */
    unsigned long verdict_asked, verdict_given;
};

/* the control plane: its own thread and connections */
struct supervisor {
    const struct ss_config *cfg;
    struct commands *cmds;
    struct search_client *client;
    struct search_conn *k;
    MYSQL *meta, *src;
    db_params metap, srcp;
    struct mapping_gen *published; /* the last generation handed to the reader (written by
                                    * the supervisor under pub_mu; others: supervisor_published) */
    pthread_mutex_t pub_mu;
    struct leadership *lead;  /* checked every tick once this node reads */
    atomic_bool lost;         /* the leadership went: the reader was told to stop */
    unsigned long next_id;
    sbuf bad_sig;           /* the last refused edit (said once) */
    char ddl_note[640];     /* the last DDL read (cmds.ddl_note) */
    char mapping_sum[512];  /* the mapping tables' checksums when last loaded ("" unknown) */
    bool sum_warned;
    bool poll_warned;       /* said that the build table cannot be read */
    sbuf builds_sig;        /* the builds the last poll saw (alias, state, version) */
    char **cancel_pending;  /* index configs stopped before the client existed (at start):
                             * their builds to cancel (index_stop.c) */
    size_t ncancel_pending;
    unsigned long long reloads;
    struct deliver *d;             /* for the state dump (set before supervisor_start) */
    void *admin;                   /* the admin server (node_admin()'s), for a reloaded
                                    * token (NULL: the server is off) */
    atomic_bool hup_requested;     /* SIGHUP: reload_config (sync/node/reload.c) */
    atomic_bool dump_requested;    /* SIGUSR1: reload_dump */
    atomic_llong ticked_ms;        /* the loop last went round (monotonic ms; the watchdog) */
    pthread_t thread;
    atomic_bool running;           /* read by the watchdog ping (daemon_alive) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
    char err[1024];
};

struct daemon {
    struct ss_config *cfg;
    struct check_schedule check; /* [check] schedule: its thread, once this node reads */
    struct delayed_schedule delayed; /* [delayed] schedule: the same */
    struct retention_schedule retention; /* history cleaned: at start, then hourly */
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

/* ---------- sync/node/daemon_source.c: the node's side of a source ---------- */
/* dm->env filled: what the source reads is given (sync/sources/source.h). */
void daemon_source_env(struct daemon *dm);
/* Between transactions: apply the supervisor's commands; true when a new
 * mapping generation was adopted (env->between). */
bool daemon_between_txns(struct daemon *dm);

/* ---------- sync/node/supervisor.c ---------- */
void supervisor_init(struct supervisor *sv, const struct ss_config *cfg, struct commands *cmds,
                     struct search_client *client);
/* Load and validate the mapping as the metadata tables hold it now: the
 * first generation. NULL with sv->err; *invalid when the mapping itself is
 * the problem. */
struct mapping_gen *supervisor_load(struct supervisor *sv, bool *invalid);
/* Every index of g exists in the engine, or its first build is queued
 * (needs the engine client). 0 or -1 with sv->err. */
int supervisor_prepare(struct supervisor *sv, struct mapping_gen *g);
int supervisor_start(struct supervisor *sv);
void supervisor_stop(struct supervisor *sv); /* joins the thread; idempotent */
void supervisor_wake(struct supervisor *sv);  /* look at the commands now */
/* Read the build table and hand it to the reader. */
void supervisor_poll_builds(struct supervisor *sv);
/* The generation published last, with a reference for the caller (NULL
 * before the first); any thread (the admin API). sv: a struct supervisor. */
struct mapping_gen *supervisor_published(void *sv);
void supervisor_free(struct supervisor *sv);

/* ---------- sync/node/reload.c (SIGHUP, SIGUSR1) ---------- */
/* From now on SIGHUP and SIGUSR1 raise sv's flags and wake it; detach
 * before sv is freed. */
struct http_server;
void reload_attach(struct supervisor *sv);
void reload_detach(void);
/* supervisor thread: re-read the configuration file / dump the state */
void reload_config(struct supervisor *sv);
void reload_dump(struct supervisor *sv);

/* ---------- sync/node/daemon_builds.c (reader thread) ---------- */
/* An index config without a version gets its first one (a reindex
 * request); a live alias the metadata does not know yet is adopted. */
/* (supervisor thread, its connections; -1 with sv->err) */
int builds_ensure_index(struct supervisor *sv, struct mp_index *ix);
/* the build table now (supervisor thread; NULL with sv->err) */
struct build_table *builds_query(struct supervisor *sv);
/* Between transactions: dual writes and runners as the table says. */
void builds_apply(struct daemon *dm, const struct build_table *t);
void builds_stop(struct daemon *dm, size_t i, const char *why, bool cancelled);
/* A new generation is adopted: builds whose index config in it differs
 * from the generation they pinned are cancelled and queued again with the
 * new mapping. true if any was. */
bool builds_mapping_changed(struct daemon *dm, const struct mapping_gen *nw);

#endif
