/* ops: the node's operations, typed. What an operator asks of a source — a
 * build queued, cancelled or every version deleted (ops_reindex.h), given
 * documents rebuilt (ops_resync.h), a mapping imported (ops_mapping.h), the
 * cluster's reindex jobs assigned again (ops_assign.h), dead letters
 * replayed or discarded (ops_replay.h), the analyzer's dynamic words
 * (ops_words.h) — is one function here, with typed arguments and a typed
 * result.
 *
 * Two front ends call them: the admin API (web/), which only turns a
 * request's JSON into the arguments and the result (or struct ops_err) into
 * a response, and runs the call on the node's request thread
 * (sync/node/node.h, node_post); and the commands (cmd/), which turn
 * options into the arguments and the result into lines and an exit code.
 * What one operation does is so the same whichever asked.
 *
 * An operation opens the connections it needs (each call its own: the
 * daemon's connections belong to its threads) except the ones its caller
 * lends it in struct ops_env. */
#ifndef SS_OPS_H
#define SS_OPS_H
#include <stdbool.h>
#include <stddef.h>

#include <mysql.h>

#include "config.h"

struct search_client;
struct search_conn;
struct deliver_hub;

/* What an operation runs with. */
struct ops_env {
    const struct ss_config *cfg;
    /* the engine's client, its dialect detected; NULL while a daemon starts
     * (an operation that needs the engine fails OPS_STARTING) */
    struct search_client *client;
    /* the node's delivery: an operation that writes documents opens its
     * stream on it; NULL (a command): on a delivery of its own */
    struct deliver_hub *hub;
    /* the metadata schema, lent by the caller (a command has it open and
     * migrated); NULL: the operation connects and closes it again */
    MYSQL *meta;
    /* who asks, in the log and the sync log: "admin API", "reindex command" */
    const char *by;
};

/* How an operation ended. The front ends map it: the admin API to a status
 * (400, 404, 409, 503, 502/500), a command to an exit code (ops_exit). */
enum ops_status {
    OPS_OK = 0,
    OPS_INVALID,  /* the request is wrong (a value, a mapping that fails its checks) */
    OPS_UNKNOWN,  /* no such index config, document or dead letter */
    OPS_REFUSED,  /* the index config's state does not allow it now */
    OPS_STARTING, /* the daemon has not detected the engine yet */
    OPS_DOWN,     /* a server the operation needs does not answer (err.at says which) */
    OPS_FAILED,   /* a server failed part-way (err.at: which, or OPS_AT_NONE) */
};

/* Where it failed: the step, so that a front end can say what to do. */
enum ops_at {
    OPS_AT_NONE = 0,   /* the operation itself */
    OPS_AT_METADATA,   /* the metadata schema (connecting, or reading the index config) */
    OPS_AT_SOURCE,     /* the source MySQL */
    OPS_AT_ENGINE,     /* the search engine */
    OPS_AT_ZOOKEEPER,  /* the cluster's ZooKeeper */
};

struct ops_err {
    enum ops_status st;
    enum ops_at at;
    char msg[2048];
};

/* the command's exit code of an outcome: 0 ok, 2 the user's to fix (invalid,
 * unknown, refused), 1 the rest */
int ops_exit(enum ops_status st);

/* ---------- shared by the operations (sync/ops/ops.c) ---------- */

/* e filled; returns st (so `return ops_fail(...)`) */
enum ops_status ops_fail(struct ops_err *e, enum ops_status st, enum ops_at at, const char *fmt,
                         ...) __attribute__((format(printf, 4, 5)));
/* the metadata schema: env's, else a connection of the call's own (*owned
 * true); NULL with OPS_DOWN at OPS_AT_METADATA */
MYSQL *ops_meta(const struct ops_env *env, bool *owned, struct ops_err *e);
void ops_meta_done(MYSQL *m, bool owned);
/* the source; NULL with OPS_DOWN at OPS_AT_SOURCE */
MYSQL *ops_source(const struct ops_env *env, struct ops_err *e);
/* one engine connection of env's client; NULL with OPS_STARTING when there
 * is no client yet */
struct search_conn *ops_engine(const struct ops_env *env, struct ops_err *e);
/* the index config of alias among the source's: its id, state,
 * current_version and building_version (0: none). OPS_UNKNOWN when it has
 * none of that name, OPS_FAILED at OPS_AT_METADATA when it cannot be read. */
struct ops_index {
    unsigned long long id;
    char state[32];
    unsigned current, building;
};
enum ops_status ops_index_find(const struct ops_env *env, MYSQL *meta, const char *alias,
                               struct ops_index *ix, struct ops_err *e);

#endif
