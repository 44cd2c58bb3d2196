/* index_stop: index configs stopped when the source no longer fits their
 * mapping (see index_stop.c). */
#ifndef SS_SYNC_INDEX_STOP_H
#define SS_SYNC_INDEX_STOP_H
#include <stddef.h>

#include "sync/sources/source.h"

struct supervisor;

/* the reader's note when a query of the mapping is refused (a column or
 * table gone) before it read the DDL that did it (binlog_source.c): a stop
 * for that reason is said again, naming the statement, once it is read */
#define INDEX_STOP_REFUSED SOURCE_QUERY_REFUSED

/* Validate every index config not stopped yet against the source's schema
 * now; stop each one that does not fit (stopped_reason, the log, the
 * sync_log), why saying after what ("after ALTER TABLE ... read from the
 * binlog at F:P"). *stopped: how many were. 0, or -1 with sv->err (a
 * server failed: nothing decided). Supervisor thread. */
int index_stop_check(struct supervisor *sv, const char *why, size_t *stopped);

/* Index configs of the running mapping stopped "after the source refused a
 * query of the mapping" (the reader built a transaction written before the
 * DDL that broke it, the source having run that DDL already): when why is
 * the note of a DDL read since ("after `ALTER TABLE ...` read from the
 * binlog at F:P") that names one of their tables, and their mapping still
 * does not fit, their reason is said again naming it. Supervisor thread. */
struct mapping;
void index_stop_name_cause(struct supervisor *sv, const struct mapping *running,
                           const char *why);

/* The builds of index configs stopped before the engine's client existed
 * (at start), cancelled now that it does (supervisor_prepare); the list is
 * emptied either way. */
void index_stop_cancel_pending(struct supervisor *sv);

#endif
