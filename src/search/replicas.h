/* replicas: how many replicas an index gets when its mapping names none —
 * one where the engine has a second data node to hold it, none on a single
 * node, where a replica could never be assigned and the index would stay
 * yellow (min(1, data nodes - 1)). Asked of the engine by the mapping
 * generator (`searchsync mapping generate`, the admin API's proposal) and
 * by `mapping import` for a file without "replicas". */
#ifndef SS_SEARCH_REPLICAS_H
#define SS_SEARCH_REPLICAS_H
#include <stddef.h>

struct search_conn;
struct ss_config;

/* the default for data_nodes data nodes */
int replicas_for_nodes(long data_nodes);

/* GET /_cluster/health on k: the default for the engine's data nodes, or -1
 * with err (no answer, or no node count in it). */
int search_default_replicas(struct search_conn *k, char *err, size_t errlen);

/* The same on a connection of its own to cfg's [search] urls. */
int config_default_replicas(const struct ss_config *cfg, char *err, size_t errlen);

#endif
