/* index_version: the name of the physical index that holds one version of an
 * index config.
 *
 * Every build of an index config (a reindex, a shard joining) writes into an
 * index of its own, "<alias>_v<version>", and the alias points at the live
 * one. The reindex creates and deletes these indices, the daemon's writers,
 * the status and the admin API name them: all of them take the name from
 * here, so that it is spelt in one place. */
#ifndef SS_SEARCH_INDEX_VERSION_H
#define SS_SEARCH_INDEX_VERSION_H
#include <stddef.h>

/* The name into buf (cut to size), which is returned. */
const char *index_version_name(char *buf, size_t size, const char *alias, unsigned version);
/* The name, allocated (free it). */
char *index_version_dup(const char *alias, unsigned version);
/* The version a physical index name holds of alias: N for exactly
 * "<alias>_v<N>" (N > 0, decimal digits only), 0 for any other name. */
unsigned index_version_of(const char *alias, const char *name);

#endif
