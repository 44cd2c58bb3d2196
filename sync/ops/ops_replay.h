/* ops_replay: the source's dead letters as operations (sync/ops/ops.h):
 * replayed (all, one index's, or one row) with their original versions, or
 * one discarded. A replay writes through a bulk stream of its own on the
 * node's delivery (env->hub), never the reader's stream, whose transaction
 * ends move the checkpoint; a change that fails again comes back as a new
 * dead letter (src/deliver/store.c). */
#ifndef SS_OPS_REPLAY_H
#define SS_OPS_REPLAY_H
#include <stdint.h>

#include "sync/ops/ops.h"

struct ops_replay_req {
    const char *index; /* a physical index name; NULL: every index */
    uint64_t id;       /* one row; 0: every row (of index) */
};

struct ops_replay_res {
    long replayed;
    long left; /* dead letters left (of index), -1 when they could not be counted */
};

/* Needs the engine. OPS_DOWN at OPS_AT_METADATA: no metadata server;
 * OPS_FAILED: the replay stopped (the dead letters are kept). */
enum ops_status ops_replay(const struct ops_env *env, const struct ops_replay_req *rq,
                           struct ops_replay_res *res, struct ops_err *e);

/* Dead letter id given up for good: its change is not written (a reindex or
 * resync of the document writes it again). OPS_UNKNOWN: the source has no
 * dead letter of that id. */
enum ops_status ops_dead_letter_discard(const struct ops_env *env, uint64_t id,
                                        struct ops_err *e);

#endif
