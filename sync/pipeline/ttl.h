/* ttl: documents removed when their row's expiry column passes (see
 * ttl.c). Runs on the binlog reader's thread, between transactions. */
#ifndef SS_TTL_H
#define SS_TTL_H
#include <stdbool.h>
#include <stdint.h>

#include "sync/pipeline/pipeline.h"

struct ttl_index {
    char *alias;    /* the index config's alias, or its shard's root ("db.table") */
    char *last;     /* NOW(6) of the previous look (NULL: none yet), or, after a
                     * full batch, the expiry of its last row ... */
    char *last_key; /* ... and that row's key (NULL: after a complete look) */
    char *next, *next_key; /* where the look just made leaves them: they become
                            * last and last_key once its deletes are built */
    bool has_next;
};

struct ttl {
    struct ttl_index *v;
    size_t n;
    int64_t due_ms;
    unsigned long long expired; /* documents deleted because they expired */
};

/* Every TTL_EVERY_MS: the rows whose expiry passed since the last look are
 * rebuilt (so deleted) through the pipeline, versioned one past `at` (the
 * reader's position, a heartbeat's included), in one delivery transaction
 * ended at `boundary` (the last transaction boundary: where a restart may
 * resume). cs must be empty (between transactions). 0, or -1 with p->err. */
int ttl_tick(struct ttl *t, struct pipeline *p, struct changeset *cs, const bl_pos *at,
             const struct pipeline_resume *rs,
             const bl_pos *boundary);
void ttl_reset(struct ttl *t);

#endif
