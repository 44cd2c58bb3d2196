/* registry: the nodes of a cluster, each an ephemeral znode
 * /searchsync/<cluster>/nodes/<node> holding its entity as JSON:
 * cloud status (NORMAL | REBALANCING), node status (CLEAN |
 * CLEAN_OK | INIT | FINISH), rebalance session id, job type, its jobs, its
 * live work count, and here also the sources whose binlog it reads. The
 * node goes with its session. */
#ifndef SS_REGISTRY_H
#define SS_REGISTRY_H
#include <stddef.h>

#include "sbuf.h"
#include "zk.h"

/* Create (or, after a lost session, create again) this node's entry. */
int registry_register(struct zk *z, const char *cluster, const char *node_id, const char *json,
                      char *err, size_t errlen);
int registry_update(struct zk *z, const char *cluster, const char *node_id, const char *json,
                    char *err, size_t errlen);
/* Every registered node as a JSON array of {"node":id,"entity":{...}} into
 * out; -1 with err. */
int registry_list(struct zk *z, const char *cluster, sbuf *out, char *err, size_t errlen);

#endif
