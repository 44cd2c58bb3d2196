/* rebalance: the rebalance of a source's jobs over the live nodes,
 * coordinated through ZooKeeper.
 *
 * One coordinator at a time per cluster (the lock /searchsync/<cluster>/
 * locks/rebalance, rebalance/zlock.c) — the node that reads the source when
 * a node joins or dies or a build is queued, or `searchsync rebalance`, or
 * POST /api/v1/rebalance. The steps, each visible in ZooKeeper:
 *
 *   1. take the lock; its child's czxid is the new rebalance session S:
 *      larger than every session before it (the fencing token of the jobs);
 *   2. write /searchsync/<cluster>/rebalance/<source> = {"session":S,
 *      "phase":"CLEAN","nodes":[...]}; every live node of the source stops
 *      its jobs at their saved cursors and answers node_status CLEAN_OK with
 *      session S in its registry entry (rebalance/registry.h);
 *   3. once all answered (or clean_timeout_ms passed: a node that did not
 *      answer gets nothing, and the session fences whatever it still
 *      writes), the assign callback splits the unfinished jobs over the
 *      nodes that answered and records owner and session in the metadata;
 *   4. write the same znode with "phase":"INIT" and the assignment; each
 *      node runs its jobs (node_status INIT) and reports FINISH when none is
 *      left; the lock is released.
 *
 * A node reads the znode, never a message: one that was away sees the last
 * word when it comes back. The coordinator writes only this znode; each
 * node writes only its own registry entry. */
#ifndef SS_REBALANCE_H
#define SS_REBALANCE_H
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "sbuf.h"
#include "zk.h"

/* The last word of the coordinator for a source. */
struct rebalance_state {
    char session[32]; /* "" when no rebalance ever ran */
    char phase[16];   /* CLEAN | INIT */
    char by[256];     /* the coordinator's node id */
    char **nodes;     /* the nodes it rebalanced over */
    size_t nnodes;
};

/* 1 read (st filled), 0 no rebalance yet, -1 error (err). With watch (may
 * be NULL), ZooKeeper calls it once when the znode is next written or
 * created (on the client's thread: it should only wake someone). */
int rebalance_state_read(struct zk *z, const char *cluster, const char *source,
                         struct rebalance_state *st, watcher_fn watch, void *watch_ctx,
                         char *err, size_t errlen);
void rebalance_state_free(struct rebalance_state *st);
bool rebalance_state_has(const struct rebalance_state *st, const char *node);

/* A registered node of the source with what it said last. */
struct rebalance_node {
    char id[256];
    char node_status[16];
    char session[32];
};
/* The registered nodes whose entity names this source (sorted by id). -1
 * err. */
int rebalance_nodes(struct zk *z, const char *cluster, const char *source,
                    struct rebalance_node **out, size_t *n, char *err, size_t errlen);

/* Step 3: split the unfinished jobs over nodes[0..n) under session; the
 * assignment as a JSON object {node: [job ids]} into assign. 0 or -1. */
typedef int (*rebalance_assign_fn)(void *ud, const char *session, const char *const *nodes,
                                   size_t n, sbuf *assign, char *err, size_t errlen);

/* The whole rebalance as coordinator me. 1 done (a line per node in
 * report), 0 *stop was set (the lock is left, nodes keep their CLEAN until
 * the next one), -1 error (err). */
int rebalance_coordinate(struct zk *z, const char *cluster, const char *source, const char *me,
                         int clean_timeout_ms, volatile sig_atomic_t *stop,
                         rebalance_assign_fn assign, void *ud, sbuf *report, char *err,
                         size_t errlen);

/* The live nodes of cfg's source in its cluster (0 standalone, or when
 * ZooKeeper cannot be asked within a few seconds: then the caller's own
 * number stands). */
int cluster_live_nodes(const struct ss_config *cfg);

#endif
