/* resync: given documents of one index config rebuilt from MySQL, as one
 * more producer of change sets (`searchsync resync` and POST
 * /api/v1/indices/{alias}/resync).
 *
 * The ids become a change set (root keys, `<join_name>-<key>` child ids)
 * built and delivered by the same back half as live sync (sync/pipeline/pipeline.c):
 * to the live alias and to a version being built, a document whose row is
 * gone deleted, a child's copies under other routings deleted
 * (child_copies.c). Its version is the binlog position read before the rows
 * are: a live change made since is newer and wins, and the
 * rebuilt content is at least as new as that position. It opens its own
 * connections and delivery (sync/pipeline/producer.c) and waits for the engine.
 * The writes refused as stale are looked at again by the operation
 * (sync/ops/ops_resync.c). */
#ifndef SS_RESYNC_H
#define SS_RESYNC_H
#include <stddef.h>

#include "config.h"

struct resync_result {
    unsigned long long rebuilt, deleted, dead_letters, stale;
    /* of the stale ones (sync/ops/ops_resync.c): written again over a version
     * raised in the engine by hand; still differing from MySQL after that */
    unsigned long long forced, left;
};

/* 0 done, 2 usage (no such index config, no version yet: err), 1 runtime
 * (err). The exit codes of the command (EXIT_OK, EXIT_USAGE, EXIT_RUNTIME). */
struct deliver_hub;
/* hub: the delivery to write through (a daemon's node's); NULL: one of its
 * own */
int resync_ids(const struct ss_config *cfg, struct deliver_hub *hub, const char *alias,
               const char *const *ids, size_t n, struct resync_result *res, char *err,
               size_t errlen);

#endif
