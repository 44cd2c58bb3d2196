/* build_table: the build table, the state and versions of every index
 * config of a source as the metadata holds them (index_configs; today's job
 * table, tomorrow's ZooKeeper assignments come the same way). The
 * supervisor reads it every [reindex] poll_interval_ms and hands it to the
 * reader through the command queue, which follows it between transactions
 * (daemon_builds.c); the state dump reads it too (reload.c). It reads the
 * metadata and nothing else: no thread, no node state. */
#ifndef SS_BUILD_TABLE_H
#define SS_BUILD_TABLE_H
#include <stdbool.h>
#include <stddef.h>

#include "db.h"

struct build_want {
    char *alias, *state;
    unsigned current, building;
    bool stopped; /* its deliveries are stopped (index_configs.stopped_reason) */
};
struct build_table {
    struct build_want *v;
    size_t n;
};

/* The build table of source now, on *meta (connected again through p when
 * it was lost): NULL with err. */
struct build_table *build_table_read(MYSQL **meta, const db_params *p, const char *source,
                                     char *err, size_t errlen);
void build_table_free(struct build_table *t); /* NULL-safe */

#endif
