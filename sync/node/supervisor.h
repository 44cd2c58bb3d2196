/* supervisor: the control plane of `searchsync run` on a thread of its own
 * (the design is at the top of supervisor.c), and the command queue between
 * it and the reader.
 *
 * What the supervisor side of the node shares: supervisor.c, reload.c
 * (SIGHUP, SIGUSR1), index_ensure.c and index_stop.c include this, not
 * daemon.h; nothing here knows struct daemon or the reader. The reader
 * (daemon_source.c, daemon_builds.c) posts to the command queue and calls
 * supervisor_wake. */
#ifndef SS_SUPERVISOR_H
#define SS_SUPERVISOR_H
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "db.h"
#include "deliver/deliver.h"
#include "sbuf.h"
#include "search/search.h"
#include "sync/mapping/mapping_gen.h"
#include "sync/node/build_table.h"
#include "sync/cluster/leadership.h"
#include "sync/node/emptied_store.h"
#include "sync/node/schema_watch.h"

/* ---------- the command queue: supervisor <-> reader ----------
 * Drained by the reader between transactions and on heartbeats
 * (daemon_between_txns), and by the supervisor each round. A newer generation
 * replaces one not yet adopted. */
struct commands {
    pthread_mutex_t mu;
    struct mapping_gen *adopt; /* a new generation to route with */
    struct build_table *builds; /* the build table, newest read (NULL: none new) */
    bool schema_changed;       /* reader -> supervisor: look at the source now */
    struct ddl_read *ddls;     /* reader -> supervisor: DDL statements naming tables the
                                * mapping reads, in the order read (schema_watch.h) */
    size_t nddls;
    unsigned long ddls_posted, ddls_judged; /* how many were posted, and how many of them
                                * the supervisor has judged (the reader waits for it) */
    struct emptied *truncated; /* reader -> supervisor: index configs a TRUNCATE or DROP
                                * TABLE emptied a table of (ddl_tables.h), to rebuild */
    size_t ntruncated;
    /* a verdict the reader waits for (a query of the mapping refused for
     * [source] schema_settle_ms): asked (reader) and answered (supervisor,
     * once its verdict is published: a generation without the index configs
     * the source no longer fits, or none when it fits again), as sequence
     * numbers; verdict_note names the refused query */
    unsigned long verdict_asked, verdict_given;
    char verdict_note[640];
    /* supervisor -> reader: shards judged gone ("alias\x1fdb.table"): their documents are
     * deleted at the next boundary (daemon_source.c shard_gone) */
    char **shards_gone;
    size_t nshards_gone;
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
    atomic_bool sends_held;   /* unconfirmed too long: the reader's sends are held
                               * (deliver_hold_sends) until it is confirmed */
    volatile sig_atomic_t *daemon_stop; /* raised then (daemon_stop_requested) */
    unsigned long next_id;
    sbuf bad_sig;           /* the last refused edit (said once) */
    struct schema_watch watch; /* does each mapping fit the source, at the reader's position */
    char mapping_sum[512];  /* the mapping tables' checksums when last loaded ("" unknown) */
    bool sum_warned;
    bool poll_warned;       /* said that the build table cannot be read */
    bool edits_warned;      /* said that mapping edits cannot be looked for */
    sbuf builds_sig;        /* the builds the last poll saw (alias, state, version) */
    char **cancel_pending;  /* index configs stopped before the client existed (at start):
                             * their builds to cancel (index_stop.c) */
    size_t ncancel_pending;
    unsigned long long reloads;
    int hold_emptied_ms;    /* tests only (SEARCHSYNC_TEST_HOLD_EMPTIED_MS): an owed rebuild
                             * waits this long after its statement was read */
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

/* stop: raised when this node loses the leadership (the reader stops at its
 * next transaction boundary) */
void supervisor_init(struct supervisor *sv, const struct ss_config *cfg, struct commands *cmds,
                     struct search_client *client, volatile sig_atomic_t *stop);
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
/* From now on SIGHUP and SIGUSR1 raise sv's flags (hup_requested,
 * dump_requested) and wake it: it runs reload_config / reload_dump. Detach
 * before sv is freed. */
void supervisor_signals_attach(struct supervisor *sv);
void supervisor_signals_detach(void);
/* Read the build table and hand it to the reader. */
void supervisor_poll_builds(struct supervisor *sv);
/* The mapping tables looked at (supervisor_mapping.c): an edit, or the
 * source judged (schema_changed, forced: the note of a query the source
 * refused, the reader waiting), validated and published. true when a
 * judgement was made and published (or needed no new generation); false
 * when it is looked at again. */
bool supervisor_look_for_edits(struct supervisor *sv, bool schema_changed, const char *forced);
/* The generation published last, with a reference for the caller (NULL
 * before the first); any thread (the admin API). sv: a struct supervisor. */
struct mapping_gen *supervisor_published(void *sv);
void supervisor_free(struct supervisor *sv);

#endif
