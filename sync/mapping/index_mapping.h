/* index_mapping: the engine's index body (settings + mappings) generated
 * from one index config of the mapping model, for one engine dialect.
 *
 * Owns: shards/replicas and analysis settings; one property per column with
 * its engine type (scaled_float factor from the DECIMAL scale, date formats,
 * keyword subfields, analyzers, copy_to and its target fields); one-to-one
 * relations as objects and one-to-many as nested, at any depth; the join
 * field of parent/child tables sharing the index; the version field delivery
 * compares in scripted updates. ES 6 (mapping types) is refused; types an
 * engine version lacks (unsigned_long, flattened, flat_object, wildcard) are
 * errors naming the column, never silently replaced. */
#ifndef SS_INDEX_MAPPING_H
#define SS_INDEX_MAPPING_H
#include <stdbool.h>
#include <stddef.h>

#include "sync/mapping/mapping.h"
#include "sbuf.h"
#include "search/search.h"

/* The document field delivery keeps the version in (src/deliver default). */
#define INDEX_MAPPING_VERSION_FIELD "ss_version"

/* The check's ss_hash and ss_key_hash properties (search/content_hash.h),
 * added to a cJSON properties object: in every body, and put on an index
 * created before they existed. */
struct cJSON;
void index_mapping_hash_props(struct cJSON *props);

/* PUT those properties on the alias and its versions (<alias>_v*): an
 * index created before they existed has a strict mapping that would refuse
 * every write carrying them. Idempotent. 0, or -1 with err (said as a
 * warning by the caller: the writes' dead letters name it too). */
int index_mapping_put_hash_fields(struct search_conn *k, const char *alias, char *err,
                                  size_t errlen);

/* Does this engine version have field type t? (unsigned_long, flattened,
 * flat_object and wildcard came in later versions; every other type: yes) */
bool index_type_supported(const struct search_dialect *d, const char *t);

/* Append the body for PUT /<index> to out: compact JSON, or indented when
 * pretty. The model must have been validated (engine types filled in).
 * 0, or -1 with err. */
int index_mapping_body(const struct mp_index *ix, const struct search_dialect *d, bool pretty,
                       sbuf *out, char *err, size_t errlen);

/* The same body for a version being built by a reindex: no replicas, no
 * refreshes, the translog written asynchronously and deletes remembered for
 * gc_deletes_s ([reindex] gc_deletes_s: a page read before a delete may be
 * acknowledged after it, sync/reindex/reindex_runner.c) — the switch restores all
 * four; sync/reindex/reindex_runner.c says why the async translog is safe — so
 * creating it is one cluster-state update instead of a create and then a
 * settings update. */
int index_mapping_build_body(const struct mp_index *ix, const struct search_dialect *d,
                             int gc_deletes_s, sbuf *out, char *err, size_t errlen);

#endif
