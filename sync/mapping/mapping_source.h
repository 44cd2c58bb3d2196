/* mapping_source: several sources feeding one index config (docs/mapping.md,
 * "Several sources: one index over several servers").
 *
 * Sources that read one mapping ([source] mapping) share its index configs;
 * an index config lists the sources whose rows are its documents ("sources";
 * none listed: the one source named like the mapping). A daemon runs only the
 * index configs its source feeds, each made that source's (mapping_for_source):
 * with several sources, ix->source names it, every document it builds carries
 * MP_SOURCE_FIELD and an id that names the source ({source} in the id
 * template, mapping_shard.h), so no two sources ever write one document and
 * the versions the engine compares for a document all come from one binlog
 * (invariant I6, sync/pipeline/targets.c). */
#ifndef SS_MAPPING_SOURCE_H
#define SS_MAPPING_SOURCE_H
#include <stdbool.h>
#include <stddef.h>

#include "sbuf.h"
#include "sync/mapping/mapping.h"

/* the field of the documents of an index config of several sources naming
 * their source: a check, a shard's deletion and status find one source's
 * documents by it */
#define MP_SOURCE_FIELD "ss_source"

/* A source name as "sources" may list it: 1-64 of [A-Za-z0-9_.-]. 0, or -1
 * with why. */
int mp_source_name_check(const char *name, char *why, size_t whylen);

/* Does source `source`, reading mapping `mapping`, feed index config ix? */
bool mp_index_fed_by(const struct mp_index *ix, const char *mapping, const char *source);

/* m as source `source` of mapping `mapping` runs it: the index configs it
 * does not feed left out; each one of several sources made its own
 * (ix->source; the ids of one without patterns made here, a unit's at its
 * expansion). */
void mapping_for_source(struct mapping *m, const char *mapping, const char *source);

/* The SQL condition on index_configs (columns after prefix, e.g. "c.")
 * that holds for the index configs source `source` of mapping `mapping`
 * feeds, appended to q (values quoted on m). */
struct st_mysql;
void mp_fed_by_sql(struct st_mysql *m, sbuf *q, const char *prefix, const char *mapping,
                   const char *source);
/* The same with `?` for mapping, source, source (a prepared statement). */
#define MP_FED_BY_PARAMS \
    "source = ? AND ((sources IS NULL AND source = ?) OR FIND_IN_SET(?, sources) > 0)"
/* ... as the ids of those index configs, "(SELECT id ...)" */
#define MP_FED_BY_IDS "(SELECT id FROM index_configs WHERE " MP_FED_BY_PARAMS ")"
/* the three values of MP_FED_BY_PARAMS for configuration cfg (config.h) */
#define MP_FED_BY_ARGS(cfg) config_mapping_name(cfg), (cfg)->source.name, (cfg)->source.name

/* ix's sources as the metadata stores them (index_configs.sources): a comma
 * list, nothing appended when it lists none. */
void mp_sources_join(const struct mp_index *ix, sbuf *out);
/* ... and read back into ix->sources (NULL or "": none). */
void mp_sources_split(struct mp_index *ix, const char *list);

#endif
