/* node: the control plane of `searchsync run` (docs/design.md, "One node").
 *
 * The node runs a table of subsystems (the admin server, delivery, the
 * source reader and its supervisor, build workers, delayed runs, checks,
 * schedules, cluster membership), each with its start, its stop, its health
 * and its place in the drain order: node_start starts them in the table's
 * order, node_main runs the one that runs on the calling thread (the source
 * reader) until it stops, and the node stops them in the drain order and
 * asks them for health (the systemd watchdog). `run`'s table is one static
 * array (sync/node/daemon_subsystems.c): a new subsystem is one file with
 * one `struct node_subsystem` and one line in it.
 *
 * The admin server reaches the node only through requests posted to it
 * (node_post): a producer, a build or a metadata write asked for over HTTP
 * runs on the node's request thread, never on an HTTP thread, and is
 * answered asynchronously: the HTTP thread does not wait for it (its
 * connection waits, suspended) and the answer is 503 when the node is
 * stopping.
 *
 * The admin server itself lives in web/, above the core: the node knows it
 * only by struct node_admin_ops, which cmd/main.c registers (nothing under
 * sync/ includes web/). */
#ifndef SS_NODE_H
#define SS_NODE_H
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "sbuf.h"

struct node;
struct search_client;
struct deliver;
struct reader_stats;
struct mapping_gen;

/* ---------- subsystems ---------- */

/* Drain order: lower stops first. The producers that feed delivery stop
 * before the delivery they feed; the admin server before what its handlers
 * use. */
enum node_drain {
    NODE_DRAIN_SCHEDULES = 10, /* checks, delayed runs, retention */
    NODE_DRAIN_CONTROL = 20,   /* the supervisor */
    NODE_DRAIN_CLUSTER = 30,   /* cluster jobs, node state */
    NODE_DRAIN_ADMIN = 40,     /* the admin server, then the node's requests it waits on */
    NODE_DRAIN_BUILDS = 50,    /* build workers, at their cursors */
    NODE_DRAIN_READER = 55,    /* the reader's stream drained, its checkpoint saved, the
                                * source given back */
    NODE_DRAIN_WATCHDOG = 58,  /* systemd's watchdog: pinged until then */
    NODE_DRAIN_DELIVERY = 60,  /* the reader's stream freed, then the hub */
};

struct node_subsystem {
    const char *name;
    int drain;                          /* enum node_drain */
    /* > 0: the node allocates this many bytes (zeroed) as the subsystem's
     * own state when it starts it and frees them after its stop; 0: its
     * state is the context node_start was given */
    size_t state_size;
    /* 0 started; < 0 the node cannot go on (the context says why); > 0 the
     * node stops here without an error (a standby stopped while waiting).
     * ctx: node_start's. NULL: nothing to start */
    int (*start)(void *state, void *ctx);
    /* the subsystem that runs on node_main's thread until it stops (the
     * source reader); its result is node_main's. NULL for the others */
    int (*run)(void *state);
    void (*stop)(void *state);          /* idempotent; NULL: nothing to stop */
    /* true when well; else why (the watchdog logs it). NULL: always well */
    bool (*healthy)(void *state, char *why, size_t whylen);
};

/* Start table[0..count) in order, each handed ctx. Each is registered
 * before its start, so one that fails half-way is stopped with the others.
 * 0 when all started; else the first start's nonzero result (the rest are
 * not started). */
int node_start(struct node *n, const struct node_subsystem *const *table, size_t count,
               void *ctx);
/* Run the started subsystem that has a run, on this thread, until it
 * returns: its result (0 when there is none). */
int node_main(struct node *n);

/* A subsystem started by hand (state is its own): the node stops it in its
 * drain order. Up to NODE_MAX_SUBSYSTEMS. */
#define NODE_MAX_SUBSYSTEMS 24
void node_started(struct node *n, const struct node_subsystem *sub, void *state);
/* Stop every started subsystem in drain order (each once); _through: those
 * of drain <= max_drain only. */
void node_stop_all(struct node *n);
void node_stop_through(struct node *n, int max_drain);
/* false with the first unwell subsystem's name and why */
bool node_healthy(struct node *n, char *why, size_t whylen);
/* Every unwell subsystem as a JSON array of {"subsystem","why"} ([] when
 * all are well), for status; true when all are well. */
bool node_health_json(struct node *n, sbuf *out);
/* How long a thread of the node may go without going round its loop
 * before it counts as wedged: twice the longest timeout its calls have
 * (the source's connect + read, the engine's connect + request, a drain),
 * plus 10 s. A thread in a wait it can name (the source down, the reader
 * lock unconfirmed, a scheduled task running) is not held to it. */
int64_t node_wedged_after_ms(const struct ss_config *cfg);
/* the started subsystems' names in drain order, for logs: "a, b, c" */
void node_describe(struct node *n, char *buf, size_t len);

/* ---------- requests from the admin server ---------- */

typedef void (*node_work_fn)(void *arg);
/* ran: fn ran; false when the node stopped with the request still queued */
typedef void (*node_done_fn)(void *done_arg, bool ran);
/* Post fn(arg) to the node's request thread, which runs the requests one
 * at a time in the order posted, and return at once. done(done_arg, ran)
 * (may be NULL) follows exactly once, on the request thread: right after fn
 * (ran true), or without fn when the node stops with the request still
 * queued (ran false); the next request starts only after it returns. 0
 * posted; -1 the node is stopping or there is none: nothing runs and done
 * is not called. `what` names it in logs (copied). */
int node_post(struct node *n, const char *what, node_work_fn fn, void *arg, node_done_fn done,
              void *done_arg);
/* node_post and wait for done. 0 fn ran; -1 it did not (node stopping or
 * none). */
int node_run(struct node *n, const char *what, node_work_fn fn, void *arg);

/* ---------- the admin server (registered by cmd/main.c) ---------- */

struct node_admin_ops {
    /* n: the node its writes are posted to (node_post), handed at start */
    int (*start)(const struct ss_config *cfg, struct node *n, void **srv, char *err,
                 size_t errlen);
    void (*attach)(void *srv, struct search_client *client, struct deliver *d,
                   struct reader_stats *rs);
    void (*generation)(void *srv, struct mapping_gen *(*get)(void *ud), void *ud);
    void (*set_token)(void *srv, const char *token);
    void (*stop)(void *srv);
    /* false with why when one of its threads is wedged for more than
     * bound_ms (the node's health) */
    bool (*healthy)(void *srv, int64_t bound_ms, char *why, size_t whylen);
};
void node_admin_register(const struct node_admin_ops *ops);
const struct node_admin_ops *node_admin(void);

/* ---------- the node ---------- */

struct node {
    const struct ss_config *cfg;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct {
        const struct node_subsystem *sub;
        void *state;
        bool stopped;
        bool owned; /* state allocated by the node (state_size): freed after the stop */
    } subs[NODE_MAX_SUBSYSTEMS];
    int nsubs;
    /* the request thread */
    pthread_t req_th;
    bool req_started, req_stop;
    char *req_running;       /* the request it runs now (its `what`), NULL: none */
    int64_t req_running_ms;  /* ... since (monotonic ms) */
    struct node_request *req_head, *req_tail;
    /* tests only (SEARCHSYNC_TEST_NODE_SLOW_MS, _WHAT): a request whose
     * `what` contains slow_what waits slow_ms before it runs */
    int slow_ms;
    char slow_what[128];
    void *admin; /* the admin server (node_admin()'s), NULL when off */
};

/* Start the request thread; node_free stops it and everything started. */
int node_init(struct node *n, const struct ss_config *cfg, char *err, size_t errlen);
void node_free(struct node *n);

#endif
