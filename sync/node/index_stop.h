/* index_stop: index configs stopped when the source no longer fits their
 * mapping, and rebuilt when it fits them again (see index_stop.c). The
 * decision is schema_watch.c's. Supervisor thread. */
#ifndef SS_SYNC_INDEX_STOP_H
#define SS_SYNC_INDEX_STOP_H
#include <stdbool.h>
#include <stddef.h>

#include "sbuf.h"
#include "sync/mapping/mapping.h"
#include "sync/sources/source.h"

struct supervisor;

/* the reader's note when a query of the mapping is refused (a column or
 * table gone) before it read the DDL that did it (binlog_source.c): a stop
 * for that reason is said again, naming the statement, once it is read */
#define INDEX_STOP_REFUSED SOURCE_QUERY_REFUSED

/* The first table ix reads (as ddl_index_reads counts them: its root,
 * parent/child tables and relations at any depth) that schema does not
 * have: true with its database and name. */
bool index_stop_table_missing(const struct mp_index *ix, const struct mp_schema *schema,
                              const char **db, const char **table);

/* Why ix stops, into reason: after what (why: "after `ALTER TABLE ...` read
 * from the binlog at F:P"), what does not fit (errs, on one line), what to
 * do. */
void index_stop_reason(const struct mp_index *ix, const struct mp_schema *schema, const char *why,
                       const char *errs, sbuf *reason);

/* Stop ix (not stopped yet): stopped_reason, the log, the sync_log; a version
 * being built from the mapping that no longer fits is cancelled. 1 stopped,
 * 0 it was stopped already, -1 with sv->err. */
int index_stop(struct supervisor *sv, const struct mp_index *ix, const char *reason);

/* ix was stopped "after the source refused a query of the mapping" (the
 * reader built a transaction written before the DDL that broke it, the source
 * having run that DDL already): its reason is said again naming that DDL,
 * read since. */
void index_stop_name_cause(struct supervisor *sv, const struct mp_index *ix, const char *reason);

/* ix is stopped and the source fits its mapping again (why: after what): a
 * rebuild is queued (the stop is lifted when that version goes live; while it
 * was stopped no change reached it). true when queued or one is under way
 * already; false to try again at the next look (sv->err). */
bool index_stop_refit(struct supervisor *sv, const struct mp_index *ix, const char *why);

/* The builds of index configs stopped before the engine's client existed
 * (at start), cancelled now that it does (supervisor_prepare); the list is
 * emptied either way. */
void index_stop_cancel_pending(struct supervisor *sv);

#endif
